//! Run orchestration: one OS thread per share of the connections, each with a
//! current-thread tokio runtime; a common start instant; exact merge at the end.

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::client::closed_connection;
use crate::config::{Mode, RunConfig};
use crate::histogram::{self, Hist};
use crate::open_loop::open_connection;
use crate::series::{self, EncodedInterval, Recorder, SeriesOf};
use crate::stats::{Failure, Stats};
use crate::uring;
use crate::virtual_user::virtual_user;
use crate::worker::{in_flight, thread_cpu_seconds, RunCounters, Shared};

/// How often a tokio worker looks whether its requests in flight must be given up.
const CUT_TICK: Duration = Duration::from_millis(20);

/// Everything a run measured, merged over threads.
#[derive(Debug, Clone)]
pub struct Report {
    pub stats: Stats,
    /// Per scenario step: (name, stats).
    pub steps: Vec<(String, Stats)>,
    /// Scenario only: latency of whole successful iterations, and failed ones.
    pub iterations: Option<(Hist, u64)>,
    pub elapsed: Duration,
    /// CPU seconds (user + system) used by the worker threads.
    pub cpu_s: f64,
    pub threads: usize,
    pub connections: usize,
    /// Open loop: intended sends given up at the end of an overloaded run.
    pub missed: u64,
    /// Open loop: sends on an idle connection later than the timer slack.
    pub late_sends: u64,
    pub server: Option<String>,
    pub doc_len: Option<u64>,
    pub first_check_error: Option<String>,
    pub interrupted: bool,
    /// The run's failures exceeded `max_failures`: it was stopped there (or, on
    /// its last request, ended anyway), and its figures are a failed run's.
    pub failures_exceeded: bool,
    pub run_id: String,
    /// The I/O loop that ran the connections: "io_uring" or "epoll" (tokio).
    pub io: &'static str,
    /// Per-interval counts and latencies, merged over threads (None: not asked).
    pub series: Option<SeriesOf<EncodedInterval>>,
    /// Wall-clock time (Unix seconds) of the run's start, the series' origin.
    pub started_unix: f64,
}

struct WorkerResult {
    stats: Stats,
    steps: Vec<Stats>,
    iterations: Hist,
    iterations_failed: u64,
    missed: u64,
    late_sends: u64,
    server: Option<String>,
    doc_len: Option<u64>,
    first_check_error: Option<String>,
    started: Instant,
    finished: Instant,
    cpu_s: f64,
    io: &'static str,
    series: Option<Recorder>,
}

/// Start line: workers report ready (runtime built), then all start from one
/// instant chosen by the caller, or are told to give up.
#[derive(Default)]
struct Gate {
    state: Mutex<(usize, Option<Option<Instant>>)>,
    changed: Condvar,
}

impl Gate {
    /// Called by a worker: returns the common start, or None to give up.
    fn ready_and_wait(&self) -> Option<Instant> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.0 += 1;
        self.changed.notify_all();
        loop {
            if let Some(start) = st.1 {
                return start;
            }
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Called by the coordinator: wait for `n` ready workers, then start them.
    fn open_when_ready(&self, n: usize) -> Instant {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while st.0 < n {
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        let t0 = Instant::now();
        st.1 = Some(Some(t0));
        self.changed.notify_all();
        t0
    }

    fn abort(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.1 = Some(None);
        self.changed.notify_all();
    }
}

fn new_run_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mixed = (nanos as u64) ^ (u64::from(std::process::id()) << 40);
    format!("{:012x}", mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16)
}

fn worker(
    index: usize,
    cfg: Arc<RunConfig>,
    stop: Arc<AtomicBool>,
    counters: Arc<RunCounters>,
    gate: Arc<Gate>,
    run_id: Arc<str>,
    mut first: Option<std::net::TcpStream>,
) -> Result<Option<WorkerResult>, String> {
    let (lo, hi) = cfg.conn_range(index);
    // The closed loop runs on io_uring where the kernel allows it; everything
    // else (and the closed loop elsewhere) on a current-thread tokio runtime.
    let ring = match cfg.mode {
        Mode::Closed if cfg.uring => uring::new_ring(hi - lo).ok(),
        _ => None,
    };
    let rt = match ring {
        Some(_) => None,
        None => Some(
            tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build(),
        ),
    };
    // Report ready even on failure, so the coordinator never waits forever.
    let Some(t0) = gate.ready_and_wait() else {
        return Ok(None);
    };
    let budget = cfg.requests.map(|n| cfg.share(n, index));
    let steps = match &cfg.mode {
        Mode::Scenario(s) => s.steps.len(),
        _ => 0,
    };
    let shared = Rc::new(Shared::new(
        cfg.clone(),
        t0,
        stop,
        counters,
        run_id,
        budget,
        steps,
    ));
    let io = if ring.is_some() { "io_uring" } else { "epoll" };
    match (ring, rt) {
        (Some(ring), _) => uring::closed_loop(&shared, ring, lo, hi, first.take()),
        (None, Some(rt)) => {
            let rt = rt.map_err(|e| format!("cannot start an I/O runtime: {e}"))?;
            run_tokio(&cfg, &shared, &rt, lo, hi, first.take());
        }
        (None, None) => unreachable!("a ring or a runtime was built above"),
    }
    let finished = Instant::now();
    let sh =
        Rc::try_unwrap(shared).map_err(|_| "a connection task outlived its run".to_string())?;
    Ok(Some(WorkerResult {
        stats: sh.stats.into_inner(),
        steps: sh.steps.into_inner(),
        iterations: sh.iterations.into_inner(),
        iterations_failed: sh.iterations_failed.get(),
        missed: sh.missed.get(),
        late_sends: sh.late_sends.get(),
        server: sh.server.into_inner(),
        doc_len: sh.doc_len.get(),
        first_check_error: sh.first_check_error.into_inner(),
        started: t0,
        finished,
        cpu_s: thread_cpu_seconds(),
        io,
        series: sh.series.map(|s| s.into_inner()),
    }))
}

/// One task per connection on a current-thread tokio runtime, until all end.
fn run_tokio(
    cfg: &Arc<RunConfig>,
    shared: &Rc<Shared>,
    rt: &tokio::runtime::Runtime,
    lo: usize,
    hi: usize,
    mut first: Option<std::net::TcpStream>,
) {
    let local = tokio::task::LocalSet::new();
    local.block_on(rt, async {
        let mut handles = Vec::with_capacity(hi - lo);
        let scenario = match &cfg.mode {
            Mode::Scenario(s) => Some(Rc::new((**s).clone())),
            _ => None,
        };
        for i in lo..hi {
            let sh = shared.clone();
            let probe = i == lo;
            let stream = if i == lo { first.take() } else { None };
            let handle = match (&cfg.mode, &scenario) {
                (Mode::Closed, _) if cfg.h2.is_some() => {
                    tokio::task::spawn_local(crate::h2conn::closed_connection(sh, probe))
                }
                (Mode::Closed, _) => tokio::task::spawn_local(closed_connection(sh, probe, stream)),
                (Mode::Open { rate }, _) => {
                    tokio::task::spawn_local(open_connection(sh, i, *rate, probe, stream))
                }
                (Mode::Scenario(_), Some(s)) => {
                    tokio::task::spawn_local(virtual_user(sh, s.clone(), i as u64, stream))
                }
                (Mode::Scenario(_), None) => unreachable!("scenario compiled above"),
            };
            handles.push(handle);
        }
        let cut = tokio::select! {
            _ = join_all(&mut handles) => false,
            _ = cut_reached(shared) => true,
        };
        if cut {
            // Give up what is still in flight: count it unanswered, end at once.
            let abandoned = in_flight();
            for h in &handles {
                h.abort();
            }
            join_all(&mut handles).await;
            let now = Instant::now();
            for _ in 0..abandoned {
                shared.record(&Err(Failure::Timeout), now, Duration::ZERO, None);
            }
        }
    });
}

/// Wait for every connection task (a panic in one is raised here).
async fn join_all(handles: &mut [tokio::task::JoinHandle<()>]) {
    for h in handles.iter_mut() {
        if let Err(e) = h.await {
            if e.is_panic() {
                std::panic::resume_unwind(e.into_panic());
            }
        }
    }
}

/// Ends when the run must give up its requests in flight (`Shared::cut`).
async fn cut_reached(shared: &Shared) {
    while !shared.cut(Instant::now()) {
        tokio::time::sleep(CUT_TICK).await;
    }
}

/// Run `cfg` to completion. `poll` is called about every 100 ms from the calling
/// thread; returning true stops the run early (Ctrl-C), and the report says so.
/// `first`, when given, is a connected socket for the run's first connection.
pub fn run(
    cfg: RunConfig,
    mut first: Option<std::net::TcpStream>,
    poll: &mut dyn FnMut() -> bool,
) -> Result<Report, String> {
    let cfg = Arc::new(cfg);
    let threads = cfg.threads;
    let stop = Arc::new(AtomicBool::new(false));
    let counters = Arc::new(RunCounters::default());
    let gate = Arc::new(Gate::default());
    let run_id: Arc<str> = Arc::from(new_run_id());
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::with_capacity(threads);
    for index in 0..threads {
        let (cfg, stop, counters, gate_w, run_id, tx) = (
            cfg.clone(),
            stop.clone(),
            counters.clone(),
            gate.clone(),
            run_id.clone(),
            tx.clone(),
        );
        let stream = first.take();
        let spawned = thread::Builder::new()
            .name(format!("loadgen-{index}"))
            .spawn(move || {
                let r = worker(index, cfg, stop, counters, gate_w, run_id, stream);
                let _ = tx.send(r);
            });
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                gate.abort();
                for h in handles {
                    let _ = h.join();
                }
                return Err(format!("cannot start a worker thread: {e}"));
            }
        }
    }
    drop(tx);
    gate.open_when_ready(threads);
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut results = Vec::with_capacity(threads);
    let mut interrupted = false;
    while results.len() < threads {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(r) => results.push(r),
            Err(RecvTimeoutError::Timeout) => {
                if !interrupted && poll() {
                    interrupted = true;
                    stop.store(true, Ordering::Relaxed);
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let mut panicked = false;
    for h in handles {
        panicked |= h.join().is_err();
    }
    if panicked || results.len() < threads {
        return Err("internal error: a load worker thread crashed".into());
    }
    let results: Vec<WorkerResult> = results
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    if results.len() < threads {
        return Err("internal error: a load worker thread gave up".into());
    }
    let mut report = merge(&cfg, results, interrupted, run_id.to_string());
    report.started_unix = started_unix;
    report.failures_exceeded = cfg
        .max_failures
        .is_some_and(|max| counters.failures.load(Ordering::Relaxed) > max);
    Ok(report)
}

fn merge(
    cfg: &RunConfig,
    mut results: Vec<WorkerResult>,
    interrupted: bool,
    run_id: String,
) -> Report {
    let mut stats = Stats::new();
    let (names, n_steps) = match &cfg.mode {
        Mode::Scenario(s) => (
            s.steps.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
            s.steps.len(),
        ),
        _ => (Vec::new(), 0),
    };
    let mut steps: Vec<Stats> = (0..n_steps).map(|_| Stats::new()).collect();
    let mut iterations = histogram::new_histogram();
    let mut iterations_failed = 0;
    let mut missed = 0;
    let mut late_sends = 0;
    let mut cpu_s = 0.0;
    let mut server = None;
    let mut doc_len = None;
    let mut first_check_error = None;
    let io = results.first().map_or("epoll", |r| r.io);
    let t0 = results
        .iter()
        .map(|r| r.started)
        .min()
        .expect("at least one worker");
    let end = results
        .iter()
        .map(|r| r.finished)
        .max()
        .expect("at least one worker");
    let elapsed = end - t0;
    let recorders: Vec<Recorder> = results.iter_mut().filter_map(|r| r.series.take()).collect();
    let series = cfg
        .interval
        .map(|width| series::merge_each(&recorders, width, elapsed, EncodedInterval::from));
    drop(recorders);
    for r in results {
        stats.merge(&r.stats);
        for (a, b) in steps.iter_mut().zip(r.steps.iter()) {
            a.merge(b);
        }
        iterations
            .add(&r.iterations)
            .expect("histograms share bounds");
        iterations_failed += r.iterations_failed;
        missed += r.missed;
        late_sends += r.late_sends;
        cpu_s += r.cpu_s;
        if doc_len.is_none() && r.doc_len.is_some() {
            doc_len = r.doc_len;
            server = r.server;
        }
        if first_check_error.is_none() {
            first_check_error = r.first_check_error;
        }
    }
    let is_scenario = matches!(cfg.mode, Mode::Scenario(_));
    Report {
        stats,
        steps: names.into_iter().zip(steps).collect(),
        iterations: is_scenario.then_some((iterations, iterations_failed)),
        elapsed,
        cpu_s,
        threads: cfg.threads,
        connections: cfg.connections,
        missed,
        late_sends,
        server,
        doc_len,
        first_check_error,
        interrupted,
        failures_exceeded: false,
        run_id,
        io,
        series,
        started_unix: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::thread;
    use std::time::{Duration, Instant};

    use crate::config::{Options, RunConfig};
    use crate::histogram::{self, Hist};

    /// A real HTTP/1.1 server on 127.0.0.1 that answers every request with 200
    /// (and every 10th with 404), one at a time, and stops answering for
    /// `stall` once, `after` the first request: every connection waits.
    fn stalling_server(after: Duration, stall: Duration) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new((None::<Instant>, false)));
        let seen = Arc::new(AtomicU64::new(0));
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { return };
                let (state, seen) = (state.clone(), seen.clone());
                thread::spawn(move || {
                    let mut buf = Vec::new();
                    loop {
                        if crate::testing::read_head(&mut s, &mut buf).is_none() {
                            return;
                        }
                        let n = seen.fetch_add(1, Ordering::SeqCst);
                        {
                            let mut st = state.lock().unwrap();
                            let first = *st.0.get_or_insert_with(Instant::now);
                            if !st.1 && first.elapsed() >= after {
                                st.1 = true;
                                thread::sleep(stall);
                            }
                        }
                        let reply: &[u8] = if n % 10 == 9 {
                            b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno"
                        } else {
                            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
                        };
                        if s.write_all(reply).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        port
    }

    fn pairs(h: &Hist) -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// The series of a closed loop (io_uring and epoll) and of an open loop add up
    /// to the run's totals, its histograms to the main one bucket for bucket, and
    /// the server's stall shows as intervals without a single answer.
    #[test]
    fn series_adds_up_and_shows_a_stall() {
        for (uring, rate) in [(true, None), (false, None), (false, Some(2_000.0))] {
            let port = stalling_server(Duration::from_millis(300), Duration::from_millis(700));
            let o = Options {
                connections: 4,
                threads: Some(2),
                requests: None,
                duration: Some(1.5),
                rate,
                ..crate::testing::options(&format!("http://127.0.0.1:{port}/"))
            };
            let mut cfg = RunConfig::from_options(&o)
                .unwrap()
                .with_interval(0.2)
                .unwrap();
            cfg.uring = uring;
            let first = cfg.preflight().unwrap();
            let r = super::run(cfg, Some(first), &mut || false).unwrap();
            let what = format!("io={} rate={rate:?}", r.io);
            let s = r.series.as_ref().expect("a series by default");
            assert_eq!(s.width, Duration::from_millis(200), "{what}");
            let n = s.intervals.len();
            assert_eq!(
                n as u128,
                r.elapsed.as_nanos().div_ceil(200_000_000),
                "{what}"
            );
            let ok: u64 = s.intervals.iter().map(|i| i.ok).sum();
            let errors: u64 = s.intervals.iter().map(|i| i.errors).sum();
            let samples: u64 = s.intervals.iter().map(|i| i.samples).sum();
            assert!(r.stats.successes() > 100, "{what}");
            assert_eq!(ok, r.stats.successes(), "{what}");
            assert_eq!(ok + errors, r.stats.requests(), "{what}");
            assert!(errors > 0, "{what}: the 404s are failures");
            assert_eq!(samples, r.stats.hist.len(), "{what}");
            let mut sum = histogram::new_histogram();
            for i in &s.intervals {
                if let Some(text) = &i.hist {
                    let h = histogram::decode(text).unwrap();
                    assert_eq!(h.len(), i.samples, "{what}");
                    sum.add(&h).unwrap();
                } else {
                    assert_eq!(i.samples, 0, "{what}");
                }
            }
            assert_eq!(
                pairs(&sum),
                pairs(&r.stats.hist),
                "{what}: bucket for bucket"
            );
            for (k, i) in s.intervals.iter().enumerate() {
                assert_eq!(i.start, Duration::from_millis(200 * k as u64), "{what}");
            }
            let last = &s.intervals[n - 1];
            assert_eq!(last.start + last.duration, r.elapsed, "{what}");
            let idle = s.intervals[1..n - 1]
                .iter()
                .filter(|i| i.ok + i.errors == 0);
            assert!(
                idle.count() >= 1,
                "{what}: the stall shows: {:?}",
                s.intervals.iter().map(|i| i.ok).collect::<Vec<_>>()
            );
            assert!(s.intervals[0].ok > 0, "{what}");
        }
    }

    /// A server that accepts connections and never answers (keeps them open).
    fn silent_server() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(s) = stream else { return };
                held.push(s);
            }
        });
        port
    }

    /// A server that answers every request `delay` after it came.
    fn slow_server(delay: Duration) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { return };
                thread::spawn(move || {
                    let mut buf = Vec::new();
                    while crate::testing::read_head(&mut s, &mut buf).is_some() {
                        thread::sleep(delay);
                        let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
                        if s.write_all(reply).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        port
    }

    /// Run `o` on io_uring or epoll: the report, and how long the run took.
    fn run_on(o: &Options, uring: bool) -> (super::Report, Duration) {
        let mut cfg = RunConfig::from_options(o).unwrap();
        cfg.uring = uring;
        let started = Instant::now();
        let r = super::run(cfg, None, &mut || false).unwrap();
        (r, started.elapsed())
    }

    /// `duration` bounds the whole run: requests a silent server holds at the end
    /// are given up after `END_GRACE` and counted as timeouts (io_uring, epoll,
    /// open loop), far before their own timeout; a stop ends a run at once.
    #[test]
    fn the_end_of_a_timed_run_gives_up_what_is_in_flight() {
        use crate::worker::END_GRACE;
        for (uring, rate) in [(true, None), (false, None), (false, Some(50.0))] {
            let port = silent_server();
            let o = Options {
                connections: 3,
                threads: Some(1),
                requests: None,
                duration: Some(0.3),
                timeout: 60.0,
                rate,
                ..crate::testing::options(&format!("http://127.0.0.1:{port}/"))
            };
            let (r, took) = run_on(&o, uring);
            let what = format!("io={} rate={rate:?}", r.io);
            assert!(
                took >= Duration::from_millis(300) + END_GRACE,
                "{what}: {took:?}"
            );
            assert!(took < Duration::from_secs(3), "{what}: took {took:?}");
            assert!(r.stats.requests() >= 3, "{what}");
            assert_eq!(r.stats.successes(), 0, "{what}");
            assert_eq!(
                r.stats.errors[3],
                r.stats.requests(),
                "{what}: all timeouts"
            );
        }
        // a stop (Ctrl-C) with no deadline and no timeout: at once
        for uring in [true, false] {
            let port = silent_server();
            let o = Options {
                connections: 2,
                threads: Some(1),
                requests: Some(100),
                timeout: 0.0,
                ..crate::testing::options(&format!("http://127.0.0.1:{port}/"))
            };
            let mut cfg = RunConfig::from_options(&o).unwrap();
            cfg.uring = uring;
            let started = Instant::now();
            let mut polls = 0;
            let r = super::run(cfg, None, &mut || {
                polls += 1;
                polls > 3
            })
            .unwrap();
            assert!(r.interrupted);
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "{:?}",
                started.elapsed()
            );
            assert_eq!(r.stats.errors[3], 2, "uring={uring}: the two given up");
        }
    }

    /// The answers to the last requests of a timed run are waited for as long as
    /// twice the slowest answer so far: a server that answers each request in 0.8 s
    /// is not failed for the second wave, sent at 0.8 s of a 1 s run and answered
    /// 0.6 s past its end (a fixed `END_GRACE` gave those up as timeouts).
    #[test]
    fn a_timed_run_waits_for_answers_as_slow_as_the_run_s_own() {
        for (uring, rate) in [(true, None), (false, None), (false, Some(5.0))] {
            let port = slow_server(Duration::from_millis(800));
            let o = Options {
                connections: 4,
                threads: Some(1),
                requests: None,
                duration: Some(1.0),
                timeout: 60.0,
                rate,
                ..crate::testing::options(&format!("http://127.0.0.1:{port}/"))
            };
            let (r, took) = run_on(&o, uring);
            let what = format!(
                "io={} rate={rate:?}: {:?} in {took:?}",
                r.io, r.stats.errors
            );
            assert_eq!(r.stats.errors, [0; 5], "{what}");
            assert!(r.stats.successes() >= 5, "{what}: {}", r.stats.successes());
            assert!(took < Duration::from_secs(3), "{what}");
        }
    }

    /// A run by count with a least duration sends past its count until that time
    /// is up, and every request it sent is answered (io_uring, epoll); without one
    /// it stops at the count.
    #[test]
    fn a_run_by_count_lasts_its_least_duration() {
        let port = slow_server(Duration::from_millis(20));
        for uring in [true, false] {
            let o = Options {
                connections: 2,
                threads: Some(1),
                requests: Some(4),
                min_duration: Some(0.5),
                ..crate::testing::options(&format!("http://127.0.0.1:{port}/"))
            };
            let (r, took) = run_on(&o, uring);
            let what = format!("io={}: {} requests in {took:?}", r.io, r.stats.requests());
            assert!(took >= Duration::from_millis(500), "{what}");
            assert!(took < Duration::from_secs(2), "{what}");
            assert!(r.stats.requests() > 10, "{what}");
            assert_eq!(r.stats.successes(), r.stats.requests(), "{what}");
            let plain = Options {
                min_duration: None,
                ..o
            };
            assert_eq!(run_on(&plain, uring).0.stats.requests(), 4);
        }
        let bad = |o: Options| match RunConfig::from_options(&o) {
            Err(crate::config::ConfigError::Invalid(m)) => m,
            other => panic!("{other:?}"),
        };
        let url = format!("http://127.0.0.1:{port}/");
        let timed = Options {
            requests: None,
            duration: Some(1.0),
            min_duration: Some(0.5),
            ..crate::testing::options(&url)
        };
        assert!(bad(timed).contains("closed run by count"));
        let negative = Options {
            min_duration: Some(-1.0),
            ..crate::testing::options(&url)
        };
        assert!(bad(negative).contains("min_duration"));
    }

    /// A run past its bound of failures stops at once and says so: non-2xx answers
    /// (every 10th is a 404) and timeouts (a silent server) both count; a run within
    /// its bound answers every request (io_uring and epoll).
    #[test]
    fn a_run_past_its_failures_stops() {
        for uring in [true, false] {
            let port = stalling_server(Duration::from_secs(3600), Duration::ZERO);
            let url = format!("http://127.0.0.1:{port}/");
            let run = |requests: u64, max: u64| {
                let o = Options {
                    connections: 2,
                    threads: Some(1),
                    requests: Some(requests),
                    max_failures: Some(max),
                    ..crate::testing::options(&url)
                };
                run_on(&o, uring).0
            };
            let within = run(200, 20);
            assert_eq!(within.stats.requests(), 200, "uring={uring}");
            assert_eq!(within.stats.requests() - within.stats.successes(), 20);
            assert!(!within.failures_exceeded, "uring={uring}");
            let cut = run(1_000_000, 5);
            let failed = cut.stats.requests() - cut.stats.successes();
            assert!(cut.failures_exceeded, "uring={uring}");
            assert!(failed > 5, "uring={uring}: {failed}");
            assert!(
                cut.stats.requests() < 1_000,
                "uring={uring}: {:?}",
                cut.stats.requests()
            );
            assert!(!cut.interrupted, "uring={uring}");

            // each request of a silent server waits its whole timeout: 1,000 of them
            // on 2 connections would take 100 s, the bound of 3 ends it after 4
            let port = silent_server();
            let o = Options {
                connections: 2,
                threads: Some(1),
                requests: Some(1_000),
                timeout: 0.2,
                max_failures: Some(3),
                ..crate::testing::options(&format!("http://127.0.0.1:{port}/"))
            };
            let (r, took) = run_on(&o, uring);
            assert!(r.failures_exceeded, "uring={uring}");
            assert!(
                took < Duration::from_secs(2),
                "uring={uring}: took {took:?}"
            );
            assert_eq!(r.stats.successes(), 0);
            assert!(
                (4..=8).contains(&r.stats.errors[3]),
                "uring={uring}: {:?}",
                r.stats.errors
            );
        }
    }

    #[test]
    fn no_series_when_turned_off() {
        let port = stalling_server(Duration::from_secs(3600), Duration::ZERO);
        let o = Options {
            connections: 2,
            threads: Some(1),
            requests: Some(50),
            ..crate::testing::options(&format!("http://127.0.0.1:{port}/"))
        };
        let cfg = RunConfig::from_options(&o)
            .unwrap()
            .with_interval(0.0)
            .unwrap();
        let r = super::run(cfg, None, &mut || false).unwrap();
        assert_eq!(r.stats.requests(), 50);
        assert!(r.series.is_none());
    }
}
