//! PostgreSQL's binary `numeric` (base-10000 digits, a weight, a sign and a display scale),
//! read into and written from `f64`: TPC-C's amounts are `decimal(p, 2)` columns, which the
//! lean wire client exchanges in binary like every other value.

use bytes::{BufMut, BytesMut};

const NEGATIVE: u16 = 0x4000;
/// Decimal places written: more than any column's scale, which the server rounds to.
const SCALE: usize = 6;

/// Writes `v` as a binary `numeric`.
pub(super) fn encode(v: f64, out: &mut BytesMut) {
    let s = format!("{:.SCALE$}", v.abs());
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let int = int.trim_start_matches('0');
    let mut groups: Vec<i16> = Vec::new();
    let padded = format!("{}{int}", "0".repeat((4 - int.len() % 4) % 4));
    for chunk in padded.as_bytes().chunks(4) {
        groups.push(group(chunk));
    }
    let mut weight = groups.len() as i16 - 1;
    let mut frac = frac.to_string();
    while frac.len() % 4 != 0 {
        frac.push('0');
    }
    for chunk in frac.as_bytes().chunks(4) {
        groups.push(group(chunk));
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    let lead = groups.iter().take_while(|&&g| g == 0).count();
    weight -= lead as i16;
    let digits = &groups[lead..];
    if digits.is_empty() {
        weight = 0;
    }
    out.put_i16(digits.len() as i16);
    out.put_i16(weight);
    out.put_u16(if v < 0.0 && !digits.is_empty() { NEGATIVE } else { 0 });
    out.put_u16(SCALE as u16);
    for &d in digits {
        out.put_i16(d);
    }
}

fn group(chunk: &[u8]) -> i16 {
    chunk
        .iter()
        .fold(0i16, |acc, &b| acc * 10 + i16::from(b.wrapping_sub(b'0') % 10))
}

/// Reads a binary `numeric` (`None` for a malformed value or NaN).
pub(super) fn decode(raw: &[u8]) -> Option<f64> {
    let word = |i: usize| -> Option<u16> {
        Some(u16::from_be_bytes(raw.get(2 * i..2 * i + 2)?.try_into().ok()?))
    };
    let (n, weight, sign) = (word(0)? as usize, word(1)? as i16, word(2)?);
    if sign == 0xC000 {
        return None;
    }
    let mut v = 0.0;
    for i in 0..n {
        let d = f64::from(word(4 + i)?);
        v += d * 10_000f64.powi(i32::from(weight) - i as i32);
    }
    Some(if sign == NEGATIVE { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerics_round_trip() {
        for v in [
            0.0, 1.0, -1.0, 0.5, 12.34, -0.07, 300000.0, 9999.99, 123456789.25, 0.0001,
        ] {
            let mut out = BytesMut::new();
            encode(v, &mut out);
            let back = decode(&out).unwrap();
            assert!((back - v).abs() < 1e-9, "{v} came back as {back}");
        }
        // 1234.5 as PostgreSQL sends it: digits 1234, 5000; weight 0; scale 1.
        let raw = [0, 2, 0, 0, 0, 0, 0, 1, 0x04, 0xD2, 0x13, 0x88];
        assert_eq!(decode(&raw), Some(1234.5));
        assert_eq!(decode(&[0, 0, 0, 0, 0xC0, 0, 0, 0]), None);
        assert_eq!(decode(&[0, 1]), None);
    }
}
