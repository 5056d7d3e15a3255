//! Embedded RocksDB (feature `rocksdb`): the database read back through the test's own handle
//! (the `rocksdb` crate, not ibench's bindings) with its own key encoding, RocksDB's counters
//! and properties against what the test counts and reads, options RocksDB refuses, the
//! default step sequence, and the same report and compare columns as SQLite.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ::rocksdb::{DB, Options};
use ibench::dbms::{DbmsKind, RowBatch, Table, TargetSettings, TargetSpec};
use ibench::results::model::RunResult;

use crate::common::{Bench, Outcome, path_str};

/// Rows of the tiny runs, per client.
const ROWS: u64 = 3000;
const MORE: u64 = 1000;

/// The column families of the database in `dir`, opened read-only through the test's handle.
fn open_own(dir: &Path) -> DB {
    let opts = Options::default();
    let names = DB::list_cf(&opts, dir).expect("list column families");
    DB::open_cf_for_read_only(&opts, dir, names, false).expect("open read-only")
}

/// Order-preserving encodings, written here independently of ibench's.
fn f64_key(v: f64) -> [u8; 8] {
    let b = v.to_bits();
    (if b >> 63 == 1 { !b } else { b | 1 << 63 }).to_be_bytes()
}

fn i32_key(v: i32) -> [u8; 4] {
    ((v as u32) ^ 0x8000_0000).to_be_bytes()
}

fn i64_key(v: i64) -> [u8; 8] {
    ((v as u64) ^ 1 << 63).to_be_bytes()
}

/// A row of the primary family: (id, dateandtime, cashregisterid, customerid, price).
fn decode(key: &[u8], value: &[u8]) -> (u64, i64, i32, i32, f64) {
    let int = |at: usize| i32::from_be_bytes(value[at..at + 4].try_into().unwrap());
    (
        u64::from_be_bytes(key.try_into().expect("8-byte primary key")),
        i64::from_be_bytes(value[0..8].try_into().unwrap()),
        int(8),
        int(12),
        f64::from_bits(u64::from_be_bytes(value[20..28].try_into().unwrap())),
    )
}

/// Every key of family `cf`.
fn keys(db: &DB, cf: &str) -> Vec<Vec<u8>> {
    let cf = db.cf_handle(cf).unwrap_or_else(|| panic!("no family {cf}"));
    db.iterator_cf(cf, ::rocksdb::IteratorMode::Start)
        .map(|kv| kv.expect("iterate").0.to_vec())
        .collect()
}

/// Checks table `t`: `rows` live rows with contiguous ids ending at `max`, and each index
/// family holding exactly the entries of those rows.
fn check_table(db: &DB, t: &str, rows: u64, max: u64) {
    let cf = db.cf_handle(t).unwrap_or_else(|| panic!("no family {t}"));
    let all: Vec<_> = db
        .iterator_cf(cf, ::rocksdb::IteratorMode::Start)
        .map(|kv| {
            let (k, v) = kv.expect("iterate");
            decode(&k, &v)
        })
        .collect();
    let ids: Vec<u64> = all.iter().map(|r| r.0).collect();
    assert_eq!(ids.len() as u64, rows, "{t}: live rows");
    assert_eq!(ids.last().copied(), Some(max), "{t}: largest id");
    assert_eq!(
        ids[0],
        max - rows + 1,
        "{t}: the oldest rows went first, no gap"
    );
    let mut expected: BTreeMap<&str, BTreeSet<Vec<u8>>> = BTreeMap::new();
    for &(id, date, register, customer, price) in &all {
        let id = id.to_be_bytes();
        let entry = |parts: &[&[u8]]| parts.concat();
        expected.entry("marketsegment").or_default().insert(entry(&[
            &f64_key(price),
            &i32_key(customer),
            &id,
        ]));
        expected
            .entry("registersegment")
            .or_default()
            .insert(entry(&[
                &i32_key(register),
                &f64_key(price),
                &i32_key(customer),
                &id,
            ]));
        expected.entry("pdc").or_default().insert(entry(&[
            &f64_key(price),
            &i64_key(date),
            &i32_key(customer),
            &id,
        ]));
    }
    for (suffix, want) in expected {
        let family = format!("{t}_{suffix}");
        let got = keys(db, &family);
        assert_eq!(got.len(), want.len(), "{family}: one entry per live row");
        let got: BTreeSet<Vec<u8>> = got.into_iter().collect();
        assert!(
            got == want,
            "{family}: entries differ from the rows' columns"
        );
    }
}

fn run_rocks(bench: &Bench, dir: &Path, extra: &[&str]) -> RunResult {
    let rows = ROWS.to_string();
    let more = MORE.to_string();
    let mut args = vec![
        "--dbms",
        "rocksdb",
        "--path",
        path_str(dir),
        "--clients",
        "2",
        "--l0-rows",
        &rows,
        "--l1-rows",
        &more,
    ];
    args.extend_from_slice(extra);
    bench.run(&args).result()
}

#[test]
fn queue_invariant_and_index_families_hold_after_l_i1_and_l_i2() {
    let bench = Bench::new();
    let dir = bench.path("rocks");
    let run = run_rocks(&bench, &dir, &["--steps", "l.i0,l.x,l.i1"]);
    let step = |name: &str| run.steps.iter().find(|s| s.name == name).unwrap();
    assert_eq!(step("l.i1").rows_inserted, 2 * MORE);
    assert_eq!(step("l.i1").rows_deleted, 2 * MORE);
    {
        let db = open_own(&dir);
        for t in ["pi1", "pi2"] {
            check_table(&db, t, ROWS, ROWS + MORE);
        }
    }
    // RocksDB's own count of keys written matches the work the step did: each row inserted or
    // deleted is one key in the primary family and one in each of the 3 index families.
    let written = |name: &str| step(name).dbms_counters["rocksdb.number.keys.written"];
    assert_eq!(written("l.i0"), (2 * ROWS) as f64, "l.i0 writes only rows");
    assert_eq!(
        written("l.x"),
        (3 * 2 * ROWS) as f64,
        "l.x: 3 entries per row"
    );
    assert_eq!(
        written("l.i1"),
        (4 * 4 * MORE) as f64,
        "l.i1: 4 keys per row, both ways"
    );

    // l.i2 on the same directory: the counter starts after the largest id in each table.
    let run = run_rocks(&bench, &dir, &["--steps", "l.i2"]);
    let l2 = &run.steps[0];
    assert_eq!(l2.rows_inserted, l2.rows_deleted);
    // Its select-min seeks past the rows l.i1 deleted: the thread's perf context counts the
    // tombstones stepped over.
    let perf = &l2.select_min.as_ref().expect("select-min").perf_context;
    assert!(
        perf["perf_context.INTERNAL_DELETE_SKIPPED_COUNT"] > 0.0,
        "{perf:?}"
    );
    // `ibench show` lists the counter, and the memory beyond the block cache: RSS less the
    // block cache's use at the step's end (the rocksdb.block-cache-usage gauge's last reading).
    let show = crate::report::cmd(&bench, &["show", &run.run_id]);
    show.assert_success();
    let skipped = format!("{:.0}", perf["perf_context.INTERNAL_DELETE_SKIPPED_COUNT"]);
    let want = ["l.i2", "INTERNAL_DELETE_SKIPPED_COUNT", skipped.as_str()];
    assert!(
        show.stdout
            .lines()
            .any(|l| l.split_whitespace().eq(want.iter().copied())),
        "no {want:?} in\n{}",
        show.stdout
    );
    let e = l2.efficiency.as_ref().unwrap();
    if let Some(usage) = e.per_second.gauges.get("rocksdb.block-cache-usage") {
        let used = usage.iter().rev().flatten().next().copied().unwrap();
        let rss = e.peak.dbms_rss_bytes.unwrap() as f64;
        let beyond = format!("{:.1}", (rss - used) / 1048576.0);
        let line = show
            .stdout
            .lines()
            .find(|l| l.starts_with("l.i2 ") && l.contains("in use)"))
            .unwrap_or_else(|| panic!("no memory line in\n{}", show.stdout));
        assert!(line.ends_with(&format!(" {beyond}")), "{line}: {beyond}");
    }
    let db = open_own(&dir);
    for t in ["pi1", "pi2"] {
        check_table(&db, t, ROWS, ROWS + MORE + MORE / 4);
    }
}

/// The RocksDB target opened through ibench's library with automatic compactions off and
/// small memtables, so that flushes make L0 files and nothing moves them.
fn open_target(dir: &Path) -> Box<dyn ibench::dbms::Dbms> {
    let kind = DbmsKind::find("rocksdb").expect("registered");
    let settings = TargetSettings {
        options: vec![
            ("disable_auto_compactions".into(), "true".into()),
            ("write_buffer_size".into(), "65536".into()),
        ],
        ..Default::default()
    };
    let spec = TargetSpec {
        kind,
        path: Some(dir.to_path_buf()),
        url: None,
        client_url: None,
        replica_urls: Vec::new(),
        read_from_replicas: false,
        node_urls: Vec::new(),
        clients_on_all_nodes: false,
        params: kind.params(&settings).expect("options accepted"),
    };
    ibench::dbms::open(&spec).expect("open")
}

fn batch(n: usize, seed: i32) -> RowBatch {
    let mut b = RowBatch {
        dateandtime: 1_700_000_000,
        ..Default::default()
    };
    for i in 0..n as i32 {
        b.cashregisterid.push((i + seed) % 1000);
        b.customerid.push(i * 7 + seed);
        b.productid.push(i);
        b.price.push(f64::from(i % 500) + 0.25);
        b.data.push_str(&"x".repeat(100));
        b.data_ends.push(b.data.len());
    }
    b
}

#[test]
fn counters_and_gauges_agree_with_the_tests_own_reading() {
    let bench = Bench::new();
    let dir = bench.path("rocks");
    let db = open_target(&dir);
    let table = Table {
        id: 0,
        name: "pi1".into(),
    };
    let mut conn = db.connect_insert_benchmark().expect("connect");
    conn.create_table(&table).unwrap();
    let before = db.counters().unwrap();
    let (batches, rows) = (200i32, 50usize);
    let mut last = 0;
    for i in 0..batches {
        last = conn.insert(&table, &batch(rows, i)).unwrap();
    }
    let total = batches as usize * rows;
    assert_eq!(last, total as i64, "ids assigned from 1");
    // Wait until no memtable is waiting for or being flushed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let gauges = loop {
        let g = db.gauges().unwrap();
        if g["rocksdb.num-immutable-mem-table"] == 0.0 && g["rocksdb.num-running-flushes"] == 0.0 {
            break g;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "flushes never ended: {g:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let after = db.counters().unwrap();
    let delta = |k: &str| after[k] - before.get(k).copied().unwrap_or(0.0);
    assert_eq!(delta("rocksdb.number.keys.written"), total as f64);
    // Flushes wrote every SST file there is (no compaction ran), byte for byte.
    let sst_bytes: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "sst"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(sst_bytes > 0, "small memtables were flushed");
    // (RocksDB 7.8's flush byte count runs slightly above the files' sizes.)
    let flushed = after["rocksdb.flush.write.bytes"];
    assert!(
        flushed >= sst_bytes as f64 && flushed <= sst_bytes as f64 * 1.02,
        "flushed {flushed} bytes, SST files hold {sst_bytes}"
    );

    // A secondary instance (the test's own handle, following ibench's) sees the same files.
    let opts = Options::default();
    let names = DB::list_cf(&opts, &dir).unwrap();
    let own = DB::open_cf_as_secondary(&opts, &dir, &bench.path("secondary"), &names).unwrap();
    own.try_catch_up_with_primary().unwrap();
    let sum = |prop: &str| -> f64 {
        names
            .iter()
            .map(|n| {
                let cf = own.cf_handle(n).unwrap();
                own.property_int_value_cf(cf, prop).unwrap().unwrap_or(0) as f64
            })
            .sum()
    };
    assert!(gauges["rocksdb.num-files-at-level0"] >= 2.0, "{gauges:?}");
    for g in [
        "rocksdb.num-files-at-level0",
        "rocksdb.total-sst-files-size",
    ] {
        assert_eq!(gauges[g], sum(g), "{g}");
    }
    assert_eq!(gauges["rocksdb.total-sst-files-size"], sst_bytes as f64);
    assert_eq!(gauges["rocksdb.is-write-stopped"], 0.0);
    let size = db.size_bytes().unwrap().unwrap() as f64;
    assert_eq!(
        size,
        gauges["rocksdb.total-sst-files-size"] + gauges["rocksdb.cur-size-all-mem-tables"]
    );
    // The block cache has the size given and is the one RocksDB reports.
    let settings = db.settings().unwrap();
    assert_eq!(settings["block_cache_size"], (32u64 << 20).to_string());
    assert_eq!(settings["cf.disable_auto_compactions"], "true");
    assert_eq!(settings["cf.write_buffer_size"], "65536");
}

fn assert_one_line_usage_error(o: &Outcome, needle: &str) {
    let all = o.describe();
    assert_eq!(o.code, Some(2), "expected exit code 2:\n{all}");
    let errors: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(errors.len(), 1, "one line:\n{all}");
    assert!(
        errors[0].starts_with("error:") && errors[0].contains(needle),
        "{all}"
    );
    assert!(o.new_results.is_empty(), "nothing started:\n{all}");
}

#[test]
fn options_rocksdb_rejects_and_micro_are_refused_in_one_line() {
    let bench = Bench::new();
    let dir = bench.path("rocks");
    for (option, needle) in [
        ("no_such_option=1", "no_such_option"),
        ("write_buffer_size=lots", "write_buffer_size"),
        (
            "block_cache_num_shard_bits=30",
            "block_cache_num_shard_bits",
        ),
    ] {
        let o = bench.run(&[
            "--dbms",
            "rocksdb",
            "--path",
            path_str(&dir),
            "--rocksdb-option",
            option,
        ]);
        assert_one_line_usage_error(&o, needle);
    }
    assert!(!dir.exists(), "no database was created");
    let o = bench.run_raw(
        &["micro", "--out", path_str(&bench.out()), "-q"],
        &["--dbms", "rocksdb"],
    );
    assert_one_line_usage_error(&o, "rocksdb cannot run the OLTP microbenchmarks");
}

#[test]
fn default_step_sequence_runs_on_a_scratch_directory() {
    let bench = Bench::new();
    let o = bench.run(&[
        "--dbms",
        "rocksdb",
        "--l0-rows",
        "2000",
        "--l1-rows",
        "500",
        "--query-seconds",
        "2",
        "--clients",
        "1",
    ]);
    let run = o.result();
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"
        ]
    );
    assert!(
        run.maintenance
            .iter()
            .any(|m| m.actions.contains("flushed"))
    );
    let path = run.target().path.clone().unwrap();
    assert_eq!(path.file_name().unwrap(), "ibench.rocksdb");
    assert!(!path.exists(), "the scratch directory is removed");
    for s in &run.steps {
        let e = s.efficiency.as_ref().unwrap();
        assert!(
            e.db_size.disk_bytes.unwrap() > 0,
            "{}: on-disk size",
            s.name
        );
        assert!(
            e.db_size.dbms_bytes.unwrap() > 0,
            "{}: RocksDB's size",
            s.name
        );
        assert!(s.dbms_counters.contains_key("rocksdb.stall.micros"));
        assert!(
            s.dbms_counters
                .contains_key("rocksdb.stalls.level0_slowdown")
        );
    }
    // Query steps last whole seconds: their gauges have one value per second sampled.
    let q = run.steps.iter().find(|s| s.name == "qp100").unwrap();
    let e = q.efficiency.as_ref().unwrap();
    let l0 = &e.per_second.gauges["rocksdb.num-files-at-level0"];
    assert_eq!(l0.len(), e.per_second.dbms_cpu_s.len());
    assert!(l0.iter().all(Option::is_some));
    // Point queries read only rows that exist: RocksDB found every key asked for.
    let found = q.dbms_counters["rocksdb.number.multiget.keys.found"];
    let asked = q.dbms_counters["rocksdb.number.multiget.keys.read"];
    assert_eq!(asked, (q.queries * 10) as f64);
    assert_eq!(
        found,
        asked - q.point_query_misses.unwrap_or(0) as f64 - q.point_query_raced.unwrap_or(0) as f64
    );
}

/// `| a | b |` as its cells.
fn cells(line: &str) -> Vec<&str> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

#[test]
fn reports_and_compare_show_the_same_columns_as_sqlite() {
    let bench = Bench::new();
    let common = [
        "--steps",
        "l.i0,l.x,l.i1,qr100,qp100",
        "--clients",
        "1",
        "--l0-rows",
        "2000",
        "--l1-rows",
        "500",
        "--query-seconds",
        "2",
    ];
    for (dbms, label) in [
        ("sqlite", "lite"),
        ("sqlite", "lite2"),
        ("rocksdb", "rocks"),
    ] {
        let mut args = vec!["--dbms", dbms, "--label", label];
        args.extend_from_slice(&common);
        bench.run(&args).result();
    }
    let store = bench.out().join("results.db");
    let md = bench.run_raw(
        &[
            "report",
            "--results",
            path_str(&store),
            "--format",
            "md",
            "-o",
            "-",
        ],
        &["lite", "rocks"],
    );
    md.assert_success();
    let mut rows = 0;
    let mut header: Vec<&str> = Vec::new();
    for line in md.stdout.lines().filter(|l| l.starts_with('|')) {
        let c = cells(line);
        // Header rows; DBMS counters ("counter" tables) are each DBMS's own, by design.
        if c[0] == "config" || c[0] == "metric" || c[0] == "counter" {
            header = c;
            continue;
        }
        if header.first() == Some(&"metric") && header.get(2) == Some(&"rocks") {
            // Efficiency: RocksDB has every figure SQLite has.
            if c[1] != "-" {
                assert_ne!(c[2], "-", "rocks lacks {}: {line}", c[0]);
                rows += 1;
            }
        } else if header.first() == Some(&"config") && c[0] == "rocks" && header.len() > 2 {
            assert_eq!(c.len(), header.len(), "{line}");
            rows += 1;
        }
    }
    assert!(rows > 20, "report rows checked: {rows}\n{}", md.stdout);
    let compare = |a: &str, b: &str| -> Vec<(String, String)> {
        let o = bench.run_raw(
            &["compare", "--results", path_str(&store), "--json", a, b],
            &[],
        );
        o.assert_success();
        let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("compare JSON");
        let rows = v.as_array().or_else(|| v["rows"].as_array()).expect("rows");
        rows.iter()
            .map(|r| (r["step"].to_string(), r["metric"].to_string()))
            .collect()
    };
    let rows = compare("lite", "rocks");
    assert!(rows.len() > 10, "compare rows: {rows:?}");
    assert_eq!(rows, compare("lite", "lite2"));
}
