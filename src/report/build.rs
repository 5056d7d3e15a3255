//! Builds the report's model ([`Report`], `model.rs`) from the runs of its groups: the steps
//! every run has, each group's figures per step (`step_figures.rs`) relative to the base's,
//! judged by the statistics (`marks.rs`), the headline, the verdicts and the timelines.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use chrono::Utc;

use crate::metrics::histogram::BUCKET_LABELS;
use crate::report::figures::{EFFICIENCY, MIB, MICRO, MetricDef, THROUGHPUT};
use crate::report::model::{ConfigInfo, HostInfo, Report, RunRef, StepReport};
use crate::report::select::Group;
use crate::report::settings::differences;
use crate::report::stat::Stat;
use crate::results::model::RunResult;

fn group_info(base: &Group, group: &Group) -> ConfigInfo {
    let first = &group.runs[0];
    ConfigInfo {
        name: group.name.clone(),
        is_base: std::ptr::eq(base, group),
        dbms: format!(
            "{} {}",
            first.environment.dbms.name, first.environment.dbms.version
        ),
        dbms_name: first.environment.dbms.name.clone(),
        version: crate::report::names::short_version(&first.environment.dbms.version),
        location: first.environment.dbms.location.clone(),
        clients: first.config.workload.max_clients(),
        embedded: first.target().kind.embedded(),
        malloc: first.managed_server.as_ref().map(|m| {
            // The library's file name (libjemalloc.so.2), not its directory.
            m.preload
                .as_deref()
                .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
                .unwrap_or_else(|| "glibc".to_string())
        }),
        storage: first
            .environment
            .storage
            .as_ref()
            .map(|s| format!("{} on {} ({})", s.fs_type, s.source, s.mount_options)),
        conditions: crate::report::resources::conditions(&first.config.resources),
        pooler: first
            .managed_server
            .as_ref()
            .and_then(|m| m.pooler.as_ref())
            .map(|p| {
                let plain = if p.statements.starts_with("plain SQL") {
                    ", plain SQL"
                } else {
                    ""
                };
                format!(
                    "{} {}, {}, pool {}{plain}",
                    p.kind, p.version, p.pool_mode, p.pool_size
                )
            }),
        host: {
            let mut hosts: Vec<&str> = group
                .runs
                .iter()
                .map(|r| r.environment.hostname.as_str())
                .collect();
            hosts.sort_unstable();
            hosts.dedup();
            hosts.join(", ")
        },
        cost_per_hour: Stat::of(
            &group
                .runs
                .iter()
                .filter_map(|r| r.environment.cost_per_hour)
                .collect::<Vec<_>>(),
        )
        .map(|s| s.median),
        runs: group
            .runs
            .iter()
            .map(|r| RunRef {
                id: r.run_id.clone(),
                started_at: r.started_at,
                status: r.status,
            })
            .collect(),
        differences: if std::ptr::eq(base, group) {
            Vec::new()
        } else {
            differences(base, group)
        },
        db_cache_ratio: Stat::of(
            &group
                .runs
                .iter()
                .filter_map(|r| Some(r.experiment.as_ref()?.cache.as_ref()?.ratio))
                .collect::<Vec<_>>(),
        ),
    }
}

fn hosts(groups: &[Group]) -> Vec<HostInfo> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in groups.iter().flat_map(|g| &g.runs) {
        let e = &r.environment;
        let h = HostInfo {
            hostname: e.hostname.clone(),
            cpu: format!("{} ({} logical CPUs)", e.cpu_model, e.cpu_cores),
            memory_gib: e.memory_bytes as f64 / (1024.0 * MIB),
            os: format!("{}, Linux {}", e.os, e.kernel),
            ibench_version: e.ibench_version.clone(),
        };
        if seen.insert((h.hostname.clone(), h.cpu.clone(), h.os.clone())) {
            out.push(h);
        }
    }
    out
}

/// Sets each figure's value relative to the base's, where the base's median is above the
/// figure's resolution (one unit of the last digit shown): a ratio to a base that shows as
/// `0.000` would be noise (`0.000 -> 0.012` is not "349 times").
fn set_relative(
    stats: &mut BTreeMap<String, Stat>,
    base: &BTreeMap<String, Stat>,
    defs: &[MetricDef],
) {
    for (k, s) in stats.iter_mut() {
        let resolution = defs
            .iter()
            .find(|d| d.key == k)
            .map_or(0.0, MetricDef::resolution);
        s.relative = base
            .get(k)
            .filter(|b| b.median > resolution && b.median > 0.0)
            .map(|b| s.median / b.median);
    }
}

/// Builds the report over `groups`; `groups[0]` is the base.
pub fn build(groups: &[Group]) -> Result<Report> {
    anyhow::ensure!(!groups.is_empty(), "no runs to report");
    let base = &groups[0];
    // Steps every run has, in the base's first run's order.
    let all_runs: Vec<&RunResult> = groups.iter().flat_map(|g| &g.runs).collect();
    let has = |r: &RunResult, step: &str| r.steps.iter().any(|s| s.name == step);
    let mut order: Vec<String> = Vec::new();
    for r in &all_runs {
        for s in &r.steps {
            if !order.contains(&s.name) {
                order.push(s.name.clone());
            }
        }
    }
    let (steps, left): (Vec<String>, Vec<String>) = order
        .into_iter()
        .partition(|step| all_runs.iter().all(|r| has(r, step)));
    let left_out = left
        .into_iter()
        .map(|step| {
            let with: Vec<String> = groups
                .iter()
                .filter(|g| g.runs.iter().any(|r| has(r, &step)))
                .map(|g| g.name.clone())
                .collect();
            (step, with)
        })
        .collect();
    let mut step_reports = Vec::new();
    for step in &steps {
        let mut per_group = groups
            .iter()
            .map(|g| crate::report::step_figures::group_step(g, step))
            .collect::<Result<Vec<_>>>()?;
        let (base_step, rest) = per_group.split_first_mut().expect("groups is not empty");
        for g in rest {
            set_relative(&mut g.throughput, &base_step.throughput, THROUGHPUT);
            set_relative(&mut g.efficiency, &base_step.efficiency, EFFICIENCY);
            set_relative(&mut g.micro, &base_step.micro, MICRO);
        }
        step_reports.push(StepReport {
            name: step.clone(),
            groups: per_group,
        });
    }
    crate::report::marks::judge_all(groups, &mut step_reports);
    let micro = crate::report::micro::are_micro(&steps);
    let names: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
    let timelines = crate::report::timeline::build(groups, &step_reports);
    Ok(Report {
        headline: crate::report::marks::headlines(&names, &step_reports, micro),
        generated_at: Utc::now(),
        base: base.name.clone(),
        groups: groups.iter().map(|g| group_info(base, g)).collect(),
        hosts: hosts(groups),
        left_out,
        bucket_labels: BUCKET_LABELS.iter().map(|s| s.to_string()).collect(),
        step_reports,
        verdicts: crate::report::verdict::build(groups, &steps),
        timelines,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_relative_value_to_a_base_below_the_resolution() {
        let stats = |v: f64| {
            BTreeMap::from([(
                "dbms_cs_per_op".to_string(),
                Stat::of(&[v]).expect("one value"),
            )])
        };
        // dbms cs/op is shown with 3 digits: a base of 0.0003 shows as 0.000.
        let mut g = stats(0.012);
        set_relative(&mut g, &stats(0.0003), EFFICIENCY);
        assert_eq!(g["dbms_cs_per_op"].relative, None);
        set_relative(&mut g, &stats(0.001), EFFICIENCY);
        assert_eq!(g["dbms_cs_per_op"].relative, None, "at the resolution");
        set_relative(&mut g, &stats(0.004), EFFICIENCY);
        assert_eq!(g["dbms_cs_per_op"].relative, Some(3.0));
        let mut g = stats(5.0);
        set_relative(&mut g, &stats(0.0), EFFICIENCY);
        assert_eq!(g["dbms_cs_per_op"].relative, None);
    }
}
