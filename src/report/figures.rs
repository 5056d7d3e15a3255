//! The figures a report shows per step: what each is called, which direction is better, how
//! many digits it is shown with, and how it is read from a step's results.

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
pub struct MetricDef {
    /// Stable key (JSON).
    pub key: &'static str,
    /// Column header.
    pub label: &'static str,
    /// Which direction is better.
    pub better: Better,
    /// Digits after the point when shown.
    pub digits: usize,
    /// Reads the figure from a step; `None` when the step does not have it.
    pub get: fn(&StepResult) -> Option<f64>,
}

impl MetricDef {
    /// The smallest step the figure is shown with: one unit of its last digit (1 for
    /// figures shown without decimals).
    pub fn resolution(&self) -> f64 {
        10f64.powi(-(self.digits as i32))
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
        better: Better::Higher,
        digits: 0,
        get: |s| positive(s.inserts_per_s),
    },
    MetricDef {
        key: "deletes_per_s",
        label: "del/s",
        better: Better::Higher,
        digits: 0,
        get: |s| positive(s.deletes_per_s),
    },
    MetricDef {
        key: "queries_per_s",
        label: "q/s",
        better: Better::Higher,
        digits: 0,
        get: |s| positive(s.queries_per_s),
    },
    MetricDef {
        key: "index_rows_per_s",
        label: "index rows/s",
        better: Better::Higher,
        digits: 0,
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
        better: Better::Lower,
        digits: 1,
        get: |s| Some(s.duration_s),
    },
];

fn per_op(s: &StepResult) -> Option<&crate::results::model::PerOp> {
    s.efficiency.as_ref()?.per_op.as_ref()
}

/// Cost figures (docs/metrics.md), per step.
pub const EFFICIENCY: &[MetricDef] = &[
    MetricDef {
        key: "dbms_cpu_us_per_op",
        label: "dbms CPU us/op",
        better: Better::Lower,
        digits: 1,
        get: |s| per_op(s)?.dbms_cpu_us,
    },
    MetricDef {
        key: "client_cpu_us_per_op",
        label: "client CPU us/op",
        better: Better::Lower,
        digits: 1,
        get: |s| per_op(s).map(|p| p.client_cpu_us),
    },
    MetricDef {
        key: "host_cpu_us_per_op",
        label: "host CPU us/op",
        better: Better::Lower,
        digits: 1,
        get: |s| per_op(s).map(|p| p.host_cpu_us),
    },
    MetricDef {
        key: "kb_read_per_op",
        label: "KB read/op",
        better: Better::Lower,
        digits: 3,
        get: |s| per_op(s)?.kb_read,
    },
    MetricDef {
        key: "kb_written_per_op",
        label: "KB written/op",
        better: Better::Lower,
        digits: 3,
        get: |s| per_op(s)?.kb_written,
    },
    MetricDef {
        key: "reads_per_op",
        label: "reads/op",
        better: Better::Lower,
        digits: 4,
        get: |s| per_op(s)?.reads,
    },
    MetricDef {
        key: "writes_per_op",
        label: "writes/op",
        better: Better::Lower,
        digits: 4,
        get: |s| per_op(s)?.writes,
    },
    MetricDef {
        key: "dbms_cs_per_op",
        label: "dbms cs/op",
        better: Better::Lower,
        digits: 3,
        get: |s| per_op(s)?.dbms_cs,
    },
    MetricDef {
        key: "host_cs_per_op",
        label: "host cs/op",
        better: Better::Lower,
        digits: 3,
        get: |s| per_op(s).map(|p| p.host_cs),
    },
    MetricDef {
        key: "dbms_peak_rss_mb",
        label: "dbms RSS MB",
        better: Better::Lower,
        digits: 1,
        get: |s| Some(s.efficiency.as_ref()?.peak.dbms_rss_bytes? as f64 / MIB),
    },
    MetricDef {
        key: "dbms_peak_vsz_mb",
        label: "dbms VSZ MB",
        better: Better::Lower,
        digits: 1,
        get: |s| Some(s.efficiency.as_ref()?.peak.dbms_vsz_bytes? as f64 / MIB),
    },
    MetricDef {
        key: "dbms_peak_pss_mb",
        label: "dbms PSS MB",
        better: Better::Lower,
        digits: 1,
        get: |s| Some(s.efficiency.as_ref()?.peak.dbms_pss_bytes? as f64 / MIB),
    },
    MetricDef {
        key: "client_peak_rss_mb",
        label: "client RSS MB",
        better: Better::Lower,
        digits: 1,
        get: |s| Some(s.efficiency.as_ref()?.peak.client_rss_bytes as f64 / MIB),
    },
    MetricDef {
        key: "db_size_mb",
        label: "db size MB",
        better: Better::Lower,
        digits: 1,
        get: |s| Some(s.efficiency.as_ref()?.db_size.dbms_bytes? as f64 / MIB),
    },
    MetricDef {
        key: "disk_size_mb",
        label: "on disk MB",
        better: Better::Lower,
        digits: 1,
        get: |s| Some(s.efficiency.as_ref()?.db_size.disk_bytes? as f64 / MIB),
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
        better: Better::Higher,
        digits: 0,
        get: |s| positive(s.queries_per_s),
    },
    MetricDef {
        key: "rows_per_s",
        label: "rows/s (returned, changed, or scanned)",
        better: Better::Higher,
        digits: 0,
        get: |s| {
            let rows = query_op(s)?.rows as f64;
            (s.duration_s > 0.0).then(|| rows / s.duration_s)
        },
    },
    MetricDef {
        key: "p95_ms",
        label: "p95 response time, ms",
        better: Better::Lower,
        digits: 3,
        get: |s| {
            let h = crate::metrics::histogram::decode(&query_op(s)?.histogram).ok()?;
            Some(h.value_at_quantile(0.95) as f64 / 1000.0)
        },
    },
    MetricDef {
        key: "cpu_per_op",
        label: "cpu/o: DBMS CPU us per op",
        better: Better::Lower,
        digits: 1,
        get: |s| per_op(s)?.dbms_cpu_us,
    },
    MetricDef {
        key: "client_cpu_per_op",
        label: "client cpu/o: ibench CPU us per op",
        better: Better::Lower,
        digits: 1,
        get: |s| per_op(s).map(|p| p.client_cpu_us),
    },
    MetricDef {
        key: "cs_per_op",
        label: "cs/o: DBMS context switches per op",
        better: Better::Lower,
        digits: 3,
        get: |s| per_op(s)?.dbms_cs,
    },
    MetricDef {
        key: "rkb_per_op",
        label: "rKB/o: device KB read per op",
        better: Better::Lower,
        digits: 3,
        get: |s| per_op(s)?.kb_read,
    },
    MetricDef {
        key: "wkb_per_op",
        label: "wKB/o: device KB written per op",
        better: Better::Lower,
        digits: 3,
        get: |s| per_op(s)?.kb_written,
    },
];
