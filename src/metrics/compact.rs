//! A client's response-time histogram with counts as narrow as they can be.
//!
//! An HDR histogram at 3 significant digits has 1,024 counts per power of two of the largest
//! value it holds: with `u64` counts, 88 KiB for a client whose slowest query took a second,
//! which 1,024 multiplexed connections on two cores reach (issue #20). Most counts of one
//! client stay small, so a [`CompactHistogram`] starts with `u8` counts and widens them (to
//! `u16`, `u32`, then `u64`) the moment one count reaches its type's maximum: nothing
//! saturates, and the counts, and so every figure computed from them, are those a `u64`
//! histogram would hold.

use hdrhistogram::{Counter, Histogram};

use crate::metrics::histogram::record_us;

/// A response-time histogram (microseconds, 3 significant digits, growing to the largest
/// value) whose counts widen as they grow.
#[derive(Clone, Debug)]
pub enum CompactHistogram {
    /// Every count below 255.
    U8(Histogram<u8>),
    /// Every count below 65,535.
    U16(Histogram<u16>),
    /// Every count below 2^32 - 1.
    U32(Histogram<u32>),
    /// Any count.
    U64(Histogram<u64>),
}

impl Default for CompactHistogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Records `us` in `h`, growing it as needed; true when the count of `us`'s bucket is now at
/// the counter type's maximum (the next record there would saturate).
#[inline]
fn record_full<T: Counter>(h: &mut Histogram<T>, us: u64, max: T) -> bool {
    if h.record(us).is_err() {
        h.saturating_record(us);
    }
    h.count_at(us) == max
}

/// A counter type a narrower count converts into.
trait Wider: Counter {
    fn of(n: u64) -> Self;
}

macro_rules! wider {
    ($($t:ty),*) => {$(
        impl Wider for $t {
            #[inline]
            fn of(n: u64) -> Self {
                <$t>::try_from(n).expect("a narrower count fits")
            }
        }
    )*};
}
wider!(u16, u32, u64);

/// `h`'s counts, in a histogram with wider counters of the same range and precision.
fn widen<T: Counter, U: Wider>(h: &Histogram<T>) -> Histogram<U> {
    let mut wide = Histogram::<U>::new_from(h);
    add_counts(h, &mut wide);
    wide
}

/// Adds `from`'s counts to `to` (same precision; `to` grows as needed).
fn add_counts<T: Counter, U: Wider>(from: &Histogram<T>, to: &mut Histogram<U>) {
    for v in from.iter_recorded() {
        // The value a bucket is iterated to lies in that bucket: recording it there counts
        // exactly where the original values were counted.
        let n = U::of(v.count_at_value().as_u64());
        if to.record_n(v.value_iterated_to(), n).is_err() {
            to.saturating_record_n(v.value_iterated_to(), n);
        }
    }
}

impl CompactHistogram {
    /// An empty histogram with `u8` counts.
    pub fn new() -> Self {
        let mut h = Histogram::<u8>::new(3).expect("3 significant digits is valid");
        h.auto(true);
        CompactHistogram::U8(h)
    }

    /// Records a response time of `us` microseconds.
    #[inline]
    pub fn record(&mut self, us: u64) {
        match self {
            CompactHistogram::U8(h) => {
                if record_full(h, us, u8::MAX) {
                    *self = CompactHistogram::U16(widen(h));
                }
            }
            CompactHistogram::U16(h) => {
                if record_full(h, us, u16::MAX) {
                    *self = CompactHistogram::U32(widen(h));
                }
            }
            CompactHistogram::U32(h) => {
                if record_full(h, us, u32::MAX) {
                    *self = CompactHistogram::U64(widen(h));
                }
            }
            CompactHistogram::U64(h) => record_us(h, us),
        }
    }

    /// Adds these counts to `to`.
    pub fn add_to(&self, to: &mut Histogram<u64>) {
        match self {
            CompactHistogram::U8(h) => add_counts(h, to),
            CompactHistogram::U16(h) => add_counts(h, to),
            CompactHistogram::U32(h) => add_counts(h, to),
            CompactHistogram::U64(h) => to.add(h).expect("auto-resizing histograms always add"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::histogram::new_histogram;

    /// `c`'s counts in a histogram with `u64` counts.
    fn to_u64(c: &CompactHistogram) -> Histogram<u64> {
        let mut h = new_histogram();
        c.add_to(&mut h);
        h
    }

    /// Every (bucket value, count) of `h`, with its total, min and max.
    fn figures(h: &Histogram<u64>) -> (Vec<(u64, u64)>, u64, u64, u64) {
        let counts = h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        (counts, h.len(), h.min(), h.max())
    }

    #[test]
    fn counts_widen_before_they_saturate_and_equal_a_u64_histogram() {
        let mut compact = CompactHistogram::new();
        let mut wide = new_histogram();
        // A pseudo-random spread over 1 us .. 2 s, with one value far more frequent than
        // the rest so that its count passes 255 and 65,535.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let us = if i % 2 == 0 { 150 } else { 1 + x % 2_000_000 };
            compact.record(us);
            record_us(&mut wide, us);
        }
        assert!(matches!(compact, CompactHistogram::U32(_)), "{compact:?}");
        assert_eq!(figures(&to_u64(&compact)), figures(&wide));
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                to_u64(&compact).value_at_quantile(q),
                wide.value_at_quantile(q)
            );
        }
        assert_eq!(to_u64(&compact).len(), 200_000);
    }

    #[test]
    fn a_u8_count_stops_at_255_and_the_next_record_is_kept() {
        let mut compact = CompactHistogram::new();
        for _ in 0..255 {
            compact.record(7);
        }
        assert!(matches!(compact, CompactHistogram::U16(_)));
        compact.record(7);
        assert_eq!(to_u64(&compact).count_at(7), 256);
    }

    #[test]
    fn small_counts_take_an_eighth_of_the_memory() {
        let mut compact = CompactHistogram::new();
        let mut wide = new_histogram();
        for us in [90, 400, 12_000, 900_000] {
            compact.record(us);
            record_us(&mut wide, us);
        }
        // As many counts as the u64 histogram, each one byte instead of eight.
        let CompactHistogram::U8(narrow) = &compact else {
            panic!("{compact:?}")
        };
        assert_eq!(narrow.distinct_values(), wide.distinct_values());
        assert_eq!(figures(&to_u64(&compact)), figures(&wide));
    }

    #[test]
    fn adding_to_a_wider_histogram_sums_counts() {
        let mut a = CompactHistogram::new();
        let mut total = new_histogram();
        for us in [1, 2, 3, 3, 1_000_000] {
            a.record(us);
        }
        record_us(&mut total, 5);
        a.add_to(&mut total);
        a.add_to(&mut total);
        assert_eq!(total.len(), 11);
        assert_eq!(total.count_at(3), 4);
        assert_eq!(total.max(), to_u64(&a).max());
    }
}
