//! Change points of a series that grows by a run at a time, without a full recomputation:
//! the split step's windows and the weak points found in each are cached (the store's
//! `history_cache`) with a hash of the values they were found in. When the series has grown
//! by new points after the same values, every window that ended within the old values is
//! taken as it was (its points depend on its values alone) and only the windows over the
//! new points are searched; the merge step, linear in the points, runs over the whole
//! series. The result is the same as a full computation's (tested).

use serde::{Deserialize, Serialize};

use super::{ChangePoint, Params, Window, merge, split_windows, weak_points};

/// What is cached per series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cached {
    /// The parameters the points were found with.
    pub params: Params,
    /// Number of values they were found in.
    pub len: usize,
    /// Hash of those values (FNV-1a over their bits).
    pub hash: u64,
    /// The split step's windows and the weak points found in each.
    pub windows: Vec<Window>,
}

/// FNV-1a of the bits of `z`.
pub fn hash(z: &[f64]) -> u64 {
    let bytes: Vec<u8> = z.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    hash_bytes(&bytes)
}

/// FNV-1a of `bytes`.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// How a detection used the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reuse {
    /// Nothing cached, or it does not fit: computed over the whole series.
    Full,
    /// The same values: the cached weak points merged again.
    Same,
    /// New points after the cached ones: split from this index on.
    From(usize),
}

/// Change points of `z` by `params`, using `cached` where it fits; the new cache entry and
/// how the cache was used.
pub fn detect(
    z: &[f64],
    params: &Params,
    cached: Option<&Cached>,
) -> (Vec<ChangePoint>, Cached, Reuse) {
    let fits =
        cached.filter(|c| c.params == *params && c.len <= z.len() && c.hash == hash(&z[..c.len]));
    let (windows, reuse) = match fits {
        Some(c) if c.len == z.len() => (c.windows.clone(), Reuse::Same),
        Some(c) => {
            let windows = split_windows(z, params, &c.windows, c.len);
            let from = windows
                .iter()
                .zip(&c.windows)
                .take_while(|(a, b)| a == b && a.0 + params.window.max(2) <= c.len)
                .count();
            let start = windows.get(from).map_or(z.len(), |w| w.0);
            (windows, Reuse::From(start))
        }
        None => (split_windows(z, params, &[], 0), Reuse::Full),
    };
    let points = merge(z, &weak_points(&windows), params);
    let entry = Cached {
        params: *params,
        len: z.len(),
        hash: hash(z),
        windows,
    };
    (points, entry, reuse)
}
