//! What the rest of the host did during each step (`crate::metrics::interference`): the
//! terminal summary's section, and the runs disturbed in a step, which `compare`, the report's
//! verdict and `history` name.

use crate::report::table::Table;
use crate::results::model::{Interference, RunResult, RunStatus, StepResult};

/// The step's interference, when measured.
pub fn of(s: &StepResult) -> Option<&Interference> {
    s.efficiency.as_ref()?.interference.as_ref()
}

/// Why step `s` counts as disturbed (the reasons joined), `None` when it does not.
pub fn disturbed(s: &StepResult) -> Option<String> {
    of(s)
        .filter(|i| i.is_disturbed())
        .map(|i| i.disturbed.join("; "))
}

/// The runs of `runs` that completed step `step` disturbed: (run id, why).
pub fn disturbed_runs(runs: &[&RunResult], step: &str) -> Vec<(String, String)> {
    runs.iter()
        .filter_map(|r| {
            let s = r
                .steps
                .iter()
                .find(|s| s.name == step && s.status == RunStatus::Complete)?;
            Some((r.run_id.clone(), disturbed(s)?))
        })
        .collect()
}

/// The terminal summary's section: per step, others' CPU, steal, pressure and others' device
/// IO, and whether the step was disturbed. Empty when no step measured it.
pub fn section(run: &RunResult) -> String {
    let steps: Vec<(&str, &Interference)> = run
        .steps
        .iter()
        .filter_map(|s| Some((s.name.as_str(), of(s)?)))
        .collect();
    if steps.is_empty() {
        return String::new();
    }
    let mut t = Table::new([
        "step",
        "others' CPU",
        "steal",
        "PSI cpu/io/mem %",
        "others' MB/s r/w",
        "disturbed",
    ]);
    for (name, i) in &steps {
        t.row([
            name.to_string(),
            format!("{:.2}", i.others_cpu_cores),
            format!("{:.2}", i.steal_cores),
            i.psi.map_or("-".to_string(), |p| {
                format!("{:.0}/{:.0}/{:.0}", p.cpu_some, p.io_some, p.memory_some)
            }),
            match (i.others_read_mb_s, i.others_written_mb_s) {
                (Some(r), Some(w)) => format!("{r:.1}/{w:.1}"),
                _ => "-".to_string(),
            },
            if i.is_disturbed() { "YES" } else { "no" }.to_string(),
        ]);
    }
    let mut why = String::new();
    for (name, i) in steps.iter().filter(|(_, i)| i.is_disturbed()) {
        why.push_str(&format!("{name} disturbed: {}\n", i.disturbed.join("; ")));
    }
    let n = steps.iter().filter(|(_, i)| i.is_disturbed()).count();
    let head = format!(
        "\nThe rest of the host (cores on average; docs/metrics.md): {}\n\n",
        match n {
            0 => "no step disturbed".to_string(),
            n => format!(
                "{n} step(s) DISTURBED: a neighbour, not the DBMS, may have moved their figures"
            ),
        }
    );
    head + &t.to_text() + &why
}
