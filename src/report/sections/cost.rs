//! Throughput per unit of cost: when the runs' hosts have a price per hour (`ibench run
//! --cost-per-hour`, or `ibench host price` in the store), each configuration's host and
//! price, its operations per unit of money and the cost of a million operations, per step,
//! beside its throughput (e.g. instance types compared with `ibench report --by host`).

use crate::output::format::rate;
use crate::report::cells::{self, Cell, Section, ViewTable};
use crate::report::figures::Better;
use crate::report::model::Report;
use crate::report::stat::{Judged, Mark, mark};

/// Seconds in an hour.
const HOUR: f64 = 3600.0;

/// Operations per unit of money: `ops_per_s x 3600 / price per hour`.
pub fn ops_per_unit(ops_per_s: f64, cost_per_hour: f64) -> f64 {
    ops_per_s * HOUR / cost_per_hour
}

/// The cost of a million operations: `price per hour / (ops_per_s x 3600) x 10^6`.
pub fn cost_per_million(ops_per_s: f64, cost_per_hour: f64) -> f64 {
    cost_per_hour / (ops_per_s * HOUR) * 1e6
}

/// The mark of a throughput per unit of cost `rel` times the base's, the hosts' prices in the
/// ratio `price_ratio` (base / this): marked only where the interval of the throughput's
/// change (`ibench compare`'s, `marks.rs`), scaled by the prices (exact), lies beyond the
/// +-3% noise threshold on one side; by the 0.95/1.05 threshold with one run a side; else, beyond
/// that threshold, "noisy".
fn cost_mark(rel: f64, price_ratio: f64, judged: Option<&Judged>) -> &'static str {
    let beyond = mark(rel, Better::Higher);
    let Some(j) = judged else { return "" };
    if j.one_run {
        return beyond;
    }
    let band = crate::report::compare::DEFAULT_NOISE_PCT / 100.0;
    match (j.mark, j.ci_pct) {
        (Mark::Better | Mark::Worse | Mark::Unchanged | Mark::TooNoisy, Some([lo, hi])) => {
            let (lo, hi) = (
                (1.0 + lo / 100.0) * price_ratio,
                (1.0 + hi / 100.0) * price_ratio,
            );
            if lo > 1.0 + band {
                "better"
            } else if hi < 1.0 - band {
                "worse"
            } else if beyond.is_empty() {
                ""
            } else {
                "noisy"
            }
        }
        _ if beyond.is_empty() => "",
        _ => "noisy",
    }
}

/// `v` with three significant digits: `0.00694`, `1.25`, `1250`.
pub fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

/// Each configuration's host and its price per hour.
fn hosts_table(r: &Report) -> ViewTable {
    ViewTable {
        title: "hosts and prices per hour".to_string(),
        header: ["config", "host", "cpu", "memory", "price/h"]
            .map(String::from)
            .to_vec(),
        rows: r
            .groups
            .iter()
            .map(|g| {
                let h = r.hosts.iter().find(|h| h.hostname == g.host);
                vec![
                    Cell::plain(g.name.clone()),
                    Cell::plain(g.host.clone()),
                    Cell::plain(h.map(|h| h.cpu.clone()).unwrap_or_else(|| "-".into())),
                    Cell::plain(
                        h.map(|h| format!("{:.1} GiB", h.memory_gib))
                            .unwrap_or_else(|| "-".into()),
                    ),
                    Cell::plain(
                        g.cost_per_hour
                            .map(|p| format!("{p}"))
                            .unwrap_or_else(|| "-".into()),
                    ),
                ]
            })
            .collect(),
    }
}

/// The cost section; `None` when no configuration has a price.
pub fn section(r: &Report) -> Option<Section> {
    if r.groups.iter().all(|g| g.cost_per_hour.is_none()) {
        return None;
    }
    let hosts = hosts_table(r);
    let mut header = vec!["config".to_string()];
    header.extend(r.step_reports.iter().map(|s| {
        // Operations, not a rate: `ins/s` -> `ins`.
        let unit = cells::primary(s).map(|d| d.label).unwrap_or("-");
        format!("{} {}", s.name, unit.trim_end_matches("/s"))
    }));
    let base = r.groups.iter().position(|g| g.is_base).unwrap_or(0);
    // The primary throughput of group `gi` in step `si`.
    let throughput = |si: usize, gi: usize| -> Option<f64> {
        let s = &r.step_reports[si];
        let d = cells::primary(s)?;
        s.groups[gi].throughput.get(d.key).map(|st| st.median)
    };
    let mut per_unit = Vec::new();
    let mut per_million = Vec::new();
    for (gi, g) in r.groups.iter().enumerate() {
        let mut a = vec![Cell::plain(g.name.clone())];
        let mut b = vec![Cell::plain(g.name.clone())];
        for si in 0..r.step_reports.len() {
            let (Some(price), Some(t)) = (g.cost_per_hour, throughput(si, gi)) else {
                a.push(Cell::plain("-"));
                b.push(Cell::plain("-"));
                continue;
            };
            if t <= 0.0 {
                a.push(Cell::plain("-"));
                b.push(Cell::plain("-"));
                continue;
            }
            let mut cell = Cell::plain(rate(ops_per_unit(t, price)));
            // Relative to the base's figure per unit of cost, when it has one.
            if gi != base
                && let (Some(bp), Some(bt)) = (r.groups[base].cost_per_hour, throughput(si, base))
                && bt > 0.0
            {
                let rel = ops_per_unit(t, price) / ops_per_unit(bt, bp);
                cell.sub = format!("{rel:.2}x base");
                let s = &r.step_reports[si];
                let judged = cells::primary(s)
                    .and_then(|d| s.groups[gi].throughput.get(d.key))
                    .and_then(|st| st.judged.as_ref());
                cell.class = cost_mark(rel, bp / price, judged).to_string();
            }
            a.push(cell);
            b.push(Cell::plain(significant(cost_per_million(t, price))));
        }
        per_unit.push(a);
        per_million.push(b);
    }
    Some(Section {
        id: "cost".to_string(),
        title: "Throughput per unit of cost".to_string(),
        note: "Operations (as in Throughput: queries, indexed rows or inserted rows) per unit \
               of the price per hour, and the price of a million of them: ops/s x 3600 / \
               price per hour, and price per hour / (ops/s x 3600) x 10^6. The price is each \
               run's own (--cost-per-hour), else its host's in the store (ibench host price)."
            .to_string(),
        tables: vec![
            hosts,
            ViewTable {
                title: "operations per unit of cost (x base: relative to the base's)".to_string(),
                header: header.clone(),
                rows: per_unit,
            },
            ViewTable {
                title: "cost of a million operations".to_string(),
                header,
                rows: per_million,
            },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_figures() {
        // 20k queries/s on a host at 0.50/h: 144M queries per unit, 0.00694 per million.
        assert_eq!(ops_per_unit(20_000.0, 0.5), 144e6);
        assert!((cost_per_million(20_000.0, 0.5) - 0.006_944).abs() < 1e-6);
        assert_eq!(significant(0.006_944_4), "0.00694");
        assert_eq!(significant(1.254), "1.25");
        assert_eq!(significant(1250.0), "1250");
    }
}
