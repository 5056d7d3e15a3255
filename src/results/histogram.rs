//! Response-time histograms as results store them: HDR histograms of microseconds, serialized
//! (V2 + deflate, base64) so they can be merged later across clients, runs and hosts; a stored
//! one decoded only after its header is checked. What is read from them is
//! `metrics/histogram.rs`'s.

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
