//! `ibench experiment` with `kind = "tpcc"` cells on SQLite: one setup loads, the other
//! starts from a dataset saved beforehand (`dataset = "NAME"`); both cells run the
//! transactions and pass the consistency conditions, and the restored one records its dataset;
//! before the dataset is saved, the experiment is refused before any cell runs.

use std::fs;

use crate::common::{Bench, path_str};

const TINY_TPCC: &str = r#"
name = "tiny-tpcc"
[workload]
kind = "tpcc"
warehouses = 1
clients = [2]
seconds = 3
mix = "sysbench"
rate = 200
[[target]]
name = "lite"
dbms = "sqlite"
[[config]]
name = "normal"
[[setup]]
name = "load"
[[setup]]
name = "saved"
dataset = "w1"
"#;

#[test]
fn a_tpcc_experiment_runs_its_cells_from_a_load_and_from_a_dataset() {
    let bench = Bench::new();
    let out = bench.out();
    let file = bench.path("tpcc.toml");
    fs::write(&file, TINY_TPCC).unwrap();
    // A dataset that is not there yet: refused in one line before any cell runs.
    let o = bench.run_raw(
        &["experiment", path_str(&file), "--out", path_str(&out), "-q"],
        &[],
    );
    assert_eq!(o.code, Some(2), "{}", o.describe());
    assert!(o.stderr.contains("no dataset w1"), "{}", o.describe());
    assert!(o.new_results.is_empty(), "nothing ran: {:?}", o.new_results);
    let o = bench.run_raw(
        &[
            "tpcc",
            "--warehouses",
            "1",
            "--prepare-only",
            "--out",
            path_str(&out),
            "-q",
        ],
        &[],
    );
    o.assert_success();
    bench
        .run_raw(&["dataset", "save", "w1", "--out", path_str(&out)], &[])
        .assert_success();
    let o = bench.run_raw(
        &["experiment", path_str(&file), "--out", path_str(&out), "-q"],
        &[],
    );
    o.assert_success();
    let mut cells = Vec::new();
    for path in crate::common::json_files(&out) {
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("report")
        {
            continue;
        }
        let run = ibench::results::file::load(&path).unwrap();
        let Some(tag) = &run.experiment else { continue };
        let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
        let from_dataset = tag.cell.ends_with("/saved");
        let expected: &[&str] = if from_dataset {
            &["tpcc.c2"]
        } else {
            &["prepare", "tpcc.c2"]
        };
        assert_eq!(names, expected, "{}", tag.cell);
        assert_eq!(
            run.dataset.as_ref().map(|d| d.name.as_str()),
            from_dataset.then_some("w1"),
            "{}",
            tag.cell
        );
        let f = run.steps.last().unwrap().tpcc.as_ref().unwrap();
        assert!(f.consistency.iter().all(|c| c.pass), "{}", tag.cell);
        assert_eq!(f.rate, Some(200), "{}", tag.cell);
        let deliveries = f.transactions["delivery"].count;
        assert!(deliveries > 0, "{}: the sysbench mix", tag.cell);
        cells.push(tag.cell.clone());
    }
    cells.sort();
    assert_eq!(cells, ["lite/normal/glibc/load", "lite/normal/glibc/saved"]);
}
