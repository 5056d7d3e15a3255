//! OLTP microbenchmarks (`../shared/docs/microbenchmarks.md`): sysbench-style tables
//! (`sbtest1` ... `sbtestN`: `id` primary key, `k` with a secondary index, `c` char(120),
//! `pad` char(60)), loaded by the `prepare` step, then each benchmark for a fixed time (after a
//! warm-up that is not counted) at each client count (`point-query.c1`, `point-query.c2`, ...).
//!
//! A benchmark is one small file: its statements in the DBMS-neutral vocabulary of
//! [`crate::dbms::micro::Statement`] and a [`Generator`] that picks each operation's table and
//! parameters into reused buffers ([`Operation`]); it is listed once in [`registry!`]. The
//! generic client loop runs it (pacing, timing, retries of a statement or of a whole
//! transaction); no SQL lives here.
//!
//! * `workload.rs` — the [`Micro`] workload: steps, tables, maintenance pauses, notes.
//! * `client.rs` — a benchmark's client and the loader, as drivers of the client loop.
//! * `data.rs` — values: sysbench's text columns, random keys, ids of one's own, zipfian ids.

mod client;
mod data;
mod sysbench;
mod workload;

use std::ops::Range;

use rand_pcg::Pcg64Mcg;

use crate::dbms::micro::{Shape, Statement, Value};
pub use workload::Micro;

/// Declares a benchmark's entries at further range lengths L: `NAME = L` each, named
/// `<family>_range=L`, built by `generator(scope, L)`, everything else as the entry `$base`
/// (its first length, written out in full).
macro_rules! at_lengths {
    ($base:ident, $family:literal, $generator:expr, [$($name:ident = $len:literal),* $(,)?]) => {
        $(
            #[doc = concat!("L = ", stringify!($len), ".")]
            pub static $name: super::Benchmark = super::Benchmark {
                name: concat!($family, "_range=", stringify!($len)),
                generator: |s| ($generator)(s, $len),
                ..$base
            };
        )*
    };
}

/// The registry: declares each benchmark's module and lists its entries, in `--list` (and
/// `all`) order. A module may define several entries (the range lengths of one benchmark).
macro_rules! registry {
    ($($module:ident : [$($benchmark:ident),* $(,)?]),* $(,)?) => {
        $(mod $module;)*
        /// Every microbenchmark.
        pub static BENCHMARKS: &[&Benchmark] = &[$($(&$module::$benchmark),*),*];
    };
}

registry! {
    point_query: [POINT_QUERY],
    random_points: [RANDOM_POINTS_10, RANDOM_POINTS_100, RANDOM_POINTS_1000],
    hot_points: [HOT_POINTS_100],
    points_covered: [POINTS_COVERED_PK, POINTS_COVERED_SI],
    points_notcovered: [POINTS_NOTCOVERED_PK, POINTS_NOTCOVERED_SI],
    range_covered: [
        RANGE_COVERED_PK_10, RANGE_COVERED_PK_100, RANGE_COVERED_PK_1000, RANGE_COVERED_PK_10000,
        RANGE_COVERED_SI_10, RANGE_COVERED_SI_100, RANGE_COVERED_SI_1000, RANGE_COVERED_SI_10000,
    ],
    range_notcovered: [
        RANGE_NOTCOVERED_PK_10, RANGE_NOTCOVERED_PK_100, RANGE_NOTCOVERED_PK_1000,
        RANGE_NOTCOVERED_PK_10000, RANGE_NOTCOVERED_SI_10, RANGE_NOTCOVERED_SI_100,
        RANGE_NOTCOVERED_SI_1000, RANGE_NOTCOVERED_SI_10000,
    ],
    scan: [SCAN],
    read_only: [READ_ONLY_10, READ_ONLY_100, READ_ONLY_10000],
    read_only_ranges: [
        READ_ONLY_SIMPLE, READ_ONLY_SUM, READ_ONLY_ORDER, READ_ONLY_DISTINCT, READ_ONLY_COUNT,
    ],
    update_index: [UPDATE_INDEX],
    update_nonindex: [UPDATE_NONINDEX],
    update_inlist: [UPDATE_INLIST],
    update_one: [UPDATE_ONE],
    update_zipf: [UPDATE_ZIPF],
    write_only: [WRITE_ONLY],
    read_write: [READ_WRITE_10, READ_WRITE_100],
    delete: [DELETE],
    insert: [INSERT],
    insert_random_pk: [INSERT_RANDOM_PK],
}

/// The name `--benchmarks all` stands for every benchmark.
pub const ALL: &str = "all";

/// Separates a benchmark's name from its range length L in the names of its variants
/// (`random-points_range=100`), as the reference harness writes them.
pub const RANGE_SEPARATOR: &str = "_range=";

/// One microbenchmark.
pub struct Benchmark {
    /// Name in `--benchmarks`, step names and results (`point-query`,
    /// `random-points_range=100`).
    pub name: &'static str,
    /// One line for `--list`: its statements and what it exposes.
    pub about: &'static str,
    /// Whether it changes rows: the maintenance pause follows it before the next benchmark
    /// that only reads.
    pub writes: bool,
    /// Whether an operation's statements run in one transaction (retried as a whole);
    /// otherwise each statement commits on its own.
    pub transaction: bool,
    /// The tables it runs on: sysbench's, or tables of its own that it creates at the start
    /// of each step (the insert benchmarks).
    pub shape: Shape,
    /// Every statement it may send (to say once when a DBMS cannot give a hint one asks for).
    pub statements: &'static [&'static Statement],
    /// A new generator for one client.
    pub generator: fn(&Scope) -> Box<dyn Generator>,
}

impl Benchmark {
    /// Its name without the range length (`random-points` for `random-points_range=100`).
    pub fn family(&self) -> &'static str {
        family(self.name)
    }

    /// Whether some statement asks for the secondary index by a hint.
    pub fn has_hint(&self) -> bool {
        self.statements.iter().any(|s| s.has_hint())
    }
}

fn family(name: &str) -> &str {
    name.split(RANGE_SEPARATOR).next().unwrap_or(name)
}

/// The benchmark called `name`.
pub fn find(name: &str) -> Option<&'static Benchmark> {
    BENCHMARKS.iter().copied().find(|b| b.name == name)
}

/// The benchmarks `name` stands for: one by its full name, every range length of a benchmark
/// by the name without one (`random-points`), or all of them (`all`); empty when none.
pub fn expand(name: &str) -> Vec<&'static Benchmark> {
    if name == ALL {
        return BENCHMARKS.to_vec();
    }
    if let Some(b) = find(name) {
        return vec![b];
    }
    BENCHMARKS
        .iter()
        .copied()
        .filter(|b| b.family() == name)
        .collect()
}

/// Every benchmark name, for messages.
pub fn names() -> Vec<&'static str> {
    BENCHMARKS.iter().map(|b| b.name).collect()
}

/// The names `--benchmarks` takes: every benchmark, every benchmark without its range length,
/// and `all`.
pub fn accepted_names() -> Vec<&'static str> {
    let mut out = vec![ALL];
    for b in BENCHMARKS {
        if b.family() != b.name && !out.contains(&b.family()) {
            out.push(b.family());
        }
        out.push(b.name);
    }
    out
}

/// What one client of a benchmark works on.
#[derive(Clone, Copy, Debug)]
pub struct Scope {
    /// Number of tables of the benchmark (`sbtest1` ... `sbtestN`).
    pub tables: usize,
    /// Rows per sysbench table (ids 1..=rows); the tables keep their size.
    pub rows: u64,
    /// This client, 0-based.
    pub client: usize,
    /// Clients of the step.
    pub clients: usize,
}

/// One operation of a client: its statements, sent in order (in one transaction when the
/// benchmark says so), with their values. Buffers are reused from one operation to the next.
#[derive(Debug, Default)]
pub struct Operation {
    calls: Vec<Call>,
    values: Vec<Value>,
    text: String,
    /// Rows the operation counts instead of those the statements return (a scan's rows).
    rows: Option<u64>,
}

#[derive(Debug)]
struct Call {
    statement: &'static Statement,
    table: usize,
    values: Range<usize>,
    expect: Option<u64>,
}

impl Operation {
    /// Adds `statement` on table `table` (0-based); its values follow with
    /// [`Operation::int`] and [`Operation::text`]. `expect` is the number of rows it must
    /// return or change, when known (a difference counts as a miss).
    pub fn push(
        &mut self,
        statement: &'static Statement,
        table: usize,
        expect: Option<u64>,
    ) -> &mut Self {
        let at = self.values.len();
        self.calls.push(Call {
            statement,
            table,
            values: at..at,
            expect,
        });
        self
    }

    /// Adds an integer value to the last statement.
    pub fn int(&mut self, v: i64) -> &mut Self {
        self.values.push(Value::Int(v));
        self.extend_last();
        self
    }

    /// Adds a text value, written by `write` into the operation's text buffer, to the last
    /// statement.
    pub fn text(&mut self, write: impl FnOnce(&mut String)) -> &mut Self {
        let start = self.text.len() as u32;
        write(&mut self.text);
        let end = self.text.len() as u32;
        self.values.push(Value::Text { start, end });
        self.extend_last();
        self
    }

    /// Sets the rows the last statement must return or change (known once its values are).
    pub fn expect_last(&mut self, expect: Option<u64>) {
        if let Some(last) = self.calls.last_mut() {
            last.expect = expect;
        }
    }

    /// Counts `rows` for the operation (rows a scan read) instead of the rows returned.
    pub fn count_rows(&mut self, rows: u64) {
        self.rows = Some(rows);
    }

    fn extend_last(&mut self) {
        if let Some(last) = self.calls.last_mut() {
            last.values.end = self.values.len();
        }
    }

    fn clear(&mut self) {
        self.calls.clear();
        self.values.clear();
        self.text.clear();
        self.rows = None;
    }
}

/// Chooses each operation of one client of a microbenchmark.
pub trait Generator: Send {
    /// Writes the next operation into `op` (empty when called), drawing from `rng`.
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::micro::Args;

    #[test]
    fn names_are_unique_and_families_expand() {
        let names = names();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicate benchmark names");
        let rp: Vec<&str> = expand("random-points").iter().map(|b| b.name).collect();
        assert_eq!(
            rp,
            [
                "random-points_range=10",
                "random-points_range=100",
                "random-points_range=1000"
            ]
        );
        assert_eq!(expand("point-query").len(), 1);
        assert_eq!(expand(ALL).len(), BENCHMARKS.len());
        assert!(expand("nope").is_empty());
        assert!(accepted_names().contains(&"range-covered-si"));
        assert!(accepted_names().contains(&"range-covered-si_range=100"));
    }

    #[test]
    fn every_benchmark_binds_what_its_statements_take() {
        // Every generator, on a small and a large table, at the first and last client.
        for b in BENCHMARKS {
            for (rows, client, clients) in [(50, 0, 2), (100_000, 7, 8)] {
                let scope = Scope {
                    tables: 3,
                    rows,
                    client,
                    clients,
                };
                let mut g = (b.generator)(&scope);
                let mut rng = data::rng(1, b.name, client);
                let mut op = Operation::default();
                for _ in 0..20 {
                    op.clear();
                    g.next(&mut rng, &mut op);
                    assert!(!op.calls.is_empty(), "{}", b.name);
                    for call in &op.calls {
                        assert!(call.table < scope.tables, "{}", b.name);
                        assert_eq!(
                            call.values.len(),
                            call.statement.params(),
                            "{}: {:?}",
                            b.name,
                            call.statement
                        );
                        assert!(
                            b.statements.contains(&call.statement),
                            "{}: {:?} not listed",
                            b.name,
                            call.statement
                        );
                        assert!(!call.statement.writes() || b.writes, "{}", b.name);
                        let args = Args::new(&op.values[call.values.clone()], &op.text);
                        for v in args.iter() {
                            if let crate::dbms::literal::Literal::Int(id) = v {
                                assert!(
                                    (-1..=rows as i64 + 1).contains(&id),
                                    "{}: {id} outside the table",
                                    b.name
                                );
                            }
                        }
                    }
                    if b.transaction {
                        assert!(op.calls.len() > 1, "{}", b.name);
                    }
                }
            }
        }
    }
}
