//! Response-time histograms: recorded (microseconds), and the figures read from them
//! (percentiles, the classic bucket table). Their stored form (new, encode, decode) is
//! `results/histogram.rs`'s, handed on here.

use hdrhistogram::Histogram;

pub use crate::results::histogram::{decode, encode, new_histogram};

/// Records `us` in `h`, growing it as needed (`saturating_record` would clamp instead).
#[inline]
pub fn record_us(h: &mut Histogram<u64>, us: u64) {
    if h.record(us).is_err() {
        h.saturating_record(us);
    }
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
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use hdrhistogram::serialization::Serializer;

    use super::*;

    #[test]
    fn a_header_announcing_more_counts_than_it_holds_is_refused_before_allocating() {
        let mut h = new_histogram();
        h.record(100).unwrap();
        let mut plain = Vec::new();
        hdrhistogram::serialization::V2Serializer::new()
            .serialize(&h, &mut plain)
            .unwrap();
        assert!(decode(&STANDARD.encode(&plain)).is_ok());
        // 4 GiB of counts announced: the decoder would allocate them first.
        plain[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        let e = decode(&STANDARD.encode(&plain)).unwrap_err().to_string();
        assert!(e.contains("announces 4294967295 bytes"), "{e}");
        // The same inside a deflate stream.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, &plain).unwrap();
        let z = z.finish().unwrap();
        let mut wrapped = (0x1c84_9314u32).to_be_bytes().to_vec();
        wrapped.extend((z.len() as u32).to_be_bytes());
        wrapped.extend(z);
        let e = decode(&STANDARD.encode(&wrapped)).unwrap_err().to_string();
        assert!(e.contains("announces 4294967295 bytes"), "{e}");
        assert!(decode("aGVsbG8=").is_err() && decode("").is_err());
    }

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
