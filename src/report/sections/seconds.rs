//! The report's section on the per-second series in a few figures and the DBMS's memory
//! beyond its cache, from the model's `measured.seconds` (`seconds.rs`).

use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::model::Report;
use crate::report::seconds::{LEGEND, SECONDS_HEADER, memory_header, memory_row, seconds_row};

/// The report's section: a row per step, configuration and run.
pub fn section(r: &Report) -> Option<Section> {
    let mut head: Vec<String> = ["step", "config", "run"].map(String::from).to_vec();
    let mut sec = head.clone();
    sec.extend(SECONDS_HEADER.map(String::from));
    head.extend(memory_header("cache"));
    let (mut rows, mut mem) = (Vec::new(), Vec::new());
    for step in &r.step_reports {
        for (g, gs) in r.groups.iter().zip(&step.groups) {
            for x in &gs.measured.seconds {
                let id = [step.name.clone(), g.name.clone(), x.run_id.clone()];
                rows.push(
                    id.iter()
                        .cloned()
                        .chain(seconds_row(x))
                        .map(Cell::plain)
                        .collect(),
                );
                let [a, b, mut c, d] = memory_row(&x.memory);
                if x.memory.cache_mib.is_some() {
                    c = format!("{} {c}", x.memory.cache_setting);
                }
                mem.push(
                    id.into_iter()
                        .chain([a, b, c, d])
                        .map(Cell::plain)
                        .collect(),
                );
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some(Section {
        id: "seconds-summary".to_string(),
        title: "Host, device and memory per second".to_string(),
        note: format!(
            "The step's per-second series (efficiency.per_second) in three figures each: \
             {LEGEND}."
        ),
        tables: vec![
            ViewTable {
                title: "per second: min/median/max".to_string(),
                header: sec,
                rows,
            },
            ViewTable {
                title: "the DBMS's memory beyond its cache".to_string(),
                header: head,
                rows: mem,
            },
        ],
    })
}
