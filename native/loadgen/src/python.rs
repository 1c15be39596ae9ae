//! PyO3 glue for `dbstand._loadgen`: argument conversion, GIL release, and the
//! result as plain Python dicts (typed on the Python side, `dbstand.loadgen`).

use pyo3::exceptions::{PyConnectionError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::config::{ConfigError, Options, RunConfig};
use crate::histogram;
use crate::runner::{self, Report};
use crate::stats::{Stats, FAILURE_NAMES};
use crate::tls::TlsOptions;

fn stats_dict<'py>(py: Python<'py>, s: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("requests", s.requests())?;
    d.set_item("responses", s.responses())?;
    d.set_item("successes", s.successes())?;
    d.set_item("check_failed", s.check_failed)?;
    let status = PyDict::new(py);
    for (code, n) in s.status_counts() {
        status.set_item(code, n)?;
    }
    d.set_item("status", status)?;
    let errors = PyDict::new(py);
    for (name, n) in FAILURE_NAMES.iter().zip(s.errors.iter()) {
        errors.set_item(*name, *n)?;
    }
    d.set_item("errors", errors)?;
    d.set_item("bytes", s.bytes)?;
    d.set_item("body_bytes", s.body_bytes)?;
    d.set_item("histogram", histogram::encode(&s.hist))?;
    d.set_item("handshakes", s.handshakes)?;
    d.set_item("handshakes_resumed", s.resumed)?;
    d.set_item("handshake_histogram", histogram::encode(&s.handshake_hist))?;
    Ok(d)
}

fn report_dict<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyDict>> {
    let d = stats_dict(py, &r.stats)?;
    d.set_item("elapsed_s", r.elapsed.as_secs_f64())?;
    d.set_item("cpu_s", r.cpu_s)?;
    d.set_item("threads", r.threads)?;
    d.set_item("connections", r.connections)?;
    d.set_item("missed", r.missed)?;
    d.set_item("late_sends", r.late_sends)?;
    d.set_item("server", r.server.as_deref())?;
    d.set_item("doc_len", r.doc_len)?;
    d.set_item("first_check_error", r.first_check_error.as_deref())?;
    d.set_item("failures_exceeded", r.failures_exceeded)?;
    d.set_item("run_id", &r.run_id)?;
    d.set_item("io", r.io)?;
    d.set_item("started_at", r.started_unix)?;
    let steps = PyList::empty(py);
    for (name, s) in &r.steps {
        let sd = stats_dict(py, s)?;
        sd.set_item("name", name)?;
        steps.append(sd)?;
    }
    d.set_item("steps", steps)?;
    match &r.iterations {
        Some((hist, failed)) => {
            let it = PyDict::new(py);
            it.set_item("ok", hist.len())?;
            it.set_item("failed", *failed)?;
            it.set_item("histogram", histogram::encode(hist))?;
            d.set_item("iterations", it)?;
        }
        None => d.set_item("iterations", py.None())?,
    }
    match &r.series {
        Some(s) => {
            let sd = PyDict::new(py);
            sd.set_item("interval_s", s.width.as_secs_f64())?;
            let intervals = PyList::empty(py);
            for i in &s.intervals {
                let id = PyDict::new(py);
                id.set_item("t_s", i.start.as_secs_f64())?;
                id.set_item("dur_s", i.duration.as_secs_f64())?;
                id.set_item("ops", i.ok)?;
                id.set_item("errors", i.errors)?;
                id.set_item("samples", i.samples)?;
                id.set_item("histogram", i.hist.as_deref())?;
                intervals.append(id)?;
            }
            sd.set_item("intervals", intervals)?;
            d.set_item("series", sd)?;
        }
        None => d.set_item("series", py.None())?,
    }
    Ok(d)
}

/// Run a load test and return its measurements as a dict.
///
/// `interval`: width in seconds of the time series' intervals (`series` in the
/// dict: per interval its start, width, successes, failures and latency
/// histogram); 0 keeps no series (`series` is None).
/// `max_failures`: the run stops once more requests than this have failed (not
/// 2xx, a failed check, a socket error, a timeout); `failures_exceeded` says so.
/// `min_duration` (a closed run by count): go on sending past `requests` until
/// this many seconds after the start; every request sent is answered.
///
/// Raises ValueError for bad options, ConnectionError when nothing answers on
/// the target port, KeyboardInterrupt when interrupted (the run is stopped at
/// once; the exception's `report` holds what was measured until then).
#[pyfunction]
#[pyo3(signature = (
    url, *, connections, threads=None, requests=None, duration=None, keepalive=true,
    timeout=10.0, method="GET", headers=Vec::new(), body=Vec::new(), rate=None, scenario=None,
    interval=1.0, insecure=false, ca_file=None, tls_resume=true, tls_version=None, sni=None,
    http2=false, streams=1, max_failures=None, min_duration=None,
))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    url: String,
    connections: usize,
    threads: Option<usize>,
    requests: Option<u64>,
    duration: Option<f64>,
    keepalive: bool,
    timeout: f64,
    method: &str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    rate: Option<f64>,
    scenario: Option<String>,
    interval: f64,
    insecure: bool,
    ca_file: Option<String>,
    tls_resume: bool,
    tls_version: Option<String>,
    sni: Option<String>,
    http2: bool,
    streams: usize,
    max_failures: Option<u64>,
    min_duration: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let options = Options {
        url,
        connections,
        threads,
        requests,
        duration,
        keepalive,
        timeout,
        method: method.to_string(),
        headers,
        body,
        rate,
        scenario_json: scenario,
        tls: TlsOptions {
            insecure,
            ca_file,
            resume: tls_resume,
            version: tls_version,
            sni,
        },
        http2,
        streams,
        max_failures,
        min_duration,
    };
    let cfg = RunConfig::from_options(&options)
        .and_then(|c| c.with_interval(interval))
        .map_err(config_error)?;
    let first = py.detach(|| cfg.preflight()).map_err(config_error)?;
    let (result, signal) = py.detach(move || {
        let mut signal: Option<PyErr> = None;
        let mut poll = || {
            let err = Python::attach(|py| py.check_signals().err());
            let stop = err.is_some();
            if signal.is_none() {
                signal = err;
            }
            stop
        };
        let result = runner::run(cfg, Some(first), &mut poll);
        (result, signal)
    });
    if let Some(err) = signal {
        // Ctrl-C or SIGTERM: the run ended at once; what it measured rides on the
        // exception (`report`), for the caller to record as an interrupted run.
        if let Ok(report) = &result {
            err.value(py).setattr("report", report_dict(py, report)?)?;
        }
        return Err(err);
    }
    let report = result.map_err(PyRuntimeError::new_err)?;
    report_dict(py, &report)
}

fn config_error(e: ConfigError) -> PyErr {
    match e {
        ConfigError::Invalid(m) => PyValueError::new_err(m),
        ConfigError::Unreachable(m) => PyConnectionError::new_err(m),
    }
}

/// Merge HDR histograms (V2 compressed base64) exactly; returns the same format.
#[pyfunction]
fn merge_histograms(histograms: Vec<String>) -> PyResult<String> {
    histogram::merge_encoded(histograms.iter().map(String::as_str)).map_err(PyValueError::new_err)
}

#[pymodule]
fn _loadgen(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(merge_histograms, m)?)?;
    m.add_class::<crate::py_histogram::PyHistogram>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("LATENCY_UNIT", "ns")?;
    m.add("TIMER_SLACK_S", crate::open_loop::TIMER_SLACK.as_secs_f64())?;
    Ok(())
}
