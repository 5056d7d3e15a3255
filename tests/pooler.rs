//! Clients through PgBouncer: a managed PostgreSQL with `--pooler pgbouncer --pool-size 4`
//! in transaction mode serves 8 Insert Benchmark clients (up to 24 connections). While it
//! runs, the test watches the server's own pg_stat_activity: never more backends of the
//! benchmark than the pool (plus ibench's own), so the pooler was in the path; afterwards the
//! server's row counts and counters agree with ibench's, and the run records the pooler
//! (version as `pgbouncer --version` says, mode, size) and the plain SQL that PgBouncer 1.18
//! needs in transaction mode. A session pool smaller than the workload's connections is
//! refused before anything starts.

use std::fs;
use std::process::Command;
use std::time::Duration;

use crate::common::{Kept, have, have_files, server_bench};

/// The kept server's port and password, from the credentials file ibench writes as soon as
/// the server runs (`<out>/<run>.server/pgpass`).
fn credentials(out: &std::path::Path) -> Option<(u16, String)> {
    for e in fs::read_dir(out).ok()?.flatten() {
        let text = fs::read_to_string(e.path().join("pgpass")).ok();
        if let Some(text) = text {
            let parts: Vec<&str> = text.trim().split(':').collect();
            return Some((parts.get(1)?.parse().ok()?, parts.get(4)?.to_string()));
        }
    }
    None
}

#[test]
fn clients_through_pgbouncer_in_transaction_mode() {
    if !have("postgres", "") || !have_files(&["/usr/sbin/pgbouncer"], "pgbouncer") {
        return;
    }
    let bench = server_bench();
    let out = bench.out();
    let running = bench.spawn(&[
        "--server",
        "postgres",
        "--keep-server",
        "--pooler",
        "pgbouncer",
        "--pool-size",
        "4",
        "--clients",
        "8",
        "--steps",
        "l.i0,l.x,qp100",
        "--l0-rows",
        "3000",
        "--query-seconds",
        "3",
    ]);
    // Watch the server's backends while the run goes on.
    let mut most = 0i64;
    let mut client = None;
    let mut samples = 0;
    while running.elapsed() < Duration::from_secs(120) {
        if client.is_none()
            && let Some((port, password)) = credentials(&out)
        {
            client = postgres::Config::new()
                .host("127.0.0.1")
                .port(port)
                .user("postgres")
                .password(password)
                .dbname("postgres")
                .application_name("ibench-test")
                .connect(postgres::NoTls)
                .ok();
        }
        if let Some(c) = client.as_mut() {
            match c.query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ibench' \
                 AND backend_type = 'client backend'",
                &[],
            ) {
                Ok(row) => {
                    most = most.max(row.get(0));
                    samples += 1;
                }
                Err(_) => break,
            }
        }
        if !crate::common::alive(running.pid()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(client);
    let outcome = running.finish(Duration::from_secs(180));
    let run = outcome.result();
    let server = run.managed_server.as_ref().unwrap();
    let kept = Kept {
        pid: server.pid.unwrap(),
        signal: "INT",
    };
    assert!(samples > 10, "the server was watched ({samples} samples)");
    // 24 connections, a pool of 4; ibench's own session (counters) may be open too.
    assert!(
        (1..=4 + 2).contains(&most),
        "{most} benchmark backends at once on the server behind a pool of 4"
    );
    let pooler = server.pooler.as_ref().expect("the pooler is recorded");
    let version = String::from_utf8(
        Command::new("/usr/sbin/pgbouncer")
            .arg("--version")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        version.starts_with(&format!("PgBouncer {}", pooler.version)),
        "{version} / {pooler:?}"
    );
    assert_eq!(
        (
            pooler.kind.as_str(),
            pooler.pool_mode.as_str(),
            pooler.pool_size
        ),
        ("pgbouncer", "transaction", 4)
    );
    let spec_pooler = run.config.server.as_ref().unwrap().pooler.unwrap();
    assert_eq!(spec_pooler.pool_size, 4);
    if !ibench::server::pooler::keeps_prepared_statements(&pooler.version) {
        assert_eq!(run.statements(), ibench::dbms::StatementMode::Plain);
        // The request is kept as asked; what the pooler forced is the resolved part.
        assert_eq!(run.config.statements, ibench::dbms::StatementMode::Prepared);
        assert!(
            outcome
                .stderr
                .contains("keeps no named prepared statements")
        );
        assert!(pooler.statements.starts_with("plain SQL"), "{pooler:?}");
    }
    // The server's own counts.
    let url = crate::common::kept_url(&run);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for t in 1..=8 {
        let n: i64 = c
            .query_one(&format!("SELECT count(*) FROM pi{t}"), &[])
            .unwrap()
            .get(0);
        let qp = run.steps.iter().find(|s| s.name == "qp100").unwrap();
        // qp100's writer inserts and deletes as many rows: the table keeps its size.
        assert_eq!(n, 3000, "pi{t} after {} inserts", qp.rows_inserted);
    }
    let l0 = &run.steps[0];
    assert_eq!(
        l0.dbms_counters.get("pg_stat_database.tup_inserted"),
        Some(&24_000.0),
        "the server counted every row sent through the pooler"
    );
    drop(c);
    kept.stop();
    // A session pool smaller than the workload's connections is refused at once.
    let o = bench.run(&[
        "--server",
        "postgres",
        "--pooler",
        "pgbouncer",
        "--pool-mode",
        "session",
        "--pool-size",
        "4",
        "--clients",
        "8",
    ]);
    assert_eq!(o.code, Some(2), "{}", o.describe());
    assert!(o.stderr.contains("--pool-size 24"), "{}", o.stderr);
}
