//! Seeded value generation: rows for inserts and start values for queries.
//!
//! Every generator draws from its own PCG stream, derived from the run's seed and a stream name
//! (step, client, role), so the same seed gives the same rows in every run, whatever the thread
//! timing. `dateandtime` is the wall clock, as specified, and so is the only column that differs.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::dbms::{RangeQuery, RowBatch};
use crate::request::InsertBenchmarkSpec;

/// Characters of the random part of `data`.
const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// The padding character of `data` (the compressible part).
const PADDING: char = 'x';

/// SplitMix64 finaliser: spreads nearby seeds over the whole 64-bit space.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random-number stream for (`seed`, `name`, `client`): the same inputs give the same stream.
pub fn stream(seed: u64, name: &str, client: usize) -> Pcg64Mcg {
    // FNV-1a of the name, so the stream does not depend on the step's position in the run.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let s = mix(seed ^ mix(h ^ mix(client as u64)));
    Pcg64Mcg::seed_from_u64(s)
}

/// Generates rows as specified: uniform ids and price, `data` of uniform length with a random
/// part and padding.
pub struct RowGenerator {
    rng: Pcg64Mcg,
    cashregisters: i32,
    customers: i32,
    products: i32,
    max_price_cents: u64,
    data_min: usize,
    data_max: usize,
    random_pct: usize,
}

impl RowGenerator {
    /// A generator for one inserting thread.
    pub fn new(spec: &InsertBenchmarkSpec, rng: Pcg64Mcg) -> Self {
        RowGenerator {
            rng,
            cashregisters: spec.cashregisters as i32,
            customers: spec.customers as i32,
            products: spec.products as i32,
            max_price_cents: (spec.max_price * 100.0).round().max(1.0) as u64,
            data_min: spec.data_min,
            data_max: spec.data_max,
            random_pct: spec.data_random_pct as usize,
        }
    }

    /// Replaces the contents of `batch` with `rows` new rows stamped `now_unix_s`.
    pub fn fill(&mut self, batch: &mut RowBatch, rows: usize, now_unix_s: i64) {
        batch.clear();
        batch.dateandtime = now_unix_s;
        for _ in 0..rows {
            batch
                .cashregisterid
                .push(self.rng.random_range(0..self.cashregisters));
            batch
                .customerid
                .push(self.rng.random_range(0..self.customers));
            batch
                .productid
                .push(self.rng.random_range(0..self.products));
            // Whole cents, so every DBMS stores exactly the same price.
            let cents = self.rng.random_range(0..self.max_price_cents);
            batch.price.push(cents as f64 / 100.0);
            let len = self.rng.random_range(self.data_min..=self.data_max);
            let random = len * self.random_pct / 100;
            for _ in 0..random {
                let c = ALPHABET[self.rng.random_range(0..ALPHABET.len())];
                batch.data.push(c as char);
            }
            for _ in random..len {
                batch.data.push(PADDING);
            }
            batch.data_ends.push(batch.data.len());
        }
    }
}

/// Draws the start values of range queries and the ids of point queries.
pub struct QueryGenerator {
    rng: Pcg64Mcg,
    kinds: Vec<RangeQuery>,
    cashregisters: u32,
    max_price: f64,
}

impl QueryGenerator {
    /// A generator choosing among the range queries whose index exists.
    pub fn new(spec: &InsertBenchmarkSpec, rng: Pcg64Mcg) -> Self {
        let kinds = [RangeQuery::Market, RangeQuery::Register, RangeQuery::Pdc]
            .into_iter()
            .filter(|q| spec.indexes().contains(&q.index()))
            .collect();
        QueryGenerator {
            rng,
            kinds,
            cashregisters: spec.cashregisters,
            max_price: spec.max_price,
        }
    }

    /// A range query type, chosen uniformly, and its start value (uniform over the column).
    pub fn range(&mut self) -> (RangeQuery, f64) {
        let kind = self.kinds[self.rng.random_range(0..self.kinds.len())];
        let start = match kind {
            RangeQuery::Register => self.rng.random_range(0..self.cashregisters) as f64,
            RangeQuery::Market | RangeQuery::Pdc => self.rng.random_range(0.0..self.max_price),
        };
        (kind, start)
    }

    /// Fills `ids` with up to `n` distinct ids drawn uniformly from `lo..=hi`.
    pub fn point_ids(&mut self, lo: i64, hi: i64, n: usize, ids: &mut Vec<i64>) {
        ids.clear();
        if hi < lo {
            return;
        }
        let available = (hi - lo + 1) as u64;
        let n = n.min(available as usize);
        while ids.len() < n {
            let id = self.rng.random_range(lo..=hi);
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(seed: u64, client: usize) -> RowBatch {
        let spec = InsertBenchmarkSpec {
            seed,
            ..Default::default()
        };
        let mut g = RowGenerator::new(&spec, stream(spec.seed, "l.i0", client));
        let mut b = RowBatch::default();
        g.fill(&mut b, 100, 0);
        b
    }

    #[test]
    fn same_seed_same_rows_other_seed_other_rows() {
        assert_eq!(batch(7, 0), batch(7, 0));
        assert_ne!(batch(7, 0), batch(8, 0));
        assert_ne!(batch(7, 0), batch(7, 1));
    }

    #[test]
    fn values_stay_in_their_ranges() {
        let spec = InsertBenchmarkSpec::default();
        let b = batch(spec.seed, 0);
        for i in 0..b.len() {
            assert!((0..spec.cashregisters as i32).contains(&b.cashregisterid[i]));
            assert!((0..spec.customers as i32).contains(&b.customerid[i]));
            assert!((0..spec.products as i32).contains(&b.productid[i]));
            assert!(b.price[i] >= 0.0 && b.price[i] < spec.max_price);
            let len = b.data(i).len();
            assert!((spec.data_min..=spec.data_max).contains(&len));
            let padding = b
                .data(i)
                .chars()
                .rev()
                .take_while(|&c| c == PADDING)
                .count();
            assert!(padding >= len - len * spec.data_random_pct as usize / 100);
        }
    }

    #[test]
    fn point_ids_are_distinct_and_in_range() {
        let spec = InsertBenchmarkSpec::default();
        let mut q = QueryGenerator::new(&spec, stream(1, "qp", 0));
        let mut ids = Vec::new();
        for _ in 0..1000 {
            q.point_ids(100, 120, 10, &mut ids);
            assert_eq!(ids.len(), 10);
            assert!(ids.iter().all(|&id| (100..=120).contains(&id)));
            let mut sorted = ids.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), 10);
        }
        q.point_ids(5, 7, 10, &mut ids);
        assert_eq!(ids.len(), 3);
    }
}
