//! The report's verdict, what it says first (HTML and Markdown; the terminal summary's
//! `Verdict:` lines too): per configuration an identity line (DBMS and version,
//! configuration, host, clients, rows, duration), the verdict table (the background writer's
//! SLA per query step, seconds without an op completed, the largest response time, whether
//! each step's rate was steady, neighbours) and one line per step of the figures that explain
//! it (rate, p50/p99/max response time, CPU, IO and context switches per op, RSS, database
//! size), from the model's `verdicts` (built by `verdict.rs`) and the steps' figures.
//!
//! A verdict that calls for a look (an SLA failed, seconds without an op) is marked `alert`:
//! coloured in HTML, not bold in Markdown, where bold means a change the runs support.

use crate::output::escape;
use crate::output::format::{micros, rate};
use crate::report::cells::{Cell, Section, ViewTable, primary};
use crate::report::compare::steady::{DRIFT_PCT, longer_hint};
use crate::report::figures;
use crate::report::model::Report;
use crate::report::stat::Stat;

/// `1h 02m`, `3m 05s`, `42.1s`.
fn duration(s: f64) -> String {
    let t = s.round() as u64;
    if t >= 3600 {
        format!("{}h {:02}m", t / 3600, (t % 3600) / 60)
    } else if t >= 60 {
        format!("{}m {:02}s", t / 60, t % 60)
    } else {
        format!("{s:.1}s")
    }
}

/// The identity line of configuration `gi`.
pub fn identity(r: &Report, gi: usize) -> String {
    let g = &r.groups[gi];
    let v = r.verdicts.get(gi);
    let mut parts = vec![g.dbms.clone()];
    // An unlabelled run's configuration is its run id, named at the end.
    // One line: a label or host name holding a newline is shown escaped.
    if g.runs.len() != 1 || g.runs[0].id != g.name {
        parts.push(format!("config {}", escape::line(&g.name)));
    }
    parts.push(format!("host {}", escape::line(&g.host)));
    parts.push(format!(
        "{} client{}",
        g.clients,
        if g.clients == 1 { "" } else { "s" }
    ));
    if let Some(rows) = v.and_then(|v| v.rows.as_ref()) {
        parts.push(format!("{} rows", rate(rows.median)));
    }
    if let Some(d) = v.and_then(|v| v.duration_s.as_ref()) {
        parts.push(duration(d.median));
    }
    let runs = g.runs.len();
    parts.push(if runs == 1 {
        format!("run {}", g.runs[0].id)
    } else {
        format!("{runs} runs (medians)")
    });
    parts.join(" · ")
}

fn sla_cell(r: &Report, gi: usize) -> Cell {
    let mut parts = Vec::new();
    let mut failed = false;
    for s in &r.step_reports {
        let Some(sla) = &s.groups[gi].sla else {
            continue;
        };
        let fail = sla.passed < sla.runs;
        failed |= fail;
        parts.push(if fail {
            format!(
                "{} FAIL {} of {} rows/s ({:.0}%)",
                s.name,
                rate(sla.inserts_per_s.median),
                rate(sla.target),
                sla.seconds_met_pct.median
            )
        } else {
            format!("{} pass ({:.0}%)", s.name, sla.seconds_met_pct.median)
        });
    }
    if parts.is_empty() {
        return Cell::plain("no query step");
    }
    let mut c = Cell::plain(parts.join(", "));
    c.title = "per query step: pass when the writer's average reached 95% of its target; (N%): \
               share of full seconds in which it inserted at least 95% of the rows due"
        .to_string();
    if failed {
        c.class = "alert".to_string();
    }
    c
}

fn zero_cell(r: &Report, gi: usize) -> Cell {
    let Some(v) = r.verdicts.get(gi) else {
        return Cell::plain("-");
    };
    let zero: Vec<String> = v
        .steps
        .iter()
        .filter(|s| s.zero_seconds > 0)
        .map(|s| {
            format!(
                "{} {} s of {} ({})",
                s.step, s.zero_seconds, s.full_seconds, s.op
            )
        })
        .collect();
    if zero.is_empty() {
        let full: usize = v.steps.iter().map(|s| s.full_seconds).sum();
        Cell::plain(format!("none in {full} full seconds"))
    } else {
        Cell::marked(zero.join("; "), "alert")
    }
}

fn max_cell(r: &Report, gi: usize) -> Cell {
    let worst = r
        .step_reports
        .iter()
        .flat_map(|s| {
            s.groups[gi]
                .ops
                .iter()
                .map(move |(op, a)| (a.percentiles_us.max, &s.name, op))
        })
        .max_by_key(|(m, _, _)| *m);
    match worst {
        Some((m, step, op)) => Cell::plain(format!("{} ({step} {op})", micros(m))),
        None => Cell::plain("-"),
    }
}

/// The steps a neighbour disturbed, by run; "no step disturbed" when none was, "-" when no
/// run measured it.
fn disturbed_cell(r: &Report, gi: usize) -> Cell {
    let Some(v) = r.verdicts.get(gi) else {
        return Cell::plain("-");
    };
    if v.disturbed.is_empty() {
        return Cell::plain(
            "no step disturbed (others' CPU, steal and device IO under the thresholds)",
        );
    }
    let runs: Vec<String> = v
        .disturbed
        .iter()
        .map(|(step, run, why)| format!("{step} in run {run}: {why}"))
        .collect();
    Cell::marked(
        format!(
            "DISTURBED: {} (a change there is called only from the runs it left undisturbed, \
             two or more a side)",
            runs.join("; ")
        ),
        "noisy",
    )
}

fn steady_cell(r: &Report, gi: usize) -> Cell {
    // Steps with the same flag are named together: `l.i0, l.i1: too short to compare: ...`.
    let mut flags: Vec<(String, Vec<&str>)> = Vec::new();
    for s in &r.step_reports {
        for f in &s.groups[gi].flags {
            match flags.iter_mut().find(|(text, _)| text == &f.text) {
                Some((_, steps)) => steps.push(&s.name),
                None => flags.push((f.text.clone(), vec![&s.name])),
            }
        }
    }
    // A step too short says which flag makes it longer.
    let too_short = |text: &str| {
        r.step_reports
            .iter()
            .flat_map(|s| &s.groups[gi].flags)
            .any(|f| f.too_short && f.text == text)
    };
    let flags: Vec<String> = (flags.iter())
        .map(|(text, steps)| {
            let hint = longer_hint(steps).filter(|_| too_short(text));
            match hint {
                Some(hint) => format!("{}: {text} ({hint})", steps.join(", ")),
                None => format!("{}: {text}", steps.join(", ")),
            }
        })
        .collect();
    if flags.is_empty() {
        return Cell::plain(format!(
            "every step steady (last third within {}% of the first, or within noise)",
            DRIFT_PCT
        ));
    }
    Cell::marked(flags.join("; "), "noisy")
}

/// The verdict table: a row per item (the writer's SLA, seconds without an op, the largest
/// response time, stability, neighbours), a column per configuration.
pub fn verdict_table(r: &Report) -> ViewTable {
    type Item = fn(&Report, usize) -> Cell;
    let items: [(&str, Item); 5] = [
        (
            "writer SLA (share of seconds at 95% of the target)",
            sla_cell,
        ),
        ("seconds with zero throughput", zero_cell),
        ("max response time", max_cell),
        ("throughput stability", steady_cell),
        ("neighbours on the host", disturbed_cell),
    ];
    let rows = items
        .iter()
        .map(|(name, item)| {
            let mut row = vec![Cell::plain(*name)];
            row.extend((0..r.groups.len()).map(|gi| item(r, gi)));
            row
        })
        .collect();
    let mut header = vec![String::new()];
    header.extend(r.groups.iter().map(|g| g.name.clone()));
    ViewTable {
        title: "verdict: the background writer's rate in query steps, seconds in which no op \
                of a step's main type completed, the largest response time of any op, steps \
                whose rate was not steady or too short to compare"
            .to_string(),
        header,
        rows,
    }
}

/// The figures of the step table: `(header, efficiency key)`.
const COST: [(&str, &str); 7] = [
    ("DBMS CPU us/op", "dbms_cpu_us_per_op"),
    ("client CPU us/op", "client_cpu_us_per_op"),
    ("KB read/op", "kb_read_per_op"),
    ("KB written/op", "kb_written_per_op"),
    ("cs/op", "dbms_cs_per_op"),
    ("RSS MB", "dbms_peak_rss_mb"),
    ("DB MB", "db_size_mb"),
];

/// The cost columns of `r`'s step table: where every configuration's DBMS ran inside ibench,
/// its CPU and the client's are one figure, one column
/// ([`figures::EMBEDDED_CPU_LABEL`]).
fn cost_columns(r: &Report) -> Vec<(&'static str, &'static str)> {
    let embedded = !r.groups.is_empty() && r.groups.iter().all(|g| g.embedded);
    COST.iter()
        .filter_map(|&(label, key)| match key {
            "client_cpu_us_per_op" if embedded => None,
            "dbms_cpu_us_per_op" if embedded => Some((figures::EMBEDDED_CPU_LABEL, key)),
            _ => Some((label, key)),
        })
        .collect()
}

fn stat_cell(s: Option<&Stat>, digits: usize) -> Cell {
    s.map_or_else(|| Cell::plain("-"), |s| Cell::stat(s, digits))
}

/// One line per step (and configuration): rate, response times of its main op, cost per op.
fn steps_table(r: &Report) -> ViewTable {
    let several = r.groups.len() > 1;
    let cost = cost_columns(r);
    let mut header = vec!["step".to_string()];
    if several {
        header.push("config".to_string());
    }
    header.extend(
        ["rate", "stable", "op", "p50", "p99", "max"]
            .into_iter()
            .chain(cost.iter().map(|c| c.0))
            .map(String::from),
    );
    let mut rows = Vec::new();
    for s in &r.step_reports {
        let def = primary(s);
        for (gi, g) in s.groups.iter().enumerate() {
            let mut row = vec![Cell::plain(s.name.clone())];
            if several {
                row.push(Cell::plain(g.group.clone()));
            }
            let mut rate_cell = match def.and_then(|d| Some((d, g.throughput.get(d.key)?))) {
                Some((d, st)) => {
                    let mut c = Cell::stat(st, d.digits);
                    c.text = format!("{} {}", c.text, d.label);
                    c
                }
                None => Cell::plain("-"),
            };
            if !g.flags.is_empty() {
                rate_cell.class = "noisy".to_string();
                rate_cell.title = g
                    .flags
                    .iter()
                    .map(|f| f.text.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
            }
            row.push(rate_cell);
            let secs = r
                .verdicts
                .get(gi)
                .and_then(|v| v.steps.iter().find(|x| x.step == s.name));
            row.push(Cell::plain(
                secs.and_then(|x| x.p99_of_p50_pct)
                    .map_or_else(|| "-".to_string(), |p| format!("{p:.0}%")),
            ));
            let op = secs
                .map(|x| x.op.clone())
                .or_else(|| g.ops.keys().next().cloned());
            match op.as_ref().and_then(|o| Some((o, g.ops.get(o)?))) {
                Some((o, a)) => {
                    row.push(Cell::plain(o.clone()));
                    let p = &a.percentiles_us;
                    row.extend([p.p50, p.p99, p.max].map(|v| Cell::plain(micros(v))));
                }
                None => row.extend((0..4).map(|_| Cell::plain("-"))),
            }
            for &(_, key) in &cost {
                let digits = figures::find(key).map_or(1, |d| d.digits);
                row.push(stat_cell(g.efficiency.get(key), digits));
            }
            rows.push(row);
        }
    }
    ViewTable {
        title: "one line per step: rate of the step's main op (median over runs, min-max \
                below), stable = the rate met in 99% of its full seconds over the rate met in \
                50%, response time of the main op from when it was due, cost per op (per row \
                inserted in load steps, per query in query steps), peak DBMS RSS, database \
                size at the step's end"
            .to_string(),
        header,
        rows,
    }
}

/// The report's first section: identity line(s), verdict, one line per step.
pub fn section(r: &Report) -> Section {
    Section {
        id: "verdict".to_string(),
        title: "Verdict".to_string(),
        note: (0..r.groups.len())
            .map(|gi| identity(r, gi))
            .collect::<Vec<_>>()
            .join("\n"),
        tables: vec![verdict_table(r), steps_table(r)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(42.14), "42.1s");
        assert_eq!(duration(185.0), "3m 05s");
        assert_eq!(duration(3_725.0), "1h 02m");
    }
}
