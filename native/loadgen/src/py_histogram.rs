//! `dbstand._loadgen.Histogram`: the engine's HDR histogram as a Python class, so
//! dbstand's in-process engine records and summarises latencies natively instead
//! of walking the pure-Python `hdrh` histogram (hundreds of ms per summary).
//!
//! Summaries follow `hdrh` exactly (see `histogram::hdrh`), and `encode`/`decode`
//! use the HdrHistogram V2 compressed base64 form that `hdrh` reads and writes,
//! so files written by either side read on the other.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::histogram::{self, hdrh, Hist};

/// An HDR histogram of non-negative integers (dbstand records nanoseconds).
///
/// Values outside [lowest, highest] are clamped into it, never dropped, the
/// same as dbstand's `LatencyHistogram` always did before recording.
#[pyclass(name = "Histogram", module = "dbstand._loadgen")]
pub struct PyHistogram {
    h: Hist,
}

impl PyHistogram {
    #[inline]
    fn clamp(&self, value: i128) -> u64 {
        let lo = i128::from(self.h.low());
        let hi = i128::from(self.h.high());
        value.clamp(lo, hi) as u64
    }
}

/// Text or bytes of an encoded histogram.
fn encoded_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.to_owned());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return std::str::from_utf8(b.as_bytes())
            .map(str::to_owned)
            .map_err(|_| PyValueError::new_err("an encoded histogram is ASCII base64"));
    }
    Err(PyTypeError::new_err(
        "an encoded histogram is a str or bytes",
    ))
}

#[pymethods]
impl PyHistogram {
    #[new]
    #[pyo3(signature = (lowest=histogram::LOWEST_NS, highest=histogram::HIGHEST_NS,
                        significant_digits=histogram::SIGNIFICANT_DIGITS))]
    fn new(lowest: u64, highest: u64, significant_digits: u8) -> PyResult<Self> {
        Hist::new_with_bounds(lowest, highest, significant_digits)
            .map(|h| PyHistogram { h })
            .map_err(|e| PyValueError::new_err(format!("bad histogram bounds: {e:?}")))
    }

    /// Record one value (clamped into the histogram's range).
    fn record(&mut self, value: i128) {
        let v = self.clamp(value);
        self.h.saturating_record(v);
    }

    /// Record every value of an iterable of ints (a list, an array, a generator).
    fn record_many(&mut self, values: &Bound<'_, PyAny>) -> PyResult<()> {
        for item in values.try_iter()? {
            let v: i128 = item?.extract()?;
            let v = self.clamp(v);
            self.h.saturating_record(v);
        }
        Ok(())
    }

    /// Exact merge: counts add up, so percentiles of the merge are those of all
    /// the samples (never an average of percentiles).
    fn merge(&mut self, other: PyRef<'_, PyHistogram>) -> PyResult<()> {
        self.h
            .add(&other.h)
            .map_err(|e| PyValueError::new_err(format!("cannot merge histograms: {e:?}")))
    }

    /// The value at `percentile` (0..100), as `hdrh`'s `get_value_at_percentile`.
    fn percentile(&self, percentile: f64) -> u64 {
        hdrh::value_at_percentile(&self.h, percentile)
    }

    /// Several percentiles at once (one call, one list).
    fn percentiles(&self, percentiles: Vec<f64>) -> Vec<u64> {
        percentiles
            .into_iter()
            .map(|p| hdrh::value_at_percentile(&self.h, p))
            .collect()
    }

    fn mean(&self) -> f64 {
        hdrh::mean(&self.h)
    }

    fn stddev(&self) -> f64 {
        hdrh::stddev(&self.h)
    }

    fn min(&self) -> u64 {
        hdrh::min(&self.h)
    }

    fn max(&self) -> u64 {
        hdrh::max(&self.h)
    }

    #[getter]
    fn count(&self) -> u64 {
        self.h.len()
    }

    #[getter]
    fn lowest(&self) -> u64 {
        self.h.low()
    }

    #[getter]
    fn highest(&self) -> u64 {
        self.h.high()
    }

    #[getter]
    fn significant_digits(&self) -> u8 {
        self.h.sigfig()
    }

    fn __len__(&self) -> usize {
        usize::try_from(self.h.len()).unwrap_or(usize::MAX)
    }

    /// HdrHistogram V2 compressed, base64 (what `hdrh`'s `encode` writes).
    fn encode(&self) -> String {
        histogram::encode(&self.h)
    }

    /// Read an encoded histogram (str or bytes), as written by `encode`, by the
    /// `hdrh` package or by any HdrHistogram implementation.
    #[staticmethod]
    fn decode(encoded: &Bound<'_, PyAny>) -> PyResult<PyHistogram> {
        let text = encoded_text(encoded)?;
        histogram::decode(&text)
            .map(|h| PyHistogram { h })
            .map_err(PyValueError::new_err)
    }

    fn copy(&self) -> PyHistogram {
        PyHistogram { h: self.h.clone() }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<PyHistogram>() {
            Ok(o) => {
                let o = o.borrow();
                self.h.low() == o.h.low()
                    && self.h.high() == o.h.high()
                    && self.h.sigfig() == o.h.sigfig()
                    && self.h == o.h
            }
            Err(_) => false,
        }
    }

    /// Pickles as its encoding (results travel between processes).
    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<(Py<PyAny>, (String,))> {
        let decode = slf.get_type().getattr("decode")?;
        Ok((decode.unbind(), (slf.borrow().encode(),)))
    }

    fn __repr__(&self) -> String {
        format!(
            "Histogram(count={}, min={}, max={}, mean={:.1})",
            self.h.len(),
            hdrh::min(&self.h),
            hdrh::max(&self.h),
            hdrh::mean(&self.h)
        )
    }
}
