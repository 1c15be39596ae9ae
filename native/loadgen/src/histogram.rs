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
    fn clamps_huge_values() {
        let mut a = new_histogram();
        record(&mut a, u64::MAX);
        assert_eq!(a.len(), 1);
    }
}
