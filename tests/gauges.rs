//! The DBMS's gauges (`efficiency.per_second.gauges`): each gauge ibench reads agrees with the
//! test's own reading of the server (taken just before and just after, the gauge lying
//! between them), the gauges appear in a run's per-second series and report, and a provoked
//! problem shows in them (a long-open transaction grows InnoDB's history list length).

use std::collections::BTreeMap;
use std::fs;

use ibench::results::model::{RunResult, StepResult};
use mysql::prelude::Queryable;

use crate::common::{Bench, have, path_str, server_bench};

/// A gauge's per-second readings in `step`.
fn series<'a>(step: &'a StepResult, name: &str) -> &'a [Option<f64>] {
    let e = step.efficiency.as_ref().expect("efficiency");
    e.per_second.gauges.get(name).unwrap_or_else(|| {
        panic!(
            "{}: no gauge {name} in {:?}",
            step.name,
            e.per_second.gauges.keys()
        )
    })
}

fn step<'a>(run: &'a RunResult, name: &str) -> &'a StepResult {
    run.steps.iter().find(|s| s.name == name).expect("step")
}

/// ibench's own Dbms for the kept server of `run` (the stored target has no password).
fn kept_dbms(run: &RunResult) -> Box<dyn ibench::dbms::Dbms> {
    let mut target = run.target().clone();
    target.url =
        Some(ibench::dbms::url::ServerUrl::parse(&crate::common::kept_url(run), "").unwrap());
    ibench::dbms::open(&target).unwrap()
}

/// Every gauge `wanted` is read by ibench, and lies between the test's own readings before
/// and after it.
fn agrees(
    wanted: &[&str],
    mut own: impl FnMut() -> BTreeMap<String, f64>,
    dbms: &dyn ibench::dbms::Dbms,
) {
    let before = own();
    let gauges = dbms.gauges().expect("gauges");
    let after = own();
    for name in wanted {
        let g = *gauges
            .get(*name)
            .unwrap_or_else(|| panic!("no gauge {name} in {gauges:?}"));
        let (b, a) = (before[*name], after[*name]);
        assert!(
            b.min(a) <= g && g <= b.max(a),
            "gauge {name} = {g}, the test read {b} before and {a} after"
        );
    }
}

const PG_OWN: &str = "SELECT \
     (SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables \
        WHERE relname IN ('pi1', 'pi2'))::float8, \
     (SELECT coalesce(sum(n_live_tup), 0) FROM pg_stat_user_tables \
        WHERE relname IN ('pi1', 'pi2'))::float8, \
     pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8, \
     (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)::float8, \
     (SELECT buffers_checkpoint + buffers_clean + buffers_backend FROM pg_stat_bgwriter)::float8, \
     (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker')::float8";
const PG_GAUGES: &[&str] = &[
    "pg.dead_tuples",
    "pg.live_tuples",
    "pg.wal_bytes_total",
    "pg.checkpoints_total",
    "pg.buffers_written_total",
    "pg.autovacuum_workers",
];

#[test]
fn postgres_gauges_agree_with_the_server() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    // l.i1 long enough for a few seconds of gauges on this machine: 1.2 s for 200k rows on a
    // quiet one, so four times the rows again while it gave fewer than 3 seconds.
    let (run, kept) = until_long_enough(100_000, |rows| {
        let rows = rows.to_string();
        let (run, kept) = bench.keep_server(
            "postgres",
            &[
                "--steps",
                "l.i0,l.i1",
                "--l0-rows",
                "50000",
                "--l1-rows",
                &rows,
            ],
        );
        let seconds = series(step(&run, "l.i1"), "pg.wal_bytes_total").len();
        ((run, kept), seconds)
    });
    // l.i1 deletes: dead tuples appear in the per-second series, and the WAL grows every second.
    let l1 = step(&run, "l.i1");
    let dead = series(l1, "pg.dead_tuples");
    assert!(
        dead.iter().flatten().any(|v| *v > 0.0),
        "dead tuples {dead:?}"
    );
    let wal: Vec<f64> = series(l1, "pg.wal_bytes_total")
        .iter()
        .flatten()
        .copied()
        .collect();
    assert!(
        wal.len() >= 2 && wal.windows(2).all(|w| w[1] >= w[0]),
        "{wal:?}"
    );
    assert!(wal.last() > wal.first(), "{wal:?}");

    // The report draws them beside the step's rate charts (the page's per-second charts
    // are drawn from its embedded JSON).
    let store = bench.out().join("results.db");
    let html = bench.html_report(&store);
    for chart in [
        r#""title":"pg.wal_bytes_total","unit":"per second""#,
        r#""title":"pg.dead_tuples","unit":"level""#,
    ] {
        assert!(html.contains(chart), "no chart {chart:?} in the report");
    }

    let mut c = postgres::Client::connect(&crate::common::kept_url(&run), postgres::NoTls).unwrap();
    let dbms = kept_dbms(&run);
    agrees(
        PG_GAUGES,
        || {
            let row = c.query_one(PG_OWN, &[]).unwrap();
            PG_GAUGES
                .iter()
                .enumerate()
                .map(|(i, n)| (n.to_string(), row.get::<_, f64>(i)))
                .collect()
        },
        dbms.as_ref(),
    );
    drop(c);
    kept.stop();
}

/// The test's own reading of MariaDB status variables (`names` as ibench names the gauges:
/// `_total` dropped, the stall counters' `_total_` put back).
fn my_status(c: &mut mysql::Conn, names: &[&str]) -> BTreeMap<String, f64> {
    let rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS").unwrap();
    let status: BTreeMap<String, f64> = rows
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.parse().ok()?)))
        .collect();
    names
        .iter()
        .filter_map(|n| {
            let var = match n.strip_suffix("_total") {
                Some(s) if s.starts_with("Rocksdb_stall_") && s != "Rocksdb_stall_micros" => {
                    s.replace("Rocksdb_stall_", "Rocksdb_stall_total_")
                }
                Some(s) => s.to_string(),
                None => n.to_string(),
            };
            Some((n.to_string(), *status.get(&var.to_ascii_lowercase())?))
        })
        .collect()
}

const INNODB_GAUGES: &[&str] = &[
    "Innodb_history_list_length",
    "Innodb_checkpoint_age",
    "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_pages_free",
    "Innodb_data_pending_writes",
    "Innodb_data_pending_fsyncs",
    "Innodb_buffer_pool_pages_flushed_total",
];

#[test]
fn innodb_gauges_agree_and_an_open_transaction_grows_the_history_list() {
    if !have("mariadb", "innodb") {
        return;
    }
    let bench = server_bench();
    let (load, kept) = bench.keep_server("mariadb", &["--steps", "l.i0,l.x", "--l0-rows", "20000"]);
    let url = crate::common::kept_url(&load);
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    let dbms = kept_dbms(&load);
    agrees(
        INNODB_GAUGES,
        || my_status(&mut c, INNODB_GAUGES),
        dbms.as_ref(),
    );
    drop(dbms);

    // A read view held open through a query step: purge cannot remove the undo logs of the
    // background deleter's transactions. The writers' rate makes the step's length (and so
    // the gauge's samples) the same on any machine; l.i1 took 1.5 s on a fast one.
    let mut snapshot = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    snapshot
        .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    let n: Option<u64> = snapshot.query_first("SELECT count(*) FROM pi1").unwrap();
    assert_eq!(n, Some(20000));
    let run = bench
        .run(&[
            "--url",
            &url,
            "--steps",
            "qr1000",
            "--query-seconds",
            "4",
            // Small transactions: 100 deletes a second, each an undo log to keep.
            "--writer-batch",
            "10",
        ])
        .result();
    let h: Vec<f64> = series(step(&run, "qr1000"), "Innodb_history_list_length")
        .iter()
        .flatten()
        .copied()
        .collect();
    let own = my_status(&mut c, &["Innodb_history_list_length"])["Innodb_history_list_length"];
    // SHOW ENGINE INNODB STATUS at the step's end, stored with it, shows the same history.
    let status = &step(&run, "qr1000").engine_status["innodb"];
    let line = status
        .lines()
        .find(|l| l.starts_with("History list length"))
        .unwrap_or_else(|| panic!("no history list length in {status}"));
    let length: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(
        length >= *h.last().unwrap() && length <= own,
        "{line}: ibench {h:?}, own {own}"
    );
    let secs = step(&run, "qr1000").duration_s;
    assert!(h.len() >= 2, "{h:?} over {secs} s");
    assert!(
        h.last().unwrap() - h.first().unwrap() >= 50.0,
        "history list length while a transaction stays open: {h:?}"
    );
    // Nothing could be purged since: the test's reading is at least ibench's last.
    assert!(own >= *h.last().unwrap(), "own {own}, ibench {h:?}");
    snapshot.query_drop("COMMIT").unwrap();
    drop((c, snapshot));
    kept.stop();
}

const MYROCKS_OWN: &str = "SELECT \
     (SELECT coalesce(sum(value), 0) FROM information_schema.rocksdb_compaction_stats \
        WHERE level = 'L0' AND type = 'NumFiles'), \
     (SELECT coalesce(sum(value), 0) FROM information_schema.rocksdb_cfstats \
        WHERE stat_type = 'NUM_IMMUTABLE_MEM_TABLE'), \
     (SELECT coalesce(sum(value), 0) FROM information_schema.rocksdb_cfstats \
        WHERE stat_type = 'CUR_SIZE_ALL_MEM_TABLES')";

#[test]
fn myrocks_gauges_agree_with_the_server() {
    if !have("mariadb", "rocksdb") {
        return;
    }
    let bench = server_bench();
    let (run, kept) = bench.keep_server(
        "mariadb",
        &[
            "--engine",
            "rocksdb",
            "--steps",
            "l.i0,l.i1,l.i2",
            // A load of a few seconds: per-second readings.
            "--l0-rows",
            "100000",
            "--l1-rows",
            "20000",
        ],
    );
    // The engine's status at each step's end: DB stats and compaction statistics.
    for s in &run.steps {
        let db = &s.engine_status["rocksdb DBSTATS rocksdb"];
        assert!(db.contains("Cumulative stall"), "{}: {db}", s.name);
        let cf = &s.engine_status["rocksdb CF_COMPACTION default"];
        assert!(
            cf.contains("Compaction Stats [default]"),
            "{}: {cf}",
            s.name
        );
    }
    // l.i2's select-min seeks past the rows l.i1 deleted: the perf context counts the
    // tombstones it skipped (rocksdb_perf_context_level = 2 on the managed server).
    let sm = step(&run, "l.i2").select_min.as_ref().expect("select-min");
    let skipped = sm.perf_context["perf_context.INTERNAL_DELETE_SKIPPED_COUNT"];
    assert!(skipped > 0.0, "{:?}", sm.perf_context);
    // `ibench show` and the Markdown report give the same count.
    let show = crate::report::cmd(&bench, &["show", &run.run_id]);
    show.assert_success();
    let want = [
        "l.i2",
        "INTERNAL_DELETE_SKIPPED_COUNT",
        &format!("{skipped:.0}"),
    ];
    assert!(
        show.stdout
            .lines()
            .any(|l| l.split_whitespace().eq(want.iter().copied())),
        "no {want:?} in\n{}",
        show.stdout
    );
    let md = crate::report::cmd(&bench, &["report", &run.run_id, "--format", "md"]);
    md.assert_success();
    let row = format!("| INTERNAL_DELETE_SKIPPED_COUNT | {skipped:.0} |");
    assert!(md.stdout.contains(&row), "no {row} in\n{}", md.stdout);
    // Memtable bytes in the readings of the steps long enough to have any.
    let mem: Vec<f64> = run
        .steps
        .iter()
        .filter_map(|s| {
            s.efficiency
                .as_ref()?
                .per_second
                .gauges
                .get("Rocksdb_memtable_bytes")
        })
        .flatten()
        .flatten()
        .copied()
        .collect();
    assert!(mem.iter().any(|v| *v > 0.0), "memtable bytes {mem:?}");
    // The report: the gauges beside the rates, the engine's status per step.
    let store = bench.out().join("results.db");
    let html = bench.html_report(&store);
    for text in [
        r#""title":"Rocksdb_memtable_bytes","unit":"level""#,
        "Engine status at each step",
        "rocksdb CF_COMPACTION default",
        "Compaction Stats [default]",
    ] {
        assert!(html.contains(text), "no {text:?} in the report");
    }
    let url = crate::common::kept_url(&run);
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    let dbms = kept_dbms(&run);
    let stalls = [
        "Rocksdb_stall_micros_total",
        "Rocksdb_stall_stops_total",
        "Rocksdb_stall_slowdowns_total",
    ];
    let levels = [
        "Rocksdb_l0_files",
        "Rocksdb_immutable_memtables",
        "Rocksdb_memtable_bytes",
    ];
    let mut all: Vec<&str> = stalls.to_vec();
    all.extend(levels);
    agrees(
        &all,
        || {
            let mut own = my_status(&mut c, &stalls);
            let row: (f64, f64, f64) = c.query_first(MYROCKS_OWN).unwrap().unwrap();
            own.insert(levels[0].into(), row.0);
            own.insert(levels[1].into(), row.1);
            own.insert(levels[2].into(), row.2);
            own
        },
        dbms.as_ref(),
    );
    drop(c);
    kept.stop();
}

#[test]
fn sqlite_gauges_read_the_wal_file() {
    let bench = Bench::new();
    let db = bench.db();
    let run = bench
        .run(&[
            "--path",
            path_str(&db),
            "--steps",
            "l.i0",
            "--l0-rows",
            "300000",
        ])
        .result();
    let wal = series(&run.steps[0], "sqlite.wal_bytes");
    assert!(wal.iter().flatten().any(|v| *v > 0.0), "WAL bytes {wal:?}");
    // The last connection's close removed the WAL; the test's own writes bring one back.
    let conn = crate::common::open_db(&db);
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (zeroblob(100000));")
        .unwrap();
    let dbms = ibench::dbms::open(run.target()).unwrap();
    let g = dbms.gauges().unwrap();
    let mut wal_path = db.clone().into_os_string();
    wal_path.push("-wal");
    let own = fs::metadata(&wal_path).unwrap().len() as f64;
    assert!(own > 100_000.0, "WAL of the test's write: {own} bytes");
    assert_eq!(g["sqlite.wal_bytes"], own);
    drop(conn);
}

#[test]
fn tiny_level0_triggers_raise_myrocks_stall_gauges() {
    if !have("mariadb", "rocksdb") {
        return;
    }
    let bench = server_bench();
    // Small memtables flushed into L0 often, and writes slowed from the second L0 file on;
    // l.i0 long enough for a few seconds of gauges on this machine (four times the rows
    // again while it gave fewer than 3).
    let run = until_long_enough(100_000, |rows| {
        let rows = rows.to_string();
        let run = bench
            .run(&[
                "--server",
                "mariadb",
                "--engine",
                "rocksdb",
                "--server-option",
                "rocksdb_default_cf_options=write_buffer_size=256k;\
                 level0_file_num_compaction_trigger=2;level0_slowdown_writes_trigger=2;\
                 level0_stop_writes_trigger=6",
                "--steps",
                "l.i0",
                "--l0-rows",
                &rows,
            ])
            .result();
        let seconds = series(&run.steps[0], "Rocksdb_l0_files").len();
        (run, seconds)
    });
    let s = &run.steps[0];
    let slowdowns: Vec<f64> = series(s, "Rocksdb_stall_slowdowns_total")
        .iter()
        .flatten()
        .copied()
        .collect();
    let l0: Vec<f64> = series(s, "Rocksdb_l0_files")
        .iter()
        .flatten()
        .copied()
        .collect();
    assert!(slowdowns.len() >= 2, "{slowdowns:?}");
    let grew = slowdowns.last().unwrap() - slowdowns.first().unwrap();
    assert!(grew > 0.0, "stall slowdowns during l.i0: {slowdowns:?}");
    assert!(l0.iter().any(|n| *n >= 2.0), "L0 files {l0:?}");
    // Within the counters' own account of the step (read at its start and end).
    let counted = s.dbms_counters["Rocksdb_stall_total_slowdowns"];
    assert!(grew <= counted, "gauge +{grew}, counters +{counted}");
    // The memtables flushed into L0 and compacted: levels in the status, shown per level.
    compaction_and_memory_shown(&bench, &run);
}

/// `ibench show` of a MyRocks `run`: each step's compaction statistics per level, as the stored
/// text has them (its Sum line's files), and the memory beyond the block cache (RSS less what
/// the cache held at the step's end, from the stored MEMORY_STATS).
fn compaction_and_memory_shown(
    bench: &crate::common::Bench,
    run: &ibench::results::model::RunResult,
) {
    let show = crate::report::cmd(bench, &["show", &run.run_id]);
    show.assert_success();
    let mut tables = 0;
    for s in &run.steps {
        let cf = &s.engine_status["rocksdb CF_COMPACTION default"];
        let sum = cf
            .lines()
            .find(|l| l.trim_start().starts_with("Sum"))
            .unwrap();
        let files = sum
            .split_whitespace()
            .nth(1)
            .unwrap()
            .split('/')
            .next()
            .unwrap();
        let title = format!(
            "{}: compaction statistics [default] at the step's end",
            s.name
        );
        // A step whose data is all still in memtables has no level yet: no table.
        let has_level = cf.lines().any(|l| {
            let t = l.trim_start();
            t.starts_with('L') && t[1..].starts_with(|c: char| c.is_ascii_digit())
        });
        match show.stdout.find(&title) {
            Some(at) => {
                let table = &show.stdout[at..];
                let row = table.lines().find(|l| l.starts_with("Sum")).unwrap();
                assert_eq!(row.split_whitespace().nth(1), Some(files), "{row} vs {sum}");
                tables += 1;
            }
            None => assert!(!has_level, "no {title:?} for\n{cf}"),
        }
        let mem = &s.engine_status["rocksdb MEMORY_STATS rocksdb"];
        let cache: f64 = mem
            .lines()
            .find_map(|l| l.strip_prefix("Cache Total:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let e = s.efficiency.as_ref().unwrap();
        let rss = e.peak.dbms_rss_bytes.unwrap() as f64;
        assert_eq!(e.dbms.as_ref().unwrap().processes, 1);
        let beyond = format!("{:.1}", (rss - cache) / 1048576.0);
        let line = show
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{} ", s.name)) && l.contains("in use)"))
            .unwrap_or_else(|| panic!("no memory line of {}", s.name));
        assert!(
            line.ends_with(&format!(" {beyond}")),
            "{line}: beyond {beyond}"
        );
    }
    assert!(tables >= 1, "no compaction table in\n{}", show.stdout);
}

/// What `attempt(rows)` gave once it measured 3 seconds or more (its second value: the
/// seconds of the series the test reads), with `rows` times 4 after each shorter try, at most
/// 3 tries: a step's length is the machine's, the test's bounds are not.
fn until_long_enough<T>(rows: u64, mut attempt: impl FnMut(u64) -> (T, usize)) -> T {
    let mut rows = rows;
    for _ in 0..2 {
        let (got, seconds) = attempt(rows);
        if seconds >= 3 {
            return got;
        }
        eprintln!("{rows} rows gave {seconds} second(s) of gauges: four times as many");
        rows *= 4;
    }
    attempt(rows).0
}
