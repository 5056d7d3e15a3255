//! The runs of one configuration and their figures per step, as series over the runs.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::UsageError;
use crate::metrics::figures::{Better, MetricDef, find};
use crate::request::tags::Tags;
use crate::results::model::{RunResult, RunStatus, StepResult};

/// How the runs of a history are ordered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Order {
    /// By start time.
    Start,
    /// By the value of a tag (numbers in it compared as numbers).
    Tag(String),
    /// By the recorded DBMS version (numbers compared as numbers).
    Version,
}

impl Order {
    /// Parses `start`, `version` or `tag:KEY`.
    pub fn parse(s: &str) -> Result<Order, String> {
        match s {
            "start" | "time" => Ok(Order::Start),
            "version" => Ok(Order::Version),
            _ => match s.strip_prefix("tag:") {
                Some(k) if crate::request::tags::valid_key(k) => Ok(Order::Tag(k.to_string())),
                _ => Err(format!(
                    "{:?} is not an order: expected start, version or tag:KEY",
                    crate::output::escape::line(s)
                )),
            },
        }
    }
}

/// One run of a history, as its tables and charts name it.
#[derive(Clone, Debug, Serialize)]
pub struct RunInfo {
    /// Run id.
    pub id: String,
    /// Start time (RFC 3339).
    pub started_at: String,
    /// DBMS version as recorded.
    pub version: String,
    /// Provenance tags.
    pub tags: Tags,
    /// What the run is ordered by (start time, tag value or version).
    pub key: String,
}

/// One figure of one step over the runs.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Step name.
    pub step: String,
    /// Figure key (`queries_per_s`).
    pub figure: String,
    /// Figure label (`q/s`).
    pub label: String,
    /// Which direction is better.
    pub better: Better,
    /// Digits it is shown with.
    pub digits: usize,
    /// The smallest absolute change that counts as more than noise: the figure's
    /// [`noise_floor`], at least twice its resolution in the coarsest run
    /// (`figures::resolution`: a CPU tick over few ops).
    pub floor: f64,
    /// Whether the gate (`--check-last`) judges it: figures of what the target itself did.
    /// The whole device's IO is shown but not gated ([`gated`]).
    pub gated: bool,
    /// Per run (in the history's order): the figure, `None` where the run lacks it.
    pub values: Vec<Option<f64>>,
    /// Per run: why a neighbour disturbed the step in it (`report/interference.rs`), `None`
    /// where it did not or was not measured. The gate judges the other runs.
    pub disturbed: Vec<Option<String>>,
}

impl Series {
    /// The series without its disturbed runs' values.
    pub fn undisturbed(&self) -> Series {
        let mut s = self.clone();
        for (v, d) in s.values.iter_mut().zip(&self.disturbed) {
            if d.is_some() {
                *v = None;
            }
        }
        s
    }
}

/// Compares `a` and `b` with their runs of digits as numbers: `9.6 < 10.1`, `15beta2 <
/// 15beta10`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let chunks = |s: &str| -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = Vec::new();
        for c in s.chars() {
            let digit = c.is_ascii_digit();
            match out.last_mut() {
                Some((d, t)) if *d == digit => t.push(c),
                _ => out.push((digit, c.to_string())),
            }
        }
        out
    };
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, ta), (db, tb)) in ca.iter().zip(&cb) {
        let o = match (da, db) {
            (true, true) => {
                let (x, y) = (ta.trim_start_matches('0'), tb.trim_start_matches('0'));
                x.len().cmp(&y.len()).then_with(|| x.cmp(y))
            }
            _ => ta.cmp(tb),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len())
}

/// The version number in a DBMS's version text: its first word that starts with a digit
/// (`15.20` of `PostgreSQL 15.20 (Debian ...) on x86_64...`, `10.11.6-MariaDB-0+deb12u1`),
/// else the whole text.
pub fn version_number(v: &str) -> &str {
    v.split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(v)
}

/// The runs' infos in `order`, and the runs sorted the same way. Only complete runs count
/// (a failed run's figures are partial); a run without the ordering tag is refused.
pub fn order_runs(
    runs: Vec<RunResult>,
    order: &Order,
) -> Result<(Vec<RunInfo>, Vec<RunResult>), UsageError> {
    let mut runs: Vec<RunResult> = runs
        .into_iter()
        .filter(|r| r.status == RunStatus::Complete)
        .collect();
    let key = |r: &RunResult| -> Option<String> {
        match order {
            Order::Start => Some(r.started_at.to_rfc3339()),
            Order::Version => Some(version_number(&r.environment.dbms.version).to_string()),
            Order::Tag(k) => r.config.tags.get(k).cloned(),
        }
    };
    if let Some(r) = runs.iter().find(|r| key(r).is_none())
        && let Order::Tag(k) = order
    {
        return Err(UsageError::new(format!(
            "--order tag:{k}: run {} has no tag {k} (see `ibench list`)",
            r.run_id
        )));
    }
    runs.sort_by(|a, b| {
        natural_cmp(&key(a).unwrap_or_default(), &key(b).unwrap_or_default())
            .then(a.started_at.cmp(&b.started_at))
            .then_with(|| a.run_id.cmp(&b.run_id))
    });
    let infos = runs
        .iter()
        .map(|r| RunInfo {
            id: r.run_id.clone(),
            started_at: r.started_at.to_rfc3339(),
            version: r.environment.dbms.version.clone(),
            tags: r.config.tags.clone(),
            key: key(r).unwrap_or_default(),
        })
        .collect();
    Ok((infos, runs))
}

/// p99 response time, ms, of the step's most frequent op.
fn p99_ms(s: &StepResult) -> Option<f64> {
    let op = s
        .ops
        .values()
        .filter(|o| o.count > 0)
        .max_by_key(|o| o.count)?;
    Some(op.percentiles_us.p99 as f64 / 1000.0)
}

/// The figures a history follows per step: throughput, p99, the DBMS's CPU and IO per op
/// (its process tree's, /proc/PID/io; ibench's own for an embedded DBMS), the device's IO per
/// op (shown, not gated: it counts whatever else wrote to the device), the writer SLA of query
/// steps. (Not the host's CPU per op: it counts whatever else the host ran.)
pub fn figures() -> Vec<MetricDef> {
    // The registry's figures, as it defines them (`metrics/figures.rs`).
    let pick = |key: &&str| find(key).copied();
    let mut out: Vec<MetricDef> = [
        "inserts_per_s",
        "deletes_per_s",
        "queries_per_s",
        "index_rows_per_s",
    ]
    .iter()
    .filter_map(pick)
    .collect();
    out.push(MetricDef {
        key: "p99_ms",
        label: "p99 ms",
        unit: "ms",
        better: Better::Lower,
        digits: 3,
        floor: 0.0,
        get: p99_ms,
    });
    out.extend(
        [
            "dbms_cpu_us_per_op",
            "dbms_kb_read_per_op",
            "dbms_kb_written_per_op",
            "kb_read_per_op",
            "kb_written_per_op",
        ]
        .iter()
        .filter_map(pick),
    );
    out.push(MetricDef {
        key: "writer_sla",
        label: "writer SLA (achieved/target)",
        unit: "achieved/target",
        better: Better::Higher,
        digits: 3,
        floor: 0.0,
        get: |s| Some(s.sla.as_ref()?.ratio),
    });
    out
}

/// The smallest absolute change of figure `key` that can be more than noise, whatever the
/// runs' spread: 0.1 KB per op of device IO (a few pages more or less in the cache), 0.5 us
/// of CPU per op, 0.05 ms of p99, 0.01 of the writer SLA; else one unit of the last digit
/// shown.
pub fn noise_floor(key: &str, digits: usize) -> f64 {
    match key {
        "kb_read_per_op"
        | "kb_written_per_op"
        | "dbms_kb_read_per_op"
        | "dbms_kb_written_per_op" => 0.1,
        "dbms_cpu_us_per_op" => 0.5,
        "p99_ms" => 0.05,
        "writer_sla" => 0.01,
        _ => 10f64.powi(-(digits as i32)),
    }
}

/// Whether the gate judges figure `key`: not the device's IO per op, which counts what
/// others did on the device (the DBMS's own IO is gated instead).
pub fn gated(key: &str) -> bool {
    !matches!(key, "kb_read_per_op" | "kb_written_per_op")
}

/// The series of `runs` (ordered): for each step (in the order steps first appear), each
/// figure at least two runs have.
pub fn extract(runs: &[RunResult]) -> Vec<Series> {
    let mut steps: Vec<String> = Vec::new();
    for r in runs {
        for s in &r.steps {
            if !steps.contains(&s.name) {
                steps.push(s.name.clone());
            }
        }
    }
    let defs = figures();
    let mut out = Vec::new();
    for step in &steps {
        let of_step: Vec<Option<&StepResult>> = runs
            .iter()
            .map(|r| r.steps.iter().find(|s| &s.name == step))
            .collect();
        for def in &defs {
            let values: Vec<Option<f64>> = of_step
                .iter()
                .map(|s| s.and_then(|s| (def.get)(s)).filter(|v| v.is_finite()))
                .collect();
            if values.iter().flatten().count() >= 2 {
                let resolution = of_step
                    .iter()
                    .flatten()
                    .map(|s| match def.key {
                        // History's own figure (not in the registry): 3 significant digits.
                        "p99_ms" => (def.get)(s).map_or(0.0, |v| v / 1000.0),
                        key => crate::metrics::figures::resolution(key, s),
                    })
                    .fold(0.0, f64::max);
                out.push(Series {
                    step: step.clone(),
                    figure: def.key.to_string(),
                    label: def.label.to_string(),
                    better: def.better,
                    digits: def.digits,
                    floor: noise_floor(def.key, def.digits).max(2.0 * resolution),
                    gated: gated(def.key),
                    values,
                    disturbed: of_step
                        .iter()
                        .map(|s| s.and_then(crate::report::interference::disturbed))
                        .collect(),
                });
            }
        }
    }
    out
}

/// The host canary's series (`--canary`), as a step of its own named [`CANARY_STEP`]: the CPU
/// loop's and the fsync's milliseconds and the memory copy's GB/s, each the mean of the probes
/// before and after the run; shown, not gated (the host's drift, not the DBMS's). Only when
/// two or more runs have it.
pub fn canary_series(runs: &[RunResult]) -> Vec<Series> {
    type Read = fn(&crate::results::canary::Probe) -> f64;
    let figures: [(&str, &str, Better, usize, Read); 3] = [
        ("canary_cpu_ms", "CPU loop ms", Better::Lower, 1, |p| {
            p.cpu_ms
        }),
        ("canary_fsync_ms", "fsync ms", Better::Lower, 3, |p| {
            p.fsync_ms
        }),
        (
            "canary_memcpy_gb_s",
            "memcpy GB/s",
            Better::Higher,
            2,
            |p| p.memcpy_gb_s,
        ),
    ];
    figures
        .into_iter()
        .map(|(key, label, better, digits, read)| {
            let values: Vec<Option<f64>> = runs
                .iter()
                .map(|r| {
                    let c = r.environment.canary.as_ref()?;
                    let probes = [Some(c.before), c.after];
                    let v: Vec<f64> = probes.iter().flatten().map(read).collect();
                    Some(v.iter().sum::<f64>() / v.len() as f64)
                })
                .collect();
            Series {
                step: CANARY_STEP.to_string(),
                figure: key.to_string(),
                label: label.to_string(),
                better,
                digits,
                floor: 10f64.powi(-(digits as i32)),
                gated: false,
                disturbed: vec![None; values.len()],
                values,
            }
        })
        .filter(|s| s.values.iter().flatten().count() >= 2)
        .collect()
}

/// The step name the host canary's series go under.
pub const CANARY_STEP: &str = "host canary";

/// What identifies a configuration when runs are matched by it: the workload, the target
/// (its kind and parameters), the server and statement settings, without what names one run
/// (label, tags, output directory, file path, a managed server's port and data directory).
pub fn fingerprint(run: &RunResult) -> String {
    let mut v = serde_json::to_value(&run.config).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        for k in [
            "label",
            "tags",
            "out_dir",
            "keep_data",
            "report_interval_s",
            "canary",
        ] {
            o.remove(k);
        }
        if let Some(t) = o.get_mut("target").and_then(|t| t.as_object_mut()) {
            t.remove("path");
            if run.managed_server.is_some() {
                t.remove("url");
            }
        }
        if let Some(s) = o.get_mut("server").and_then(|s| s.as_object_mut()) {
            s.remove("data_dir");
        }
    }
    let text = v.to_string();
    format!(
        "{:016x}",
        crate::history::changepoint::incremental::hash_bytes(text.as_bytes())
    )
}

/// Runs grouped by fingerprint, for naming a series by one of its runs.
pub fn same_configuration(all: Vec<RunResult>, like: &RunResult) -> Vec<RunResult> {
    let want = fingerprint(like);
    let mut by: BTreeMap<bool, Vec<RunResult>> = BTreeMap::new();
    for r in all {
        by.entry(fingerprint(&r) == want).or_default().push(r);
    }
    by.remove(&true).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_tags_order_by_their_numbers() {
        let mut v = vec![
            "15.4", "9.6.24", "12.20", "18beta1", "10.1", "15.10", "13.2",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "9.6.24", "10.1", "12.20", "13.2", "15.4", "15.10", "18beta1"
            ]
        );
        assert_eq!(natural_cmp("b2", "b10"), Ordering::Less);
        assert_eq!(
            version_number("PostgreSQL 15.20 (Debian 15.20-0+deb12u1) on x86_64-pc-linux-gnu"),
            "15.20"
        );
        assert_eq!(
            version_number("10.11.6-MariaDB-0+deb12u1"),
            "10.11.6-MariaDB-0+deb12u1"
        );
        assert_eq!(natural_cmp("007", "7"), Ordering::Equal);
        assert!(Order::parse("tag:Bad").is_err());
        assert_eq!(Order::parse("tag:commit"), Ok(Order::Tag("commit".into())));
    }
}
