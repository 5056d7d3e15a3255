//! Runs from several machines: two results documents of real SQLite runs, given different
//! hosts (as `ibench import` of another machine's file would bring them), one with a price
//! recorded by `ibench run --cost-per-hour`, the other priced in the store (`ibench host
//! price`); `ibench report --by host` groups them by host, shows each host's CPU, cores and
//! memory, and the operations per unit of cost and cost per million operations computed from
//! the runs' own throughput and prices.

use std::fs;

use ibench::output::format::rate;
use ibench::report::sections::cost::significant;
use serde_json::Value;

use crate::common::{Bench, path_str};

/// Runs a tiny query step on SQLite with `extra` flags; returns the results document.
fn run(bench: &Bench, out: &str, extra: &[&str]) -> Value {
    let args = [
        &[
            "run",
            "--out",
            out,
            "-q",
            "--steps",
            "l.i0,qp100",
            "--l0-rows",
            "3000",
            "--query-seconds",
            "1",
            "--clients",
            "1",
        ][..],
        extra,
    ]
    .concat();
    let o = bench.run_raw(&args, &[]);
    o.assert_success();
    let dir = bench.path(out);
    let file = crate::common::json_files(&dir)
        .pop()
        .expect("a results file");
    serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap()
}

fn qps(doc: &Value) -> f64 {
    doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "qp100")
        .unwrap()["queries_per_s"]
        .as_f64()
        .unwrap()
}

#[test]
fn a_report_by_host_shows_throughput_per_unit_of_cost() {
    let bench = Bench::new();
    let mut a = run(&bench, "a", &["--cost-per-hour", "0.5", "--label", "a"]);
    assert_eq!(
        a["environment"]["cost_per_hour"], 0.5,
        "recorded with the run"
    );
    let mut b = run(&bench, "b", &["--label", "b"]);
    assert!(b["environment"].get("cost_per_hour").is_none());
    // Two machines, as documents imported from each would say.
    a["environment"]["hostname"] = "small-host".into();
    a["environment"]["cpu_model"] = "Small CPU".into();
    a["environment"]["cpu_cores"] = 2.into();
    a["environment"]["memory_bytes"] = (4u64 << 30).into();
    b["environment"]["hostname"] = "big-host".into();
    b["environment"]["cpu_model"] = "Big CPU".into();
    b["environment"]["cpu_cores"] = 16.into();
    b["environment"]["memory_bytes"] = (64u64 << 30).into();
    let store = bench.path("store.db");
    for (name, doc) in [("a.json", &a), ("b.json", &b)] {
        let path = bench.path(name);
        fs::write(&path, serde_json::to_string(doc).unwrap()).unwrap();
        bench
            .run_raw(
                &["import", path_str(&path), "--results", path_str(&store)],
                &[],
            )
            .assert_success();
    }
    let o = bench.run_raw(
        &[
            "host",
            "price",
            "big-host",
            "2",
            "--results",
            path_str(&store),
        ],
        &[],
    );
    o.assert_success();
    let o = bench.run_raw(&["host", "list", "--results", path_str(&store)], &[]);
    o.assert_success();
    assert!(
        o.stdout.contains("Big CPU (16 logical CPUs)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("64.0 GiB"), "{}", o.stdout);

    let report = |format: &str| {
        let o = bench.run_raw(
            &[
                "report",
                "--by",
                "host",
                "--base",
                "small-host",
                "--format",
                format,
                "--results",
                path_str(&store),
            ],
            &[],
        );
        o.assert_success();
        o.stdout
    };
    let json: Value = serde_json::from_str(&report("json")).unwrap();
    let groups = json["groups"].as_array().unwrap();
    let names: Vec<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["small-host", "big-host"],
        "grouped by host, base first"
    );
    assert_eq!(groups[0]["cost_per_hour"], 0.5, "the run's own price");
    assert_eq!(
        groups[1]["cost_per_hour"], 2.0,
        "the host's price in the store"
    );

    // The figures, computed here from the documents themselves.
    let step = |doc: &Value, name: &str, key: &str| -> f64 {
        doc["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()[key]
            .as_f64()
            .unwrap()
    };
    let (ia, qa) = (step(&a, "l.i0", "inserts_per_s"), qps(&a));
    let (ib, qb) = (step(&b, "l.i0", "inserts_per_s"), qps(&b));
    let per_unit = |q: f64, price: f64| rate(q * 3600.0 / price);
    let per_million = |q: f64, price: f64| significant(price / (q * 3600.0) * 1e6);
    let md = report("md");
    let start = md
        .find("## Throughput per unit of cost")
        .expect("cost section");
    let section = &md[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    for row in [
        "| small-host | small-host | Small CPU (2 logical CPUs) | 4.0 GiB | 0.5 |".to_string(),
        "| big-host | big-host | Big CPU (16 logical CPUs) | 64.0 GiB | 2 |".to_string(),
        format!(
            "| small-host | {} | {} |",
            per_unit(ia, 0.5),
            per_unit(qa, 0.5)
        ),
        format!(
            "| small-host | {} | {} |",
            per_million(ia, 0.5),
            per_million(qa, 0.5)
        ),
        format!(
            "| big-host | {} | {} |",
            per_million(ib, 2.0),
            per_million(qb, 2.0)
        ),
    ] {
        assert!(section.contains(&row), "{row}\n{section}");
    }
    // The big host's operations per unit, relative to the small host's.
    let rel = (qb * 3600.0 / 2.0) / (qa * 3600.0 / 0.5);
    let cell = format!("{} ({rel:.2}x base)", per_unit(qb, 2.0));
    assert!(section.contains(&cell), "{cell}\n{section}");
}
