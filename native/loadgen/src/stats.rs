//! Counters and latency histogram kept by one worker thread (no sharing, no atomics)
//! and merged exactly once the run is over.

use crate::histogram::{self, Hist};

/// Why a request got no usable answer. Counted apart, never as a success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    Connect = 0,
    Read = 1,
    Write = 2,
    Timeout = 3,
    /// The server answered something that is not HTTP/1.x.
    Parse = 4,
}

pub const FAILURE_NAMES: [&str; 5] = ["connect", "read", "write", "timeout", "parse"];

/// Status codes are three digits; one slot each.
pub const STATUS_SLOTS: usize = 1000;

#[derive(Debug, Clone)]
pub struct Stats {
    pub hist: Hist,
    pub status: Box<[u64; STATUS_SLOTS]>,
    pub errors: [u64; 5],
    /// 2xx answers that failed a scenario check (expected value, capture).
    pub check_failed: u64,
    /// All bytes read from sockets (heads, bodies, chunk framing).
    pub bytes: u64,
    /// Decoded body bytes.
    pub body_bytes: u64,
    /// TLS connections set up (each counted with the answer that opened it).
    pub handshakes: u64,
    /// Of those, resumed sessions (abbreviated handshakes).
    pub resumed: u64,
    /// Set-up time of those connections: TCP connect plus TLS handshake (ns).
    pub handshake_hist: Hist,
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    pub fn new() -> Self {
        Stats {
            hist: histogram::new_histogram(),
            status: Box::new([0; STATUS_SLOTS]),
            errors: [0; 5],
            check_failed: 0,
            bytes: 0,
            body_bytes: 0,
            handshakes: 0,
            resumed: 0,
            handshake_hist: histogram::new_histogram(),
        }
    }

    /// A TLS connection was set up in `ns` (resumed or full handshake).
    #[inline]
    pub fn handshake(&mut self, ns: u64, resumed: bool) {
        histogram::record(&mut self.handshake_hist, ns);
        self.handshakes += 1;
        self.resumed += u64::from(resumed);
    }

    #[inline]
    pub fn answer(&mut self, status: u16, latency_ns: u64, bytes: u64, body_bytes: u64) {
        histogram::record(&mut self.hist, latency_ns);
        self.status[usize::from(status).min(STATUS_SLOTS - 1)] += 1;
        self.bytes += bytes;
        self.body_bytes += body_bytes;
    }

    #[inline]
    pub fn failure(&mut self, kind: Failure) {
        self.errors[kind as usize] += 1;
    }

    pub fn responses(&self) -> u64 {
        self.status.iter().sum()
    }

    pub fn successes(&self) -> u64 {
        self.status[200..300].iter().sum::<u64>() - self.check_failed
    }

    pub fn requests(&self) -> u64 {
        self.responses() + self.errors.iter().sum::<u64>()
    }

    pub fn merge(&mut self, other: &Stats) {
        self.hist.add(&other.hist).expect("histograms share bounds");
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += *b;
        }
        for (a, b) in self.errors.iter_mut().zip(other.errors.iter()) {
            *a += *b;
        }
        self.check_failed += other.check_failed;
        self.bytes += other.bytes;
        self.body_bytes += other.body_bytes;
        self.handshake_hist
            .add(&other.handshake_hist)
            .expect("histograms share bounds");
        self.handshakes += other.handshakes;
        self.resumed += other.resumed;
    }

    /// (status, count) for every status seen, ascending.
    pub fn status_counts(&self) -> Vec<(u16, u64)> {
        self.status
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(code, &n)| (code as u16, n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up() {
        let mut a = Stats::new();
        a.answer(200, 1000, 100, 10);
        a.answer(404, 1000, 100, 10);
        a.failure(Failure::Timeout);
        let mut b = Stats::new();
        b.answer(200, 2000, 50, 5);
        b.check_failed = 1;
        b.failure(Failure::Connect);
        a.merge(&b);
        assert_eq!(a.requests(), 5);
        assert_eq!(a.responses(), 3);
        assert_eq!(a.successes(), 1);
        assert_eq!(a.status_counts(), vec![(200, 2), (404, 1)]);
        assert_eq!(a.errors, [1, 0, 0, 1, 0]);
        assert_eq!((a.bytes, a.body_bytes, a.hist.len()), (250, 25, 3));
    }
}
