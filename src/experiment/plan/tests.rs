//! The plan's own tests: cells, repeats, merged options, scale, limits, and the fingerprints
//! earlier versions computed for the example experiments.

use std::path::PathBuf;

use super::*;

fn plan(text: &str, scale: Option<f64>) -> (Plan, Vec<Problem>) {
    let source = Source {
        path: PathBuf::from("e.toml"),
        text: text.to_string(),
    };
    let file = super::super::file::parse(&source).expect("parses");
    build(file, source, scale)
}

const MATRIX: &str = r#"name = "e"
repeats = 2
[workload]
steps = "l.i0,l.x,qp100"
query_seconds = 10
[[target]]
name = "a"
dbms = "sqlite"
[[target]]
name = "b"
dbms = "sqlite"
[[config]]
name = "base"
options = { synchronous = "FULL", temp_store = 2 }
[[config]]
name = "v"
extends = "base"
targets = ["b"]
options = { temp_store = 1 }
[[setup]]
name = "s"
rows_per_client = 1000
dbms_cache = "8M"
"#;

#[test]
fn cells_expand_repeat_by_repeat_with_merged_options() {
    let (p, problems) = plan(MATRIX, None);
    assert!(problems.is_empty(), "{problems:?}");
    let names: Vec<String> = p.cells.iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "a/base/glibc/s #1",
            "b/base/glibc/s #1",
            "b/v/glibc/s #1",
            // Round 2 rotated: every cell first or last in some round (see `order.rs`).
            "b/base/glibc/s #2",
            "b/v/glibc/s #2",
            "a/base/glibc/s #2"
        ]
    );
    let positions: Vec<u32> = p.cells.iter().map(|c| c.position).collect();
    assert_eq!(positions, [1, 2, 3, 1, 2, 3]);
    assert_eq!(p.base, "a/base/glibc/s");
    let pragmas = |i: usize| -> Vec<(String, String)> {
        serde_json::from_value(p.cells[i].target.params["pragmas"].clone()).unwrap()
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    // The setup's cache first, then the config's options; the variant's value replaces
    // the base's.
    assert_eq!(
        pragmas(1),
        pairs(&[
            ("cache_size", "-8192"),
            ("synchronous", "FULL"),
            ("temp_store", "2")
        ])
    );
    assert_eq!(
        pragmas(2),
        pairs(&[
            ("cache_size", "-8192"),
            ("synchronous", "FULL"),
            ("temp_store", "1")
        ])
    );
    // Repeats share a fingerprint; different definitions do not; it is stable.
    assert_eq!(p.cells[1].fingerprint, p.cells[3].fingerprint);
    assert_ne!(p.cells[1].fingerprint, p.cells[2].fingerprint);
    assert_eq!(
        plan(MATRIX, None).0.cells[2].fingerprint,
        p.cells[2].fingerprint
    );
    assert_eq!(
        p.cells[0].spec(Path::new("o")).label.as_deref(),
        Some("a/base/glibc/s")
    );
}

#[test]
fn scale_multiplies_rows_and_query_seconds() {
    let (p, problems) = plan(MATRIX, Some(0.5));
    assert!(problems.is_empty(), "{problems:?}");
    let w = p.cells[0].workload.insert_benchmark().unwrap();
    assert_eq!((w.l0_rows, w.query_seconds), (500, 5));
    assert_ne!(
        plan(MATRIX, None).0.cells[0].fingerprint,
        p.cells[0].fingerprint
    );
    let (_, problems) = plan(MATRIX, Some(0.0001));
    assert!(
        problems.iter().any(|p| p.message.contains("after scale")),
        "{problems:?}"
    );
}

#[test]
fn a_huge_matrix_is_refused_before_it_is_built() {
    let text = MATRIX.replace("repeats = 2", "repeats = 4294967295");
    let (p, problems) = plan(&text, None);
    assert!(p.cells.len() <= MAX_CELLS);
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("repeats 4294967295 is out of range")),
        "{problems:?}"
    );
    let mut text = MATRIX.replace("repeats = 2", "repeats = 1000");
    for i in 0..19 {
        text.push_str(&format!("[[setup]]\nname = \"s{i}\"\n"));
    }
    let (p, problems) = plan(&text, None);
    assert!(p.cells.is_empty(), "60 x 1000 cells is more than the limit");
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("is more than 10000")),
        "{problems:?}"
    );
}

/// Resuming an experiment refuses completed cells whose fingerprint changed: the example
/// experiments' fingerprints are what earlier versions of ibench computed for them.
#[test]
fn fingerprints_of_the_examples_are_those_earlier_versions_computed() {
    let expected = [
        (
            "malloc",
            "myrocks/default/glibc/4-clients",
            "ea70cdf6de6f9032",
        ),
        (
            "malloc",
            "myrocks/default/jemalloc/4-clients",
            "ccfbb2f81c23be88",
        ),
        ("engines", "innodb/default/glibc/cached", "72231a7dae54686d"),
        (
            "engines",
            "innodb/default/glibc/small-cache",
            "6f85fb23c0f5d974",
        ),
        (
            "engines",
            "myrocks/default/glibc/small-cache",
            "e0ab6163800d7999",
        ),
        (
            "engines",
            "postgres/default/glibc/cached",
            "a3ab64c17ff72d62",
        ),
        ("engines", "sqlite/default/glibc/cached", "d638bcea2fba82dc"),
        (
            "engines",
            "sqlite/default/glibc/small-cache",
            "0103eb1f6aea61db",
        ),
        (
            "myrocks-tuning",
            "myrocks/c7-all/glibc/io",
            "fe22b8039d22706a",
        ),
    ];
    for (file, label, fingerprint) in expected {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(format!("{file}.toml"));
        let source = Source::read(&path).unwrap();
        let parsed = super::super::file::parse(&source).unwrap();
        let (p, _) = build(parsed, source, Some(0.1));
        let cell = p
            .cells
            .iter()
            .find(|c| c.label == label)
            .unwrap_or_else(|| panic!("{file}: no cell {label}"));
        assert_eq!(cell.fingerprint, fingerprint, "{file} {label}");
    }
}

#[test]
fn setups_take_resource_conditions_checked_as_the_flags_are() {
    let text = r#"name = "e"
[workload]
steps = "l.i0"
[[target]]
name = "a"
dbms = "sqlite"
[[setup]]
name = "small"
rows_per_client = 1000000
memory_limit = "0.5x"
io_limit = "wiops=200"
os_cache = "drop-before-step"
[[setup]]
name = "fixed"
memory_limit = "64M"
"#;
    let (p, problems) = plan(text, None);
    assert!(problems.is_empty(), "{problems:?}");
    let r = &p.cells[0].resources;
    let loaded = match &p.cells[0].workload {
        WorkloadSpec::InsertBenchmark(w) => estimated_loaded_bytes(w),
        _ => unreachable!(),
    };
    assert_eq!(r.memory_limit, Some(loaded / 2));
    assert_eq!(r.io_limit.unwrap().wiops, Some(200));
    assert_eq!(r.os_cache, crate::request::OsCache::DropBeforeStep);
    assert_eq!(p.cells[1].resources.memory_limit, Some(64 << 20));
    assert_eq!(
        p.cells[1].spec(Path::new("o")).resources.memory_limit,
        Some(64 << 20)
    );
    assert_ne!(p.cells[0].fingerprint, p.cells[1].fingerprint);
    let bad = text.replace("wiops=200", "wiops=none").replace("64M", "1M");
    let (_, problems) = plan(&bad, None);
    let messages: Vec<String> = problems
        .iter()
        .map(|p| format!("{}: {}", p.at, p.message))
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].starts_with("e.toml:11") && messages[0].contains("io_limit"),
        "{messages:?}"
    );
    assert!(
        messages[1].starts_with("e.toml:15") && messages[1].contains("memory_limit"),
        "{messages:?}"
    );
}

#[test]
fn workload_warmup_and_cooldown_reach_the_cells() {
    let with = MATRIX.replace(
        "query_seconds = 10",
        "query_seconds = 10\nwarmup = 3\ncooldown = 2",
    );
    let (p, problems) = plan(&with, None);
    assert!(problems.is_empty(), "{problems:?}");
    let (q, _) = plan(MATRIX, None);
    let cell = &p.cells[0];
    match &cell.workload {
        WorkloadSpec::InsertBenchmark(w) => assert_eq!(w.warmup, 3),
        other => panic!("{other:?}"),
    }
    assert_eq!(cell.spec(Path::new("o")).cooldown_s, 2);
    // Three steps: two pauses of 2 s, and qp100's 3 s of warm-up.
    assert_eq!(cell.estimate, q.cells[0].estimate + Duration::from_secs(7));
    assert_ne!(cell.fingerprint, q.cells[0].fingerprint);
    let (_, problems) = plan(&with.replace("cooldown = 2", "cooldown = 99999999"), None);
    assert_eq!(problems.len(), 1, "{problems:?}");
}

/// A setup's `targets`: its cells only for the targets it names; an undefined name,
/// `targets = []` and a target no setup applies to are one line each.
#[test]
fn a_setup_applies_to_the_targets_it_names() {
    let text = format!("{MATRIX}targets = [\"a\"]\n[[setup]]\nname = \"t\"\n");
    let (p, problems) = plan(&text, None);
    assert!(problems.is_empty(), "{problems:?}");
    let labels: Vec<&str> = p
        .cells
        .iter()
        .filter(|c| c.repeat == 1)
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "a/base/glibc/s",
            "a/base/glibc/t",
            "b/base/glibc/t",
            "b/v/glibc/t"
        ]
    );
    assert_eq!(p.cells.len(), 8);
    let listing = crate::experiment::dry_run(&p, &Default::default());
    assert!(
        listing.starts_with("experiment e: 8 cells (4 combinations x 2 repeat(s); 2 target(s)"),
        "{listing}"
    );
    // The same setup without `targets` has the same fingerprint for target a.
    let (all, _) = plan(MATRIX, None);
    assert_eq!(all.cells[0].label, p.cells[0].label);
    assert_eq!(all.cells[0].fingerprint, p.cells[0].fingerprint);

    let (_, problems) = plan(&format!("{MATRIX}targets = [\"a\", \"c\"]\n"), None);
    let m: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        m,
        [
            "e.toml:24: setup s names target \"c\", which is not defined (targets: a, b)",
            "e.toml:10: no setup applies to target b"
        ],
        "{m:?}"
    );
    let (_, problems) = plan(&format!("{MATRIX}targets = []\n"), None);
    let m: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert!(
        m.iter()
            .any(|l| l.starts_with("e.toml:21: setup s: targets = [] applies it to no target")),
        "{m:?}"
    );
}

/// `on_node_failure`: checked by the command line's function (a cluster only, `fail` or
/// `continue`), and carried into the cells' server.
#[test]
fn on_node_failure_is_for_clusters() {
    let text = |setup: &str| {
        format!(
            "name = \"e\"\n[workload]\nsteps = \"l.i0\"\n[[target]]\nname = \"m\"\ndbms = \"mysql\"\n\
             [[setup]]\nname = \"s\"\n{setup}\n"
        )
    };
    let (p, problems) = plan(&text("galera = 3\non_node_failure = \"continue\""), None);
    assert!(problems.is_empty(), "{problems:?}");
    let server = p.cells[0].server.as_ref().unwrap();
    assert_eq!(
        server.on_node_failure,
        crate::request::NodeFailure::Continue
    );
    for (setup, says) in [
        (
            "on_node_failure = \"continue\"",
            "on_node_failure continue is for a cluster: add replicas = N or galera = N",
        ),
        (
            "replicas = 1\non_node_failure = \"maybe\"",
            "on_node_failure \"maybe\": expected fail or continue",
        ),
    ] {
        let (_, problems) = plan(&text(setup), None);
        assert!(
            problems.iter().any(|p| p.message.contains(says)),
            "{setup}: {problems:?}"
        );
    }
}

#[test]
fn max_repeats_adds_rounds_in_the_balanced_order_and_is_checked() {
    let text = MATRIX.replace("repeats = 2", "repeats = 2\nmax_repeats = 4");
    let (p, problems) = plan(&text, None);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((p.repeats, p.max_repeats), (2, Some(4)));
    // One round more: the first two rounds as they were, the third in its balanced order.
    let more = p.with_repeats(3);
    let once = p.cells.len() / 2;
    assert_eq!(more.cells.len(), 3 * once);
    for (a, b) in p.cells.iter().zip(&more.cells) {
        assert_eq!(
            (&a.label, a.repeat, a.position),
            (&b.label, b.repeat, b.position)
        );
    }
    let third: Vec<usize> = more.cells[2 * once..]
        .iter()
        .map(|c| p.cells.iter().position(|x| x.label == c.label).unwrap())
        .collect();
    assert_eq!(third, order::round_order(once, 2));
    for bad in ["max_repeats = 1", "max_repeats = 1001"] {
        let (_, problems) = plan(
            &MATRIX.replace("repeats = 2", &format!("repeats = 2\n{bad}")),
            None,
        );
        assert!(
            problems
                .iter()
                .any(|p| p.message.starts_with("max_repeats")),
            "{bad}: {problems:?}"
        );
    }
}
