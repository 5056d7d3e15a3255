//! The OLTP microbenchmarks' parameters: benchmarks, client counts, tables; validated before
//! anything starts.

use serde::{Deserialize, Serialize};

use super::layers::scaled;
use super::{
    FieldNames, MAX_SECONDS, SpecError, check_clients, check_retries, default_max_error_pct,
    default_max_reconnects, default_max_tries, in_range, refuse,
};

/// Parameters of the OLTP microbenchmarks: `tables` sysbench-style tables (`sbtest1`...) of
/// `table_rows` rows each, then every benchmark for `seconds` at each client count.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MicroSpec {
    /// Benchmarks by name (`point-query`, `random-points_range=100`), in run order.
    pub benchmarks: Vec<String>,
    /// Client counts; each benchmark runs once per count, in this order.
    pub clients: Vec<usize>,
    /// Number of tables (`sbtest1` ... `sbtestN`); each query picks one uniformly.
    pub tables: usize,
    /// Rows per table (ids 1..=N).
    pub table_rows: u64,
    /// Duration of each benchmark at each client count, seconds.
    pub seconds: u64,
    /// Seconds each benchmark runs at each client count before `seconds` start; not counted
    /// (results written before warm-ups read back as 0).
    #[serde(default)]
    pub warmup: u64,
    /// Create and load the tables first (step `prepare`); otherwise they must exist, e.g.
    /// from `sysbench oltp_read_write prepare`.
    pub prepare: bool,
    /// Seed of every random value (rows and keys).
    pub seed: u64,
    /// Tries per statement on transient errors; 1 = no retry.
    pub max_tries: u32,
    /// Reconnects per client thread after lost connections; 0 = fail at once.
    pub max_reconnects: u32,
    /// A step whose retried statements exceed this percent of its statements fails.
    pub max_error_pct: f64,
    /// Seconds the pause after writes (before the next read benchmark) lasts from its start,
    /// its maintenance included, so that purge, flush and compaction settle; `None`: 60 s plus
    /// 1 s per million rows, at most 1200 s (`--post-write-pause`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_write_pause: Option<u64>,
    /// Rows loaded by `prepare` into each of insert-random-pk's tables (`sbrandpkN`), which its
    /// steps then insert into (without recreating them); 0: the steps create them empty
    /// (`--random-pk-rows`).
    #[serde(default, skip_serializing_if = "crate::serde_skip::is_zero")]
    pub random_pk_rows: u64,
    /// Only the load (`--prepare-only`): no benchmark after it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub load_only: bool,
}

impl Default for MicroSpec {
    fn default() -> Self {
        MicroSpec {
            benchmarks: vec!["point-query".to_string()],
            clients: vec![1, 2, 4, 8],
            tables: 4,
            table_rows: 100_000,
            seconds: 10,
            warmup: 0,
            prepare: true,
            seed: 42,
            max_tries: default_max_tries(),
            max_reconnects: default_max_reconnects(),
            max_error_pct: default_max_error_pct(),
            load_only: false,
            post_write_pause: None,
            random_pk_rows: 0,
        }
    }
}

impl super::Layered for MicroSpec {
    /// The table rows, random-pk rows (when any) and seconds.
    fn scale(&mut self, scale: f64) {
        self.table_rows = scaled(self.table_rows, scale);
        self.seconds = scaled(self.seconds, scale);
        if self.random_pk_rows > 0 {
            self.random_pk_rows = scaled(self.random_pk_rows, scale);
        }
    }
}

/// Rows per INSERT of the `prepare` step.
pub const MICRO_LOAD_BATCH: usize = 1_000;

impl MicroSpec {
    /// Seconds of the post-write pause ([`MicroSpec::post_write_pause`]).
    pub fn post_write_wait(&self) -> u64 {
        self.post_write_pause
            .unwrap_or_else(|| default_post_write_wait(self.tables, self.table_rows))
    }

    /// Bytes the tables take once loaded: about 220 per row with the index on `k`.
    pub fn loaded_bytes(&self) -> u64 {
        (self.tables as u64)
            .saturating_mul(self.table_rows)
            .saturating_mul(220)
    }

    /// Step names, in run order: `prepare` (when preparing), then `<benchmark>.c<clients>`.
    pub fn step_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if self.prepare {
            names.push("prepare".to_string());
        }
        if self.load_only {
            return names;
        }
        for b in &self.benchmarks {
            for c in &self.clients {
                names.push(format!("{b}.c{c}"));
            }
        }
        names
    }

    /// About 190 bytes per row (id, k, c char(120), pad char(60) and row overhead) plus the
    /// index on k, doubled for page fill.
    pub fn estimated_db_bytes(&self) -> u64 {
        (self.tables as u64)
            .saturating_mul(self.table_rows)
            .saturating_mul(2 * 220)
    }

    /// Checks every value; the first problem found is returned, naming fields as `names` does.
    /// (Benchmark names are checked against the registry where they are parsed.)
    pub fn validate(&self, names: FieldNames) -> Result<(), SpecError> {
        let n = names;
        if self.benchmarks.is_empty() {
            return refuse(
                "benchmarks",
                format!("{} is empty: name at least one benchmark", n("benchmarks")),
            );
        }
        check_clients(&self.clients, n)?;
        in_range(n, "tables", self.tables, 1..=1024)?;
        in_range(n, "table_rows", self.table_rows, 1..=i32::MAX as u64)?;
        if let Some(&c) = self.clients.iter().max()
            && self.table_rows < c as u64
        {
            return refuse(
                "table_rows",
                format!(
                    "{} {} is below {} {c}: every client needs rows of its own (deletes and \
                     re-inserts never meet another client's)",
                    n("table_rows"),
                    self.table_rows,
                    n("clients")
                ),
            );
        }
        in_range(n, "warmup", self.warmup, 0..=MAX_SECONDS)?;
        if let Some(p) = self.post_write_pause {
            in_range(n, "post_write_pause", p, 0..=MAX_SECONDS)?;
        }
        in_range(
            n,
            "random_pk_rows",
            self.random_pk_rows,
            0..=i32::MAX as u64,
        )?;
        if self.random_pk_rows > 0 && !self.prepare {
            return refuse(
                "random_pk_rows",
                format!(
                    "{} loads insert-random-pk's tables in prepare: it needs the tables \
                     created and loaded (drop --no-prepare)",
                    n("random_pk_rows")
                ),
            );
        }
        in_range(n, "seconds", self.seconds, 1..=MAX_SECONDS)?;
        check_retries(self.max_tries, self.max_error_pct, n)?;
        Ok(())
    }
}

/// The post-write pause's wait when none is given: 60 s plus 1 s per million rows of the
/// sysbench tables, at most 1200 s, counted from the pause's start (its maintenance
/// included), as mdcallag/mytools' `run.sh` waits after its writes.
pub fn default_post_write_wait(tables: usize, table_rows: u64) -> u64 {
    let rows = (tables as u64).saturating_mul(table_rows);
    (60 + rows / 1_000_000).min(1200)
}
