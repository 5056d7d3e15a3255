//! The one registry of figures: what each is called, its unit, which direction is better,
//! how it is shown (digits), and how it is read from a step's results. The terminal, the
//! Markdown, HTML, JSON and CSV reports and `ibench compare` all take names, units and
//! directions from here (`find`, `label`), so a figure reads the same everywhere.

use serde::Serialize;

use crate::results::model::StepResult;

/// Which direction of a metric is an improvement; decides how a change is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// More is better (throughput).
    Higher,
    /// Less is better (cost, response time, size).
    Lower,
}

/// One figure a report shows per step.
#[derive(Clone, Copy)]
pub struct MetricDef {
    /// Stable key (JSON).
    pub key: &'static str,
    /// Column header, and the figure's name in `ibench compare`.
    pub label: &'static str,
    /// Unit of the value (`rows/s`, `us/op`, `MB`).
    pub unit: &'static str,
    /// Which direction is better.
    pub better: Better,
    /// Digits after the point when shown.
    pub digits: usize,
    /// The floor below which the figure is negligible: with both sides under it a change is
    /// not marked, not in the headline, and shown as `~0` (0: no floor). See [`negligible`].
    pub floor: f64,
    /// Reads the figure from a step; `None` when the step does not have it.
    pub get: fn(&StepResult) -> Option<f64>,
}

impl MetricDef {
    /// The smallest step the figure is shown with: one unit of its last digit (1 for
    /// figures shown without decimals).
    pub fn resolution(&self) -> f64 {
        10f64.powi(-(self.digits as i32))
    }

    /// The value as shown: rates without decimals (`12.3k`), others with `digits`.
    pub fn format(&self, v: f64) -> String {
        format_value(v, self.digits)
    }
}

/// Device KB read or written per op below which IO is negligible: 0.1 KB is one 4 KB page
/// every 40 ops, what a cache's few misses or a log's page give (a cached database reading
/// 0.0001 vs 0.001 KB/op is not "10 times the IO").
pub const KB_PER_OP_FLOOR: f64 = 0.1;
/// Device reads or writes per op below which IO is negligible: one IO every 100 ops.
pub const IOS_PER_OP_FLOOR: f64 = 0.01;
/// Context switches per op below which they are negligible: one every 100 ops.
pub const CS_PER_OP_FLOOR: f64 = 0.01;
/// How a negligible value is shown in a relative cell.
pub const NEGLIGIBLE: &str = "~0";

/// Whether figure `key` is negligible on both sides, `a` and `b` both under its floor
/// ([`MetricDef::floor`]): the one rule the report's marks, its headline and `ibench
/// compare` apply (a change between two negligible values is not called, whatever its
/// ratio).
pub fn negligible(key: &str, a: f64, b: f64) -> bool {
    find(key).is_some_and(|d| d.floor > 0.0 && a.abs() < d.floor && b.abs() < d.floor)
}

/// `v` shown with `digits` after the point; with 0, as a rate (`950`, `1.25k`, `12.3k`).
pub fn format_value(v: f64, digits: usize) -> String {
    if digits == 0 {
        crate::output::format::rate(v)
    } else {
        format!("{v:.digits$}")
    }
}

/// The figure with stable key `key` (`queries_per_s`, `dbms_cpu_us_per_op`, `qps` of a
/// microbenchmark...), over every list of this registry.
pub fn find(key: &str) -> Option<&'static MetricDef> {
    [THROUGHPUT, EFFICIENCY, COMPARED, MICRO]
        .into_iter()
        .flatten()
        .find(|d| d.key == key)
}

/// The name of the figure `key` (its label), or the key itself when the registry lacks it.
pub fn label(key: &str) -> String {
    find(key).map_or_else(|| key.to_string(), |d| d.label.to_string())
}

/// The column header of the figure `key` (its label; `?` for a key the registry lacks, which
/// a unit test rules out for the keys the code uses).
pub fn header(key: &str) -> &'static str {
    find(key).map_or("?", |d| d.label)
}

/// The key `ibench compare` tests a figure under: a microbenchmark's `qps` is the step's
/// `queries_per_s`, its `cpu_per_op` the `dbms_cpu_us_per_op`, and so on.
pub fn tested_key(key: &str) -> &str {
    match key {
        "qps" => "queries_per_s",
        "cpu_per_op" => "dbms_cpu_us_per_op",
        "client_cpu_per_op" => "client_cpu_us_per_op",
        other => other,
    }
}

fn positive(v: f64) -> Option<f64> {
    (v > 0.0).then_some(v)
}

/// Bytes in a MiB.
pub(crate) const MIB: f64 = 1024.0 * 1024.0;

/// Throughput figures, per step.
pub const THROUGHPUT: &[MetricDef] = &[
    MetricDef {
        key: "inserts_per_s",
        label: "ins/s",
        unit: "rows/s",
        better: Better::Higher,
        digits: 0,
        floor: 0.0,
        get: |s| positive(s.inserts_per_s),
    },
    MetricDef {
        key: "deletes_per_s",
        label: "del/s",
        unit: "rows/s",
        better: Better::Higher,
        digits: 0,
        floor: 0.0,
        get: |s| positive(s.deletes_per_s),
    },
    MetricDef {
        key: "queries_per_s",
        label: "q/s",
        unit: "queries/s",
        better: Better::Higher,
        digits: 0,
        floor: 0.0,
        get: |s| positive(s.queries_per_s),
    },
    MetricDef {
        key: "index_rows_per_s",
        label: "index rows/s",
        unit: "rows/s",
        better: Better::Higher,
        digits: 0,
        floor: 0.0,
        // Only a completed l.x indexed its rows (older documents stored a rate anyway).
        get: |s| {
            s.index_build
                .as_ref()
                .filter(|_| s.status == crate::results::model::RunStatus::Complete)
                .map(|i| i.rows_per_s)
        },
    },
    MetricDef {
        key: "duration_s",
        label: "seconds",
        unit: "s",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| Some(s.duration_s),
    },
];

fn per_op(s: &StepResult) -> Option<&crate::results::model::PerOp> {
    s.efficiency.as_ref()?.per_op.as_ref()
}

/// Linux reports process CPU time in clock ticks of 1/100 s (USER_HZ, the same on every
/// architecture Linux runs on today).
pub const CPU_TICK_S: f64 = 0.01;

/// The step in which figure `key` of step `s` is read: the smallest difference between two
/// runs' values that is a measured difference rather than rounding. One clock tick of CPU
/// time over the step's ops; one 512-byte sector of device IO or one 4 KiB page of a
/// process's IO (`/proc/PID/io` counts pages) over the ops; one IO or context switch over
/// the ops; one op over the step's seconds for a rate; a thousandth of a response-time
/// percentile (histograms keep 3 significant digits); 0 where none is known. No change
/// smaller than twice it is called (`compare`, `history`).
pub fn resolution(key: &str, s: &StepResult) -> f64 {
    let ops = s.efficiency.as_ref().map_or(0, |e| e.ops).max(1) as f64;
    let per_second = |v: f64| {
        if s.duration_s > 0.0 {
            v / s.duration_s
        } else {
            0.0
        }
    };
    match tested_key(key) {
        "dbms_cpu_us_per_op" | "client_cpu_us_per_op" | "host_cpu_us_per_op" => {
            CPU_TICK_S * 1e6 / ops
        }
        "kb_read_per_op" | "kb_written_per_op" | "rkb_per_op" | "wkb_per_op" => 0.5 / ops,
        "dbms_kb_read_per_op" | "dbms_kb_written_per_op" => 4.0 / ops,
        "reads_per_op" | "writes_per_op" | "dbms_cs_per_op" | "host_cs_per_op" | "cs_per_op" => {
            1.0 / ops
        }
        "inserts_per_s" | "deletes_per_s" | "queries_per_s" | "rows_per_s" => per_second(1.0),
        "p95_ms" => find(key)
            .and_then(|d| (d.get)(s))
            .map_or(0.0, |v| v / 1000.0),
        _ => 0.0,
    }
}

/// The one CPU figure of a DBMS that runs inside ibench (SQLite, RocksDB): the DBMS's CPU and
/// the client's are then one process's, the same figure, shown once under this name.
pub const EMBEDDED_CPU_LABEL: &str = "ibench+DBMS CPU us/op";

/// How cost figure `d` is named where every configuration's DBMS ran inside ibench: `None`
/// for the client's CPU (the DBMS's figure again, left out), [`EMBEDDED_CPU_LABEL`] for the
/// DBMS's, else its label.
pub fn embedded_label(d: &MetricDef) -> Option<&'static str> {
    match d.key {
        "client_cpu_us_per_op" => None,
        "dbms_cpu_us_per_op" => Some(EMBEDDED_CPU_LABEL),
        _ => Some(d.label),
    }
}

/// Cost figures (docs/metrics.md), per step.
pub const EFFICIENCY: &[MetricDef] = &[
    MetricDef {
        key: "dbms_cpu_us_per_op",
        label: "dbms CPU us/op",
        unit: "us/op",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| per_op(s)?.dbms_cpu_us,
    },
    MetricDef {
        key: "client_cpu_us_per_op",
        label: "client CPU us/op",
        unit: "us/op",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| per_op(s).map(|p| p.client_cpu_us),
    },
    MetricDef {
        key: "host_cpu_us_per_op",
        label: "host CPU us/op",
        unit: "us/op",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| per_op(s).map(|p| p.host_cpu_us),
    },
    MetricDef {
        key: "kb_read_per_op",
        label: "device KB read/op",
        unit: "KB/op",
        better: Better::Lower,
        digits: 3,
        floor: KB_PER_OP_FLOOR,
        get: |s| per_op(s)?.kb_read,
    },
    MetricDef {
        key: "kb_written_per_op",
        label: "device KB written/op",
        unit: "KB/op",
        better: Better::Lower,
        digits: 3,
        floor: KB_PER_OP_FLOOR,
        get: |s| per_op(s)?.kb_written,
    },
    MetricDef {
        key: "dbms_kb_read_per_op",
        label: "DBMS KB read/op",
        unit: "KB/op",
        better: Better::Lower,
        digits: 3,
        floor: KB_PER_OP_FLOOR,
        get: |s| per_op(s)?.dbms_kb_read,
    },
    MetricDef {
        key: "dbms_kb_written_per_op",
        label: "DBMS KB written/op",
        unit: "KB/op",
        better: Better::Lower,
        digits: 3,
        floor: KB_PER_OP_FLOOR,
        get: |s| per_op(s)?.dbms_kb_written,
    },
    MetricDef {
        key: "reads_per_op",
        label: "reads/op",
        unit: "IOs/op",
        better: Better::Lower,
        digits: 4,
        floor: IOS_PER_OP_FLOOR,
        get: |s| per_op(s)?.reads,
    },
    MetricDef {
        key: "writes_per_op",
        label: "writes/op",
        unit: "IOs/op",
        better: Better::Lower,
        digits: 4,
        floor: IOS_PER_OP_FLOOR,
        get: |s| per_op(s)?.writes,
    },
    MetricDef {
        key: "dbms_cs_per_op",
        label: "dbms cs/op",
        unit: "cs/op",
        better: Better::Lower,
        digits: 3,
        floor: CS_PER_OP_FLOOR,
        get: |s| per_op(s)?.dbms_cs,
    },
    MetricDef {
        key: "host_cs_per_op",
        label: "host cs/op",
        unit: "cs/op",
        better: Better::Lower,
        digits: 3,
        floor: CS_PER_OP_FLOOR,
        get: |s| per_op(s).map(|p| p.host_cs),
    },
    MetricDef {
        key: "dbms_peak_rss_mb",
        label: "dbms RSS MB",
        unit: "MB",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| Some(s.efficiency.as_ref()?.peak.dbms_rss_bytes? as f64 / MIB),
    },
    MetricDef {
        key: "dbms_peak_vsz_mb",
        label: "dbms VSZ MB",
        unit: "MB",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| Some(s.efficiency.as_ref()?.peak.dbms_vsz_bytes? as f64 / MIB),
    },
    MetricDef {
        key: "dbms_peak_pss_mb",
        label: "dbms PSS MB",
        unit: "MB",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| Some(s.efficiency.as_ref()?.peak.dbms_pss_bytes? as f64 / MIB),
    },
    MetricDef {
        key: "client_peak_rss_mb",
        label: "client RSS MB",
        unit: "MB",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| Some(s.efficiency.as_ref()?.peak.client_rss_bytes as f64 / MIB),
    },
    MetricDef {
        key: "db_size_mb",
        label: "db size MB",
        unit: "MB",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| Some(s.efficiency.as_ref()?.db_size.dbms_bytes? as f64 / MIB),
    },
    MetricDef {
        key: "disk_size_mb",
        label: "on disk MB",
        unit: "MB",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| Some(s.efficiency.as_ref()?.db_size.on_disk()? as f64 / MIB),
    },
];

/// Figures `ibench compare` tests that the report's tables do not show per step: the mean,
/// over a step's full seconds, of each second's largest response time (read from the
/// per-second series by `compare/metrics.rs`, so `get` has nothing to read here).
pub const COMPARED: &[MetricDef] = &[
    MetricDef {
        key: "insert_max_response_us",
        label: "insert max response us",
        unit: "us",
        better: Better::Lower,
        digits: 0,
        floor: 0.0,
        get: |_| None,
    },
    MetricDef {
        key: "delete_max_response_us",
        label: "delete max response us",
        unit: "us",
        better: Better::Lower,
        digits: 0,
        floor: 0.0,
        get: |_| None,
    },
    MetricDef {
        key: "query_max_response_us",
        label: "query max response us",
        unit: "us",
        better: Better::Lower,
        digits: 0,
        floor: 0.0,
        get: |_| None,
    },
];

fn query_op(s: &StepResult) -> Option<&crate::results::model::OpResult> {
    s.ops.get("query")
}

/// The figures of a microbenchmark step (`<benchmark>.c<clients>`), one table each in a
/// report over micro runs (docs/reports.md). An op is one statement, or one transaction of
/// read-only, write-only and read-write.
pub const MICRO: &[MetricDef] = &[
    MetricDef {
        key: "qps",
        label: "QPS (ops/s)",
        unit: "ops/s",
        better: Better::Higher,
        digits: 0,
        floor: 0.0,
        get: |s| positive(s.queries_per_s),
    },
    MetricDef {
        key: "rows_per_s",
        label: "rows/s (returned, changed, or scanned)",
        unit: "rows/s",
        better: Better::Higher,
        digits: 0,
        floor: 0.0,
        get: |s| {
            let rows = query_op(s)?.rows as f64;
            (s.duration_s > 0.0).then(|| rows / s.duration_s)
        },
    },
    MetricDef {
        key: "p95_ms",
        label: "p95 response time, ms",
        unit: "ms",
        better: Better::Lower,
        digits: 3,
        floor: 0.0,
        get: |s| {
            let h = crate::metrics::histogram::decode(&query_op(s)?.histogram).ok()?;
            Some(h.value_at_quantile(0.95) as f64 / 1000.0)
        },
    },
    MetricDef {
        key: "cpu_per_op",
        label: "cpu/o: DBMS CPU us per op",
        unit: "us/op",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| per_op(s)?.dbms_cpu_us,
    },
    MetricDef {
        key: "client_cpu_per_op",
        label: "client cpu/o: ibench CPU us per op",
        unit: "us/op",
        better: Better::Lower,
        digits: 1,
        floor: 0.0,
        get: |s| per_op(s).map(|p| p.client_cpu_us),
    },
    MetricDef {
        key: "cs_per_op",
        label: "cs/o: DBMS context switches per op",
        unit: "cs/op",
        better: Better::Lower,
        digits: 3,
        floor: CS_PER_OP_FLOOR,
        get: |s| per_op(s)?.dbms_cs,
    },
    MetricDef {
        key: "rkb_per_op",
        label: "rKB/o: device KB read per op",
        unit: "KB/op",
        better: Better::Lower,
        digits: 3,
        floor: KB_PER_OP_FLOOR,
        get: |s| per_op(s)?.kb_read,
    },
    MetricDef {
        key: "wkb_per_op",
        label: "wKB/o: device KB written per op",
        unit: "KB/op",
        better: Better::Lower,
        digits: 3,
        floor: KB_PER_OP_FLOOR,
        get: |s| per_op(s)?.kb_written,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_once_in_the_registry_and_names_the_same_everywhere() {
        let all: Vec<&MetricDef> = [THROUGHPUT, EFFICIENCY, COMPARED, MICRO]
            .into_iter()
            .flatten()
            .collect();
        for d in &all {
            assert_eq!(
                all.iter().filter(|e| e.key == d.key).count(),
                1,
                "{}",
                d.key
            );
            assert!(!d.unit.is_empty(), "{}", d.key);
        }
        // The headers the terminal and the group tables use.
        for key in ["inserts_per_s", "deletes_per_s", "queries_per_s"] {
            assert_ne!(header(key), "?", "{key}");
        }
        assert_eq!(header("queries_per_s"), "q/s");
        // A microbenchmark's figures are tested under the step's keys.
        for key in ["qps", "cpu_per_op", "client_cpu_per_op"] {
            let tested = find(tested_key(key)).expect("tested key in the registry");
            assert_eq!(tested.better, find(key).unwrap().better, "{key}");
        }
        assert_eq!(find("dbms_cs_per_op").unwrap().format(0.01234), "0.012");
        assert_eq!(find("inserts_per_s").unwrap().format(12345.0), "12.3k");
    }

    #[test]
    fn a_change_between_two_negligible_values_is_negligible() {
        assert!(negligible("kb_read_per_op", 0.001, 0.0001));
        assert!(negligible("rkb_per_op", 0.0, 0.09));
        assert!(!negligible("kb_read_per_op", 0.001, 0.2), "one side above");
        assert!(negligible("dbms_cs_per_op", 0.009, 0.0));
        assert!(!negligible("dbms_cs_per_op", 0.02, 0.001));
        assert!(!negligible("inserts_per_s", 0.0, 0.0), "no floor");
        assert!(!negligible("nonesuch", 0.0, 0.0));
    }
}

#[cfg(test)]
mod resolution_tests {
    use super::*;
    use crate::results::model::{Efficiency, RunResult};

    #[test]
    fn each_figure_knows_the_step_it_is_read_in() {
        let text = include_str!("../../tests/fixtures/results-v1.json");
        let run: RunResult = serde_json::from_str(text).unwrap();
        let mut s = run.steps[0].clone();
        s.duration_s = 4.0;
        s.efficiency = Some(Efficiency {
            ops: 5000,
            ..Default::default()
        });
        // One 10 ms tick over 5,000 ops: 2 us per op.
        assert_eq!(resolution("dbms_cpu_us_per_op", &s), 2.0);
        assert_eq!(resolution("cpu_per_op", &s), 2.0);
        // A sector, a page, one IO over the ops; one op over the seconds.
        assert_eq!(resolution("kb_written_per_op", &s), 0.5 / 5000.0);
        assert_eq!(resolution("dbms_kb_written_per_op", &s), 4.0 / 5000.0);
        assert_eq!(resolution("writes_per_op", &s), 1.0 / 5000.0);
        assert_eq!(resolution("inserts_per_s", &s), 0.25);
        assert_eq!(resolution("writer_sla", &s), 0.0);
    }
}
