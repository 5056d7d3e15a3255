//! Clients multiplexed on a few threads (`--client-threads`, `src/mux/`) keep every semantic
//! of a thread per connection, on a real server: a stalled connection delays only itself (the
//! other clients of its thread go on, and its stall shows in the response time measured from
//! each insert's due time), the rate-limited writers hold their target, and the counts merge
//! exactly (per client, per second, and against the rows the server holds); with io-uring and
//! with epoll client threads, one after the other on one kept server.

use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::common::{Bench, exclusive_server_bench, have, histogram_len};

/// The newest row of table `t`.
fn max_id(c: &mut impl postgres::GenericClient, t: &str) -> i64 {
    c.query_one(&format!("SELECT max(transactionid) FROM {t}"), &[])
        .unwrap()
        .get(0)
}

/// The io-uring and then the epoll client threads, on one kept server (loaded once): each
/// step checked as [`stall_on_a_shared_thread`] says.
#[test]
fn a_stalled_connection_on_a_shared_client_thread_delays_only_its_own_inserts() {
    if !have("postgres", "") {
        return;
    }
    // Alone on the CPU: the writers' rates below are timing (a loaded machine once let pi2's
    // writer reach 80 of its 150 rows in the 1.5 s, and the step 1,520 of 1,600).
    let bench = exclusive_server_bench();
    let (setup, kept) = bench.keep_server(
        "postgres",
        &["--steps", "l.i0,l.x", "--l0-rows", "5000", "--clients", "2"],
    );
    let url = crate::common::kept_url(&setup);
    for io in ["io-uring", "epoll"] {
        stall_on_a_shared_thread(&bench, &url, io);
    }
    kept.stop();
}

/// Six connections on one client thread waiting through `io` (`--client-io`), on the kept
/// server at `url`; one table is locked for 1.5 s mid-step. Every check is of this step alone
/// (rows counted from the newest ids before it), so the steps can share the server.
fn stall_on_a_shared_thread(bench: &Bench, url: &str, io: &str) {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let before = [max_id(&mut c, "pi1"), max_id(&mut c, "pi2")];
    // Two clients (a querier, an inserter and a deleter each: six connections) on one thread.
    let child = bench.spawn(&[
        "--url",
        url,
        "--steps",
        "qr100",
        "--query-seconds",
        "8",
        "--clients",
        "2",
        "--client-threads",
        "1",
        "--client-io",
        io,
    ]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while max_id(&mut c, "pi1") == before[0] && Instant::now() < deadline {
        sleep(Duration::from_millis(50));
    }
    // Stall the first table's writers for 1.5 s, about 1 s into the 8 s step. Reads of the
    // table go on (EXCLUSIVE blocks writes only), and so do the second table's writers.
    sleep(Duration::from_secs(1));
    let mut tx = c.transaction().unwrap();
    tx.batch_execute("LOCK TABLE pi1 IN EXCLUSIVE MODE")
        .unwrap();
    let during = max_id(&mut tx, "pi2");
    sleep(Duration::from_millis(1_500));
    let written_meanwhile = max_id(&mut tx, "pi2") - during;
    tx.commit().unwrap();
    let run = child.finish(Duration::from_secs(120)).result();
    let after = [max_id(&mut c, "pi1"), max_id(&mut c, "pi2")];
    drop(c);

    // The other client on the same thread kept writing while pi1 was locked: 100 rows/s,
    // 150 rows in the 1.5 s. Were the thread blocked with pi1's writer, it would be at most
    // the batch (10 rows) in flight when the lock was taken.
    assert!(
        written_meanwhile >= 80,
        "{io}: pi2 got {written_meanwhile} rows during the 1.5 s stall of pi1"
    );
    let step = &run.steps[0];
    let insert = &step.ops["insert"];
    assert!(
        insert.percentiles_us.max >= 1_000_000,
        "{io}: insert max {} us must include the stall",
        insert.percentiles_us.max
    );
    // Service time (from when each insert was sent): only the insert sent into the lock.
    let service = &step.service_time["insert"];
    assert_eq!(service.count, insert.count);
    assert!(
        service.percentiles_us.p50 < 100_000,
        "{io}: service-time p50 {} us",
        service.percentiles_us.p50
    );
    // The writers caught up: 2 writers x 100 rows/s x 8 s, none skipped, within 1.5%.
    let expected = 2.0 * 100.0 * 8.0;
    assert!(
        (step.rows_inserted as f64 - expected).abs() <= 0.015 * expected,
        "{io}: rows inserted {} vs {expected} (pi1 {}, pi2 {}; sla {:?})",
        step.rows_inserted,
        after[0] - before[0],
        after[1] - before[1],
        step.sla
    );
    assert_eq!(
        (after[0] - before[0] + after[1] - before[1]) as u64,
        step.rows_inserted,
        "{io}: rows the server holds"
    );
    // Counts merge exactly: per client and per second.
    for (op, count) in [("insert", insert.count), ("query", step.queries)] {
        let o = &step.ops[op];
        assert_eq!(o.count, count, "{io}: {op}");
        assert_eq!(histogram_len(&o.histogram), count, "{io}: {op}");
        let per_client: u64 = o
            .per_client
            .iter()
            .map(|c| histogram_len(&c.histogram))
            .sum();
        assert_eq!(per_client, count, "{io}: {op} per client");
        let per_second: u64 = step.per_second.total.ops[op].ops.iter().sum();
        assert_eq!(per_second, count, "{io}: {op} per second");
    }
    assert!(step.queries > 0, "{io}");
}
