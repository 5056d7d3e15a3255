//! Experiment plans of microbenchmark cells, and Insert Benchmark cells hashed as before.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::super::file::{Problem, Source, WorkloadTable};
use super::{Plan, build};
use crate::request::WorkloadSpec;

fn plan(text: &str, scale: Option<f64>) -> (Plan, Vec<Problem>) {
    let source = Source {
        path: PathBuf::from("e.toml"),
        text: text.to_string(),
    };
    let file = super::super::file::parse(&source).expect("parses");
    build(file, source, scale)
}

const MATRIX: &str = r#"name = "e"
[workload]
steps = "l.i0,l.x,qp100"
query_seconds = 10
[[target]]
name = "a"
dbms = "sqlite"
"#;

#[test]
fn insert_benchmark_cells_hash_as_before_the_microbenchmarks() {
    // The fingerprint hashes the workload as JSON: an Insert Benchmark cell's must be the
    // spec's own (untagged), and its [workload] layer must read as it always did, so
    // experiments begun by earlier versions resume without rerunning a cell.
    let (p, problems) = plan(MATRIX, None);
    assert!(problems.is_empty(), "{problems:?}");
    let w = p.cells[0].workload.insert_benchmark().unwrap();
    assert_eq!(
        serde_json::to_string(&p.cells[0].workload).unwrap(),
        serde_json::to_string(w).unwrap()
    );
    let table = WorkloadTable {
        clients: Some(super::super::file::Clients::One(3)),
        seconds: Some(5),
        ..WorkloadTable::default()
    };
    assert_eq!(
        serde_json::to_value(&table).unwrap(),
        serde_json::json!({"clients": 3})
    );
}

const MICRO: &str = r#"name = "m"
[workload]
kind = "micro"
benchmarks = "point-query,range-covered-pk"
clients = [1, 4]
tables = 2
table_rows = 1000
seconds = 3
warmup = 1
[[target]]
name = "pg"
dbms = "postgres"
[[target]]
name = "lite"
dbms = "sqlite"
[[setup]]
name = "big"
table_rows = 5000
dbms_cache = "2x"
"#;

#[test]
fn micro_cells_run_the_microbenchmarks() {
    let (p, problems) = plan(MICRO, Some(2.0));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(p.cells.len(), 2);
    let WorkloadSpec::Micro(m) = &p.cells[1].workload else {
        panic!("not micro: {:?}", p.cells[1].workload)
    };
    // Families expanded; the setup's rows; scale on rows and seconds, not the warm-up.
    assert_eq!(m.benchmarks.len(), 1 + 4);
    assert_eq!(m.benchmarks[1], "range-covered-pk_range=10");
    assert_eq!(m.clients, [1, 4]);
    assert_eq!(
        (m.tables, m.table_rows, m.seconds, m.warmup),
        (2, 10_000, 6, 1)
    );
    // 2x the loaded size: 2 tables x 10000 rows x 220 bytes x 2, in whole MiB.
    let pragmas: Vec<(String, String)> =
        serde_json::from_value(p.cells[1].target.params["pragmas"].clone()).unwrap();
    assert_eq!(pragmas, [("cache_size".to_string(), "-9216".to_string())]);
    let spec = p.cells[1].spec(Path::new("o"));
    assert!(matches!(spec.workload, WorkloadSpec::Micro(_)));
    assert!(p.cells[1].estimate > Duration::from_secs(5 * 2 * 6));
}

#[test]
fn micro_and_insert_benchmark_fields_do_not_mix() {
    let text = MICRO.replace("warmup = 1", "warmup = 1\nsteps = \"l.i0\"");
    let (_, problems) = plan(&text, None);
    assert!(
        problems
            .iter()
            .any(|p| p.message == "steps does not apply to kind = \"micro\""),
        "{problems:?}"
    );
    let text = MICRO.replace("point-query,", "point-lookup,");
    let (_, problems) = plan(&text, None);
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("unknown benchmark \"point-lookup\"")),
        "{problems:?}"
    );
    let text = MICRO.replace("seconds = 3", "seconds = 0");
    let (_, problems) = plan(&text, None);
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("seconds 0 is out of range")),
        "{problems:?}"
    );
    let text = MATRIX.replace("query_seconds = 10", "query_seconds = 10\nclients = [1, 2]");
    let (_, problems) = plan(&text, None);
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("clients as a list")),
        "{problems:?}"
    );
}

/// A micro cell's `read_from = "replicas"` reaches its run as `--read-from replicas` does (the
/// read-only benchmarks then read from the replicas); a TPC-C cell's is refused at the key.
#[test]
fn micro_cells_read_from_replicas_and_tpcc_cells_refuse_it() {
    let text = "name = \"e\"\n[workload]\nkind = \"micro\"\nbenchmarks = \"point-query\"\n\
                [[target]]\nname = \"pg\"\ndbms = \"postgres\"\n[[setup]]\nname = \"r\"\n\
                replicas = 1\nread_from = \"replicas\"\n";
    let (p, problems) = plan(text, None);
    assert!(problems.is_empty(), "{problems:?}");
    let server = p.cells[0].server.as_ref().unwrap();
    assert!(server.replicas.unwrap().read_from_replicas);
    let (_, problems) = plan(
        &text.replace(
            "kind = \"micro\"\nbenchmarks = \"point-query\"",
            "kind = \"tpcc\"",
        ),
        None,
    );
    let m: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].starts_with("e.toml:10: read_from = \"replicas\": reads from replicas are for"),
        "{m:?}"
    );
}

/// The run conditions (`post_write_pause`, `random_pk_rows`, `scan_clients`, `no_sampling`):
/// a setup's over the workload's, in the cell's spec, in its fingerprint only when set, and a
/// bad value or a key of another workload kind one problem at its line.
#[test]
fn run_conditions_reach_the_cells_and_their_fingerprints_only_when_set() {
    let text = format!(
        "{MICRO}post_write_pause = 7\nrandom_pk_rows = 300\nno_sampling = true\n\
         [[setup]]\nname = \"plain\"\n"
    )
    .replace("warmup = 1", "warmup = 1\npost_write_pause = 2");
    let (p, problems) = plan(&text, None);
    assert!(problems.is_empty(), "{problems:?}");
    let micro = |c: &super::Cell| match &c.workload {
        WorkloadSpec::Micro(m) => (m.post_write_pause, m.random_pk_rows),
        other => panic!("not micro: {other:?}"),
    };
    // Cells per target: setup big, then plain.
    assert_eq!(micro(&p.cells[0]), (Some(7), 300));
    assert!(p.cells[0].no_sampling && p.cells[0].spec(Path::new("o")).no_sampling);
    assert_eq!(micro(&p.cells[1]), (Some(2), 0));
    assert!(!p.cells[1].no_sampling);
    // Unset, the fingerprint is what it was before the keys.
    let (before, _) = plan(&format!("{MICRO}[[setup]]\nname = \"plain\"\n"), None);
    let (unset, _) = plan(
        &text.replace("warmup = 1\npost_write_pause = 2", "warmup = 1"),
        None,
    );
    assert_eq!(unset.cells[1].fingerprint, before.cells[1].fingerprint);
    assert_ne!(p.cells[1].fingerprint, before.cells[1].fingerprint);
    assert_ne!(unset.cells[0].fingerprint, before.cells[0].fingerprint);
    // A bad value: one problem naming the key, at its line.
    let bad = text.replace("random_pk_rows = 300", "random_pk_rows = 3000000000");
    let (_, problems) = plan(&bad, None);
    let line = bad
        .lines()
        .position(|l| l.starts_with("random_pk_rows"))
        .unwrap()
        + 1;
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].at, format!("e.toml:{line}"));
    assert!(
        problems[0]
            .message
            .starts_with("random_pk_rows 3000000000 is out of range"),
        "{problems:?}"
    );
    // scan_clients is the Insert Benchmark's: refused for micro, taken by it.
    let (_, problems) = plan(&format!("{MICRO}scan_clients = 2\n"), None);
    assert!(
        problems
            .iter()
            .any(|p| p.message == "scan_clients does not apply to kind = \"micro\""),
        "{problems:?}"
    );
    let ib = format!("{MATRIX}[[setup]]\nname = \"s\"\nscan_clients = 3\n");
    let (p, problems) = plan(&ib, None);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        p.cells[0].workload.insert_benchmark().unwrap().scan_clients,
        Some(3)
    );
    let bad = ib.replace("scan_clients = 3", "scan_clients = 0");
    let line = bad
        .lines()
        .position(|l| l.starts_with("scan_clients"))
        .unwrap()
        + 1;
    let (_, problems) = plan(&bad, None);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].at, format!("e.toml:{line}"));
    assert!(
        problems[0]
            .message
            .starts_with("scan_clients 0 is out of range"),
        "{problems:?}"
    );
}

/// `benchmarks` takes the reference order (`all`), `reads-first` and `.pre` names, as
/// `ibench micro --benchmarks` does.
#[test]
fn benchmarks_take_the_reference_order_and_pre_names() {
    for (names, first) in [
        ("all", "point-query.pre"),
        ("reads-first", "point-query"),
        ("point-query.pre,update-one,point-query", "point-query.pre"),
    ] {
        let text = MICRO.replace("point-query,range-covered-pk", names);
        let (p, problems) = plan(&text, None);
        assert!(problems.is_empty(), "{names}: {problems:?}");
        let WorkloadSpec::Micro(m) = &p.cells[0].workload else {
            panic!("not micro")
        };
        let expected: Vec<String> = names
            .split(',')
            .flat_map(crate::workload::micro::expand)
            .map(|e| e.name())
            .collect();
        assert_eq!(m.benchmarks, expected, "{names}");
        assert_eq!(m.benchmarks[0], first, "{names}");
    }
}
