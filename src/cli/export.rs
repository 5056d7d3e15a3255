//! `ibench export RUN`: the run's JSON document, or a CSV of its per-step figures.

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::StoreArgs;
use crate::output::stdout;
use crate::results::model::RunResult;
use crate::results::store::Store;

/// Output format of `ibench export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The full results document.
    Json,
    /// One row per step and op type: rates, response-time percentiles, cost per op.
    Csv,
    /// One row per step, op type and second: ops, rows, the largest, mean and p95 response
    /// time, and the second's cost and cgroup figures.
    SecondsCsv,
}

/// Flags of `ibench export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Run id, a unique prefix of one, or a label.
    pub run: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Header of the CSV export.
pub const CSV_HEADER: &str = "run,step,status,duration_s,inserts_per_s,deletes_per_s,\
queries_per_s,op,count,p50_us,p90_us,p99_us,p999_us,max_us,dbms_cpu_us_per_op,\
client_cpu_us_per_op,kb_written_per_op";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV of `run`: one line per step and op type (steps without ops get one line).
pub fn csv(run: &RunResult) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    let opt = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
    for s in &run.steps {
        let per_op = s.efficiency.as_ref().and_then(|e| e.per_op.as_ref());
        let cost = format!(
            "{},{},{}",
            opt(per_op.and_then(|p| p.dbms_cpu_us)),
            opt(per_op.map(|p| p.client_cpu_us)),
            opt(per_op.and_then(|p| p.kb_written))
        );
        let head = format!(
            "{},{},{},{:.3},{:.3},{:.3},{:.3}",
            csv_field(&run.run_id),
            csv_field(&s.name),
            serde_json::to_value(s.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            s.duration_s,
            s.inserts_per_s,
            s.deletes_per_s,
            s.queries_per_s
        );
        if s.ops.is_empty() {
            out.push_str(&format!("{head},,,,,,,,{cost}\n"));
        }
        for (op, r) in &s.ops {
            let p = &r.percentiles_us;
            out.push_str(&format!(
                "{head},{op},{},{},{},{},{},{},{cost}\n",
                r.count, p.p50, p.p90, p.p99, p.p999, p.max
            ));
        }
    }
    out
}

/// Header of the per-second CSV export.
pub const SECONDS_CSV_HEADER: &str = "run,step,op,second,ops,rows,max_us,mean_us,p95_us,\
dbms_cpu_s,device_kb_read,device_kb_written,cgroup_memory_bytes,cgroup_cache_bytes,\
cgroup_major_faults,cgroup_limit_hits";

/// The per-second CSV of `run`: one line per step, op type and second of its all-clients
/// series; a figure the run did not record (mean and p95 before they were kept, cgroup
/// figures without a cgroup, cost without sampling) is empty.
pub fn seconds_csv(run: &RunResult) -> String {
    let mut out = String::from(SECONDS_CSV_HEADER);
    out.push('\n');
    let at_u = |v: &[u64], i: usize| v.get(i).map(u64::to_string).unwrap_or_default();
    let at_f = |v: &[f64], i: usize| v.get(i).map(|x| format!("{x:.3}")).unwrap_or_default();
    for s in &run.steps {
        let e = s.efficiency.as_ref().map(|e| &e.per_second);
        let cg = e.and_then(|e| e.cgroup.as_ref());
        for (op, x) in &s.per_second.total.ops {
            for i in 0..x.ops.len() {
                let cost = match e {
                    Some(e) => format!(
                        "{},{},{}",
                        at_f(&e.dbms_cpu_s, i),
                        at_f(&e.device_kb_read, i),
                        at_f(&e.device_kb_written, i)
                    ),
                    None => ",,".to_string(),
                };
                let cgroup = match cg {
                    Some(c) => format!(
                        "{},{},{},{}",
                        at_u(&c.memory_bytes, i),
                        at_u(&c.cache_bytes, i),
                        at_f(&c.major_faults, i),
                        at_f(&c.limit_hits, i)
                    ),
                    None => ",,,".to_string(),
                };
                out.push_str(&format!(
                    "{},{},{op},{i},{},{},{},{},{},{cost},{cgroup}\n",
                    csv_field(&run.run_id),
                    csv_field(&s.name),
                    x.ops[i],
                    at_u(&x.rows, i),
                    at_u(&x.max_us, i),
                    at_u(&x.mean_us, i),
                    at_u(&x.p95_us, i),
                ));
            }
        }
    }
    out
}

/// Writes the run to stdout.
pub fn execute(args: &ExportArgs) -> Result<()> {
    let store = Store::open_existing(&args.store.results)?;
    let run = super::show::load_named(&store, &args.run)?;
    match args.format {
        ExportFormat::Json => stdout::print(&format!(
            "{}\n",
            crate::output::escape::json(&serde_json::to_string_pretty(&run)?)
        )),
        ExportFormat::Csv => stdout::print(&csv(&run)),
        ExportFormat::SecondsCsv => stdout::print(&seconds_csv(&run)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_figure_columns_are_the_registry_s_keys() {
        // Columns that are figures carry the key every report and compare use (figures.rs).
        let not_figures = [
            "run", "step", "status", "op", "count", "p50_us", "p90_us", "p99_us", "p999_us",
            "max_us",
        ];
        for column in CSV_HEADER.split(',') {
            if !not_figures.contains(&column) {
                assert!(
                    crate::metrics::figures::find(column).is_some(),
                    "{column} is not in the registry of figures"
                );
            }
        }
    }
}
