//! The summary printed at the end of `ibench run`: throughput per step, then response times
//! per step and op type.

use crate::output::escape;
use crate::output::format::{micros, rate, seconds};
use crate::report::figures::header as figure;
use crate::report::table::Table;
use crate::request::WorkloadSpec;
use crate::results::model::{RunResult, RunStatus};

/// Throughput per step; for the Insert Benchmark also deletes, select-min and the background
/// writer's SLA (a microbenchmark has none of them).
pub fn throughput_table(run: &RunResult) -> Table {
    let insert_benchmark = matches!(run.config.workload, WorkloadSpec::InsertBenchmark(_));
    let mut header = vec!["step", "time", figure("inserts_per_s")];
    if insert_benchmark {
        header.push(figure("deletes_per_s"));
    }
    header.push(figure("queries_per_s"));
    if insert_benchmark {
        header.extend(["select-min", "writer SLA"]);
    }
    let mut t = Table::new(header);
    for s in &run.steps {
        let opt_rate = |v: f64| if v > 0.0 { rate(v) } else { "-".to_string() };
        let sla = match (&s.sla, s.sla_verdict()) {
            (Some(_), Some(verdict @ "not evaluated")) => verdict.to_string(),
            (Some(sla), Some(verdict)) => format!(
                "{verdict} {:.0}/{:.0} ({:.0}% s)",
                sla.inserts_per_s,
                sla.target_inserts_per_s,
                100.0 * sla.seconds_met_share
            ),
            _ => "-".to_string(),
        };
        let mut name = s.name.clone();
        if s.status != RunStatus::Complete {
            name.push_str(&format!(" ({:?})", s.status).to_lowercase());
        }
        let mut row = vec![name, seconds(s.duration_s), opt_rate(s.inserts_per_s)];
        if insert_benchmark {
            row.push(opt_rate(s.deletes_per_s));
        }
        row.push(opt_rate(s.queries_per_s));
        if insert_benchmark {
            row.push(
                s.select_min
                    .as_ref()
                    .map(|m| micros(m.max_us))
                    .unwrap_or_else(|| "-".to_string()),
            );
            row.push(sla);
        }
        t.row(row);
    }
    t
}

/// What the writer SLA column says, printed under the throughput table when a step has one.
pub const SLA_LEGEND: &str = "\
writer SLA: achieved/target rows/s of a query step's background inserts; PASS when the step
average reaches 95% of the target. (N% s): share of the step's full seconds in which at least
95% of the rows due in that second were inserted.
";

/// Response-time percentiles per step and op type (from when each op was due).
pub fn latency_table(run: &RunResult) -> Table {
    let mut t = Table::new([
        "step", "op", "count", "p50", "p90", "p95", "p99", "p99.9", "max",
    ]);
    for s in &run.steps {
        for (op, r) in &s.ops {
            let p = &r.percentiles_us;
            // Read from the histogram: results keep no p95 of their own.
            let p95 = crate::metrics::histogram::decode(&r.histogram)
                .map(|h| micros(h.value_at_quantile(0.95)))
                .unwrap_or_else(|_| "-".to_string());
            t.row([
                s.name.clone(),
                op.clone(),
                r.count.to_string(),
                micros(p.p50),
                micros(p.p90),
                p95,
                micros(p.p99),
                micros(p.p999),
                micros(p.max),
            ]);
        }
    }
    t
}

fn bytes(b: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if b as f64 >= 1024.0 * MIB {
        format!("{:.2}G", b as f64 / (1024.0 * MIB))
    } else {
        format!("{:.1}M", b as f64 / MIB)
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|v| format!("{v:.digits$}"))
        .unwrap_or_else(|| "-".to_string())
}

/// Cost per op (row inserted in load steps, query in query steps) and memory and size. A DBMS
/// inside ibench (SQLite, RocksDB) has one CPU column, `ibench+dbms us`: its CPU and the
/// client's are one process's.
pub fn efficiency_table(run: &RunResult) -> Table {
    let embedded = run.target().kind.embedded();
    let cpu: &[&str] = if embedded {
        &["ibench+dbms us"]
    } else {
        &["dbms us", "client us"]
    };
    let mut t = Table::new(
        ["step", "per"]
            .iter()
            .chain(cpu)
            .chain(&[
                "host us", "KB rd", "KB wr", "rd", "wr", "cs", "dbms RSS", "dbms PSS", "db size",
                "on disk",
            ])
            .copied(),
    );
    for s in &run.steps {
        let Some(e) = &s.efficiency else { continue };
        let Some(p) = &e.per_op else { continue };
        let size = |b: Option<u64>| b.map(bytes).unwrap_or_else(|| "-".to_string());
        let mut cells = vec![s.name.clone(), e.per.clone(), opt(p.dbms_cpu_us, 1)];
        if !embedded {
            cells.push(format!("{:.1}", p.client_cpu_us));
        }
        t.row(cells.into_iter().chain([
            format!("{:.1}", p.host_cpu_us),
            opt(p.kb_read, 3),
            opt(p.kb_written, 3),
            opt(p.reads, 4),
            opt(p.writes, 4),
            opt(p.dbms_cs, 3),
            size(e.peak.dbms_rss_bytes),
            size(e.peak.dbms_pss_bytes),
            size(e.db_size.dbms_bytes),
            size(e.db_size.on_disk()),
        ]));
    }
    t
}

/// The whole terminal summary (stored text in it escaped: see `output::escape`).
pub fn summary(run: &RunResult) -> String {
    let out = summary_text(run);
    escape::text(&out).into_owned()
}

fn summary_text(run: &RunResult) -> String {
    let mut out = String::new();
    let dbms = &run.environment.dbms;
    let (name, version) = (escape::line(&dbms.name), escape::line(&dbms.version));
    out.push_str(&match &run.config.workload {
        WorkloadSpec::InsertBenchmark(w) => format!(
            "\nInsert Benchmark on {name} {version} ({} clients)\n\n",
            w.clients
        ),
        WorkloadSpec::Micro(m) => format!(
            "\nMicrobenchmarks on {name} {version} ({} tables x {} rows; clients {})\n\n",
            m.tables,
            m.table_rows,
            m.clients
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        WorkloadSpec::Tpcc(t) => format!(
            "\nTPC-C on {name} {version} ({} table set(s) x {} warehouse(s); clients {})\n\n",
            t.tables,
            t.warehouses,
            t.clients
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
    if let Some(d) = &run.dataset {
        out.push_str(&format!(
            "From dataset {}: {} files, {} MiB restored by {} in {:.1} s (sha256 {})\n\n",
            escape::line(&d.name),
            d.files,
            d.bytes >> 20,
            d.method.name(),
            d.seconds,
            escape::line(&d.sha256.chars().take(12).collect::<String>())
        ));
    }
    if !run.config.tags.is_empty() {
        let tags = crate::request::tags::text(&run.config.tags);
        out.push_str(&format!("tags: {}\n\n", escape::line(&tags)));
    }
    out.push_str(&verdict_lines(run));
    out.push_str(&throughput_table(run).to_text());
    if run.steps.iter().any(|s| s.sla.is_some()) {
        out.push('\n');
        out.push_str(SLA_LEGEND);
    }
    if run.steps.iter().any(|s| !s.scans.is_empty()) {
        out.push_str("\nFull scans (scan step): every table through each index in turn\n\n");
        let mut t = Table::new(["step", "index", "rows", "seconds", "rows/s"]);
        for s in &run.steps {
            for scan in &s.scans {
                t.row([
                    s.name.clone(),
                    scan.index.clone(),
                    scan.rows.to_string(),
                    format!("{:.3}", scan.seconds),
                    crate::output::format::rate(scan.rows_per_s),
                ]);
            }
        }
        out.push_str(&t.to_text());
    }
    let lat = latency_table(run);
    if !lat.is_empty() {
        out.push_str("\nResponse time (from when each op was due)\n\n");
        out.push_str(&lat.to_text());
    }
    let eff = efficiency_table(run);
    if !eff.is_empty() {
        out.push_str(
            "\nCost per op (docs/metrics.md): CPU in microseconds, device IO in KB and requests\n",
        );
        if let Some(e) = run.steps.iter().find_map(|s| s.efficiency.as_ref()) {
            out.push_str(&format!("DBMS figures: {}\n", escape::line(&e.dbms_source)));
        }
        out.push('\n');
        out.push_str(&eff.to_text());
    }
    out.push_str(&crate::report::tpcc::section(run));
    out.push_str(&crate::report::resources::section(run));
    out.push_str(&crate::report::interference::section(run));
    if let Some(c) = &run.environment.canary {
        out.push_str(&format!("\n{}\n", crate::metrics::canary::text(c)));
    }
    out.push_str(&crate::report::seconds::section(run));
    out.push_str(&crate::report::compaction::section(run));
    out.push_str(&crate::report::perf_context::section(run));
    out.push_str(&crate::report::pacing::section(run));
    out.push_str(&crate::report::pacing::pauses_section(run));
    out.push_str(&crate::report::replication::section(run));
    out.push_str(&crate::report::replication::servers_section(run));
    for s in &run.steps {
        out.push_str(&step_notes(s, run.target().read_from_replicas));
    }
    if let Some(hosts) = crate::report::group::hosts_section(run) {
        out.push_str(&hosts);
    }
    out
}

/// What the summary says of step `s` beyond its tables: point-query ids not found, the queue
/// checked after reconnects, what l.x built. `replicas`: the queries read from replicas.
fn step_notes(s: &crate::results::model::StepResult, replicas: bool) -> String {
    let mut out = String::new();
    let step = escape::line(&s.name);
    out.push_str(&crate::report::replication::step_faults(s));
    if let Some(sanity) = crate::report::compare::steady::sanity(s)
        && let Some(flag) = sanity.flag()
    {
        let hint = crate::report::compare::steady::longer_hint(&[s.name.as_str()])
            .filter(|_| sanity.too_short)
            .map_or(String::new(), |h| format!(" ({h})"));
        out.push_str(&format!("\n{step}: {flag}{hint}\n"));
    }
    if let Some(m) = s.point_query_misses
        && m > 0
    {
        out.push_str(&format!(
            "\nwarning: {step}: {m} point-query ids were not found (rows deleted while asked \
             for{})\n",
            if replicas {
                ", or not yet replayed by the replica the query read from"
            } else {
                ""
            }
        ));
    }
    if let Some(q) = &s.queue_check {
        if q.ok {
            out.push_str(&format!(
                "\n{step}: queue checked after {} reconnects / retries: {} rows, as counted, no gaps\n",
                s.reconnects, q.rows_counted
            ));
        } else {
            out.push_str(&format!(
                "\nwarning: {step}: queue invariant broken after {} reconnects / retries: {} rows \
                 in the tables, {} expected ({} at start + {} inserted - {} deleted{}); gaps in: {}\n",
                s.reconnects,
                q.rows_counted,
                q.rows_expected,
                q.rows_at_start,
                s.rows_inserted,
                s.rows_deleted,
                s.warmup.as_ref().map_or(String::new(), |w| format!(
                    ", warm-up +{} -{}",
                    w.rows_inserted, w.rows_deleted
                )),
                if q.tables_with_gaps.is_empty() {
                    "none".to_string()
                } else {
                    escape::line(&q.tables_with_gaps.join(", ")).into_owned()
                }
            ));
        }
    }
    if let Some(ix) = &s.index_build {
        // Only a completed l.x indexed its rows (older documents stored a rate anyway).
        let outcome = if s.status == RunStatus::Complete {
            format!("{} rows/s", rate(ix.rows_per_s))
        } else {
            format!(
                "{} after {}: not all built, no rate",
                format!("{:?}", s.status).to_lowercase(),
                seconds(s.duration_s)
            )
        };
        out.push_str(&format!(
            "\n{step}: {} index(es) on {} table(s), {} rows, {outcome}\n",
            ix.indexes.len(),
            ix.tables,
            ix.rows,
        ));
    }
    out
}

/// The verdict of one run as lines for the terminal summary's top (`Verdict:` and a line per
/// item: the writer's SLA, seconds without an op, the largest response time, stability);
/// empty when the run cannot be reported on (no step).
fn verdict_lines(run: &RunResult) -> String {
    let groups = [crate::report::select::Group {
        name: run.run_id.clone(),
        runs: vec![run.clone()],
    }];
    let Ok(report) = crate::report::build::build(&groups) else {
        return String::new();
    };
    let table = crate::report::sections::verdict::verdict_table(&report);
    let mut out = String::from("Verdict:\n");
    for row in &table.rows {
        let (Some(name), Some(value)) = (row.first(), row.get(1)) else {
            continue;
        };
        let mut text = value.text.clone();
        if !value.sub.is_empty() {
            text.push_str(&format!(" ({})", value.sub));
        }
        out.push_str(&format!("  {}: {text}\n", name.text));
    }
    out.push('\n');
    out
}
