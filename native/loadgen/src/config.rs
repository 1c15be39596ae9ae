//! What a run is asked to do, validated once before any thread starts.

use std::net::SocketAddr;
use std::time::Duration;

use crate::h2conn::H2Request;
use crate::http1::{self, RequestSpec};
use crate::scenario::{Scenario, ScenarioSpec};
use crate::series;
use crate::tls::{Tls, TlsOptions};
use crate::url::Target;

/// How requests are issued.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Each connection sends its next request when the previous answer arrived.
    Closed,
    /// Requests leave at fixed intended times, `rate` per second in total.
    Open { rate: f64 },
    /// Each connection is a virtual user looping over the scenario's steps
    /// (closed loop, or open loop when the run has a `scenario_rate`).
    Scenario(Box<Scenario>),
}

/// Raw options, as the Python glue receives them.
#[derive(Debug, Clone)]
pub struct Options {
    pub url: String,
    pub connections: usize,
    pub threads: Option<usize>,
    /// Closed loop: total requests; scenario: total iterations.
    pub requests: Option<u64>,
    pub duration: Option<f64>,
    pub keepalive: bool,
    /// Seconds; 0 means no timeout.
    pub timeout: f64,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub rate: Option<f64>,
    pub scenario_json: Option<String>,
    /// For `https://` targets.
    pub tls: TlsOptions,
    /// Speak HTTP/2 (ALPN h2 over TLS, h2c with prior knowledge on http://).
    pub http2: bool,
    /// HTTP/2: concurrent streams per connection.
    pub streams: usize,
    /// Stop the run once more requests than this have failed (None: no bound).
    pub max_failures: Option<u64>,
    /// A run by count: go on sending past `requests` until this many seconds have
    /// passed (None: stop at the count).
    pub min_duration: Option<f64>,
}

/// A validated run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    pub addr: SocketAddr,
    /// `https://`: the TLS set-up every connection uses.
    pub tls: Option<Tls>,
    /// HTTP/2: the request and streams per connection (None: HTTP/1.1).
    pub h2: Option<H2Request>,
    pub mode: Mode,
    pub request: Vec<u8>,
    pub head_request: bool,
    pub connections: usize,
    pub threads: usize,
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    pub keepalive: bool,
    pub timeout: Option<Duration>,
    /// Run the closed loop on io_uring when the kernel allows it (else tokio/epoll).
    pub uring: bool,
    /// Width of the time series' intervals; None keeps no series.
    pub interval: Option<Duration>,
    /// Scenario in open loop: iterations started per second, over all virtual users.
    pub scenario_rate: Option<f64>,
    /// A run that can no longer pass stops: once more requests than this have failed
    /// (not 2xx, a failed check, a socket error, a timeout), over all threads.
    pub max_failures: Option<u64>,
    /// A run by count sends at least `requests`, and until this long after its
    /// start: a run sized from a rate it outran still lasts its least time.
    pub min_duration: Option<Duration>,
}

/// A refusal before the run: a bad option or an unreachable target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    Invalid(String),
    Unreachable(String),
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError::Invalid(msg.into()))
}

/// Make room for one socket per connection: raise the soft open-file limit
/// towards the hard one if needed, or refuse with the number to ask for.
fn ensure_fd_limit(connections: usize) -> Result<(), String> {
    let needed = connections as u64 + 64; // plus the process's own files
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Ok(());
    }
    if lim.rlim_cur == libc::RLIM_INFINITY || lim.rlim_cur >= needed {
        return Ok(());
    }
    if lim.rlim_max == libc::RLIM_INFINITY || lim.rlim_max >= needed {
        let raised = libc::rlimit {
            rlim_cur: needed,
            rlim_max: lim.rlim_max,
        };
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Ok(());
        }
    }
    Err(format!(
        "{connections} connections need about {needed} open files, but the limit is {} \
         (raise it with `ulimit -n {needed}`)",
        lim.rlim_max
    ))
}

fn available_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Default thread count: half the cores this process may run on (at least one),
/// and never more than the connections. Measured on 2 cores against a local
/// nginx (64 connections): one thread served the requests for clearly less CPU
/// than two, which fought the server for its core and each woke for fewer
/// answers; one io_uring thread drives well over 100k requests/s, and a server
/// on the same machine needs the other half of the cores.
pub fn default_threads(cores: usize, connections: usize) -> usize {
    (cores / 2).max(1).min(connections)
}

impl RunConfig {
    pub fn from_options(o: &Options) -> Result<RunConfig, ConfigError> {
        let target = Target::parse(&o.url).map_err(|e| ConfigError::Invalid(e.0))?;
        if o.connections == 0 {
            return invalid("connections must be at least 1 (got 0)");
        }
        if o.connections > 100_000 {
            return invalid(format!(
                "at most 100000 connections (got {})",
                o.connections
            ));
        }
        if o.requests == Some(0) {
            return invalid("the number of requests must be at least 1 (got 0)");
        }
        let duration = match o.duration {
            None => None,
            Some(d) if d.is_finite() && d > 0.0 && d <= 7.0 * 86_400.0 => {
                Some(Duration::from_secs_f64(d))
            }
            Some(d) => {
                return invalid(format!(
                    "duration must be a positive number of seconds (got {d})"
                ))
            }
        };
        if !(o.timeout.is_finite() && o.timeout >= 0.0) {
            return invalid(format!("timeout must be >= 0 seconds (got {})", o.timeout));
        }
        let timeout = (o.timeout > 0.0).then(|| Duration::from_secs_f64(o.timeout));
        let threads = match o.threads {
            Some(0) => return invalid("threads must be at least 1 (got 0)"),
            Some(t) => t.min(o.connections),
            None => default_threads(available_cores(), o.connections),
        };
        let spec = RequestSpec {
            method: o.method.to_ascii_uppercase(),
            path: target.path.clone(),
            headers: o.headers.clone(),
            body: o.body.clone(),
        };
        http1::check_request(&spec).map_err(ConfigError::Invalid)?;
        if let Some(rate) = o.rate {
            if !(rate.is_finite() && rate > 0.0) {
                return invalid(format!(
                    "rate must be a positive number per second (got {rate})"
                ));
            }
            if duration.is_none() {
                return invalid("an open-loop run needs a duration");
            }
        }
        let scenario_rate = o.scenario_json.as_ref().and(o.rate);
        let mode = match (&o.scenario_json, o.rate) {
            (Some(json), _) => {
                let spec: ScenarioSpec = serde_json::from_str(json)
                    .map_err(|e| ConfigError::Invalid(format!("bad scenario: {e}")))?;
                Mode::Scenario(Box::new(
                    Scenario::compile(&spec).map_err(ConfigError::Invalid)?,
                ))
            }
            (None, Some(rate)) => Mode::Open { rate },
            (None, None) => Mode::Closed,
        };
        if o.requests.is_none() && duration.is_none() {
            return invalid("give a number of requests or a duration");
        }
        let min_duration = match o.min_duration {
            None => None,
            Some(_) if o.requests.is_none() || o.rate.is_some() => {
                return invalid("min_duration is for a closed run by count (requests, no rate)");
            }
            Some(d) if (0.0..=7.0 * 86_400.0).contains(&d) => Some(Duration::from_secs_f64(d)),
            Some(d) => {
                return invalid(format!(
                    "min_duration must be a number of seconds >= 0 (got {d})"
                ))
            }
        };
        let h2 = if o.http2 {
            if !matches!(mode, Mode::Closed) {
                return invalid("HTTP/2 runs the closed loop only (no rate, no scenario)");
            }
            if !o.keepalive {
                return invalid("HTTP/2 keeps its connections (no --no-keepalive)");
            }
            Some(
                H2Request::new(
                    target.tls,
                    &target.authority,
                    &spec.method,
                    &spec.path,
                    &spec.headers,
                    &spec.body,
                    o.streams,
                )
                .map_err(ConfigError::Invalid)?,
            )
        } else {
            if o.streams != 1 {
                return invalid("streams per connection need HTTP/2");
            }
            None
        };
        let alpn: &[&[u8]] = if o.http2 { &[b"h2"] } else { &[] };
        let tls = if target.tls {
            Some(Tls::new(&o.tls, &target.host, alpn).map_err(ConfigError::Invalid)?)
        } else {
            None
        };
        ensure_fd_limit(o.connections).map_err(ConfigError::Invalid)?;
        let addr = target.resolve().map_err(ConfigError::Invalid)?;
        Ok(RunConfig {
            request: http1::serialize(&spec, &target.authority, o.keepalive),
            head_request: spec.method == "HEAD",
            target,
            addr,
            mode,
            connections: o.connections,
            threads,
            requests: o.requests,
            duration,
            keepalive: o.keepalive,
            timeout,
            // io_uring drives plain sockets only; TLS and HTTP/2 run on tokio (epoll).
            uring: tls.is_none() && h2.is_none() && crate::uring::wanted(),
            tls,
            h2,
            scenario_rate,
            interval: Some(series::DEFAULT_INTERVAL),
            max_failures: o.max_failures,
            min_duration,
        })
    }

    /// Set the time series' interval from seconds (0: no series).
    pub fn with_interval(mut self, seconds: f64) -> Result<RunConfig, ConfigError> {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return invalid(format!(
                "interval must be 0 (no time series) or a number of seconds (got {seconds})"
            ));
        }
        if seconds == 0.0 {
            self.interval = None;
            return Ok(self);
        }
        let min = series::MIN_INTERVAL.as_secs_f64();
        if seconds < min || seconds > 7.0 * 86_400.0 {
            return invalid(format!(
                "interval must be 0 (no time series) or {min} to 604800 seconds (got {seconds})"
            ));
        }
        let width = Duration::from_secs_f64(seconds);
        if let Some(d) = self.duration {
            if d.as_secs_f64() / seconds > series::MAX_INTERVALS as f64 {
                return invalid(format!(
                    "an interval of {seconds} s cuts {} s into more than {} intervals",
                    d.as_secs_f64(),
                    series::MAX_INTERVALS
                ));
            }
        }
        self.interval = Some(width);
        Ok(self)
    }

    /// Refuse to start when nothing answers on the target port: one clear
    /// message beats a run made only of connect errors. The connection made
    /// here becomes the run's first connection, so the server sees no extra one.
    pub fn preflight(&self) -> Result<std::net::TcpStream, ConfigError> {
        let limit = self
            .timeout
            .unwrap_or(Duration::from_secs(5))
            .min(Duration::from_secs(5));
        let mut tcp = std::net::TcpStream::connect_timeout(&self.addr, limit).map_err(|e| {
            let text = e.to_string();
            let why = text.split(" (os error").next().unwrap_or(&text);
            let resolved = self.addr.ip().to_string();
            let via = if resolved == self.target.host {
                String::new()
            } else {
                format!(" ({resolved})")
            };
            ConfigError::Unreachable(format!(
                "cannot connect to {}:{}{via}: {why}",
                self.target.host, self.target.port
            ))
        })?;
        if let Some(tls) = &self.tls {
            let alpn = tls.check(&mut tcp, limit).map_err(|why| {
                ConfigError::Unreachable(format!(
                    "TLS handshake with {}:{} failed: {why}",
                    self.target.host, self.target.port
                ))
            })?;
            if self.h2.is_some() && alpn.as_deref() != Some(b"h2".as_slice()) {
                return Err(ConfigError::Unreachable(format!(
                    "{}:{} does not offer HTTP/2 (no 'h2' in its TLS ALPN answer)",
                    self.target.host, self.target.port
                )));
            }
        }
        Ok(tcp)
    }

    /// Split `total` over threads in proportion to their connections.
    pub fn share(&self, total: u64, thread: usize) -> u64 {
        let (lo, hi) = self.conn_range(thread);
        let upto = |n: usize| (u128::from(total) * n as u128 / self.connections as u128) as u64;
        upto(hi) - upto(lo)
    }

    /// Connections `[start, end)` handled by `thread`.
    pub fn conn_range(&self, thread: usize) -> (usize, usize) {
        let per = self.connections / self.threads;
        let extra = self.connections % self.threads;
        let start = thread * per + thread.min(extra);
        let len = per + usize::from(thread < extra);
        (start, start + len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(url: &str) -> Options {
        crate::testing::options(url)
    }

    #[test]
    fn splits_connections_and_budget() {
        let c = RunConfig::from_options(&opts("http://127.0.0.1:1/")).unwrap();
        let ranges: Vec<_> = (0..3).map(|t| c.conn_range(t)).collect();
        assert_eq!(ranges, vec![(0, 4), (4, 7), (7, 10)]);
        let total: u64 = (0..3).map(|t| c.share(1001, t)).sum();
        assert_eq!(total, 1001);
    }

    #[test]
    fn default_threads_leave_half_the_cores() {
        assert_eq!(default_threads(1, 64), 1);
        assert_eq!(default_threads(2, 64), 1);
        assert_eq!(default_threads(3, 64), 1);
        assert_eq!(default_threads(8, 64), 4);
        assert_eq!(default_threads(8, 2), 2);
        assert_eq!(default_threads(8, 1), 1);
    }

    #[test]
    fn refuses_bad_options() {
        let mut o = opts("http://127.0.0.1:1/");
        o.connections = 0;
        assert!(
            matches!(RunConfig::from_options(&o), Err(ConfigError::Invalid(m)) if m.contains("connections"))
        );
        let mut o = opts("http://127.0.0.1:1/");
        o.requests = None;
        assert!(RunConfig::from_options(&o).is_err());
        let mut o = opts("http://127.0.0.1:1/");
        o.rate = Some(100.0);
        assert!(
            RunConfig::from_options(&o).is_err(),
            "open loop without duration"
        );
        assert!(RunConfig::from_options(&opts("localhost:80")).is_err());
    }

    #[test]
    fn a_scenario_with_a_rate_is_open_loop() {
        let mut o = opts("http://127.0.0.1:1/");
        o.scenario_json = Some(r#"{"steps": [{"name": "a", "path": "/"}]}"#.into());
        o.rate = Some(50.0);
        assert!(
            RunConfig::from_options(&o).is_err(),
            "open loop without duration"
        );
        o.requests = None;
        o.duration = Some(1.0);
        let cfg = RunConfig::from_options(&o).unwrap();
        assert!(matches!(cfg.mode, Mode::Scenario(_)));
        assert_eq!(cfg.scenario_rate, Some(50.0));
        o.rate = Some(-1.0);
        assert!(RunConfig::from_options(&o).is_err());
        o.rate = None;
        assert_eq!(RunConfig::from_options(&o).unwrap().scenario_rate, None);
    }

    #[test]
    fn interval_defaults_to_a_second_and_zero_turns_it_off() {
        let c = RunConfig::from_options(&opts("http://127.0.0.1:1/")).unwrap();
        assert_eq!(c.interval, Some(Duration::from_secs(1)));
        let c = c.with_interval(0.25).unwrap();
        assert_eq!(c.interval, Some(Duration::from_millis(250)));
        assert_eq!(c.clone().with_interval(0.0).unwrap().interval, None);
        for bad in [-1.0, f64::NAN, 0.0001, 1e9] {
            assert!(c.clone().with_interval(bad).is_err(), "{bad}");
        }
        let mut o = opts("http://127.0.0.1:1/");
        o.duration = Some(86_400.0);
        let c = RunConfig::from_options(&o).unwrap();
        assert!(
            c.clone().with_interval(0.001).is_err(),
            "too many intervals"
        );
        assert!(c.with_interval(0.01).is_ok());
    }

    #[test]
    fn preflight_names_the_target() {
        // Bind then drop a listener to get a port with (almost surely) nobody on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = RunConfig::from_options(&opts(&format!("http://127.0.0.1:{port}/"))).unwrap();
        match c.preflight() {
            Err(ConfigError::Unreachable(m)) => assert!(m.contains(&port.to_string()), "{m}"),
            Err(other) => panic!("expected unreachable, got {other:?}"),
            Ok(_) => panic!("expected unreachable, got a connection"),
        }
    }
}
