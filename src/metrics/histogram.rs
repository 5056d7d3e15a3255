//! Response-time histograms as results store them: HDR histograms of microseconds, serialized
//! (V2 + deflate, base64) so they can be merged later across clients, runs and hosts; and the
//! figures read from them (percentiles, the classic bucket table).

use anyhow::{Context, Result};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// A new histogram of microseconds, 3 significant digits, growing to the largest value seen.
pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    h.auto(true);
    h
}

/// Records `us` in `h`, growing it as needed (`saturating_record` would clamp instead).
#[inline]
pub fn record_us(h: &mut Histogram<u64>, us: u64) {
    if h.record(us).is_err() {
        h.saturating_record(us);
    }
}

/// Encodes `h` as base64 of its V2-deflate serialization.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing a histogram into memory cannot fail");
    STANDARD.encode(bytes)
}

/// Decodes a histogram written by [`encode`].
pub fn decode(text: &str) -> Result<Histogram<u64>> {
    let bytes = STANDARD
        .decode(text)
        .context("histogram is not valid base64")?;
    let h = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("histogram cannot be decoded: {e:?}"))?;
    Ok(h)
}

pub use crate::results::model::Percentiles;

impl Percentiles {
    /// Reads the percentiles of `h`.
    pub fn of(h: &Histogram<u64>) -> Self {
        Percentiles {
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            mean: h.mean(),
        }
    }
}

/// Upper bounds (inclusive, microseconds) of the classic response-time buckets; a last bucket
/// holds everything above 16 s.
pub const BUCKET_BOUNDS_US: [u64; 9] = [
    256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000,
];

/// Labels of the classic buckets, in order (the last is `>16s`).
pub const BUCKET_LABELS: [&str; 10] = [
    "<=256us", "<=1ms", "<=4ms", "<=16ms", "<=64ms", "<=256ms", "<=1s", "<=4s", "<=16s", ">16s",
];

/// Count of ops per classic bucket, in the order of [`BUCKET_LABELS`] (not cumulative).
pub fn bucket_counts(h: &Histogram<u64>) -> [u64; 10] {
    let mut counts = [0u64; 10];
    for v in h.iter_recorded() {
        // The lowest value of the recorded sub-bucket, so a value at a bound (e.g. 4000 us)
        // counts in the bucket it bounds.
        let value = h.lowest_equivalent(v.value_iterated_to());
        let bucket = BUCKET_BOUNDS_US
            .iter()
            .position(|&b| value <= b)
            .unwrap_or(BUCKET_BOUNDS_US.len());
        counts[bucket] += v.count_at_value();
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip_keeps_every_count() {
        let mut h = new_histogram();
        for v in [1u64, 10, 100, 1_000, 10_000, 1_000_000, 30_000_000] {
            h.record_n(v, v % 7 + 1).unwrap();
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back.len(), h.len());
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
    }

    #[test]
    fn buckets_split_at_classic_bounds() {
        let mut h = new_histogram();
        h.record(256).unwrap(); // <=256us
        h.record(257).unwrap(); // <=1ms
        h.record(1_000).unwrap(); // <=1ms
        h.record(20_000_000).unwrap(); // >16s
        for bound in [4_000u64, 16_000, 1_000_000] {
            let mut one = new_histogram();
            one.record(bound).unwrap();
            let i = BUCKET_BOUNDS_US.iter().position(|&b| b == bound).unwrap();
            assert_eq!(
                bucket_counts(&one)[i],
                1,
                "{bound} us belongs to <= its bound"
            );
        }
        let c = bucket_counts(&h);
        assert_eq!(c[0], 1);
        assert_eq!(c[1], 2);
        assert_eq!(c[9], 1);
        assert_eq!(c.iter().sum::<u64>(), 4);
    }
}
