//! The report's section on the client hosts of group runs (`ibench run --group`): each
//! host's part of each step, from the model's `measured.hosts` (`client_hosts.rs`).

use crate::output::format::{rate, seconds};
use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::model::Report;

/// The report's section: a row per step, configuration, run and host.
pub fn section(r: &Report) -> Option<Section> {
    let mut rows = Vec::new();
    for step in &r.step_reports {
        for (g, gs) in r.groups.iter().zip(&step.groups) {
            for p in &gs.measured.hosts {
                rows.push(
                    [
                        step.name.clone(),
                        g.name.clone(),
                        p.run_id.clone(),
                        p.host.clone(),
                        p.hostname.clone(),
                        format!("{:.1}", p.start_offset_ms),
                        seconds(p.duration_s),
                        rate(p.inserts_per_s),
                        rate(p.deletes_per_s),
                        rate(p.queries_per_s),
                        opt(p.client_cpu_us_per_op),
                        opt(p.host_cpu_us_per_op),
                        p.status.clone(),
                    ]
                    .map(Cell::plain)
                    .to_vec(),
                );
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let header = [
        "step",
        "config",
        "run",
        "host",
        "name",
        "start ms",
        "time",
        crate::report::figures::header("inserts_per_s"),
        crate::report::figures::header("deletes_per_s"),
        crate::report::figures::header("queries_per_s"),
        "client us",
        "host us",
        "status",
    ];
    Some(Section {
        id: "client-hosts".to_string(),
        title: "Client hosts".to_string(),
        note: "Runs made by a group of client hosts (ibench run --group): each host's part of \
               each step. The step's rates elsewhere are the hosts' sums, its response times \
               their merged histograms. start ms: when the host started the step after the \
               first host did (the store's clock); client/host us: CPU per op on that host."
            .to_string(),
        tables: vec![ViewTable {
            title: "each host's part of each step".to_string(),
            header: header.map(String::from).to_vec(),
            rows,
        }],
    })
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}
