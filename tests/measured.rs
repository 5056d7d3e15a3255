//! What is measured and was hidden (issue #28), on a real SQLite run: each step's per-second
//! host CPU, DBMS CPU, device MB/s and RSS as min/median/max in `ibench show` and the Markdown
//! report, the same numbers the stored per-second series give; the memory beyond the cache
//! said to be unknown where the cache is each connection's (SQLite).

use ibench::results::model::{RunResult, StepResult};

use crate::common::Bench;
use crate::report::cmd;

fn spread(values: &[f64], digits: usize) -> Option<String> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(format!(
        "{:.digits$}/{median:.digits$}/{:.digits$}",
        v[0],
        v[n - 1]
    ))
}

/// The cells the report's per-second table should have for `s`, from its stored series alone.
fn expected(run: &RunResult, s: &StepResult) -> Vec<String> {
    let e = s.efficiency.as_ref().expect("cost figures");
    let p = &e.per_second;
    let cores = run.environment.cpu_cores as f64;
    let dash = |o: Option<String>| o.unwrap_or_else(|| "-".to_string());
    let scaled = |v: &[f64], f: f64| v.iter().map(|x| x * f).collect::<Vec<_>>();
    let device = |v: &[f64]| {
        e.device
            .as_ref()
            .and_then(|_| spread(&scaled(v, 1.0 / 1024.0), 1))
    };
    let rss: Vec<f64> = p
        .dbms_rss_bytes
        .iter()
        .map(|&b| b as f64 / 1048576.0)
        .collect();
    vec![
        p.host_cpu_s.len().to_string(),
        dash(spread(&scaled(&p.host_cpu_s, 100.0 / cores), 0)),
        dash(
            e.dbms
                .as_ref()
                .and_then(|_| spread(&scaled(&p.dbms_cpu_s, 100.0), 0)),
        ),
        dash(device(&p.device_kb_read)),
        dash(device(&p.device_kb_written)),
        dash(spread(&rss, 1).filter(|_| rss.iter().any(|&v| v > 0.0))),
    ]
}

#[test]
fn per_second_host_cpu_device_and_rss_in_show_and_the_markdown_report() {
    let bench = Bench::new();
    // Steps of a few seconds each: several per-second readings.
    let run = bench
        .run(&[
            "--steps",
            "l.i0,l.x,l.i1,qr100",
            "--l0-rows",
            "150000",
            "--l1-rows",
            "30000",
            "--query-seconds",
            "3",
            "--clients",
            "1",
            "--label",
            "m",
        ])
        .result();
    let md = cmd(&bench, &["report", "m", "--format", "md"]);
    md.assert_success();
    let md = md.stdout;
    let start = md
        .find("## Host, device and memory per second")
        .expect("per-second section");
    let section = &md[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let show = cmd(&bench, &["show", &run.run_id]);
    show.assert_success();
    let mut seconds_seen = 0;
    for s in &run.steps {
        let cells = expected(&run, s);
        seconds_seen += s.efficiency.as_ref().unwrap().per_second.host_cpu_s.len();
        let row = format!(
            "| {} | m | {} | {} |",
            s.name,
            run.run_id,
            cells.join(" | ")
        );
        assert!(section.contains(&row), "no row {row} in\n{section}");
        // The terminal's row: the same cells, spaced.
        let line = show
            .stdout
            .lines()
            .find(|l| {
                l.split_whitespace().next() == Some(s.name.as_str())
                    && l.split_whitespace().collect::<Vec<_>>()[1..] == cells
            })
            .map(str::to_string);
        assert!(
            line.is_some(),
            "{}: no line with {cells:?} in\n{}",
            s.name,
            show.stdout
        );
        // SQLite's cache_size is each connection's: the memory beyond it is not told.
        let mem = format!(
            "| {} | m | {} | {:.1} |",
            s.name,
            run.run_id,
            s.efficiency.as_ref().unwrap().peak.dbms_rss_bytes.unwrap() as f64 / 1048576.0
        );
        let mem_row = section
            .lines()
            .find(|l| l.starts_with(&mem))
            .unwrap_or_else(|| panic!("no memory row {mem} in\n{section}"));
        assert!(
            mem_row.ends_with("| - (cache_size is each connection's cache) |"),
            "{mem_row}"
        );
    }
    // The JSON report model carries the series themselves, for charts drawn from it alone.
    let json = cmd(&bench, &["report", "m", "--format", "json"]);
    json.assert_success();
    let r: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    for s in &run.steps {
        let g = crate::report::group_step(&r, &s.name, "m");
        let series = &g["measured"]["seconds"][0]["series"];
        let host: Vec<f64> = serde_json::from_value(series["host_cpu_pct"].clone()).unwrap();
        let stored = &s.efficiency.as_ref().unwrap().per_second.host_cpu_s;
        assert_eq!(host.len(), stored.len(), "{}", s.name);
        let cores = run.environment.cpu_cores as f64;
        for (a, b) in host.iter().zip(stored) {
            assert!(
                (a - 100.0 * b / cores).abs() < 1e-9,
                "{}: {a} vs {b}",
                s.name
            );
        }
    }
    // The load and the query step ran for seconds: the table summarises real series.
    assert!(seconds_seen >= 4, "{seconds_seen} seconds in all");
    let qr = run.steps.iter().find(|s| s.name == "qr100").unwrap();
    let host = &qr.efficiency.as_ref().unwrap().per_second.host_cpu_s;
    assert!(
        host.len() >= 2 && host.iter().all(|&v| v > 0.0),
        "qr100 host CPU seconds {host:?}"
    );
}

/// A managed PostgreSQL: the memory beyond shared_buffers is PSS (its backends share the
/// buffers: RSS summed over them counts them once per backend) less the smaller of
/// shared_buffers, as the server itself gives it, and the database's size.
#[test]
fn memory_beyond_shared_buffers_on_a_managed_postgres() {
    if !crate::common::have("postgres", "") {
        return;
    }
    let bench = crate::common::server_bench();
    let (run, kept) = bench.keep_server(
        "postgres",
        &[
            "--steps",
            "l.i0,l.x,qr100",
            "--l0-rows",
            "50000",
            "--query-seconds",
            "2",
            "--label",
            "pg",
        ],
    );
    let url = crate::common::kept_url(&run);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let row = c
        .query_one(
            "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'",
            &[],
        )
        .unwrap();
    let buffers = row.get::<_, i64>(0) as f64 / 1048576.0;
    drop(c);
    kept.stop();
    let md = cmd(&bench, &["report", "pg", "--format", "md"]);
    md.assert_success();
    for s in &run.steps {
        let e = s.efficiency.as_ref().unwrap();
        assert!(e.dbms.as_ref().unwrap().processes > 1);
        let pss = e.peak.dbms_pss_bytes.expect("PSS") as f64 / 1048576.0;
        let db = e.db_size.dbms_bytes.unwrap() as f64 / 1048576.0;
        let counted = buffers.min(db);
        let cache = if db < buffers {
            format!("shared_buffers {buffers:.1} (db {db:.1})")
        } else {
            format!("shared_buffers {buffers:.1}")
        };
        let row = format!(
            "| {} | pg | {} | {:.1} | {pss:.1} | {cache} | {:.1} |",
            s.name,
            run.run_id,
            e.peak.dbms_rss_bytes.unwrap() as f64 / 1048576.0,
            pss - counted
        );
        assert!(md.stdout.contains(&row), "no {row} in\n{}", md.stdout);
    }
}
