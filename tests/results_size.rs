//! The size of a results document: each client's per-second series is summarised (a few
//! figures, whatever the step's length) unless the run asks for the full series
//! (`--per-client-series`); the merged series and histograms stay exact either way.

use std::collections::BTreeSet;

use ibench::results::model::{OpSeries, SecondsSummary, StepResult};
use serde_json::Value;

use crate::common::{Bench, histogram_len, path_str};

/// The goal of issue #27: an hour at 1,024 clients under 50 MB of JSON.
const GOAL_BYTES: f64 = 50e6;
const GOAL_CLIENTS: f64 = 1024.0;
const GOAL_SECONDS: f64 = 3600.0;

/// Runs `ibench micro` point queries on SQLite at `clients` for `seconds`, with `extra` flags.
fn point_queries(bench: &Bench, clients: usize, seconds: u64, extra: &[&str]) -> Value {
    let (clients, seconds) = (clients.to_string(), seconds.to_string());
    let mut args = vec![
        "--benchmarks",
        "point-query",
        "--tables",
        "1",
        "--table-rows",
        "1000",
        "--warmup",
        "0",
        "--clients",
        &clients,
        "--seconds",
        &seconds,
    ];
    args.extend(extra);
    let outcome = bench.run_raw(&["micro", "--out", path_str(&bench.out()), "-q"], &args);
    outcome.assert_success();
    let text = std::fs::read_to_string(&outcome.new_results[0]).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Bytes of `v` as the results file writes it (pretty).
fn bytes(v: &Value) -> f64 {
    serde_json::to_string_pretty(v).unwrap().len() as f64
}

/// `step` with the values at `paths` (JSON pointers, `*` for every op) removed, and the bytes
/// they took.
fn without(step: &Value, paths: &[&str]) -> (Value, f64) {
    let mut rest = step.clone();
    for path in paths {
        let ops: Vec<String> = match path.split_once("/*") {
            Some((map, _)) => rest
                .pointer(map)
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
            None => vec![String::new()],
        };
        for op in ops {
            let p = path.replace('*', &op);
            let (parent, key) = p.rsplit_once('/').unwrap();
            if let Some(m) = rest.pointer_mut(parent).and_then(Value::as_object_mut) {
                m.remove(key);
            }
        }
    }
    let removed = bytes(step) - bytes(&rest);
    (rest, removed)
}

/// A step's JSON extrapolated to an hour at 1,024 clients, from what its parts grow with:
/// the full per-client series with clients x seconds, the per-client summaries and histograms
/// with clients, the merged series with seconds; the rest is fixed.
fn hour_at_1024_clients(step: &Value, clients: f64, seconds: f64) -> f64 {
    let (rest, client_seconds) = without(step, &["/per_second/clients"]);
    let (rest, per_client) = without(
        &rest,
        &[
            "/per_second/client_summaries",
            "/ops/*/per_client",
            "/service_time/*/per_client",
        ],
    );
    let (rest, per_second) = without(&rest, &["/per_second/total"]);
    client_seconds / (clients * seconds) * GOAL_CLIENTS * GOAL_SECONDS
        + per_client / clients * GOAL_CLIENTS
        + per_second / seconds * GOAL_SECONDS
        + bytes(&rest)
}

/// A client's series in the figures of its summary, its rates over `full` seconds.
fn summary_of(s: &OpSeries, full: usize) -> (u64, u64, u64, u64, usize) {
    let rated = &s.rows[..full];
    (
        s.ops.iter().sum(),
        s.rows.iter().sum(),
        s.max_us.iter().copied().max().unwrap_or(0),
        rated.iter().copied().max().unwrap_or(0),
        s.ops[..full].iter().filter(|&&n| n == 0).count(),
    )
}

/// A step's per-client figures against its merged ones: one summary per client that
/// completed an op, whose sums add up to the merged series' and whose op counts are its
/// histogram's; the full series, when kept, add up to the merged series second by second
/// and summarise to the summaries. `step_is_merged`: a group's merged step (its hosts' summaries
/// cover their own parts of it).
pub fn check_clients(step: &StepResult, step_is_merged: bool) {
    let ctx = format!("step {}", step.name);
    let ps = &step.per_second;
    let numbers: Vec<usize> = ps.client_summaries.iter().map(|c| c.client).collect();
    assert!(
        numbers.windows(2).all(|w| w[0] < w[1]),
        "{ctx}: {numbers:?}"
    );
    assert!(
        numbers.iter().all(|&c| c < step.clients),
        "{ctx}: {numbers:?}"
    );
    let summarised: BTreeSet<&String> = ps
        .client_summaries
        .iter()
        .flat_map(|c| c.ops.keys())
        .collect();
    assert!(
        summarised.iter().all(|op| ps.total.ops.contains_key(*op)),
        "{ctx}"
    );
    for (op, total) in &ps.total.ops {
        let full = (step.duration_s as usize).min(total.ops.len());
        let of = |f: fn(&SecondsSummary) -> u64| {
            let v = ps.client_summaries.iter().filter_map(|c| c.ops.get(op));
            v.map(f).collect::<Vec<u64>>()
        };
        assert_eq!(
            of(|s| s.ops).iter().sum::<u64>(),
            total.ops.iter().sum::<u64>(),
            "{ctx} {op}"
        );
        assert_eq!(
            of(|s| s.rows).iter().sum::<u64>(),
            total.rows.iter().sum::<u64>(),
            "{ctx} {op}"
        );
        let max = |v: &[u64]| v.iter().copied().max();
        assert_eq!(max(&of(|s| s.max_us)), max(&total.max_us), "{ctx} {op}");
        for c in &ps.client_summaries {
            let Some(s) = c.ops.get(op) else { continue };
            let ctx = format!("{ctx} {op} client {}", c.client);
            let hist = step.ops[op]
                .per_client
                .iter()
                .find(|h| h.client == c.client);
            assert_eq!(Some(s.ops), hist.map(|h| h.count), "{ctx}: histogram count");
            assert!(
                s.longest_idle_s <= s.idle_seconds && s.idle_seconds <= full,
                "{ctx}"
            );
            if let Some(r) = &s.rate {
                // A group's hosts each summarise their clients over their own part of the
                // step, which the merged step spans: as many full seconds, or fewer.
                if step_is_merged {
                    assert!(r.seconds <= full, "{ctx}: {} of {full}", r.seconds);
                } else {
                    assert_eq!(r.seconds, full, "{ctx}");
                }
                assert!(
                    s.max_rate >= r.p50 && r.p50 >= r.p99 && r.p99 >= r.min,
                    "{ctx}"
                );
            }
            if let Some(series) = ps.clients.get(c.client).and_then(|set| set.ops.get(op)) {
                let figures = (s.ops, s.rows, s.max_us, s.max_rate, s.idle_seconds);
                assert_eq!(
                    summary_of(series, full),
                    figures,
                    "{ctx}: series vs summary"
                );
            }
        }
        if ps.clients.is_empty() {
            continue;
        }
        assert_eq!(ps.clients.len(), step.clients, "{ctx}");
        for i in 0..total.ops.len() {
            let (mut ops, mut rows, mut max) = (0, 0, 0);
            for s in ps.clients.iter().filter_map(|set| set.ops.get(op)) {
                ops += s.ops[i];
                rows += s.rows[i];
                max = max.max(s.max_us[i]);
            }
            let merged = (total.ops[i], total.rows[i], total.max_us[i]);
            assert_eq!(
                (ops, rows, max),
                merged,
                "{ctx} {op} second {i}: clients vs total"
            );
        }
    }
}

/// The step's figures as ibench reads them back, checked; its JSON as written.
fn step_of(doc: &Value, i: usize) -> (StepResult, Value) {
    let json = doc["steps"][i].clone();
    let step: StepResult = serde_json::from_value(json.clone()).unwrap();
    let per_second: u64 = step.per_second.total.ops["query"].ops.iter().sum();
    assert_eq!(
        per_second, step.queries,
        "merged per-second queries vs the step's"
    );
    assert_eq!(histogram_len(&step.ops["query"].histogram), step.queries);
    check_clients(&step, false);
    (step, json)
}

#[test]
fn many_clients_keep_a_summary_each_and_the_merged_series_and_histograms_exact() {
    let bench = Bench::new();
    let clients = 64;
    let doc = point_queries(&bench, clients, 3, &[]);
    assert_eq!(doc["config"]["per_client_series"], false);
    let (step, json) = step_of(&doc, 1);
    assert_eq!(step.name, "point-query.c64");
    assert!(
        json["per_second"].get("clients").is_none(),
        "no full per-client series"
    );
    let summaries = &step.per_second.client_summaries;
    assert_eq!(summaries.len(), clients, "every client completed queries");
    let sum: u64 = summaries.iter().map(|c| c.ops["query"].ops).sum();
    assert_eq!(sum, step.queries, "per-client queries add up to the step's");

    // Each part of the step's JSON grows with clients, with seconds, or with neither: an hour
    // at 1,024 clients stays under the goal (the per-client histograms, counted as fixed per
    // client, grow with the spread of response times, not with the seconds).
    let seconds = step.per_second.total.ops["query"].ops.len() as f64;
    // The goal is 13.6 bytes per client-second; the full series took about 75.
    let hour = hour_at_1024_clients(&json, clients as f64, seconds);
    let per_client_second = hour / (GOAL_CLIENTS * GOAL_SECONDS);
    assert!(
        per_client_second < GOAL_BYTES / (GOAL_CLIENTS * GOAL_SECONDS),
        "an hour at 1,024 clients: {hour:.0} bytes, {per_client_second:.1} per client-second"
    );
}

#[test]
fn the_full_per_client_series_are_kept_on_request() {
    let bench = Bench::new();
    let clients = 8;
    let doc = point_queries(&bench, clients, 2, &["--per-client-series"]);
    assert_eq!(doc["config"]["per_client_series"], true);
    let (step, json) = step_of(&doc, 1);
    let len = step.per_second.total.ops["query"].ops.len();
    assert_eq!(step.per_second.clients.len(), clients);
    for set in &step.per_second.clients {
        assert_eq!(set.ops["query"].ops.len(), len, "every second of the step");
    }
    assert_eq!(step.per_second.client_summaries.len(), clients);
    // The full series grow with clients x seconds: at 1,024 clients for an hour they would be
    // several times the goal, which is why they are kept only on request.
    let hour = hour_at_1024_clients(&json, clients as f64, len as f64);
    assert!(hour > 2.0 * GOAL_BYTES, "{hour:.0} bytes");
}
