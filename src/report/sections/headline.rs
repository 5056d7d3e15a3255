//! The report's headline, its first section when configurations are compared: per
//! configuration against the base, its relative cells by mark and the largest supported
//! changes, from the model's `headline` (counted by `marks.rs`).

use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::compare::fmt_ci;
use crate::report::marks::{LEGEND, NEGLIGIBLE_LEGEND, ONE_RUN, TOP};
use crate::report::model::Report;
use crate::report::stat::Mark;

/// The headline as the report's first section: a row per configuration against the base.
/// `None` with one configuration.
pub fn section(r: &Report) -> Option<Section> {
    if r.headline.is_empty() {
        return None;
    }
    let rows = r
        .headline
        .iter()
        .map(|h| {
            let count = |n: usize, class: &str| {
                if n > 0 {
                    Cell::marked(n.to_string(), class)
                } else {
                    Cell::plain("0")
                }
            };
            let mut name = Cell::plain(h.group.clone());
            if h.one_run {
                name.sub = ONE_RUN.to_string();
            }
            vec![
                name,
                count(h.better, "better"),
                count(h.worse, "worse"),
                Cell::plain(h.unchanged.to_string()),
                Cell::plain(h.too_noisy.to_string()),
                Cell::plain(h.flagged.to_string()),
                Cell::plain(h.untested.to_string()),
            ]
        })
        .collect();
    let largest: Vec<Vec<Cell>> = r
        .headline
        .iter()
        .flat_map(|h| {
            h.largest.iter().map(|c| {
                let class = match c.mark {
                    Mark::Better => "better",
                    _ => "worse",
                };
                vec![
                    Cell::plain(h.group.clone()),
                    Cell::plain(c.step.clone()),
                    Cell::plain(c.figure.clone()),
                    Cell::marked(format!("{:.2}", c.relative), class),
                    Cell::plain(
                        c.ci_pct
                            .map(|ci| fmt_ci(Some(ci)))
                            .unwrap_or_else(|| ONE_RUN.to_string()),
                    ),
                ]
            })
        })
        .collect();
    let mut tables = vec![ViewTable {
        title: format!("configurations against {}: relative cells by mark", r.base),
        header: [
            "config",
            "better",
            "worse",
            "unchanged",
            "too noisy",
            "flagged step",
            "untested",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }];
    if !largest.is_empty() {
        tables.push(ViewTable {
            title: format!("the {TOP} largest supported changes per configuration"),
            header: [
                "config",
                "step",
                "figure",
                "relative",
                "interval of the change",
            ]
            .map(String::from)
            .to_vec(),
            rows: largest,
        });
    }
    Some(Section {
        id: "headline".to_string(),
        title: format!("Headline: against {}", r.base),
        note: format!(
            "Per configuration, its relative cells (every step's throughput and efficiency \
             figures) by what the runs support, and the {TOP} largest supported changes (ratio \
             of medians; interval of the ratio of means from ibench compare). {LEGEND} {NEGLIGIBLE_LEGEND}"
        ),
        tables,
    })
}
