//! Property tests of everything that parses user input (URLs, steps, the command line,
//! experiment files): no
//! input panics, bad input is a usage error, and a password never survives into any rendering
//! of a URL. Failing cases are kept in tests/parsing.proptest-regressions.

use clap::Parser;
use ibench::cli::{Cli, Command};
use ibench::dbms::url::ServerUrl;
use ibench::experiment::file::{self, Source};
use ibench::experiment::plan;
use ibench::request::Step;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn url_parsing_never_panics_and_never_shows_the_password(
        scheme in "(postgres|postgresql|mysql|mariadb|redis|[a-z]{1,8})",
        user in "[a-zA-Z0-9_]{0,8}",
        password in "[a-zA-Z0-9]{6,12}Pw",
        host in "([a-z0-9.-]{0,12}|\\[::1\\])",
        port in proptest::option::of(0u32..70000),
        rest in "[ -~]{0,24}",
        in_query in any::<bool>(),
    ) {
        let port = port.map(|p| format!(":{p}")).unwrap_or_default();
        let text = if in_query {
            format!("{scheme}://{user}@{host}{port}/db?password={password}&{rest}")
        } else {
            format!("{scheme}://{user}:{password}@{host}{port}/{rest}")
        };
        if let Ok(url) = ServerUrl::parse(&text, "IBENCH_NO_SUCH_ENV") {
            for shown in [url.redacted(), url.without_password(), format!("{url:?}"), format!("{url}"),
                          serde_json::to_string(&url).unwrap()] {
                prop_assert!(!shown.contains(&password), "{shown} shows the password of {text}");
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics_the_url_parser(text in "\\PC{0,64}") {
        let _ = ServerUrl::parse(&text, "IBENCH_NO_SUCH_ENV");
    }

    #[test]
    fn step_names_parse_or_fail_cleanly(text in "(l\\.i[0-3x]|q[rp][0-9]{0,12}|\\PC{0,8})") {
        match text.parse::<Step>() {
            Ok(step) => prop_assert_eq!(step.to_string().parse::<Step>().unwrap(), step),
            Err(e) => prop_assert!(e.to_string().contains("unknown step")),
        }
    }

    #[test]
    fn command_lines_validate_without_panicking(
        args in proptest::collection::vec(
            prop_oneof![
                Just("--clients".to_string()), Just("--steps".to_string()),
                Just("--l0-rows".to_string()), Just("--l1-batch".to_string()),
                Just("--query-seconds".to_string()), Just("--secondary-indexes".to_string()),
                Just("--data-min".to_string()), Just("--data-max".to_string()),
                Just("--table-prefix".to_string()), Just("--url".to_string()),
                Just("--server".to_string()), Just("--max-price".to_string()),
                Just("--sqlite-pragma".to_string()), Just("--index-ddl".to_string()),
                Just("--max-error-rate".to_string()), Just("--scale".to_string()),
                Just("nan".to_string()), Just("inf".to_string()), Just("1e300".to_string()),
                "-?[0-9]{1,20}", "[a-z.,0-9=;:/@_-]{0,16}",
            ],
            0..8,
        ),
    ) {
        let argv = std::iter::once("ibench".to_string())
            .chain(std::iter::once("run".to_string()))
            .chain(args);
        if let Ok(cli) = Cli::try_parse_from(argv)
            && let Command::Run(run) = cli.command
        {
            // Either a valid spec or a usage error; never a panic, and never a float the
            // user gave that is not a finite number.
            let floats = [run.workload.max_price, run.workload.max_error_rate, run.scale];
            let spec = run.to_spec();
            if floats.iter().any(|v| !v.is_finite()) {
                prop_assert!(spec.is_err(), "{floats:?} accepted");
            }
        }
    }

    #[test]
    fn experiment_files_are_a_plan_or_located_problems(
        top in proptest::collection::vec((top_key(), value()), 0..5),
        workload in proptest::collection::vec((workload_key(), value()), 0..6),
        setup in proptest::collection::vec((setup_key(), value()), 0..4),
        dbms in "(sqlite|postgres|mariadb|[a-z]{0,6})",
        // More targets, configs and setups (SQLite): the matrix may exceed MAX_CELLS.
        (targets, configs, setups) in prop_oneof![
            Just((0usize, 0usize, 0usize)),
            (0usize..30, 0usize..4, 0usize..60),
        ],
        junk in "\\PC{0,12}",
    ) {
        let mut text = String::from("name = \"fuzz\"\n");
        for (k, v) in &top {
            text.push_str(&format!("{k} = {v}\n"));
        }
        text.push_str("[workload]\n");
        for (k, v) in &workload {
            text.push_str(&format!("{k} = {v}\n"));
        }
        text.push_str(&format!("[[target]]\nname = \"t\"\ndbms = \"{dbms}\"\n"));
        for i in 0..targets {
            text.push_str(&format!("[[target]]\nname = \"t{i}\"\ndbms = \"sqlite\"\n"));
        }
        text.push_str("[[config]]\nname = \"base\"\n");
        for i in 0..configs {
            text.push_str(&format!("[[config]]\nname = \"c{i}\"\n"));
        }
        for i in 0..setups {
            text.push_str(&format!("[[setup]]\nname = \"s{i}\"\n"));
        }
        text.push_str("[[setup]]\nname = \"s\"\n");
        for (k, v) in &setup {
            text.push_str(&format!("{k} = {v}\n"));
        }
        text.push_str(&junk);
        let source = Source { path: "fuzz.toml".into(), text };
        // Parsing and planning (everything short of asking servers) never panics and never
        // builds more than MAX_CELLS cells (nor any when repeats is out of range); every
        // problem points at the file.
        if let Ok(file) = file::parse(&source) {
            let repeats = file.repeats.as_ref().map(|r| *r.get_ref());
            let (plan, problems) = plan::build(file, source.clone(), None);
            prop_assert!(plan.cells.len() <= plan::MAX_CELLS, "{} cells", plan.cells.len());
            for p in &problems {
                prop_assert!(p.at.starts_with("fuzz.toml"), "{p}");
            }
            if let Some(r) = repeats.filter(|r| !(1..=1000).contains(r)) {
                prop_assert!(plan.cells.is_empty(), "repeats {r}: {} cells", plan.cells.len());
                prop_assert!(problems.iter().any(|p| p.message.contains("repeats")));
            }
            if problems.is_empty() {
                prop_assert!(!plan.cells.is_empty());
            }
            // A float that is not a number never falls back to its default unnoticed.
            if workload.iter().any(|(k, v)| {
                matches!(*k, "max_price" | "max_error_rate") && matches!(v.as_str(), "nan" | "inf")
            }) {
                prop_assert!(!problems.is_empty(), "{workload:?} accepted");
            }
        }
    }
}

#[test]
fn huge_repeats_are_a_located_problem_without_cells() {
    // The case: this allocated 23 GB and was OOM-killed before reporting anything.
    for (repeats, cells) in [("4294967295", 0), ("1001", 0), ("0", 0), ("3", 3)] {
        let text = format!(
            "name = \"e\"\nrepeats = {repeats}\n[[target]]\nname = \"t\"\ndbms = \"sqlite\"\n"
        );
        let source = Source {
            path: "e.toml".into(),
            text,
        };
        let (plan, problems) = plan::build(file::parse(&source).unwrap(), source.clone(), None);
        assert_eq!(plan.cells.len(), cells, "repeats {repeats}");
        if cells == 0 {
            assert!(
                problems
                    .iter()
                    .any(|p| p.at == "e.toml:2" && p.message.contains("repeats")),
                "{problems:?}"
            );
        } else {
            assert!(problems.is_empty(), "{problems:?}");
        }
    }
    // 100 targets x 200 setups: 20000 cells, counted, not built.
    let mut text = String::from("name = \"e\"\n");
    for i in 0..100 {
        text.push_str(&format!("[[target]]\nname = \"t{i}\"\ndbms = \"sqlite\"\n"));
    }
    for i in 0..200 {
        text.push_str(&format!("[[setup]]\nname = \"s{i}\"\n"));
    }
    let source = Source {
        path: "e.toml".into(),
        text,
    };
    let (plan, problems) = plan::build(file::parse(&source).unwrap(), source.clone(), None);
    assert!(plan.cells.is_empty());
    assert!(
        problems.iter().any(|p| p.message.contains("20000 cells")),
        "{problems:?}"
    );
}

fn top_key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "scale",
        "repeats",
        "cooldown_seconds",
        "base",
        "allocators",
        "bogus",
    ])
}

fn workload_key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "steps",
        "clients",
        "rows_per_client",
        "l1_rows",
        "l2_rows",
        "query_seconds",
        "secondary_indexes",
        "data_min",
        "data_max",
        "writer_batch",
        "seed",
        "max_tries",
        "deletes",
        "table_prefix",
        "max_price",
        "max_error_rate",
        "nope",
    ])
}

fn setup_key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "clients",
        "rows_per_client",
        "l1_rows",
        "dbms_cache",
        "other",
    ])
}

/// TOML values of every type, with the edges: zero, negative, huge, non-finite, odd strings.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        Just("0".to_string()),
        Just("18446744073709551615".to_string()),
        Just("4294967295".to_string()),
        Just("4294967296".to_string()),
        Just("1001".to_string()),
        Just("1024".to_string()),
        Just("1000000000000".to_string()),
        Just("1e308".to_string()),
        any::<f64>().prop_map(|v| format!("{v:?}")),
        Just("inf".to_string()),
        Just("nan".to_string()),
        "[a-zA-Z0-9.,:_ -]{0,12}".prop_map(|s| format!("{s:?}")),
        "(1e300|0.5|2|99999999999)(x|T|G|M|K)?".prop_map(|s| format!("{s:?}")),
        Just("true".to_string()),
        Just("[\"glibc\", \"jemalloc\"]".to_string()),
        Just("\"l.i0,l.x,qr100\"".to_string()),
    ]
}

#[test]
fn numbers_that_are_not_numbers_are_problems_at_their_key() {
    // `nan` and `inf` used to pass a dry run: JSON has no such values, and the workload got
    // its defaults instead.
    let text = "name = \"e\"\n\
                [workload]\n\
                max_price = nan\n\
                max_error_rate = inf\n\
                [[target]]\n\
                name = \"t\"\n\
                dbms = \"sqlite\"\n\
                start_timeout_seconds = 0\n\
                [[config]]\n\
                name = \"c\"\n\
                options = { cache_size = -inf }\n";
    let source = Source {
        path: "e.toml".into(),
        text: text.to_string(),
    };
    let (_, problems) = plan::build(file::parse(&source).unwrap(), source.clone(), None);
    for (at, says) in [
        ("e.toml:3", "max_price NaN is not a number"),
        ("e.toml:4", "max_error_rate inf is not a number"),
        ("e.toml:8", "start_timeout_seconds 0 is out of range"),
        ("e.toml:11", "option cache_size is not a number"),
    ] {
        assert!(
            problems
                .iter()
                .any(|p| p.at == at && p.message.contains(says)),
            "{at}: {says}: {problems:?}"
        );
    }
    assert_eq!(problems.len(), 4, "{problems:?}");
}
