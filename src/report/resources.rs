//! The terminal summary's section on the run's resource conditions (issue #31): the memory
//! cap, IO limits, CPUs and OS cache mode as asked, and per step what the kernel charged to
//! the DBMS's cgroup.

use crate::report::table::Table;
use crate::request::{OsCache, Resources};
use crate::results::model::RunResult;

fn mib(b: Option<u64>) -> String {
    b.map(|b| format!("{:.1}M", b as f64 / 1048576.0))
        .unwrap_or_else(|| "-".to_string())
}

fn count(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".to_string())
}

/// The conditions as one line (`memory limit 96.0M, io limit wbps=3145728`); `None` when
/// the run had none.
pub fn conditions(r: &Resources) -> Option<String> {
    if r.is_default() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(m) = r.memory_limit {
        parts.push(format!("memory limit {}", mib(Some(m))));
    }
    if let Some(l) = &r.io_limit {
        parts.push(format!("io limit {}", l.describe()));
    }
    if let Some(c) = &r.server_cpus {
        parts.push(format!("server CPUs {}", c.text));
    }
    if let Some(c) = &r.client_cpus {
        parts.push(format!("client CPUs {}", c.text));
    }
    if r.os_cache == OsCache::DropBeforeStep {
        parts.push("OS cache dropped before each step".to_string());
    }
    Some(parts.join(", "))
}

/// The conditions line and the cgroup's table; empty for a run without conditions.
pub fn section(run: &RunResult) -> String {
    let Some(line) = conditions(&run.config.resources) else {
        return String::new();
    };
    let mut out = format!("\nConditions: {line}\n");
    if let Some(cg) = run.resolved.as_ref().and_then(|x| x.cgroup.as_deref()) {
        out.push_str(&format!("DBMS cgroup: {cg}\n"));
    }
    let mut t = Table::new([
        "step",
        "usage",
        "peak",
        "cache",
        "maj flt",
        "page-ins",
        "limit hits",
        "oom",
        "MB rd",
        "MB wr",
        "rd/s",
        "wr/s",
    ]);
    for s in &run.steps {
        let Some(c) = s.efficiency.as_ref().and_then(|e| e.cgroup) else {
            continue;
        };
        let per_s = |v: Option<u64>| {
            v.filter(|_| s.duration_s > 0.0)
                .map(|v| format!("{:.0}", v as f64 / s.duration_s))
                .unwrap_or_else(|| "-".to_string())
        };
        t.row([
            s.name.clone(),
            mib(c.memory_usage_bytes),
            mib(c.memory_peak_bytes),
            mib(c.page_cache_bytes),
            count(c.major_faults),
            count(c.page_ins),
            count(c.limit_hits),
            count(c.oom_kills),
            mib(c.read_bytes).trim_end_matches('M').to_string(),
            mib(c.write_bytes).trim_end_matches('M').to_string(),
            per_s(c.reads),
            per_s(c.writes),
        ]);
    }
    if !t.is_empty() {
        out.push_str(
            "\nThe DBMS's cgroup per step (memory at the step's end; peak over the step)\n\n",
        );
        out.push_str(&t.to_text());
    }
    out
}
