//! The report's section of a versions study ("perf over time", docs/versions.md): each step's
//! throughput with the versions as columns, in version order (`versions.rs`), absolute and
//! relative to the base version.

use crate::report::cells::{self, Cell, Section, ViewTable};
use crate::report::marks::one_run_note;
use crate::report::model::{Better, Report};
use crate::report::versions;

/// The section of a versions study: absolute and relative throughput, steps as rows and the
/// versions as columns; `None` when the report is not one.
pub fn section(r: &Report) -> Option<Section> {
    let cols = versions::columns(r)?;
    let mut header = vec!["step".to_string()];
    header.extend(cols.iter().map(|c| c.header.clone()));
    let base = cols
        .iter()
        .find(|c| r.groups[c.group].is_base)
        .map(|c| c.header.clone())
        .unwrap_or_else(|| r.base.clone());
    let mut abs = Vec::new();
    let mut rel = Vec::new();
    for s in &r.step_reports {
        let def = cells::primary(s);
        let name = format!("{} {}", s.name, def.map(|d| d.label).unwrap_or("-"));
        let mut a = vec![Cell::plain(name.clone())];
        let mut b = vec![Cell::plain(name)];
        for c in &cols {
            let st = def.and_then(|d| s.groups[c.group].throughput.get(d.key));
            a.push(match (def, st) {
                (Some(d), Some(st)) => Cell::stat(st, d.digits),
                _ => Cell::plain("-"),
            });
            b.push(cells::relative_cell(
                st,
                def.map(|d| d.better).unwrap_or(Better::Higher),
                r.groups[c.group].is_base,
            ));
        }
        abs.push(a);
        rel.push(b);
    }
    Some(Section {
        id: "versions".to_string(),
        title: "Throughput across versions".to_string(),
        note: format!(
            "{} at {} versions, in version order; the base is {base}. Per step: queries/s, \
             indexed rows/s or inserted rows/s (as in Throughput).",
            r.groups[0].dbms_name,
            cols.len()
        ),
        tables: vec![
            ViewTable {
                title: format!(
                    "relative to {base} (median / base median{})",
                    one_run_note(r)
                ),
                header: header.clone(),
                rows: rel,
            },
            ViewTable {
                title: "absolute (median over runs)".to_string(),
                header,
                rows: abs,
            },
        ],
    })
}
