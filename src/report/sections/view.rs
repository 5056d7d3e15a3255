//! The report's tables of its figures (throughput, writer, select-min, response times, cost per
//! op, counters, settings, runs), formatted once for both HTML and Markdown, and the order of
//! every section ([`sections`]: the other files of `sections/` make the rest).

use crate::output::format::{micros, rate};
pub use crate::report::cells::{
    Cell, Section, ViewTable, fmt_value, incomplete_note, primary, relative_cell,
};
use crate::report::model::{Better, EFFICIENCY, MetricDef, Report, StepReport};

fn throughput_tables(r: &Report) -> Vec<ViewTable> {
    let mut header = vec!["config".to_string()];
    for s in &r.step_reports {
        let unit = primary(s).map(|d| d.label).unwrap_or("-");
        header.push(format!("{} {unit}", s.name));
    }
    let mut abs = Vec::new();
    let mut rel = Vec::new();
    for (gi, g) in r.groups.iter().enumerate() {
        let mut a = vec![Cell::plain(g.name.clone())];
        let mut b = vec![Cell::plain(g.name.clone())];
        for s in &r.step_reports {
            let gs = &s.groups[gi];
            let def = primary(s);
            let stat = def.and_then(|d| gs.throughput.get(d.key));
            let mut cell = match (def, stat) {
                (Some(d), Some(st)) => Cell::stat(st, d.digits),
                _ => Cell::plain("-"),
            };
            cell.text.push_str(&incomplete_note(gs));
            if let Some(sla) = &gs.sla
                && sla.passed < sla.runs
            {
                cell.class = "fail".to_string();
                cell.sub = format!("SLA FAIL {}", cell.sub).trim_end().to_string();
                cell.title = format!(
                    "background writer below 95% of {} rows/s in {} of {} runs",
                    sla.target,
                    sla.runs - sla.passed,
                    sla.runs
                );
            }
            a.push(cell);
            b.push(relative_cell(
                stat,
                def.map(|d| d.better).unwrap_or(Better::Higher),
                g.is_base,
            ));
        }
        abs.push(a);
        rel.push(b);
    }
    vec![
        ViewTable {
            title: "absolute (median over runs, min-max when repeated)".to_string(),
            header: header.clone(),
            rows: abs,
        },
        ViewTable {
            title: format!(
                "relative to {} (median / base median{})",
                r.base,
                crate::report::marks::one_run_note(r)
            ),
            header,
            rows: rel,
        },
    ]
}

fn writer_table(r: &Report) -> Option<ViewTable> {
    let steps: Vec<&StepReport> = r
        .step_reports
        .iter()
        .filter(|s| s.groups.iter().any(|g| g.sla.is_some()))
        .collect();
    if steps.is_empty() {
        return None;
    }
    let mut header = vec!["config".to_string()];
    header.extend(steps.iter().map(|s| s.name.clone()));
    let mut rows = Vec::new();
    for (gi, g) in r.groups.iter().enumerate() {
        let mut row = vec![Cell::plain(g.name.clone())];
        for s in &steps {
            let cell = match &s.groups[gi].sla {
                Some(sla) => {
                    let failed = sla.passed < sla.runs;
                    let mut c = Cell::stat(&sla.inserts_per_s, 0);
                    c.text = format!(
                        "{} / {} ({:.0}% s){}",
                        c.text,
                        rate(sla.target),
                        sla.seconds_met_pct.median,
                        if failed { " FAIL" } else { "" }
                    );
                    if failed {
                        c.class = "fail".to_string();
                        c.title = format!(
                            "below 95% of the target in {} of {} runs",
                            sla.runs - sla.passed,
                            sla.runs
                        );
                    }
                    c
                }
                None => Cell::plain("-"),
            };
            row.push(cell);
        }
        rows.push(row);
    }
    Some(ViewTable {
        title: "achieved / target insert rate, rows/s (share of seconds with at least 95% of the \
                rows due)"
            .to_string(),
        header,
        rows,
    })
}

fn select_min_table(r: &Report) -> Option<ViewTable> {
    let steps: Vec<&StepReport> = r
        .step_reports
        .iter()
        .filter(|s| s.groups.iter().any(|g| g.select_min_us.is_some()))
        .collect();
    if steps.is_empty() {
        return None;
    }
    let mut header = vec!["config".to_string()];
    header.extend(steps.iter().map(|s| s.name.clone()));
    let rows = r
        .groups
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            let mut row = vec![Cell::plain(g.name.clone())];
            row.extend(steps.iter().map(|s| match &s.groups[gi].select_min_us {
                Some(st) => Cell::plain(if st.n > 1 && st.min != st.max {
                    format!(
                        "{} ({}-{})",
                        micros(st.median as u64),
                        micros(st.min as u64),
                        micros(st.max as u64)
                    )
                } else {
                    micros(st.median as u64)
                }),
                None => Cell::plain("-"),
            }));
            row
        })
        .collect();
    Some(ViewTable {
        title: "select min(transactionid) at step start, slowest table".to_string(),
        header,
        rows,
    })
}

/// Response-time tables of one step: classic buckets and percentiles, per op type.
pub fn response_tables(r: &Report, step: &StepReport) -> Vec<(String, ViewTable, ViewTable)> {
    let mut ops: Vec<&String> = step.groups.iter().flat_map(|g| g.ops.keys()).collect();
    ops.sort();
    ops.dedup();
    let mut out = Vec::new();
    for op in ops {
        let mut bh = vec!["config".to_string()];
        bh.extend(r.bucket_labels.iter().cloned());
        let mut ph = vec!["config".to_string(), "ops".to_string()];
        ph.extend(["p50", "p90", "p95", "p99", "p99.9", "max"].map(String::from));
        let mut brows = Vec::new();
        let mut prows = Vec::new();
        for (gi, g) in r.groups.iter().enumerate() {
            let Some(a) = step.groups[gi].ops.get(op) else {
                continue;
            };
            let mut b = vec![Cell::plain(g.name.clone())];
            b.extend(a.buckets_pct.iter().map(|p| {
                Cell::plain(if *p == 0.0 {
                    String::new()
                } else {
                    format!("{p:.2}")
                })
            }));
            brows.push(b);
            let p = &a.percentiles_us;
            let mut row = vec![
                Cell::plain(g.name.clone()),
                Cell::plain(a.count.to_string()),
            ];
            row.extend(
                [p.p50, p.p90, a.p95_us, p.p99, p.p999, p.max].map(|v| Cell::plain(micros(v))),
            );
            prows.push(row);
        }
        out.push((
            op.clone(),
            ViewTable {
                title: format!("{} {op}: % of ops per response-time bucket", step.name),
                header: bh,
                rows: brows,
            },
            ViewTable {
                title: format!(
                    "{} {op}: percentiles (all runs' histograms merged)",
                    step.name
                ),
                header: ph,
                rows: prows,
            },
        ));
    }
    out
}

fn efficiency_table(r: &Report, step: &StepReport) -> Option<ViewTable> {
    // Every DBMS inside ibench: its CPU and the client's are one figure, shown once.
    let embedded = r.groups.iter().all(|g| g.embedded);
    let defs: Vec<(&MetricDef, &str)> = EFFICIENCY
        .iter()
        .filter(|d| step.groups.iter().any(|g| g.efficiency.contains_key(d.key)))
        .filter_map(|d| {
            let label = if embedded {
                crate::report::figures::embedded_label(d)?
            } else {
                d.label
            };
            Some((d, label))
        })
        .collect();
    if defs.is_empty() {
        return None;
    }
    let mut header = vec!["metric".to_string()];
    for g in &r.groups {
        header.push(g.name.clone());
        if !g.is_base {
            header.push("rel".to_string());
        }
    }
    let rows = defs
        .iter()
        .map(|(d, label)| {
            let mut row = vec![Cell::plain(*label)];
            for (gi, g) in r.groups.iter().enumerate() {
                let st = step.groups[gi].efficiency.get(d.key);
                row.push(
                    st.map(|s| Cell::stat(s, d.digits))
                        .unwrap_or_else(|| Cell::plain("-")),
                );
                if !g.is_base {
                    row.push(relative_cell(st, d.better, false));
                }
            }
            row
        })
        .collect();
    Some(ViewTable {
        title: format!(
            "{}: cost per op and size (rel = median / base median)",
            step.name
        ),
        header,
        rows,
    })
}

/// The DBMS's key counters over `step`, per group (median over repeats); `-` where a group's
/// DBMS has no such counter.
fn counters_table(r: &Report, step: &StepReport) -> Option<ViewTable> {
    let names: std::collections::BTreeSet<&String> =
        step.groups.iter().flat_map(|g| g.counters.keys()).collect();
    if names.is_empty() {
        return None;
    }
    let mut header = vec!["counter".to_string()];
    header.extend(r.groups.iter().map(|g| g.name.clone()));
    let rows = names
        .into_iter()
        .map(|name| {
            let mut row = vec![Cell::plain(name.clone())];
            row.extend(step.groups.iter().map(|g| {
                g.counters
                    .get(name)
                    .map(|s| Cell::stat(s, 0))
                    .unwrap_or_else(|| Cell::plain("-"))
            }));
            row
        })
        .collect();
    Some(ViewTable {
        title: format!("{}: DBMS counters over the step", step.name),
        header,
        rows,
    })
}

fn settings_table(r: &Report) -> Option<ViewTable> {
    // Across versions, settings that one of the two versions does not have are many (every
    // release adds some) and say nothing about the configuration: only changed values are
    // listed, the others counted in the title.
    let versions = crate::report::versions::columns(r).is_some();
    let only_one =
        |d: &crate::report::settings::Difference| versions && (d.base == "-" || d.value == "-");
    let left_out = r
        .groups
        .iter()
        .flat_map(|g| &g.differences)
        .filter(|d| only_one(d))
        .count();
    let rows: Vec<Vec<Cell>> = r
        .groups
        .iter()
        .flat_map(|g| {
            g.differences.iter().filter(|d| !only_one(d)).map(|d| {
                vec![
                    Cell::plain(g.name.clone()),
                    Cell::plain(d.key.clone()),
                    Cell::plain(d.base.clone()),
                    Cell::plain(d.value.clone()),
                ]
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(ViewTable {
        title: if left_out > 0 {
            format!(
                "settings that differ from the base ({}); {left_out} settings that exist in \
                 only one of the two versions are not listed",
                r.base
            )
        } else {
            format!("settings that differ from the base ({})", r.base)
        },
        header: ["config", "setting", "base", "value"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

fn runs_table(r: &Report) -> ViewTable {
    let with_ratio = r.groups.iter().any(|g| g.db_cache_ratio.is_some());
    // Where the data was stored, when the configurations differ in it (a storage study).
    let with_pooler = r.groups.iter().any(|g| g.pooler.is_some());
    let with_conditions = r.groups.iter().any(|g| g.conditions.is_some());
    let with_storage = r
        .groups
        .iter()
        .any(|g| g.storage.is_some() && g.storage != r.groups[0].storage);
    let rows = r
        .groups
        .iter()
        .map(|g| {
            let runs: Vec<String> = g
                .runs
                .iter()
                .map(|run| {
                    let status = format!("{:?}", run.status).to_lowercase();
                    if status == "complete" {
                        run.id.clone()
                    } else {
                        format!("{} ({status})", run.id)
                    }
                })
                .collect();
            let mut row = vec![
                if g.is_base {
                    Cell::marked(format!("{} (base)", g.name), "base")
                } else {
                    Cell::plain(g.name.clone())
                },
                Cell::plain(g.dbms.clone()),
                Cell::plain(g.clients.to_string()),
                Cell::plain(g.malloc.clone().unwrap_or_else(|| "-".to_string())),
            ];
            if with_storage {
                row.push(Cell::plain(
                    g.storage.clone().unwrap_or_else(|| "-".to_string()),
                ));
            }
            if with_pooler {
                row.push(Cell::plain(
                    g.pooler.clone().unwrap_or_else(|| "direct".to_string()),
                ));
            }
            if with_conditions {
                row.push(Cell::plain(
                    g.conditions.clone().unwrap_or_else(|| "none".to_string()),
                ));
            }
            if with_ratio {
                row.push(
                    g.db_cache_ratio
                        .as_ref()
                        .map(|s| Cell::stat(s, 2))
                        .unwrap_or_else(|| Cell::plain("-")),
                );
            }
            row.push(Cell::plain(runs.len().to_string()));
            row.push(Cell::plain(runs.join(", ")));
            row
        })
        .collect();
    let mut header: Vec<String> = ["config", "dbms", "clients", "malloc"]
        .map(String::from)
        .to_vec();
    if with_storage {
        header.push("storage".to_string());
    }
    if with_pooler {
        header.push("pooler".to_string());
    }
    if with_conditions {
        header.push("conditions".to_string());
    }
    if with_ratio {
        header.push("db/cache".to_string());
    }
    header.extend(["runs", "run ids"].map(String::from));
    ViewTable {
        title: if with_ratio {
            "configurations compared (db/cache: database size / DBMS cache size after the load)"
                .to_string()
        } else {
            "configurations compared".to_string()
        },
        header,
        rows,
    }
}

fn hosts_table(r: &Report) -> ViewTable {
    ViewTable {
        title: "environment".to_string(),
        header: ["host", "cpu", "memory", "os", "ibench"]
            .map(String::from)
            .to_vec(),
        rows: r
            .hosts
            .iter()
            .map(|h| {
                vec![
                    Cell::plain(h.hostname.clone()),
                    Cell::plain(h.cpu.clone()),
                    Cell::plain(format!("{:.1} GiB", h.memory_gib)),
                    Cell::plain(h.os.clone()),
                    Cell::plain(h.ibench_version.clone()),
                ]
            })
            .collect(),
    }
}

/// The header section: what was compared, where, and how configurations differ.
pub fn header_section(r: &Report) -> Section {
    let mut tables = vec![runs_table(r), hosts_table(r)];
    tables.extend(settings_table(r));
    let mut note = format!(
        "{} configuration(s), base {}; steps {}.",
        r.groups.len(),
        r.base,
        r.steps.join(", ")
    );
    for (step, with) in &r.left_out {
        note.push_str(&format!(
            " Left out {step}: not in every run (only in {}).",
            with.join(", ")
        ));
    }
    let paced = r
        .step_reports
        .iter()
        .any(|s| s.groups.iter().any(|g| g.pacing.is_some()));
    if paced {
        note.push_str(
            " Steps warmed up or paused before their measured part; neither is in any figure \
             (Warm-up and cool-down).",
        );
    }
    Section {
        id: "overview".to_string(),
        title: "Overview".to_string(),
        note,
        tables,
    }
}

/// Every section but the per-step response-time and chart parts, in report order.
pub fn sections(r: &Report) -> Vec<Section> {
    let mut out: Vec<Section> = crate::report::sections::headline::section(r)
        .into_iter()
        .collect();
    out.push(header_section(r));
    out.extend(crate::report::sections::sanity::section(r));
    out.extend(crate::report::sections::pacing::section(r));
    out.extend(crate::report::sections::replication::faults_section(r));
    if crate::report::micro::is_micro(r) {
        out.push(micro_section(r));
        return out;
    }
    out.push(Section {
        id: "throughput".to_string(),
        title: "Throughput".to_string(),
        note: "Per step: queries/s for query steps, indexed rows/s for l.x, inserted rows/s \
               for load steps. Relative values are marked only where the runs support the \
               change (see the headline)."
            .to_string(),
        tables: throughput_tables(r),
    });
    out.extend(crate::report::sections::versions::section(r));
    out.extend(crate::report::sections::cost::section(r));
    if let Some(t) = writer_table(r) {
        out.push(Section {
            id: "writer".to_string(),
            title: "Background insert rate (query steps)".to_string(),
            note: "The writer SLA passes when the step average reaches 95% of the target."
                .to_string(),
            tables: vec![t],
        });
    }
    out.extend(efficiency_section(r));
    out.extend(counters_section(r));
    if let Some(w) = crate::report::sections::waits::section(r) {
        out.push(w);
    }
    out.extend(crate::report::sections::replication::report_section(r));
    out.extend(crate::report::sections::seconds::section(r));
    out.extend(crate::report::sections::compaction::section(r));
    out.extend(crate::report::sections::perf_context::section(r));
    out.extend(crate::report::sections::client_hosts::section(r));
    if let Some(t) = select_min_table(r) {
        out.push(Section {
            id: "select-min".to_string(),
            title: "Select-min at step start".to_string(),
            note: "Time of the query that finds the oldest row, the cost of MVCC garbage left \
                   by deletes."
                .to_string(),
            tables: vec![t],
        });
    }
    out
}

/// The microbenchmarks' section: a table per figure, a row per benchmark and client count.
fn micro_section(r: &Report) -> Section {
    // A row per benchmark and client count: a column per step would be hundreds wide.
    Section {
        id: "micro".to_string(),
        title: "Microbenchmarks".to_string(),
        note: format!(
            "One table per figure; a row per benchmark and client count; the base's value, \
             and each other configuration's relative to it (its value below). An op is one \
             statement, or one transaction of read-only, write-only and read-write; rows/s \
             counts rows returned, changed, or scanned (scan). Relative values are marked \
             red where worse, green where better, only where the runs support the change \
             (see the headline). cpu/o and cs/o are the DBMS's processes \
             (docs/metrics.md), rKB/o and wKB/o its device{}.",
            crate::report::marks::one_run_note(r)
        ),
        tables: crate::report::micro::tables(r),
    }
}

/// The cost per op of each step, relative to the base; `None` without any.
fn efficiency_section(r: &Report) -> Option<Section> {
    let eff: Vec<ViewTable> = r
        .step_reports
        .iter()
        .filter_map(|s| efficiency_table(r, s))
        .collect();
    if eff.is_empty() {
        return None;
    }
    Some(Section {
        id: "efficiency".to_string(),
        title: "Efficiency".to_string(),
        note: format!(
            "Per op: per row inserted in load steps, per query in query steps \
             (docs/metrics.md gives each formula). Lower is better. A relative value is \
             shown only where the base's median is above the figure's resolution (one unit \
             of its last digit); else -. It is marked where ibench compare's test \
             supports the change (it tests CPU per op; KB and context switches per op are \
             untested, not marked), or, with one run on a side, by the 0.95/1.05 \
             threshold{}. {}",
            crate::report::marks::one_run_note(r),
            crate::report::marks::NEGLIGIBLE_LEGEND
        ),
        tables: eff,
    })
}

/// The DBMS's key counters of each step; `None` without any.
fn counters_section(r: &Report) -> Option<Section> {
    let counters: Vec<ViewTable> = r
        .step_reports
        .iter()
        .filter_map(|s| counters_table(r, s))
        .collect();
    if counters.is_empty() {
        return None;
    }
    Some(Section {
        id: "counters".to_string(),
        title: "DBMS counters".to_string(),
        note: "The DBMS's own counters engineers read first, totals over each step (median \
               over repeats; docs/metrics.md names each): RocksDB's write stalls and \
               compaction bytes, SQLite's checkpoints, PostgreSQL's and MariaDB's \
               statistics."
            .to_string(),
        tables: counters,
    })
}
