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

/// Most bytes a histogram may inflate to (ibench's own take a few KiB: runs of zero counts
/// are one varint).
const MAX_INFLATED: u64 = 16 << 20;

/// Decodes a histogram written by [`encode`]. It may come from anyone (an imported
/// document): see [`plain_v2`] for what is checked before the decoder allocates.
pub fn decode(text: &str) -> Result<Histogram<u64>> {
    let bytes = STANDARD
        .decode(text)
        .context("histogram is not valid base64")?;
    let plain = plain_v2(&bytes)?;
    let h = Deserializer::new()
        .deserialize(&mut plain.as_ref())
        .map_err(|e| anyhow::anyhow!("histogram cannot be decoded: {e:?}"))?;
    Ok(h)
}

/// The plain V2 serialization in `bytes` (a V2-deflate one inflated, up to
/// [`MAX_INFLATED`]), holding as many bytes of counts as its header says: hdrhistogram's
/// decoder allocates that length (up to 4 GiB) before reading them.
fn plain_v2(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>> {
    use std::io::Read;
    // hdrhistogram's cookies (serialization/mod.rs), not exported.
    const V2: u32 = 0x1c84_9303 | 0x10;
    const V2_DEFLATE: u32 = 0x1c84_9304 | 0x10;
    // Cookie, payload length, normalizing offset, digits (4 bytes each); lowest, highest,
    // integer-to-double ratio (8 each).
    const HEADER: usize = 40;
    let word = |b: &[u8], at: usize| -> Result<usize> {
        let w = b
            .get(at..at + 4)
            .context("histogram cannot be decoded: it is cut short")?;
        Ok(u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as usize)
    };
    let plain = match u32::try_from(word(bytes, 0)?).unwrap_or(0) {
        V2 => std::borrow::Cow::Borrowed(bytes),
        V2_DEFLATE => {
            let compressed = &bytes[8.min(bytes.len())..];
            let compressed = &compressed[..word(bytes, 4)?.min(compressed.len())];
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(compressed)
                .take(MAX_INFLATED + 1)
                .read_to_end(&mut out)
                .map_err(|e| anyhow::anyhow!("histogram cannot be decoded: {e}"))?;
            if out.len() as u64 > MAX_INFLATED {
                anyhow::bail!(
                    "histogram cannot be decoded: it inflates to more than {} MiB",
                    MAX_INFLATED >> 20
                );
            }
            std::borrow::Cow::Owned(out)
        }
        _ => anyhow::bail!("histogram cannot be decoded: it is not an HDR V2 histogram"),
    };
    let payload = word(&plain, 4)?;
    let held = plain.len().saturating_sub(HEADER);
    if plain.len() < HEADER || payload > held {
        anyhow::bail!(
            "histogram cannot be decoded: its header announces {payload} bytes of counts, it \
             holds {held}"
        );
    }
    Ok(plain)
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
