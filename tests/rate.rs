//! The background writer of query steps: does it hold its target rate, and does a stall show
//! in latencies measured from when each op was due (no coordinated omission), while the writer
//! catches up afterwards? These tests take the CPU exclusively (see `common::Bench::exclusive`).

use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::common::{Bench, id_range, open_db, path_str};
use ibench::metrics::histogram::decode;

#[test]
fn background_writer_holds_its_target_rate() {
    let bench = Bench::exclusive();
    let l0 = 5_000;
    bench.load(1, l0);
    let (_, _, max_before) = id_range(&open_db(&bench.db()), "pi1");

    let run = bench
        .run(&[
            "--steps",
            "qr200",
            "--query-seconds",
            "5",
            "--clients",
            "1",
            "--path",
            path_str(&bench.db()),
        ])
        .result();
    let step = &run.steps[0];
    let sla = step.sla.as_ref().expect("qr200 has an SLA");
    assert_eq!(sla.target_inserts_per_s, 200.0);
    assert!(
        (sla.inserts_per_s - 200.0).abs() <= 2.0,
        "insert rate {} not within 1% of 200",
        sla.inserts_per_s
    );
    assert!(
        (step.rows_inserted as f64 - 1000.0).abs() <= 10.0,
        "rows inserted {} not within 1% of 1000",
        step.rows_inserted
    );
    assert!(sla.pass, "{sla:?}");
    assert_eq!(
        step.rows_deleted, step.rows_inserted,
        "deletes keep pace with inserts"
    );
    assert_eq!(sla.deletes_per_s, sla.inserts_per_s);
    assert!((sla.ratio - sla.inserts_per_s / 200.0).abs() < 1e-9);
    assert!(step.queries > 0);
    assert!(
        (step.duration_s - 5.0).abs() < 0.25,
        "a 5 s query step took {} s",
        step.duration_s
    );

    // The database saw exactly those inserts and deletes.
    let (count, _, max_after) = id_range(&open_db(&bench.db()), "pi1");
    assert_eq!(count, l0 as i64, "table size is constant");
    assert_eq!((max_after - max_before) as u64, step.rows_inserted);
}

#[test]
fn stall_shows_in_due_time_latency_and_the_writer_catches_up() {
    let bench = Bench::exclusive();
    let l0 = 5_000;
    bench.load(1, l0);
    let db = bench.db();
    let conn = open_db(&db);
    let (_, _, max_before) = id_range(&conn, "pi1");

    let mut child = bench.spawn(&[
        "--steps",
        "qr100",
        "--query-seconds",
        "8",
        "--clients",
        "1",
        "--path",
        path_str(&db),
    ]);
    // The step has started once the writer's first rows are committed.
    child.wait_for_id_above(&conn, "pi1", max_before);
    // Stall the writer for 1.5 s, about 1 s into the 8 s step: well inside it.
    sleep(Duration::from_secs(1));
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let locked = Instant::now();
    sleep(Duration::from_millis(1_500));
    conn.execute_batch("COMMIT").unwrap();
    let held = locked.elapsed();
    let stall_end = child.elapsed();

    let run = child.finish(Duration::from_secs(60)).result();
    let step = &run.steps[0];
    assert!(
        stall_end.as_secs_f64() < step.duration_s,
        "the stall ended {stall_end:?} after spawn, the step lasted {} s",
        step.duration_s
    );

    // Due-time latency includes the stall, for every insert it delayed.
    let insert = &step.ops["insert"];
    assert!(
        insert.percentiles_us.max >= 1_000_000,
        "insert max {} us must include the {held:?} stall",
        insert.percentiles_us.max
    );
    let due = decode(&insert.histogram).unwrap();
    let delayed = due.count_between(1_000_000, due.max());
    assert!(
        delayed >= 3,
        "every insert due during the first 0.5 s of the stall waited >= 1 s; only {delayed} did"
    );
    let per_second_max = step.per_second.total.ops["insert"]
        .max_us
        .iter()
        .copied()
        .max()
        .unwrap();
    assert!(
        per_second_max >= 1_000_000,
        "the stall shows in the per-second series"
    );

    // Service time (from when each insert was sent) does not: one insert hit the lock.
    let service = &step.service_time["insert"];
    assert_eq!(service.count, insert.count);
    assert!(
        service.percentiles_us.p50 < 100_000,
        "service-time p50 {} us",
        service.percentiles_us.p50
    );
    let service_h = decode(&service.histogram).unwrap();
    assert_eq!(
        service_h.count_between(1_000_000, service_h.max().max(1_000_000)),
        1,
        "only the insert sent during the stall waited for the lock"
    );

    // The writer caught up: all 8 s worth of rows, none skipped.
    let expected = 100.0 * 8.0;
    assert!(
        (step.rows_inserted as f64 - expected).abs() <= 0.015 * expected,
        "rows inserted {} vs {expected}",
        step.rows_inserted
    );
    assert_eq!(step.rows_deleted, step.rows_inserted);
    let (count, _, max_after) = id_range(&conn, "pi1");
    assert_eq!((max_after - max_before) as u64, step.rows_inserted);
    assert_eq!(count, l0 as i64);
}

#[test]
fn rate_zero_runs_queries_without_a_writer() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let before = id_range(&open_db(&bench.db()), "pi1");
    let run = bench
        .run(&[
            "--steps",
            "qr0",
            "--query-seconds",
            "1",
            "--clients",
            "1",
            "--path",
            path_str(&bench.db()),
        ])
        .result();
    let step = &run.steps[0];
    assert!(step.queries > 0);
    assert_eq!((step.rows_inserted, step.rows_deleted), (0, 0));
    assert!(step.sla.is_none() && step.select_min.is_none());
    let ops: Vec<&String> = step.ops.keys().collect();
    assert_eq!(ops, ["query"]);
    assert_eq!(
        id_range(&open_db(&bench.db()), "pi1"),
        before,
        "table unchanged"
    );
}

#[test]
fn writer_that_cannot_keep_up_stops_at_the_end_of_the_step() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let db = bench.db();
    // 50,000 single-row inserts per second is far more than SQLite commits here.
    let run = bench
        .run(&[
            "--steps",
            "qr50000",
            "--writer-batch",
            "1",
            "--query-seconds",
            "2",
            "--clients",
            "1",
            "--path",
            path_str(&db),
        ])
        .result();
    let step = &run.steps[0];
    // The step is its window: rates are not diluted by the writer's backlog.
    assert!(
        step.duration_s <= 2.0 + 1e-9,
        "duration {}",
        step.duration_s
    );
    assert!((step.queries_per_s - step.queries as f64 / step.duration_s).abs() < 1e-6);
    let sla = step.sla.as_ref().expect("sla");
    assert!(!sla.pass, "the writer cannot reach 50,000 rows/s");
    // What was due but never sent is counted: sent + missed = due in the window.
    let sent = step.ops["insert"].count;
    assert_eq!(sent + sla.missed_insert_batches, 100_000, "sent {sent}");
    // The table keeps its size: the deleter drains what was inserted.
    let (count, _, _) = id_range(&open_db(&db), "pi1");
    assert_eq!(count, 2_000);
    assert_eq!(step.rows_inserted, step.rows_deleted);
}
