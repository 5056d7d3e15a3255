//! TPC-C's random values (clause 2.1.6, 4.3.2): NURand with its C constants (the run's C for
//! last names chosen from the load's by the specification's rule), last names from the ten
//! syllables, and sysbench-tpcc's text columns (`@` a random letter, `#` a digit), all from
//! seeded streams.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub use crate::workload::insert_benchmark::data::stream as rng;

/// The syllables of last names (clause 4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// Appends the last name of number `n` (0..=999): three syllables by its digits.
pub fn push_last_name(out: &mut String, n: u32) {
    out.push_str(SYLLABLES[(n / 100 % 10) as usize]);
    out.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    out.push_str(SYLLABLES[(n % 10) as usize]);
}

/// The C constants of NURand for A = 255, 1023 and 8191.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    /// For last names (A = 255).
    pub c255: u32,
    /// For customer ids (A = 1023).
    pub c1023: u32,
    /// For item ids (A = 8191).
    pub c8191: u32,
}

impl Constants {
    /// The load's constants, from the run's seed.
    pub fn load(seed: u64) -> Constants {
        let mut r = rng(seed, "tpcc-c-load", 0);
        Constants {
            c255: r.random_range(0..=255),
            c1023: r.random_range(0..=1023),
            c8191: r.random_range(0..=8191),
        }
    }

    /// The run's constants: new for ids; for last names, one whose distance to the load's is
    /// in 65..=119 and neither 96 nor 112 (clause 2.1.6.1), so the names a run draws differ
    /// from the load's distribution as specified.
    pub fn run(seed: u64) -> Constants {
        let load = Constants::load(seed);
        let mut r = rng(seed, "tpcc-c-run", 0);
        let delta = loop {
            let d = r.random_range(65..=119);
            if d != 96 && d != 112 {
                break d;
            }
        };
        let c255 = if load.c255 + delta <= 255 {
            load.c255 + delta
        } else {
            load.c255 - delta
        };
        Constants {
            c255,
            c1023: r.random_range(0..=1023),
            c8191: r.random_range(0..=8191),
        }
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x, with this
    /// set's C for A.
    pub fn nurand(&self, rng: &mut Pcg64Mcg, a: u32, x: u32, y: u32) -> u32 {
        let c = match a {
            255 => self.c255,
            1023 => self.c1023,
            _ => self.c8191,
        };
        let r = rng.random_range(0..=a) | rng.random_range(x..=y);
        (r + c) % (y - x + 1) + x
    }
}

/// Appends `prefix` then `n` random letters (sysbench's `@`).
pub fn push_letters(out: &mut String, rng: &mut Pcg64Mcg, prefix: &str, n: usize) {
    out.push_str(prefix);
    for _ in 0..n {
        out.push(char::from(b'a' + rng.random_range(0..26u8)));
    }
}

/// Appends `prefix` then `n` random digits (sysbench's `#`).
pub fn push_digits(out: &mut String, rng: &mut Pcg64Mcg, prefix: &str, n: usize) {
    out.push_str(prefix);
    for _ in 0..n {
        out.push(char::from(b'0' + rng.random_range(0..10u8)));
    }
}

/// Appends one random letter repeated `n` times (sysbench-tpcc's `string.rep(rand("@"), n)`).
pub fn push_repeated(out: &mut String, rng: &mut Pcg64Mcg, n: usize) {
    let c = char::from(b'a' + rng.random_range(0..26u8));
    for _ in 0..n {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_are_three_syllables() {
        let mut s = String::new();
        push_last_name(&mut s, 0);
        assert_eq!(s, "BARBARBAR");
        s.clear();
        push_last_name(&mut s, 371);
        assert_eq!(s, "PRICALLYOUGHT");
        s.clear();
        push_last_name(&mut s, 999);
        assert_eq!(s, "EINGEINGEING");
    }

    #[test]
    fn run_constants_follow_the_rule_for_any_seed() {
        for seed in 0..500 {
            let (l, r) = (Constants::load(seed), Constants::run(seed));
            let d = l.c255.abs_diff(r.c255);
            assert!(
                (65..=119).contains(&d) && d != 96 && d != 112,
                "{seed}: {d}"
            );
            assert!(r.c255 <= 255 && r.c1023 <= 1023 && r.c8191 <= 8191);
        }
        assert_eq!(Constants::load(7), Constants::load(7));
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let c = Constants::run(1);
        let mut r = rng(1, "t", 0);
        let mut hits = vec![0u32; 3001];
        for _ in 0..100_000 {
            let v = c.nurand(&mut r, 1023, 1, 3000);
            assert!((1..=3000).contains(&v));
            hits[v as usize] += 1;
        }
        // Non-uniform: the most drawn id is drawn far more than the uniform 33 times.
        assert!(*hits.iter().max().unwrap() > 100);
    }
}
