//! The values microbenchmarks draw: sysbench's text columns, keys, ranges that stay inside the
//! table, ids a client has to itself (so that deletes and re-inserts of two clients never
//! meet), and zipfian ids. Nothing here allocates per operation.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::{Operation, Scope};
use crate::dbms::sql::SbtestRows;
pub use crate::workload::insert_benchmark::data::stream as rng;

/// Digits in one group of sysbench's `c` and `pad` values.
const GROUP_DIGITS: usize = 11;
/// Groups in `c` (119 characters) and in `pad` (59 characters).
pub const C_GROUPS: usize = 10;
/// Groups in `pad`.
pub const PAD_GROUPS: usize = 5;

/// Appends `groups` groups of eleven random digits joined by `-`, as sysbench generates `c`
/// and `pad`.
pub fn push_digit_groups(out: &mut String, rng: &mut impl Rng, groups: usize) {
    for g in 0..groups {
        if g > 0 {
            out.push('-');
        }
        let mut v: u64 = rng.random_range(0..100_000_000_000);
        let mut digits = [b'0'; GROUP_DIGITS];
        for d in digits.iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        // Digits are ASCII.
        out.push_str(std::str::from_utf8(&digits).unwrap_or_default());
    }
}

/// The alphabet of random primary keys: Crockford's base 32, as ULIDs use.
const KEY_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Characters of a random primary key.
pub const KEY_LEN: usize = 26;

/// Appends a random 26-character key (130 random bits; not ordered by time, unlike a ULID, so
/// that inserts land anywhere in the primary key).
pub fn push_random_key(out: &mut String, rng: &mut impl Rng) {
    let (mut a, mut b): (u64, u64) = (rng.random(), rng.random());
    for i in 0..KEY_LEN {
        let src = if i < 12 { &mut a } else { &mut b };
        out.push(char::from(KEY_ALPHABET[(*src & 31) as usize]));
        *src >>= 5;
    }
}

/// Replaces `rows` with `n` rows from `first_id` on, as sysbench generates them: `k` uniform
/// in 1..=`table_rows`, `c` ten and `pad` five groups of eleven random digits, joined by `-`.
pub fn fill_rows(
    rows: &mut SbtestRows,
    rng: &mut impl Rng,
    first_id: i64,
    n: i64,
    table_rows: u64,
) {
    rows.id.clear();
    rows.k.clear();
    rows.c.clear();
    rows.pad.clear();
    for i in 0..n {
        rows.id.push(first_id + i);
        rows.k.push(rng.random_range(1..=table_rows as i32));
        let mut c = String::with_capacity(C_GROUPS * 12);
        push_digit_groups(&mut c, rng, C_GROUPS);
        rows.c.push(c);
        let mut pad = String::with_capacity(PAD_GROUPS * 12);
        push_digit_groups(&mut pad, rng, PAD_GROUPS);
        rows.pad.push(pad);
    }
}

impl Scope {
    /// A table, uniformly.
    pub fn table(&self, rng: &mut Pcg64Mcg) -> usize {
        rng.random_range(0..self.tables.max(1))
    }

    /// An id of a row, uniformly.
    pub fn id(&self, rng: &mut Pcg64Mcg) -> i64 {
        rng.random_range(1..=self.rows.max(1) as i64)
    }

    /// An id only this client draws (ids `client + 1 + j * clients`, uniformly): a row no
    /// other client of the step deletes, re-inserts or updates at the same time, so that rows
    /// counted are exact and a delete and its re-insert never meet another client's.
    pub fn own_id(&self, rng: &mut Pcg64Mcg) -> i64 {
        let (client, clients, rows) = (self.client as u64, self.clients.max(1) as u64, self.rows);
        if client >= rows {
            // Validation keeps every client below the row count; this only keeps it an id.
            return self.id(rng);
        }
        let mine = (rows - client - 1) / clients + 1;
        (client + 1 + rng.random_range(0..mine) * clients) as i64
    }

    /// A range of up to `len` ids or `k` values inside 1..=rows, uniformly placed: `(first,
    /// last)`, both included. Shorter than `len` only when the table is.
    pub fn range(&self, rng: &mut Pcg64Mcg, len: u64) -> (i64, i64) {
        let rows = self.rows.max(1);
        let len = len.clamp(1, rows);
        let first = rng.random_range(1..=rows - len + 1);
        (first as i64, (first + len - 1) as i64)
    }

    /// The `len` consecutive ids around the middle of the table (`rows / 2` on), fewer when
    /// the table is smaller: every client reads the same hot rows.
    pub fn hot_range(&self, len: u64) -> (i64, i64) {
        let rows = self.rows.max(1);
        let len = len.clamp(1, rows);
        let first = (rows / 2)
            .saturating_sub(len / 2)
            .max(1)
            .min(rows - len + 1);
        (first as i64, (first + len - 1) as i64)
    }
}

/// Adds `n` ids drawn uniformly to the last statement of `op`; returns how many distinct ids
/// they are (the rows an `IN` list of them matches). `scratch` is reused.
pub fn push_random_ids(
    op: &mut Operation,
    scope: &Scope,
    rng: &mut Pcg64Mcg,
    n: usize,
    scratch: &mut Vec<i64>,
) -> u64 {
    scratch.clear();
    for _ in 0..n {
        let id = scope.id(rng);
        scratch.push(id);
        op.int(id);
    }
    scratch.sort_unstable();
    scratch.dedup();
    scratch.len() as u64
}

/// Zipfian ranks 1..=n, rank r drawn with probability proportional to 1 / r^s, by
/// rejection-inversion (Hörmann and Derflinger 1996, as Apache Commons RNG does it): O(1) to
/// set up and per draw, so a client of a table of a billion rows starts at once.
#[derive(Clone, Copy, Debug)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    threshold: f64,
}

/// sysbench's default exponent (`--rand-zipfian-exp=0.8`).
pub const ZIPF_EXPONENT: f64 = 0.8;

impl Zipf {
    /// Ranks 1..=n with exponent `s` (> 0).
    pub fn new(n: u64, s: f64) -> Self {
        let n = n.max(1) as f64;
        let h_integral_x1 = h_integral(1.5, s) - 1.0;
        let h_integral_n = h_integral(n + 0.5, s);
        let threshold = 2.0 - h_integral_inverse(h_integral(2.5, s) - h(2.0, s), s);
        Zipf {
            n,
            s,
            h_integral_x1,
            h_integral_n,
            threshold,
        }
    }

    /// A rank, 1..=n.
    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        loop {
            let u: f64 =
                self.h_integral_n + rng.random::<f64>() * (self.h_integral_x1 - self.h_integral_n);
            let x = h_integral_inverse(u, self.s);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.threshold || u >= h_integral(k + 0.5, self.s) - h(k, self.s) {
                return k as u64;
            }
        }
    }
}

fn h(x: f64, s: f64) -> f64 {
    (-s * x.ln()).exp()
}

fn h_integral(x: f64, s: f64) -> f64 {
    let log_x = x.ln();
    helper2((1.0 - s) * log_x) * log_x
}

fn h_integral_inverse(x: f64, s: f64) -> f64 {
    let t = (x * (1.0 - s)).max(-1.0);
    (helper1(t) * x).exp()
}

/// `ln(1 + x) / x`, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(exp(x) - 1) / x`, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(rows: u64, client: usize, clients: usize) -> Scope {
        Scope {
            tables: 2,
            rows,
            client,
            clients,
        }
    }

    #[test]
    fn text_columns_look_like_sysbench_ones() {
        let mut rng = rng(1, "t", 0);
        let mut s = String::new();
        push_digit_groups(&mut s, &mut rng, C_GROUPS);
        assert_eq!(s.len(), 119);
        assert!(
            s.split('-')
                .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit()))
        );
        let mut k = String::new();
        push_random_key(&mut k, &mut rng);
        assert_eq!(k.len(), KEY_LEN);
        assert!(k.bytes().all(|b| KEY_ALPHABET.contains(&b)));
        let mut other = String::new();
        push_random_key(&mut other, &mut rng);
        assert_ne!(k, other);
    }

    #[test]
    fn own_ids_never_meet_and_cover_the_table() {
        let (rows, clients) = (103, 4);
        let mut seen = vec![None; rows as usize + 1];
        for client in 0..clients {
            let s = scope(rows, client, clients);
            let mut r = rng(3, "own", client);
            for _ in 0..5000 {
                let id = s.own_id(&mut r);
                assert!((1..=rows as i64).contains(&id));
                let owner = seen[id as usize].get_or_insert(client);
                assert_eq!(*owner, client, "id {id} drawn by two clients");
            }
        }
        assert!(
            seen[1..].iter().all(Option::is_some),
            "every id is someone's"
        );
    }

    #[test]
    fn ranges_stay_inside_the_table() {
        let s = scope(1000, 0, 1);
        let mut r = rng(1, "range", 0);
        for _ in 0..1000 {
            let (a, b) = s.range(&mut r, 100);
            assert!(a >= 1 && b <= 1000 && b - a + 1 == 100, "{a}..{b}");
        }
        assert_eq!(scope(50, 0, 1).range(&mut r, 10_000), (1, 50));
        assert_eq!(s.hot_range(100), (450, 549));
        assert_eq!(scope(50, 0, 1).hot_range(100), (1, 50));
        assert_eq!(scope(3, 0, 1).hot_range(2), (1, 2));
    }

    #[test]
    fn zipf_follows_its_law() {
        let z = Zipf::new(1_000_000, ZIPF_EXPONENT);
        let mut r = rng(1, "zipf", 0);
        let mut counts = [0u64; 4];
        let n = 400_000;
        for _ in 0..n {
            let k = z.sample(&mut r);
            assert!((1..=1_000_000).contains(&k));
            if k <= 3 {
                counts[k as usize] += 1;
            }
        }
        // P(1) / P(2) = 2^0.8, P(1) / P(3) = 3^0.8.
        let r12 = counts[1] as f64 / counts[2] as f64;
        let r13 = counts[1] as f64 / counts[3] as f64;
        assert!((r12 - 2f64.powf(0.8)).abs() < 0.1, "{r12}");
        assert!((r13 - 3f64.powf(0.8)).abs() < 0.15, "{r13}");
        // A tiny table still gives its ranks.
        let z = Zipf::new(1, ZIPF_EXPONENT);
        assert_eq!(z.sample(&mut r), 1);
    }
}
