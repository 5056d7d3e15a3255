//! The per-host breakdown of a run made by a group of client hosts (`ibench run --group`):
//! what each host ran and measured, beside the merged figures of `terminal.rs`.

use crate::output::escape;
use crate::output::format::{rate, seconds};
use crate::report::figures::header;
use crate::report::table::Table;
use crate::results::group::GroupHost;
use crate::results::model::RunResult;

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

/// A host's label: its index, and when the group was resumed, its attempt (`1 a2`: host 1
/// of attempt 2).
fn label(m: &GroupHost, resumed: bool) -> String {
    if resumed {
        format!("{} a{}", m.index, m.attempt)
    } else {
        m.index.to_string()
    }
}

/// The hosts of a merged group run and each host's figures per step; `None` for a run that
/// is not a merged group run.
pub fn hosts_section(run: &RunResult) -> Option<String> {
    let group = run.group.as_ref()?;
    if group.members.iter().all(|m| m.steps.is_empty()) {
        return None;
    }
    let last = group.members.iter().map(|m| m.attempt).max().unwrap_or(0);
    let resumed = match last {
        0 => String::new(),
        n => format!(
            ", resumed {n} time{} (host `1 a2`: host 1 of attempt 2; each step is the last \
             attempt's that ran it)",
            if n == 1 { "" } else { "s" }
        ),
    };
    let mut out = format!(
        "\nGroup {}: {} of {} hosts{resumed}; rates above are the hosts' sums, response times \
         their merged histograms\n\n",
        escape::line(&group.name),
        group.members.iter().filter(|m| m.attempt == last).count(),
        group.hosts
    );
    out.push_str(&hosts_table(&group.members, last > 0));
    out.push_str(
        "\nclock us: the store's clock minus the host's; start ms: when the host started the \
         step after the first host did (store clock); client/host us: CPU per op on that host\n\n",
    );
    out.push_str(&steps_table(run, &group.members, last > 0));
    for s in run.steps.iter().filter(|s| s.error.is_some()) {
        out.push_str(&format!(
            "\n{}: {}\n",
            escape::line(&s.name),
            escape::line(s.error.as_deref().unwrap_or_default())
        ));
    }
    if let Some(e) = &run.error {
        out.push_str(&format!("\ngroup: {}\n", escape::line(e)));
    }
    Some(out)
}

/// Who each host was: name, pid, clients, clock, price, status, part.
fn hosts_table(members: &[GroupHost], resumed: bool) -> String {
    let mut hosts = Table::new([
        "host", "name", "pid", "clients", "clock us", "rtt us", "$/h", "status", "part",
    ]);
    for m in members {
        hosts.row([
            label(m, resumed),
            escape::line(&m.hostname).into_owned(),
            m.pid.to_string(),
            format!(
                "{}..{}",
                m.first_client,
                m.first_client + m.clients.max(1) - 1
            ),
            format!("{:+}", m.clock_offset_us),
            m.clock_rtt_us.to_string(),
            m.cost_per_hour
                .map_or_else(|| "-".to_string(), |p| format!("{p}")),
            escape::line(&m.status).into_owned(),
            escape::line(&m.run_id).into_owned(),
        ]);
    }
    hosts.to_text()
}

/// Each step of `run` as each host measured it.
fn steps_table(run: &RunResult, members: &[GroupHost], resumed: bool) -> String {
    let mut steps = Table::new([
        "step",
        "host",
        "start ms",
        "time",
        header("inserts_per_s"),
        header("deletes_per_s"),
        header("queries_per_s"),
        "client us",
        "host us",
        "status",
    ]);
    for s in &run.steps {
        for m in members {
            if let Some(h) = m.steps.iter().find(|h| h.name == s.name) {
                steps.row([
                    escape::line(&h.name).into_owned(),
                    label(m, resumed),
                    format!("{:.1}", h.start_offset_ms),
                    seconds(h.duration_s),
                    rate(h.inserts_per_s),
                    rate(h.deletes_per_s),
                    rate(h.queries_per_s),
                    opt(h.client_cpu_us_per_op),
                    opt(h.host_cpu_us_per_op),
                    escape::line(&h.status).into_owned(),
                ]);
            }
        }
    }
    steps.to_text()
}
