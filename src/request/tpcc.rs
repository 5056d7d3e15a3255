//! The TPC-C-like workload's parameters (`ibench tpcc`): sysbench-tpcc's table sets and
//! warehouses, the transaction mix, client counts; validated before anything starts.

use serde::{Deserialize, Serialize};

use super::layers::scaled;
use super::{
    FieldNames, MAX_SECONDS, SpecError, check_clients, check_retries, default_max_reconnects,
    default_max_tries, in_range, refuse,
};

/// The share of each transaction type, in the order New-Order, Payment, Order-Status,
/// Delivery, Stock-Level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mix {
    /// The TPC-C specification's minimum deck (clause 5.2.3): 45/43/4/4/4 of 100.
    #[default]
    Standard,
    /// sysbench-tpcc's uniform draw: 10/10/1/1/1 of 23.
    Sysbench,
}

impl Mix {
    /// The weights of the five types, New-Order first.
    pub fn weights(self) -> [u32; 5] {
        match self {
            Mix::Standard => [45, 43, 4, 4, 4],
            Mix::Sysbench => [10, 10, 1, 1, 1],
        }
    }

    /// The mix called `name` (`standard`, `sysbench`).
    pub fn parse(name: &str) -> Option<Mix> {
        match name {
            "standard" | "tpcc" => Some(Mix::Standard),
            "sysbench" => Some(Mix::Sysbench),
            _ => None,
        }
    }
}

/// Parameters of the TPC-C-like workload: `tables` sets of sysbench-tpcc's nine tables
/// (`warehouse1`...), `warehouses` warehouses in each, loaded in step `prepare`, then the
/// five transactions for `seconds` at each client count.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TpccSpec {
    /// Warehouses per table set (sysbench-tpcc's `--scale`).
    pub warehouses: usize,
    /// Table sets (sysbench-tpcc's `--tables`); each transaction picks one uniformly.
    pub tables: usize,
    /// Client counts; the transactions run once per count, in this order.
    pub clients: Vec<usize>,
    /// Duration at each client count, seconds.
    pub seconds: u64,
    /// Seconds each client count runs before `seconds` start; not counted.
    #[serde(default)]
    pub warmup: u64,
    /// Create and load the tables first (step `prepare`); otherwise they must exist.
    pub prepare: bool,
    /// Threads of the load (each takes parts of the data: items, stock, districts).
    pub load_threads: usize,
    /// sysbench-tpcc's foreign keys, added after the load where the DBMS can add them.
    pub foreign_keys: bool,
    /// The transaction mix.
    pub mix: Mix,
    /// Seed of every random value (data and transactions).
    pub seed: u64,
    /// Tries per transaction on transient errors (deadlocks, serialization failures); 1 = no
    /// retry.
    pub max_tries: u32,
    /// Reconnects per client after lost connections; 0 = fail at once.
    pub max_reconnects: u32,
    /// A step whose retried transactions exceed this percent of its transactions fails
    /// (default 100: none does, since contention is TPC-C's own: retries are counted per
    /// transaction type instead).
    pub max_error_pct: f64,
    /// Transactions per second over all clients (`--rate`): each client's due on a schedule,
    /// its response times counted from when each was due (no coordinated omission); `None`:
    /// as fast as they go (closed loop, as sysbench-tpcc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    /// Only the load (`--prepare-only`): no transactions after it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub load_only: bool,
}

impl Default for TpccSpec {
    fn default() -> Self {
        TpccSpec {
            warehouses: 1,
            tables: 1,
            clients: vec![4],
            seconds: 60,
            warmup: 0,
            prepare: true,
            load_threads: 4,
            foreign_keys: true,
            mix: Mix::Standard,
            seed: 42,
            max_tries: default_max_tries(),
            max_reconnects: default_max_reconnects(),
            // Conflicts are part of the workload (MyRocks at one warehouse and 4 clients
            // retries a fifth of its transactions): reported per type, not a failure.
            max_error_pct: 100.0,
            rate: None,
            load_only: false,
        }
    }
}

/// Rows a warehouse holds once loaded, besides its order lines (about 10 * 3,000 * 10): stock
/// 100,000, 10 districts of 3,000 customers, history rows and orders and 900 new orders.
const WAREHOUSE_ROWS: u64 = 1 + 100_000 + 10 * (1 + 3 * 3_000 + 900);
/// Order lines of a warehouse, on average (5 to 15 per order, 30,000 orders).
const WAREHOUSE_ORDER_LINES: u64 = 300_000;
/// Bytes per loaded warehouse on disk, about (sysbench-tpcc's: ~100 MB with indexes).
const WAREHOUSE_BYTES: u64 = 100 << 20;

impl super::Layered for TpccSpec {
    /// The seconds at each client count.
    fn scale(&mut self, scale: f64) {
        self.seconds = scaled(self.seconds, scale);
    }
}

impl TpccSpec {
    /// Rows the load inserts, about (order lines vary): items per set, and each warehouse's.
    pub fn loaded_rows(&self) -> u64 {
        let per_set = 100_000 + self.warehouses as u64 * (WAREHOUSE_ROWS + WAREHOUSE_ORDER_LINES);
        per_set.saturating_mul(self.tables as u64)
    }

    /// Step names, in run order: `prepare` (when preparing), then `tpcc.c<clients>`.
    pub fn step_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if self.prepare {
            names.push("prepare".to_string());
        }
        if self.load_only {
            return names;
        }
        for c in &self.clients {
            names.push(format!("tpcc.c{c}"));
        }
        names
    }

    /// The most connections at once: the largest client count or the load's threads.
    pub fn connections(&self) -> usize {
        let clients = self.clients.iter().copied().max().unwrap_or(0);
        if self.prepare {
            clients.max(self.load_threads)
        } else {
            clients
        }
    }

    /// A generous estimate of the database size, bytes: ~100 MiB per warehouse (and 20 MiB
    /// of items per set), doubled for what the transactions add.
    pub fn estimated_db_bytes(&self) -> u64 {
        let per_set = (20 << 20) + self.warehouses as u64 * WAREHOUSE_BYTES;
        per_set.saturating_mul(self.tables as u64).saturating_mul(2)
    }

    /// Checks every value; the first problem found is returned, naming fields as `names` does.
    pub fn validate(&self, names: FieldNames) -> Result<(), SpecError> {
        let n = names;
        in_range(n, "warehouses", self.warehouses, 1..=10_000)?;
        in_range(n, "tables", self.tables, 1..=100)?;
        check_clients(&self.clients, n)?;
        in_range(n, "load_threads", self.load_threads, 1..=1024)?;
        in_range(n, "warmup", self.warmup, 0..=MAX_SECONDS)?;
        in_range(n, "seconds", self.seconds, 1..=MAX_SECONDS)?;
        check_retries(self.max_tries, self.max_error_pct, n)?;
        if let Some(rate) = self.rate {
            in_range(n, "rate", rate, 1..=10_000_000)?;
            if self.warmup > 0 {
                return refuse(
                    "rate",
                    format!(
                        "{} goes without {}: give one of them",
                        n("rate"),
                        n("warmup")
                    ),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(field: &str) -> String {
        format!("--{}", field.replace('_', "-"))
    }

    #[test]
    fn defaults_validate_and_name_their_steps() {
        let spec = TpccSpec::default();
        assert_eq!(spec.validate(names), Ok(()));
        assert_eq!(spec.step_names(), ["prepare", "tpcc.c4"]);
        assert_eq!(spec.connections(), 4);
        assert_eq!(Mix::Standard.weights().iter().sum::<u32>(), 100);
        assert_eq!(Mix::Sysbench.weights().iter().sum::<u32>(), 23);
        assert!(spec.loaded_rows() > 500_000);
    }

    #[test]
    fn bad_values_are_refused_naming_the_flag() {
        let spec = TpccSpec {
            warehouses: 0,
            ..TpccSpec::default()
        };
        let e = spec.validate(names).unwrap_err();
        assert_eq!(e.field, "warehouses");
        assert!(
            e.message.starts_with("--warehouses 0 is out of range"),
            "{}",
            e.message
        );
        let spec = TpccSpec {
            clients: vec![],
            ..TpccSpec::default()
        };
        assert_eq!(spec.validate(names).unwrap_err().field, "clients");
    }

    #[test]
    fn a_micro_document_is_not_read_as_tpcc() {
        let micro = serde_json::to_value(super::super::MicroSpec::default()).unwrap();
        assert!(serde_json::from_value::<TpccSpec>(micro).is_err());
        let back: TpccSpec =
            serde_json::from_value(serde_json::to_value(TpccSpec::default()).unwrap()).unwrap();
        assert_eq!(back.mix, Mix::Standard);
    }
}
