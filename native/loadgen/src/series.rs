//! Per-interval time series of a run: successful answers, failed requests and an
//! HDR latency histogram per interval (one second by default), so warm-up, stalls
//! and drift show instead of vanishing into the run's totals.
//!
//! Each worker thread keeps its own `Recorder` (no sharing on the hot path); every
//! thread counts intervals from the run's one start instant, so interval `k` means
//! the same window on every thread and the threads merge by index, exactly
//! (`merge`). A request belongs to the interval in which it completed (failed),
//! and its latency is the value the run's main histogram records.
//!
//! Cheap per request: the completion time is the request's start plus its latency
//! (no extra clock read); the current interval is found by two comparisons; no
//! allocation. Two full histograms per thread stay live, the current interval's and
//! the previous one's (completions reach the recorder slightly out of order); when
//! an interval ends, the older one is folded into a short list of (value, count)
//! pairs, one per non-empty HDR bucket, which rebuilds it bucket for bucket.

use std::time::{Duration, Instant};

use crate::histogram::{self, Hist};

/// The default interval width.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// The narrowest interval accepted.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);
/// A run of known duration may have at most this many intervals.
pub const MAX_INTERVALS: u64 = 10_000_000;

/// One interval as one thread saw it.
#[derive(Debug, Default, Clone)]
struct Bucket {
    ok: u64,
    errors: u64,
    /// Latencies of an interval no longer live, as (value, count) pairs; the
    /// same value may appear more than once (late completions).
    folded: Vec<(u64, u64)>,
}

/// A histogram kept whole for one interval.
#[derive(Debug)]
struct Live {
    index: Option<usize>,
    hist: Hist,
}

/// One worker thread's series.
#[derive(Debug)]
pub struct Recorder {
    t0: Instant,
    width_ns: u64,
    buckets: Vec<Bucket>,
    cur: Live,
    prev: Live,
    /// The current interval is `[cur_start, cur_end)`.
    cur_start: Instant,
    cur_end: Instant,
    cur_index: usize,
    /// The interval of the last request recorded (for a check failing after it).
    last: usize,
}

impl Recorder {
    /// Intervals of `width` counted from `t0`, the run's common start.
    pub fn new(t0: Instant, width: Duration) -> Recorder {
        let width = width.max(MIN_INTERVAL);
        Recorder {
            t0,
            width_ns: u64::try_from(width.as_nanos()).unwrap_or(u64::MAX),
            buckets: vec![Bucket::default()],
            cur: Live {
                index: Some(0),
                hist: histogram::new_histogram(),
            },
            prev: Live {
                index: None,
                hist: histogram::new_histogram(),
            },
            cur_start: t0,
            cur_end: t0 + width,
            cur_index: 0,
            last: 0,
        }
    }

    /// An answer completed at `done` after `latency_ns`; `ok` when it counts as a
    /// success (2xx; a failed check later moves it, see `check_failed`).
    #[inline]
    pub fn answer(&mut self, done: Instant, ok: bool, latency_ns: u64) {
        let i = self.index(done);
        let b = &mut self.buckets[i];
        if ok {
            b.ok += 1;
        } else {
            b.errors += 1;
        }
        if i == self.cur_index {
            histogram::record(&mut self.cur.hist, latency_ns);
        } else {
            self.record_late(i, latency_ns);
        }
        self.last = i;
    }

    /// A request that got no answer, given up at `done`.
    #[inline]
    pub fn failure(&mut self, done: Instant) {
        let i = self.index(done);
        self.buckets[i].errors += 1;
        self.last = i;
    }

    /// The last answer recorded was a 2xx that failed a scenario check: not a
    /// success after all.
    pub fn check_failed(&mut self) {
        let b = &mut self.buckets[self.last];
        if b.ok > 0 {
            b.ok -= 1;
            b.errors += 1;
        }
    }

    #[inline]
    fn index(&mut self, done: Instant) -> usize {
        if done >= self.cur_start && done < self.cur_end {
            return self.cur_index;
        }
        self.locate(done)
    }

    /// Outside the current interval: a new one has begun (or, rarely, a
    /// completion arrived after a later one was seen).
    #[cold]
    #[inline(never)]
    fn locate(&mut self, done: Instant) -> usize {
        let since = done.saturating_duration_since(self.t0).as_nanos();
        let i = usize::try_from(since / u128::from(self.width_ns)).unwrap_or(usize::MAX - 1);
        if i > self.cur_index {
            self.advance(i);
        }
        i
    }

    /// Make interval `i` current: the previous interval's histogram is folded
    /// into its bucket and reused for `i`.
    fn advance(&mut self, i: usize) {
        if let Some(p) = self.prev.index {
            fold(&mut self.prev.hist, &mut self.buckets[p].folded);
        }
        std::mem::swap(&mut self.cur, &mut self.prev);
        self.cur.index = Some(i);
        self.cur_index = i;
        let offset = Duration::from_nanos(self.width_ns.saturating_mul(i as u64));
        self.cur_start = self.t0.checked_add(offset).unwrap_or(self.cur_start);
        self.cur_end = self
            .cur_start
            .checked_add(Duration::from_nanos(self.width_ns))
            .unwrap_or(self.cur_start);
        if self.buckets.len() <= i {
            self.buckets.resize_with(i + 1, Bucket::default);
        }
    }

    #[cold]
    fn record_late(&mut self, i: usize, latency_ns: u64) {
        if self.prev.index == Some(i) {
            histogram::record(&mut self.prev.hist, latency_ns);
        } else {
            self.buckets[i].folded.push((latency_ns, 1));
        }
    }

    /// Number of intervals holding anything.
    fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Add interval `i`'s counts and latencies to `ok`, `errors`, `into`.
    fn add_interval(&self, i: usize, ok: &mut u64, errors: &mut u64, into: &mut Hist) {
        let Some(b) = self.buckets.get(i) else {
            return;
        };
        *ok += b.ok;
        *errors += b.errors;
        for live in [&self.cur, &self.prev] {
            if live.index == Some(i) {
                into.add(&live.hist).expect("histograms share bounds");
            }
        }
        for &(value, count) in &b.folded {
            into.saturating_record_n(value.max(histogram::LOWEST_NS), count);
        }
    }
}

/// Move `h`'s counts into `out` (one pair per non-empty bucket) and empty `h`.
fn fold(h: &mut Hist, out: &mut Vec<(u64, u64)>) {
    if h.is_empty() {
        return;
    }
    out.reserve(h.distinct_values().min(4096));
    out.extend(
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value())),
    );
    h.reset();
}

/// One interval of a run, merged over threads.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Start, from the run's start.
    pub start: Duration,
    /// Width (the last interval may be shorter).
    pub duration: Duration,
    /// Successful answers (2xx that passed every check).
    pub ok: u64,
    /// Failed requests: other answers, failed checks, socket errors, timeouts.
    pub errors: u64,
    /// Latencies of every answer completed in the interval (as the run's main
    /// histogram records them); empty when none.
    pub hist: Hist,
}

/// A run's series, merged over threads.
pub type Series = SeriesOf<Interval>;

/// Merge the threads' recorders by interval index, exactly (counts added,
/// histograms bucket for bucket). `elapsed` is the run's length: every interval
/// up to it appears, empty ones too (a stall must show).
pub fn merge(recorders: &[Recorder], width: Duration, elapsed: Duration) -> Series {
    merge_each(recorders, width, elapsed, |i| i)
}

/// `merge`, handing each interval to `f` as it is built (the caller may encode
/// its histogram and keep only that, instead of one full histogram per interval).
pub fn merge_each<T>(
    recorders: &[Recorder],
    width: Duration,
    elapsed: Duration,
    mut f: impl FnMut(Interval) -> T,
) -> SeriesOf<T> {
    let width = width.max(MIN_INTERVAL);
    let width_ns = width.as_nanos();
    let by_time = elapsed.as_nanos().div_ceil(width_ns);
    let by_data = recorders.iter().map(Recorder::len).max().unwrap_or(0) as u128;
    let n = by_time.max(by_data).max(1) as usize;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut hist = histogram::new_histogram();
        let (mut ok, mut errors) = (0, 0);
        for r in recorders {
            r.add_interval(i, &mut ok, &mut errors, &mut hist);
        }
        let start = Duration::from_nanos((width_ns * i as u128).min(u64::MAX as u128) as u64);
        let duration = if i + 1 < n {
            width
        } else {
            elapsed.saturating_sub(start).min(width)
        };
        out.push(f(Interval {
            start,
            duration,
            ok,
            errors,
            hist,
        }));
    }
    SeriesOf {
        width,
        intervals: out,
    }
}

/// An interval with its histogram encoded (HdrHistogram V2 compressed base64,
/// None when it holds no latency): what a run reports, a few hundred bytes an
/// interval instead of a full histogram.
#[derive(Debug, Clone)]
pub struct EncodedInterval {
    pub start: Duration,
    pub duration: Duration,
    pub ok: u64,
    pub errors: u64,
    /// Latencies recorded in the interval (answers of any status).
    pub samples: u64,
    pub hist: Option<String>,
}

impl From<Interval> for EncodedInterval {
    fn from(i: Interval) -> EncodedInterval {
        EncodedInterval {
            start: i.start,
            duration: i.duration,
            ok: i.ok,
            errors: i.errors,
            samples: i.hist.len(),
            hist: (!i.hist.is_empty()).then(|| histogram::encode(&i.hist)),
        }
    }
}

/// A series whose intervals are of any form (see `merge_each`).
#[derive(Debug, Clone)]
pub struct SeriesOf<T> {
    pub width: Duration,
    pub intervals: Vec<T>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn pairs(h: &Hist) -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    #[test]
    fn counts_land_in_their_interval_and_idle_ones_show() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0, ms(100));
        r.answer(t0 + ms(10), true, 1_000);
        r.answer(t0 + ms(99), false, 2_000);
        r.failure(t0 + ms(150));
        // nothing from 200 to 400 ms: a stall
        r.answer(t0 + ms(420), true, 3_000);
        r.answer(t0 + ms(430), true, 4_000);
        r.check_failed();
        let s = merge(&[r], ms(100), ms(450));
        let got: Vec<_> = s.intervals.iter().map(|i| (i.ok, i.errors)).collect();
        assert_eq!(got, vec![(1, 1), (0, 1), (0, 0), (0, 0), (1, 1)]);
        let lens: Vec<_> = s.intervals.iter().map(|i| i.hist.len()).collect();
        assert_eq!(lens, vec![2, 0, 0, 0, 2]);
        assert_eq!(s.intervals[4].start, ms(400));
        assert_eq!(
            s.intervals[4].duration,
            ms(50),
            "the last interval is shorter"
        );
        assert_eq!(s.intervals[3].duration, ms(100));
    }

    #[test]
    fn late_completions_and_threads_merge_exactly() {
        let t0 = Instant::now();
        let mut whole = histogram::new_histogram();
        let mut threads = Vec::new();
        let mut total = 0;
        for thread in 0..3u64 {
            let mut r = Recorder::new(t0, ms(10));
            for k in 0..2_000u64 {
                // mostly in time order, with some completions a little or a lot late
                let at = match k % 97 {
                    0 => k.saturating_sub(300),
                    1 => k.saturating_sub(15),
                    _ => k,
                };
                let ns = 1_000 + (k * 7_919 + thread * 104_729) % 5_000_000;
                r.answer(t0 + Duration::from_micros(at * 50), k % 13 != 0, ns);
                histogram::record(&mut whole, ns);
                total += 1;
            }
            threads.push(r);
        }
        let s = merge(&threads, ms(10), ms(100));
        let mut sum = histogram::new_histogram();
        let (mut ok, mut errors) = (0, 0);
        for i in &s.intervals {
            sum.add(&i.hist).unwrap();
            ok += i.ok;
            errors += i.errors;
        }
        assert_eq!(ok + errors, total);
        assert_eq!(sum.len(), total);
        assert_eq!(pairs(&sum), pairs(&whole), "bucket for bucket");
        assert_eq!(s.intervals.len(), 10);
    }
}
