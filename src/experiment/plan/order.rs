//! The order of the cells within each round (repeat): a balanced Latin square (Williams
//! design), so that over the rounds every cell runs in every position equally often and
//! follows every other cell equally often; for two cells, ABBA (A B, B A, A B, ...).
//!
//! A run after another can be faster or slower because of it (a FULL-sync run leaves the
//! disk busy; a warm OS cache helps the next): with the same order every round that effect
//! lands on the same cell each time and reads as a difference between cells. Rotating the
//! order spreads it over all of them (Abedi & Brecht, "Conducting Repeatable Experiments in
//! Highly Variable Cloud Computing Environments", ICPE 2017: randomized multiple interleaved
//! trials). The order is a pure function of the number of cells and the round, so a resumed
//! experiment continues in the same order.
//!
//! [`rounds`] lays the cells out round by round in that order; [`Plan::with_repeats`] gives a
//! plan more (or fewer) rounds of the same cells.

use super::{Cell, Plan};

/// The rounds after which the order repeats: `n` for an even number of cells, `2n` for an
/// odd one (the square and its mirror), 1 for a single cell.
pub fn period(n: usize) -> usize {
    match n {
        0 | 1 => 1,
        n if n % 2 == 0 => n,
        n => 2 * n,
    }
}

/// The cells (indices into the matrix, `0..n`) in the order round `round` (0-based) runs
/// them. Round 0 is the matrix order (the file's).
pub fn round_order(n: usize, round: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    // Williams' first row 0, 1, n-1, 2, n-2, ...; row k adds k (mod n) to it.
    let first: Vec<usize> = (0..n)
        .map(|j| match j {
            0 => 0,
            j if j % 2 == 1 => j.div_ceil(2),
            j => n - j / 2,
        })
        .collect();
    // Relabelled so that row 0 is 0, 1, 2, ...: the symbol first[j] becomes j (a relabelling
    // keeps the square balanced).
    let mut relabel = vec![0; n];
    for (j, &s) in first.iter().enumerate() {
        relabel[s] = j;
    }
    let k = round % period(n);
    let row = |k: usize| -> Vec<usize> { first.iter().map(|&s| relabel[(s + k) % n]).collect() };
    if k < n {
        row(k)
    } else {
        let mut mirrored = row(k - n);
        mirrored.reverse();
        mirrored
    }
}

/// Every repeat of the cells built once (`once`, the matrix order), round by round (repeat 1
/// of every cell first), each round in its balanced order ([`round_order`]), each copy
/// recording its repeat (its round) and its position in the round.
pub fn rounds(once: &[Cell], repeats: u32) -> Vec<Cell> {
    let mut cells = Vec::with_capacity(once.len() * repeats as usize);
    for r in 1..=repeats {
        let order = round_order(once.len(), r as usize - 1);
        for (p, &i) in order.iter().enumerate() {
            cells.push(Cell {
                repeat: r,
                position: p as u32 + 1,
                ..once[i].clone()
            });
        }
    }
    cells
}

impl Plan {
    /// The same plan with `repeats` rounds (more or fewer than the file's): the first round's
    /// cells (the matrix order) repeated round by round in the balanced order, as the file's
    /// repeats are. `--until-decided` adds rounds with it; the runs done stay done.
    pub fn with_repeats(&self, repeats: u32) -> Plan {
        let once: Vec<Cell> = self
            .cells
            .iter()
            .filter(|c| c.repeat == 1)
            .cloned()
            .collect();
        Plan {
            repeats,
            cells: rounds(&once, repeats),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cells_alternate_abba() {
        let order: Vec<Vec<usize>> = (0..4).map(|r| round_order(2, r)).collect();
        assert_eq!(order, [[0, 1], [1, 0], [0, 1], [1, 0]]);
        assert_eq!(round_order(1, 5), [0]);
        assert!(round_order(0, 0).is_empty());
    }

    #[test]
    fn three_cells_use_the_square_and_its_mirror() {
        let order: Vec<Vec<usize>> = (0..6).map(|r| round_order(3, r)).collect();
        assert_eq!(
            order,
            [
                [0, 1, 2],
                [1, 2, 0],
                [2, 0, 1],
                [2, 1, 0],
                [0, 2, 1],
                [1, 0, 2]
            ]
        );
    }

    /// Over one period every row is a permutation starting with the matrix order, every cell
    /// is in every position equally often and follows every other cell equally often.
    #[test]
    fn every_square_up_to_nine_cells_is_balanced() {
        for n in 1..=9 {
            let rounds = period(n);
            let rows: Vec<Vec<usize>> = (0..rounds).map(|r| round_order(n, r)).collect();
            assert_eq!(rows[0], (0..n).collect::<Vec<_>>());
            let mut at = vec![vec![0; n]; n];
            let mut after = vec![vec![0; n]; n];
            for row in &rows {
                let mut sorted = row.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n {n}: {row:?}");
                for (p, &c) in row.iter().enumerate() {
                    at[c][p] += 1;
                }
                for w in row.windows(2) {
                    after[w[0]][w[1]] += 1;
                }
            }
            let each = rounds / n;
            assert!(at.iter().flatten().all(|&k| k == each), "n {n}: {at:?}");
            let pairs = rounds * (n - 1) / (n * (n - 1)).max(1);
            for (a, row) in after.iter().enumerate() {
                for (b, &k) in row.iter().enumerate() {
                    let want = if a == b { 0 } else { pairs };
                    assert_eq!(k, want, "n {n}: {a} then {b}");
                }
            }
            // The next period repeats the first.
            assert_eq!(round_order(n, rounds), rows[0]);
        }
    }
}
