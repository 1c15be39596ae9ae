//! State shared by the connection tasks of one worker thread.
//!
//! Each OS thread runs a current-thread tokio runtime and owns one `Shared`; its
//! tasks interleave but never run in parallel, so plain `Cell`/`RefCell` replace
//! atomics and locks on the hot path.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::time::Sleep;

use crate::config::RunConfig;
use crate::conn::{Answer, Conn, Want};
use crate::histogram::{self, Hist};
use crate::series::Recorder;
use crate::stats::{Failure, Stats};

pub struct Shared {
    pub cfg: Arc<RunConfig>,
    pub t0: Instant,
    pub deadline: Option<Instant>,
    /// A run by count goes on until then (`cfg.min_duration`).
    min_until: Option<Instant>,
    pub stop: Arc<AtomicBool>,
    /// What every thread of the run counts together.
    pub counters: Arc<RunCounters>,
    /// This thread's slowest answer so far (ns): `counters.slowest_ns` is only
    /// written when it grows.
    own_slowest_ns: Cell<u64>,
    pub run_id: Arc<str>,
    budget: Option<Cell<u64>>,
    pub stats: RefCell<Stats>,
    pub steps: RefCell<Vec<Stats>>,
    pub iterations: RefCell<Hist>,
    pub iterations_failed: Cell<u64>,
    pub missed: Cell<u64>,
    pub late_sends: Cell<u64>,
    pub server: RefCell<Option<String>>,
    pub doc_len: Cell<Option<u64>>,
    pub first_check_error: RefCell<Option<String>>,
    /// Per-interval counts and latencies, when the run keeps a time series.
    pub series: Option<RefCell<Recorder>>,
}

impl Shared {
    pub fn new(
        cfg: Arc<RunConfig>,
        t0: Instant,
        stop: Arc<AtomicBool>,
        counters: Arc<RunCounters>,
        run_id: Arc<str>,
        budget: Option<u64>,
        steps: usize,
    ) -> Shared {
        Shared {
            deadline: cfg.duration.map(|d| t0 + d),
            min_until: cfg.min_duration.map(|d| t0 + d),
            series: cfg.interval.map(|w| RefCell::new(Recorder::new(t0, w))),
            cfg,
            t0,
            stop,
            counters,
            own_slowest_ns: Cell::new(0),
            run_id,
            budget: budget.map(Cell::new),
            stats: RefCell::new(Stats::new()),
            steps: RefCell::new((0..steps).map(|_| Stats::new()).collect()),
            iterations: RefCell::new(histogram::new_histogram()),
            iterations_failed: Cell::new(0),
            missed: Cell::new(0),
            late_sends: Cell::new(0),
            server: RefCell::new(None),
            doc_len: Cell::new(None),
            first_check_error: RefCell::new(None),
        }
    }

    /// Claim the right to start one more request (or iteration): while the count
    /// lasts, then (a run by count with a least duration) until that time is up.
    #[inline]
    pub fn take_ticket(&self) -> bool {
        match &self.budget {
            None => true,
            Some(b) => {
                let n = b.get();
                if n == 0 {
                    return !self.stopped() && self.min_until.is_some_and(|t| Instant::now() < t);
                }
                b.set(n - 1);
                true
            }
        }
    }

    /// Return a ticket taken for a request that was never sent.
    pub fn give_back_ticket(&self) {
        if let Some(b) = &self.budget {
            b.set(b.get() + 1);
        }
    }

    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// No new work may start at `now` (stop asked, deadline passed).
    #[inline]
    pub fn over(&self, now: Instant) -> bool {
        self.stopped() || self.deadline.is_some_and(|d| now >= d)
    }

    /// Requests still in flight are given up at `now`, counted as unanswered
    /// (timeouts): a stop was asked (Ctrl-C, SIGTERM), or a timed run is past its
    /// end by its grace (`end_grace`). So `duration` bounds the whole run.
    #[inline]
    pub fn cut(&self, now: Instant) -> bool {
        self.stopped() || self.deadline.is_some_and(|d| now >= d + self.end_grace())
    }

    /// How long the answers to requests in flight at a timed run's end are waited
    /// for: `END_GRACE`, or twice the slowest answer of the run so far when that is
    /// longer, never past the request timeout (`MAX_END_GRACE` without one). A
    /// request the server answers in its usual time is answered, not failed: at 100
    /// connections on a stack that answers in 0.4-0.65 s, a fixed 0.5 s failed a few
    /// of the last requests sent of every timed step. One that waits twice as long as
    /// anything answered before is the server's stall, and a timeout.
    pub fn end_grace(&self) -> Duration {
        let slowest = self.counters.slowest_ns.load(Ordering::Relaxed);
        let grace = END_GRACE.max(Duration::from_nanos(slowest.saturating_mul(2)));
        grace.min(self.cfg.timeout.unwrap_or(MAX_END_GRACE).max(END_GRACE))
    }

    /// Count one exchange into the thread's stats (and step `step`'s, if given)
    /// and into the interval of the time series in which it completed, which is
    /// `start + latency` (`start`: where its latency counts from).
    #[inline]
    pub fn record(
        &self,
        result: &Result<Answer, Failure>,
        start: Instant,
        latency: Duration,
        step: Option<usize>,
    ) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        if result.is_ok() && ns > self.own_slowest_ns.get() {
            self.own_slowest_ns.set(ns);
            self.counters.slowest_ns.fetch_max(ns, Ordering::Relaxed);
        }
        let apply = |s: &mut Stats| match result {
            Ok(a) => {
                s.answer(a.status, ns, a.bytes, a.body_bytes);
                if let Some(h) = a.handshake {
                    s.handshake(
                        u64::try_from(h.time.as_nanos()).unwrap_or(u64::MAX),
                        h.resumed,
                    );
                }
            }
            Err(f) => s.failure(*f),
        };
        if !matches!(result, Ok(a) if (200..300).contains(&a.status)) {
            self.failed();
        }
        apply(&mut self.stats.borrow_mut());
        if let Some(i) = step {
            apply(&mut self.steps.borrow_mut()[i]);
        }
        if let Some(series) = &self.series {
            let done = start + latency;
            let mut series = series.borrow_mut();
            match result {
                Ok(a) => series.answer(done, (200..300).contains(&a.status), ns),
                Err(_) => series.failure(done),
            }
        }
    }

    /// One more failed request: past the run's bound, the run stops as a Ctrl-C
    /// stops it (no new request, those in flight given up), for it can no longer pass.
    fn failed(&self) {
        let n = self.counters.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if self.cfg.max_failures.is_some_and(|max| n > max) {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// A 2xx answer that failed a scenario check.
    pub fn check_failed(&self, step: usize, why: String) {
        self.failed();
        self.stats.borrow_mut().check_failed += 1;
        self.steps.borrow_mut()[step].check_failed += 1;
        if let Some(series) = &self.series {
            series.borrow_mut().check_failed();
        }
        let mut first = self.first_check_error.borrow_mut();
        if first.is_none() {
            *first = Some(why);
        }
    }

    /// Remember what the first good answer said about the server.
    pub fn note_info(&self, server: Option<String>, body_len: u64) {
        if self.doc_len.get().is_none() {
            self.doc_len.set(Some(body_len));
            *self.server.borrow_mut() = server;
        }
    }

    /// After a connect error in a timed run, wait a little instead of spinning.
    pub async fn backoff_after(&self, result: &Result<Answer, Failure>) {
        if matches!(result, Err(Failure::Connect)) && self.deadline.is_some() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// How long the answers to requests in flight at the end of a timed run are
/// waited for at least before those requests count as unanswered (`Shared::cut`).
pub const END_GRACE: Duration = Duration::from_millis(500);
/// The longest such wait of a run without a request timeout.
pub const MAX_END_GRACE: Duration = Duration::from_secs(10);

/// Counted by every thread of a run together.
#[derive(Debug, Default)]
pub struct RunCounters {
    /// Failed requests, for the run's bound (`cfg.max_failures`).
    pub failures: AtomicU64,
    /// The slowest answer of the run so far (ns), for the end's grace.
    pub slowest_ns: AtomicU64,
}

thread_local! {
    /// Exchanges in flight on this worker thread's runtime (`Timer::run`), for
    /// counting those a cut gives up.
    static IN_FLIGHT: Cell<u64> = const { Cell::new(0) };
}

/// The exchanges in flight on the calling worker thread.
pub fn in_flight() -> u64 {
    IN_FLIGHT.with(Cell::get)
}

/// Counts one exchange in flight for as long as it lives (also when dropped unfinished).
pub struct InFlight;

impl InFlight {
    pub fn begin() -> InFlight {
        IN_FLIGHT.with(|c| c.set(c.get() + 1));
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.with(|c| c.set(c.get() - 1));
    }
}

/// A reusable per-connection timeout (one timer entry, reset per request).
pub struct Timer {
    sleep: Option<Pin<Box<Sleep>>>,
    timeout: Duration,
}

impl Timer {
    pub fn new(timeout: Option<Duration>) -> Timer {
        Timer {
            sleep: timeout.map(|_| Box::pin(tokio::time::sleep(Duration::from_secs(86_400)))),
            timeout: timeout.unwrap_or_default(),
        }
    }

    /// Run one exchange started at `start`; a timeout drops the connection.
    pub async fn run<F>(
        &mut self,
        conn_reset: &mut bool,
        start: Instant,
        fut: F,
    ) -> Result<Answer, Failure>
    where
        F: Future<Output = Result<Answer, Failure>>,
    {
        let _flight = InFlight::begin();
        match self.sleep.as_mut() {
            None => fut.await,
            Some(sleep) => {
                sleep.as_mut().reset((start + self.timeout).into());
                tokio::select! {
                    biased;
                    r = fut => r,
                    _ = sleep.as_mut() => {
                        *conn_reset = true;
                        Err(Failure::Timeout)
                    }
                }
            }
        }
    }
}

/// Send one request on `conn` with the timer, dropping the socket on a timeout.
pub async fn exchange(
    conn: &mut Conn,
    timer: &mut Timer,
    start: Instant,
    request: &[u8],
    head_request: bool,
    want: crate::conn::Want<'_>,
) -> Result<Answer, Failure> {
    let mut timed_out = false;
    let result = timer
        .run(
            &mut timed_out,
            start,
            conn.exchange(request, head_request, want),
        )
        .await;
    if timed_out {
        conn.reset();
    }
    result
}

/// Send the run's one fixed request (closed and open loops). `server` is
/// `Some` while this connection still probes for the server's name.
pub async fn send_request(
    cfg: &RunConfig,
    conn: &mut Conn,
    timer: &mut Timer,
    start: Instant,
    server: Option<&mut Option<String>>,
) -> Result<Answer, Failure> {
    let want = Want { body: None, server };
    exchange(conn, timer, start, &cfg.request, cfg.head_request, want).await
}

/// After a fixed request's answer is recorded: the first good answer of a
/// probing connection tells the server's name and document length (then it
/// stops probing), and without keep-alive the connection is closed.
#[inline]
pub fn after_answer(
    sh: &Shared,
    conn: &mut Conn,
    result: &Result<Answer, Failure>,
    probe: &mut bool,
    server: &mut Option<String>,
) {
    if *probe {
        if let Ok(a) = result {
            if (200..300).contains(&a.status) {
                sh.note_info(server.take(), a.body_bytes);
                *probe = false;
            }
        }
    }
    if !sh.cfg.keepalive {
        conn.reset();
    }
}

/// CPU time (user + system) of the calling thread, in seconds.
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}
