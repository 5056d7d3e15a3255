//! The report's sections of replicated and clustered targets (docs/replication.md): each
//! server's own CPU, IO and memory, and the cluster nodes that died during steps, from the
//! model's `servers` and `node_failures` (read from the runs by `replication.rs`).

use std::collections::BTreeSet;

use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::model::Report;

/// The per-server figures of the report, in the order they are shown: key, label, digits.
const SERVER_FIGURES: [(&str, &str, usize); 4] = [
    ("cpu_us", "DBMS CPU us/op", 1),
    ("kb_read", "DBMS KB read/op", 2),
    ("kb_written", "DBMS KB written/op", 2),
    ("peak_rss_mb", "peak RSS MB", 1),
];

/// The report's section of per-server figures: a table per step, a row per server and
/// figure, a column per configuration; `None` when no run had more than one server.
pub fn report_section(r: &Report) -> Option<Section> {
    let tables: Vec<ViewTable> = r
        .step_reports
        .iter()
        .filter_map(|step| {
            let servers: BTreeSet<&String> =
                step.groups.iter().flat_map(|g| g.servers.keys()).collect();
            if servers.is_empty() {
                return None;
            }
            let mut header = vec!["server".to_string(), "figure".to_string()];
            header.extend(r.groups.iter().map(|g| g.name.clone()));
            let mut rows = Vec::new();
            for server in servers {
                for (key, label, digits) in SERVER_FIGURES {
                    let cells: Vec<Cell> = (step.groups.iter())
                        .map(|g| match g.servers.get(server).and_then(|f| f.get(key)) {
                            Some(s) => Cell::stat(s, digits),
                            None => Cell::plain("-"),
                        })
                        .collect();
                    let mut row = vec![Cell::plain(server.clone()), Cell::plain(label)];
                    row.extend(cells);
                    rows.push(row);
                }
            }
            Some(ViewTable {
                title: format!("{}: per server", step.name),
                header,
                rows,
            })
        })
        .collect();
    if tables.is_empty() {
        return None;
    }
    Some(Section {
        id: "servers".to_string(),
        title: "Per server".to_string(),
        note: "Each server of a cluster on its own (the primary or n1, each replica or node): \
               its processes' CPU and IO per op of the step (the DBMS figures of the cost per \
               op are their sum) and its peak resident memory; median over repeats \
               (docs/replication.md)."
            .to_string(),
        tables,
    })
}

/// The report's section of the cluster nodes that died during steps (`--on-node-failure`): a
/// row per step, configuration, run and death; `None` when no node died.
pub fn faults_section(r: &Report) -> Option<Section> {
    let rows: Vec<Vec<Cell>> = r
        .step_reports
        .iter()
        .flat_map(|s| {
            s.groups.iter().flat_map(move |g| {
                g.node_failures.iter().map(move |(run, line)| {
                    vec![
                        Cell::plain(s.name.clone()),
                        Cell::plain(g.group.clone()),
                        Cell::plain(run.clone()),
                        Cell::marked(line.clone(), "fail"),
                    ]
                })
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Section {
        id: "node-failures".to_string(),
        title: "Cluster nodes that died".to_string(),
        note: "Replicas or Galera nodes whose process was gone during a step: which, when \
               (seconds into the step), and what it did to the step (--on-node-failure; \
               docs/replication.md)."
            .to_string(),
        tables: vec![ViewTable {
            title: "node failures".to_string(),
            header: ["step", "config", "run", "what happened"]
                .map(String::from)
                .to_vec(),
            rows,
        }],
    })
}
