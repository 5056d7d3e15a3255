//! Step sanity and the per-second response times on real SQLite runs: a query step whose
//! reader is locked out half of every second from midway (another connection's `BEGIN
//! EXCLUSIVE`, rollback journal) is flagged not steady, its fall said against the first
//! third's rate, the same step left alone is not; and
//! each second's mean and p95 lie under its max while the seconds' counts add up to the ops.

use std::thread::sleep;
use std::time::{Duration, Instant};

use ibench::report::compare::steady;

use crate::common::{Bench, id_range, open_db, path_str};

const SECONDS: u64 = 16;

/// Runs `qr100` for [`SECONDS`] on a rollback-journal database; with `lock`, another
/// connection holds an exclusive lock for 0.5 s of every second from the step's middle on.
fn query_step(lock: bool) -> ibench::results::model::RunResult {
    let bench = Bench::exclusive();
    bench.run(&[
        "--steps",
        "l.i0,l.x",
        "--path",
        path_str(&bench.db()),
        "--sqlite-pragma",
        "journal_mode=DELETE",
        "--l0-rows",
        "5000",
        "--clients",
        "1",
    ]);
    let conn = open_db(&bench.db());
    conn.busy_timeout(Duration::from_secs(20)).unwrap();
    let (_, _, max_before) = id_range(&conn, "pi1");
    let secs = SECONDS.to_string();
    let mut child = bench.spawn(&[
        "--steps",
        "qr100",
        "--query-seconds",
        &secs,
        "--clients",
        "1",
        "--sqlite-pragma",
        "journal_mode=DELETE",
        "--path",
        path_str(&bench.db()),
    ]);
    // The step has started once the writer's first rows are committed.
    child.wait_for_id_above(&conn, "pi1", max_before);
    let started = Instant::now();
    if lock {
        sleep(Duration::from_secs(SECONDS / 2));
        while started.elapsed() < Duration::from_secs(SECONDS + 1) {
            conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
            sleep(Duration::from_millis(500));
            conn.execute_batch("COMMIT").unwrap();
            sleep(Duration::from_millis(500));
        }
    }
    child.finish(Duration::from_secs(120)).result()
}

#[test]
fn a_reader_locked_out_from_midway_is_not_steady_and_a_free_one_is() {
    // A free step is steady on a quiet host; the other tests' servers (a purge, an autovacuum
    // after their loads) can slow this one for real midway, which the flag then rightly says.
    // So the free step gets three tries, and one of them must be steady and unflagged.
    let mut flagged = Vec::new();
    for _ in 0..3 {
        let free = query_step(false);
        let s = &free.steps[0];
        let sanity = steady::sanity(s).expect("a query step has per-second ops");
        assert!(!sanity.too_short, "{sanity:?}");
        let q = sanity.drifts.iter().find(|d| d.op == "query").unwrap();
        if q.steady {
            assert!(steady::flag(s).is_none(), "{:?}", steady::flag(s));
            break;
        }
        let rates = &s.per_second.total.ops["query"].ops;
        eprintln!("the free step flagged: {q:?}, per second {rates:?}");
        flagged.push(q.clone());
    }
    assert!(flagged.len() < 3, "every free step flagged: {flagged:?}");

    let locked = query_step(true);
    let s = &locked.steps[0];
    let sanity = steady::sanity(s).unwrap();
    let q = sanity.drifts.iter().find(|d| d.op == "query").unwrap();
    assert!(!q.steady, "the locked step not flagged: {q:?}");
    assert!(q.change_pct < -20.0, "{q:?}");
    let flag = steady::flag(s).unwrap();
    assert!(flag.starts_with("not steady: "), "{flag}");
    said_against_the_first_third(s, &flag);
}

/// `flag` (`not steady: OP rate fell N% from the first to the last third (A -> B/s, ...)`)
/// says the change of OP's rate against its first third, `(first - last) / first`, from the
/// step's own full seconds: a rate cannot fall by more than 100%. (The locked reader's rate
/// falls; the writer's, flagged first when it is, may rise as it catches up.)
fn said_against_the_first_third(step: &ibench::results::model::StepResult, flag: &str) {
    let op = flag.split_whitespace().nth(2).expect("an op");
    let rows = &step.per_second.total.ops[op].rows;
    let x: Vec<f64> = rows[1..rows.len() - 1].iter().map(|&v| v as f64).collect();
    let k = x.len() / 3;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (first, last) = (mean(&x[..k]), mean(&x[x.len() - k..]));
    let pct = (first - last).abs() / first * 100.0;
    let change = if last < first {
        assert!(pct <= 100.0);
        format!("fell {pct:.0}%")
    } else {
        format!("rose {pct:.0}%")
    };
    let said =
        format!("{op} rate {change} from the first to the last third ({first:.0} -> {last:.0}/s");
    assert!(flag.contains(&said), "{flag}\nexpected: {said}");
}

#[test]
fn each_second_s_mean_and_p95_lie_under_its_max_and_the_counts_add_up() {
    let bench = Bench::new();
    let run = bench.load_steps("l.i0", 2, 20_000);
    let step = &run.steps[0];
    let s = &step.per_second.total.ops["insert"];
    assert_eq!(s.mean_us.len(), s.ops.len());
    assert_eq!(s.p95_us.len(), s.ops.len());
    assert_eq!(s.ops.iter().sum::<u64>(), step.ops["insert"].count);
    for i in 0..s.ops.len() {
        let (n, mean, p95, max) = (s.ops[i], s.mean_us[i], s.p95_us[i], s.max_us[i]);
        if n == 0 {
            assert_eq!((mean, p95, max), (0, 0, 0), "second {i}");
            continue;
        }
        assert!(mean > 0 && mean <= max, "second {i}: mean {mean} max {max}");
        assert!(p95 > 0 && p95 <= max, "second {i}: p95 {p95} max {max}");
    }
    // The per-second CSV carries them.
    let csv = ibench::cli::export::seconds_csv(&run);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().contains("max_us,mean_us,p95_us"));
    let rows: Vec<&str> = lines.filter(|l| l.contains(",insert,")).collect();
    assert_eq!(rows.len(), s.ops.len());
    let first: Vec<&str> = rows[0].split(',').collect();
    assert_eq!(first[7], s.mean_us[0].to_string());
    assert_eq!(first[8], s.p95_us[0].to_string());
}
