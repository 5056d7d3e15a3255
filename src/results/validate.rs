//! Checks of a results document from elsewhere (`ibench import`) before it enters the store:
//! ibench trusts its own documents, but an imported one may say anything. Its run id becomes
//! part of file names (`<id>.server`, `<id>.data` under `--out`, which an experiment removes
//! when it reruns a cell), so it must be a plain name; its step names must be the steps its
//! configuration runs, and its op names ibench's; figures that are durations, rates and shares must be finite and not
//! negative; the counts reports index by must agree with each other; every histogram must
//! decode as reports decode it; and its text fields must be within their bounds
//! (`results::bounds`).

use crate::request::{Step, WorkloadSpec};
use crate::results::model::Op;
use crate::results::model::{RunResult, StepResult};

/// Longest run id.
pub const MAX_RUN_ID: usize = 128;

/// The first problem of `run`, as `field: what is wrong`.
pub fn check(run: &RunResult) -> Result<(), String> {
    check_run_id(&run.run_id)?;
    check_tags(&run.config.tags)?;
    crate::results::bounds::check(run)?;
    let clients_max = match &run.config.workload {
        WorkloadSpec::InsertBenchmark(w) => w.clients,
        WorkloadSpec::Micro(m) => m.clients.iter().copied().max().unwrap_or(0),
        WorkloadSpec::Tpcc(t) => t.connections(),
    };
    for (i, m) in run.maintenance.iter().enumerate() {
        figure(&format!("maintenance[{i}].duration_s"), m.duration_s)?;
    }
    for (i, step) in run.steps.iter().enumerate() {
        let at = format!("steps[{i}]");
        if !is_step_of(&run.config.workload, &step.name) {
            return Err(format!(
                "{at}.name {:?} is not a step of this run's configuration",
                step.name
            ));
        }
        check_step(&at, step, clients_max)?;
    }
    if let Some(tag) = &run.experiment
        && !(1..=tag.repeats).contains(&tag.repeat)
    {
        return Err(format!(
            "experiment.repeat {} is not in 1..={} (experiment.repeats)",
            tag.repeat, tag.repeats
        ));
    }
    if let Some(tag) = &run.experiment {
        if let Some(round) = tag.round
            && !(1..=tag.repeats).contains(&round)
        {
            return Err(format!(
                "experiment.round {round} is not in 1..={} (experiment.repeats)",
                tag.repeats
            ));
        }
        if tag.position == Some(0) {
            return Err("experiment.position 0: positions are 1-based".to_string());
        }
    }
    Ok(())
}

/// Provenance tags as `--tag` would have taken them.
fn check_tags(tags: &crate::request::tags::Tags) -> Result<(), String> {
    if tags.len() > crate::request::tags::MAX_TAGS {
        return Err(format!(
            "config.tags: {} tags, at most {}",
            tags.len(),
            crate::request::tags::MAX_TAGS
        ));
    }
    for (k, v) in tags {
        crate::request::tags::parse(&format!("{k}={v}"))
            .map_err(|e| format!("config.tags: {e}"))?;
    }
    Ok(())
}

/// A run id: 1 to [`MAX_RUN_ID`] letters, digits, `.`, `_` or `-`, starting with a letter or
/// digit (so never `..`, `/` or a hidden name).
pub fn check_run_id(id: &str) -> Result<(), String> {
    let ok = (1..=MAX_RUN_ID).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "run_id {id:?} is not a run id: expected 1 to {MAX_RUN_ID} letters, digits, '.', '_' \
             or '-', starting with a letter or digit"
        ))
    }
}

/// Whether `name` is one of the steps `workload` runs (checked without listing them: a
/// document may name many client counts).
fn is_step_of(workload: &WorkloadSpec, name: &str) -> bool {
    match workload {
        WorkloadSpec::InsertBenchmark(w) => {
            name.parse::<Step>().is_ok_and(|s| w.steps.contains(&s))
        }
        WorkloadSpec::Micro(m) => {
            if name == "prepare" {
                return m.prepare;
            }
            name.rsplit_once(".c").is_some_and(|(bench, clients)| {
                m.benchmarks.iter().any(|b| b == bench)
                    && clients
                        .parse::<usize>()
                        .is_ok_and(|c| m.clients.contains(&c))
            })
        }
        WorkloadSpec::Tpcc(t) => {
            if name == "prepare" {
                return t.prepare;
            }
            name.strip_prefix("tpcc.c")
                .and_then(|c| c.parse::<usize>().ok())
                .is_some_and(|c| t.clients.contains(&c))
        }
    }
}

/// A duration, rate or amount: finite and not negative.
fn figure(field: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{field} is {v}: expected a finite number >= 0"))
    }
}

fn check_step(at: &str, s: &StepResult, clients_max: usize) -> Result<(), String> {
    for (name, v) in [
        ("duration_s", s.duration_s),
        ("inserts_per_s", s.inserts_per_s),
        ("deletes_per_s", s.deletes_per_s),
        ("queries_per_s", s.queries_per_s),
    ] {
        figure(&format!("{at}.{name}"), v)?;
    }
    if !(1..=clients_max.max(1)).contains(&s.clients) {
        return Err(format!(
            "{at}.clients {} is not in 1..={clients_max} (the configuration's clients)",
            s.clients
        ));
    }
    check_op_names(at, s)?;
    check_clients(at, s)?;
    check_op_results(at, s)?;
    if let Some(sla) = &s.sla {
        for (name, v) in [
            ("target_inserts_per_s", sla.target_inserts_per_s),
            ("inserts_per_s", sla.inserts_per_s),
            ("deletes_per_s", sla.deletes_per_s),
            ("ratio", sla.ratio),
            ("seconds_met_share", sla.seconds_met_share),
        ] {
            figure(&format!("{at}.sla.{name}"), v)?;
        }
        if sla.seconds_met_share > 1.0 {
            return Err(format!(
                "{at}.sla.seconds_met_share is {}: expected a share in 0..=1",
                sla.seconds_met_share
            ));
        }
    }
    if let Some(ix) = &s.index_build {
        figure(&format!("{at}.index_build.rows_per_s"), ix.rows_per_s)?;
    }
    if let Some(e) = &s.efficiency {
        check_efficiency(&format!("{at}.efficiency"), e)?;
    }
    for (name, v) in &s.wait_events {
        figure(&format!("{at}.wait_events[{name:?}]"), *v)?;
    }
    if let Some(p) = &s.profile {
        check_profile_path(&format!("{at}.profile"), p)?;
    }
    Ok(())
}

/// Every op a step names, wherever it names one, is one of ibench's.
fn check_op_names(at: &str, s: &StepResult) -> Result<(), String> {
    let ops = [
        ("ops", s.ops.keys().collect::<Vec<_>>()),
        ("service_time", s.service_time.keys().collect()),
        ("retries", s.retries.keys().collect()),
        ("rate_percentiles", s.rate_percentiles.keys().collect()),
        (
            "per_second.total.ops",
            s.per_second.total.ops.keys().collect(),
        ),
    ];
    let per_client = s
        .per_second
        .clients
        .iter()
        .map(|c| ("per_second.clients[].ops", c.ops.keys().collect()));
    let summaries = s
        .per_second
        .client_summaries
        .iter()
        .map(|c| ("per_second.client_summaries[].ops", c.ops.keys().collect()));
    for (kind, names) in ops.into_iter().chain(per_client).chain(summaries) {
        if let Some(op) = names
            .iter()
            .find(|n| !Op::ALL.iter().any(|o| o.name() == n.as_str()))
        {
            return Err(format!(
                "{at}.{kind} names op {op:?}: expected one of {}",
                Op::ALL.map(Op::name).join(", ")
            ));
        }
    }
    Ok(())
}

/// Per-client figures name clients of the step.
fn check_clients(at: &str, s: &StepResult) -> Result<(), String> {
    if s.per_second.clients.len() > s.clients {
        return Err(format!(
            "{at}.per_second.clients has {} series for {} clients",
            s.per_second.clients.len(),
            s.clients
        ));
    }
    if let Some(c) = s
        .per_second
        .client_summaries
        .iter()
        .find(|c| c.client >= s.clients)
    {
        return Err(format!(
            "{at}.per_second.client_summaries names client {} of {} clients",
            c.client, s.clients
        ));
    }
    Ok(())
}

/// Each op's results: per-client histograms of the step's clients, as many bucket shares as
/// bucket labels, each a figure, and every histogram one that decodes.
fn check_op_results(at: &str, s: &StepResult) -> Result<(), String> {
    for (kind, ops) in [("ops", &s.ops), ("service_time", &s.service_time)] {
        for (op, r) in ops {
            if let Some(c) = r.per_client.iter().find(|c| c.client >= s.clients) {
                return Err(format!(
                    "{at}.{kind}.{op}.per_client names client {} of {} clients",
                    c.client, s.clients
                ));
            }
            if r.buckets_pct.len() != r.bucket_labels.len() {
                return Err(format!(
                    "{at}.{kind}.{op}: {} buckets_pct for {} bucket_labels",
                    r.buckets_pct.len(),
                    r.bucket_labels.len()
                ));
            }
            for (i, v) in r.buckets_pct.iter().enumerate() {
                figure(&format!("{at}.{kind}.{op}.buckets_pct[{i}]"), *v)?;
            }
            check_histogram(&format!("{at}.{kind}.{op}.histogram"), &r.histogram)?;
            for (i, c) in r.per_client.iter().enumerate() {
                let field = format!("{at}.{kind}.{op}.per_client[{i}].histogram");
                check_histogram(&field, &c.histogram)?;
            }
        }
    }
    Ok(())
}

/// A histogram as reports read it: it decodes, and merges into the growing histogram they
/// merge runs into (decoded one at a time: each takes at most the counts its header asks for,
/// tens of MB at HDR's largest range and precision).
fn check_histogram(field: &str, encoded: &str) -> Result<(), String> {
    use crate::results::histogram;
    let h = histogram::decode(encoded).map_err(|e| format!("{field} does not decode: {e:#}"))?;
    histogram::new_histogram()
        .add(&h)
        .map_err(|e| format!("{field} cannot be merged with other runs' histograms: {e:?}"))
}

/// A step's cost figures (`at` is the field's path): each finite and not negative.
fn check_efficiency(at: &str, e: &crate::results::model::Efficiency) -> Result<(), String> {
    let mut figures = vec![
        ("host_cpu_s", e.host_cpu_s),
        ("sampler_cpu_ms", e.sampler_cpu_ms),
        ("client.cpu_s", e.client.cpu_s),
        ("client.user_s", e.client.work.user_s),
        ("client.sys_s", e.client.work.sys_s),
    ];
    if let Some(d) = &e.dbms {
        figures.extend([
            ("dbms.cpu_s", d.cpu_s),
            ("dbms.user_s", d.work.user_s),
            ("dbms.sys_s", d.work.sys_s),
        ]);
    }
    if let Some(p) = &e.per_op {
        figures.extend([
            ("per_op.client_cpu_us", p.client_cpu_us),
            ("per_op.host_cpu_us", p.host_cpu_us),
            ("per_op.host_cs", p.host_cs),
        ]);
        let optional = [
            ("per_op.dbms_cpu_us", p.dbms_cpu_us),
            ("per_op.kb_read", p.kb_read),
            ("per_op.kb_written", p.kb_written),
            ("per_op.reads", p.reads),
            ("per_op.writes", p.writes),
            ("per_op.dbms_kb_read", p.dbms_kb_read),
            ("per_op.dbms_kb_written", p.dbms_kb_written),
            ("per_op.dbms_cs", p.dbms_cs),
        ];
        figures.extend(optional.iter().filter_map(|(n, v)| Some((*n, (*v)?))));
    }
    for (name, v) in figures {
        figure(&format!("{at}.{name}"), v)?;
    }
    Ok(())
}

/// A flame graph's path: relative, below the results' directory (`<run>.profiles/<step>.svg`),
/// since reports and `compare` open it there.
fn check_profile_path(field: &str, p: &str) -> Result<(), String> {
    let path = std::path::Path::new(p);
    let plain = path
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if p.is_empty() || !plain || !p.ends_with(".svg") {
        return Err(format!(
            "{field} {p:?} is not a flame graph beside the results: expected <run>.profiles/<step>.svg"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_plain_names() {
        for ok in [
            "ibench-20260101T000000-sqlite",
            "a.b.glibc.s-r1-2026",
            "X_1",
        ] {
            assert!(check_run_id(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(MAX_RUN_ID + 1);
        for bad in [
            "",
            "../../etc/passwd",
            "..",
            ".hidden",
            "a/b",
            "a b",
            "a\u{1b}[2J",
            &long,
        ] {
            let e = check_run_id(bad).unwrap_err();
            assert!(e.starts_with("run_id "), "{e}");
        }
    }

    #[test]
    fn profile_paths_stay_beside_the_results() {
        assert!(check_profile_path("p", "r.profiles/l.i1.svg").is_ok());
        for bad in [
            "../x.svg",
            "/etc/x.svg",
            "a/../../b.svg",
            "r.profiles/l.i1.folded",
            "",
        ] {
            assert!(check_profile_path("p", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn figures_are_finite_and_not_negative() {
        assert!(figure("x", 0.0).is_ok() && figure("x", 1e9).is_ok());
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(
                figure("steps[0].duration_s", bad)
                    .unwrap_err()
                    .contains("duration_s")
            );
        }
    }
}
