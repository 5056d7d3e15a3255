//! OLTP microbenchmarks (`../shared/docs/microbenchmarks.md`): sysbench-style tables
//! (`sbtest1` ... `sbtestN`: `id` primary key, `k` with a secondary index, `c` char(120),
//! `pad` char(60)), loaded by the `prepare` step, then each benchmark for a fixed time (after a
//! warm-up that is not counted) at each client count (`point-query.c1`, `point-query.c2`, ...).
//!
//! A benchmark is one small file: its statements in the DBMS-neutral vocabulary of
//! [`crate::dbms::sql::Statement`] and a [`Generator`] that picks each operation's table and
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

use crate::dbms::sql::{Shape, Statement, Value};
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

/// The name `--benchmarks all` stands for: every benchmark in the reference suite's order
/// ([`reference_sequence`]).
pub const ALL: &str = "all";

/// The name of every benchmark in `--list` order: the reads first, the writes last (what
/// `all` ran before the reference order), with no read after a write.
pub const READS_FIRST: &str = "reads-first";

/// Appended to a benchmark's name for its run on the freshly loaded tables, before the writes
/// of the reference order (`point-query.pre`, steps `point-query.pre.c1`): in results, reports
/// and compare a benchmark of its own, apart from its post-write run (`point-query`).
pub const PRE_SUFFIX: &str = ".pre";

/// The reads the reference order runs on the freshly loaded tables, before any write: a point
/// query and the range queries whose figures change most with the writes' debt (the
/// published PostgreSQL slowdown of range-covered queries is a post-write figure).
/// mdcallag/mytools' `all_small.sh` runs `point-query.pre` and `range-notcovered-si.pre`.
pub const PRE_WRITE_READS: &[&str] = &[
    "point-query",
    "range-covered-pk_range=100",
    "range-covered-si_range=100",
    "range-notcovered-si_range=100",
];

/// The writes of the reference order, in the order `all_small.sh` runs them.
const REFERENCE_WRITES: &[&str] = &[
    "update-inlist",
    "update-index",
    "update-nonindex",
    "update-one",
    "update-zipf",
    "write-only",
    "read-write_range=10",
    "read-write_range=100",
];

/// One benchmark in a run's list: the benchmark, and whether it is its pre-write run.
#[derive(Clone, Copy)]
pub struct Entry {
    /// The benchmark.
    pub benchmark: &'static Benchmark,
    /// Its run on the freshly loaded tables (`point-query.pre`).
    pub pre: bool,
}

impl Entry {
    /// Its name in `--benchmarks`, step names and results (`point-query.pre`, `point-query`).
    pub fn name(&self) -> String {
        if self.pre {
            format!("{}{PRE_SUFFIX}", self.benchmark.name)
        } else {
            self.benchmark.name.to_string()
        }
    }
}

/// The reference suite's order (mdcallag/mytools `bench/sysbench.lua/all_small.sh`), what
/// `all` stands for: [`PRE_WRITE_READS`] on the freshly loaded tables (`.pre`), the writes
/// (update-inlist, update-index, update-nonindex, update-one, update-zipf, write-only,
/// read-write), then, after the post-write pause, every read benchmark in `--list` order
/// (scan among them, as `all_small.sh` runs it after the pause), then delete, insert and
/// insert-random-pk.
pub fn reference_sequence() -> Vec<Entry> {
    let by_name = |n: &str, pre: bool| find(n).map(|benchmark| Entry { benchmark, pre });
    let mut out: Vec<Entry> = PRE_WRITE_READS
        .iter()
        .filter_map(|n| by_name(n, true))
        .collect();
    out.extend(REFERENCE_WRITES.iter().filter_map(|n| by_name(n, false)));
    let post = |b: &&&Benchmark| !b.writes;
    out.extend(BENCHMARKS.iter().filter(post).map(|&benchmark| Entry {
        benchmark,
        pre: false,
    }));
    let listed: Vec<&str> = out.iter().map(|e| e.benchmark.name).collect();
    out.extend(
        BENCHMARKS
            .iter()
            .filter(|b| b.writes && !listed.contains(&b.name))
            .map(|&benchmark| Entry {
                benchmark,
                pre: false,
            }),
    );
    out
}

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
/// by the name without one (`random-points`), either with [`PRE_SUFFIX`] for their pre-write
/// runs (`point-query.pre`), all of them in the reference order (`all`) or in `--list` order
/// (`reads-first`); empty when none.
pub fn expand(name: &str) -> Vec<Entry> {
    if name == ALL {
        return reference_sequence();
    }
    let (base, pre) = match name.strip_suffix(PRE_SUFFIX) {
        Some(base) => (base, true),
        None => (name, false),
    };
    let entry = |benchmark| Entry { benchmark, pre };
    if base == READS_FIRST && !pre {
        return BENCHMARKS.iter().copied().map(entry).collect();
    }
    if let Some(b) = find(base) {
        return vec![entry(b)];
    }
    BENCHMARKS
        .iter()
        .copied()
        .filter(|b| b.family() == base)
        .map(entry)
        .collect()
}

/// Every benchmark name, for messages.
pub fn names() -> Vec<&'static str> {
    BENCHMARKS.iter().map(|b| b.name).collect()
}

/// The names `--benchmarks` takes: every benchmark, every benchmark without its range length,
/// `all` and `reads-first` (each name but these two also with [`PRE_SUFFIX`]).
pub fn accepted_names() -> Vec<&'static str> {
    let mut out = vec![ALL, READS_FIRST];
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
    use crate::dbms::sql::Args;

    #[test]
    fn names_are_unique_and_families_expand() {
        let names = names();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicate benchmark names");
        let rp: Vec<&str> = expand("random-points")
            .iter()
            .map(|e| e.benchmark.name)
            .collect();
        assert_eq!(
            rp,
            [
                "random-points_range=10",
                "random-points_range=100",
                "random-points_range=1000"
            ]
        );
        assert_eq!(expand("point-query").len(), 1);
        assert_eq!(expand(READS_FIRST).len(), BENCHMARKS.len());
        assert!(expand("nope").is_empty());
        assert!(expand("nope.pre").is_empty());
        let pre: Vec<String> = expand("random-points.pre")
            .iter()
            .map(Entry::name)
            .collect();
        assert_eq!(pre[0], "random-points_range=10.pre");
        assert!(accepted_names().contains(&"range-covered-si"));
        assert!(accepted_names().contains(&"range-covered-si_range=100"));
    }

    #[test]
    fn all_runs_the_reference_order() {
        let all = expand(ALL);
        let names: Vec<String> = all.iter().map(Entry::name).collect();
        // Every benchmark once after the writes, the pre-write reads once more before them.
        assert_eq!(
            all.len(),
            BENCHMARKS.len() + PRE_WRITE_READS.len(),
            "{names:?}"
        );
        let at = |n: &str| names.iter().position(|x| x == n).unwrap();
        let first_write = all.iter().position(|e| e.benchmark.writes).unwrap();
        assert_eq!(names[0], "point-query.pre");
        assert_eq!(first_write, PRE_WRITE_READS.len());
        assert!(all[..first_write].iter().all(|e| e.pre));
        assert_eq!(names[first_write], "update-inlist");
        assert!(at("read-write_range=100") < at("point-query"));
        assert!(at("range-covered-si_range=100.pre") < at("update-inlist"));
        // Every read after the writes, then delete and the inserts.
        let reads_from = at("read-write_range=100") + 1;
        assert!(all[reads_from..].iter().all(|e| !e.pre));
        let tail: Vec<&str> = names[names.len() - 3..]
            .iter()
            .map(|s| s.as_str())
            .collect();
        assert_eq!(tail, ["delete", "insert", "insert-random-pk"]);
        assert!(
            all[reads_from..all.len() - 3]
                .iter()
                .all(|e| !e.benchmark.writes)
        );
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
