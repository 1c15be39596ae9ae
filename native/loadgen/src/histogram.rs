//! Latency histograms: HDR, in nanoseconds, with the same bounds as dbstand's
//! Python `LatencyHistogram` (1 ns .. 1 hour, 3 significant digits), so a histogram
//! made here decodes and merges there without conversion.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

pub const LOWEST_NS: u64 = 1;
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
pub const SIGNIFICANT_DIGITS: u8 = 3;

pub type Hist = Histogram<u64>;

pub fn new_histogram() -> Hist {
    Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        .expect("static histogram bounds are valid")
}

/// Record one latency; values past the top are clamped, never dropped.
#[inline]
pub fn record(h: &mut Hist, nanos: u64) {
    h.saturating_record(nanos.max(LOWEST_NS));
}

/// HdrHistogram V2 + DEFLATE, base64: the interchange format of HDR tools.
pub fn encode(h: &Hist) -> String {
    let mut raw = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut raw)
        .expect("serializing into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(raw)
}

pub fn decode(text: &str) -> Result<Hist, String> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut raw.as_slice())
        .map_err(|e| format!("not an HdrHistogram V2 payload: {e:?}"))
}

/// Summaries computed the way the pure-Python `hdrh` package computes them, so a
/// number printed from a native histogram is the number `hdrh` would print for
/// the same counts (same rounding of the target count, same integer mean, same
/// order of floating-point additions in the standard deviation).
pub mod hdrh {
    use super::Hist;

    /// `hdrh`'s `get_value_at_percentile`: the count at the percentile is
    /// `int(p * n / 100 + 0.5)` (at least 1), the answer the highest value
    /// equivalent to the bucket that reaches it (the lowest for p == 0); 0 when empty.
    pub fn value_at_percentile(h: &Hist, percentile: f64) -> u64 {
        let p = percentile.min(100.0);
        let target = ((p * h.len() as f64 / 100.0 + 0.5) as u64).max(1);
        let mut seen = 0u64;
        for v in h.iter_recorded() {
            seen += v.count_at_value();
            if seen >= target {
                let value = v.value_iterated_to();
                return if p != 0.0 {
                    value
                } else {
                    h.lowest_equivalent(value)
                };
            }
        }
        0
    }

    /// `hdrh`'s `get_mean_value`: an exact integer sum of count x median-equivalent
    /// value, divided once; 0.0 when empty.
    pub fn mean(h: &Hist) -> f64 {
        if h.is_empty() {
            return 0.0;
        }
        let total: u128 = h
            .iter_recorded()
            .map(|v| {
                u128::from(v.count_at_value())
                    * u128::from(h.median_equivalent(v.value_iterated_to()))
            })
            .sum();
        total as f64 / h.len() as f64
    }

    /// `hdrh`'s `get_stddev` (population standard deviation over median-equivalent values).
    pub fn stddev(h: &Hist) -> f64 {
        if h.is_empty() {
            return 0.0;
        }
        let mean = mean(h);
        let mut total = 0.0f64;
        for v in h.iter_recorded() {
            let dev = h.median_equivalent(v.value_iterated_to()) as f64 - mean;
            total += (dev * dev) * v.count_at_value() as f64;
        }
        (total / h.len() as f64).sqrt()
    }

    /// `hdrh`'s `get_min_value`: 0 when empty or when 0 was recorded.
    pub fn min(h: &Hist) -> u64 {
        if h.is_empty() {
            0
        } else {
            h.min()
        }
    }

    /// `hdrh`'s `get_max_value`: 0 when empty.
    pub fn max(h: &Hist) -> u64 {
        if h.is_empty() {
            0
        } else {
            h.max()
        }
    }
}

/// Exact merge of encoded histograms (counts add up).
pub fn merge_encoded<'a>(texts: impl IntoIterator<Item = &'a str>) -> Result<String, String> {
    let mut total = new_histogram();
    for t in texts {
        let h = decode(t)?;
        total
            .add(&h)
            .map_err(|e| format!("cannot merge histograms: {e:?}"))?;
    }
    Ok(encode(&total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_merge() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in [1_000, 2_000, 3_000] {
            record(&mut a, v);
        }
        record(&mut b, 5_000_000);
        record(&mut b, 0);
        let merged =
            decode(&merge_encoded([encode(&a).as_str(), encode(&b).as_str()]).unwrap()).unwrap();
        assert_eq!(merged.len(), 5);
        assert!(merged.max() >= 4_990_000);
        assert_eq!(merged.min(), 1);
        assert!(encode(&a).starts_with("HISTF"));
    }

    #[test]
    fn summaries_follow_hdrh() {
        let mut h = new_histogram();
        assert_eq!(hdrh::value_at_percentile(&h, 50.0), 0);
        assert_eq!(
            (
                hdrh::mean(&h),
                hdrh::stddev(&h),
                hdrh::min(&h),
                hdrh::max(&h)
            ),
            (0.0, 0.0, 0, 0)
        );
        for v in [1_000, 2_000, 3_000, 4_000] {
            record(&mut h, v);
        }
        // What the pure-Python hdrh package answers for the same four values: below
        // 2048 every value has its own bucket, above buckets are 2 wide.
        assert_eq!(hdrh::value_at_percentile(&h, 0.0), 1_000);
        assert_eq!(hdrh::value_at_percentile(&h, 50.0), 2_000);
        assert_eq!(hdrh::value_at_percentile(&h, 100.0), 4_001);
        assert_eq!(hdrh::mean(&h), 2500.5);
        assert_eq!(hdrh::stddev(&h), 1118.4812246971337);
        assert_eq!((hdrh::min(&h), hdrh::max(&h)), (1_000, 4_001));
    }

    #[test]
    fn clamps_huge_values() {
        let mut a = new_histogram();
        record(&mut a, u64::MAX);
        assert_eq!(a.len(), 1);
    }
}
