//! The SQLite file given by `--path` (issue 38): a link or another user's file planted at its
//! name (or at its `-wal`, `-shm` and `-journal` names) and a directory others can write to
//! are refused as `--out`'s are; a database ibench did not create keeps its journal mode (and
//! every byte) when a run is refused, and keeps its journal mode unless the user asks for
//! another; TPC-C runs on tables sysbench-tpcc prepared when told `--write-existing`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::common::{Bench, LocalService, Outcome, ci, open_db, path_str, server_bench};
use crate::security::{as_nobody, can_switch_user};

/// The one `error:` line of a refused run, checked to exit 2 with nothing else on stderr
/// and no results written.
fn refusal(out: &Outcome) -> String {
    assert_eq!(out.code, Some(2), "{}", out.describe());
    let lines: Vec<&str> = out.stderr.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", out.describe());
    assert!(lines[0].starts_with("error: "), "{}", out.describe());
    assert!(out.new_results.is_empty(), "{:?}", out.new_results);
    lines[0].to_string()
}

/// A rollback-journal database (journal_mode=DELETE, as `sqlite3` makes one) at `path` with
/// the tables `ddl` creates, mode 0600.
fn rollback_database(path: &Path, ddl: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(ddl).unwrap();
    drop(conn);
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(
        header_modes(path),
        [1, 1],
        "not a rollback-journal database"
    );
}

/// The header's file format write and read versions (offsets 18 and 19): 1 for a rollback
/// journal, 2 for WAL.
fn header_modes(path: &Path) -> [u8; 2] {
    let bytes = fs::read(path).unwrap();
    [bytes[18], bytes[19]]
}

/// A directory `name` in `bench` with `mode` (the bench itself is enterable by nobody).
fn dir_with_mode(bench: &Bench, name: &str, mode: u32) -> PathBuf {
    let dir = bench.path(name);
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// What SQLite keeps beside a database.
const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// `ibench run` of one small load on `path`.
fn load_into(bench: &Bench, path: &Path) -> Outcome {
    load_into_with(bench, path, &[])
}

/// [`load_into`] with `more` flags.
fn load_into_with(bench: &Bench, path: &Path, more: &[&str]) -> Outcome {
    let args = [
        &[
            "--path",
            path_str(path),
            "--steps",
            "l.i0",
            "--l0-rows",
            "200",
            "--clients",
            "1",
        ][..],
        more,
    ]
    .concat();
    bench.run(&args)
}

#[test]
fn a_link_planted_at_path_or_beside_it_is_never_followed() {
    if !can_switch_user() {
        return;
    }
    let bench = server_bench();
    let victim = bench.path("root.sqlite");
    rollback_database(
        &victim,
        "CREATE TABLE precious (x); INSERT INTO precious VALUES (1);",
    );
    let before = fs::read(&victim).unwrap();
    for mode in [0o1777, 0o777] {
        let shared = dir_with_mode(&bench, &format!("shared{mode:o}"), mode);
        let db = shared.join("ib.sqlite");
        let (ok, text) = as_nobody("ln", &["-s", path_str(&victim), path_str(&db)]);
        assert!(ok, "ln -s as nobody: {text}");
        let line = refusal(&load_into(&bench, &db));
        assert!(
            line.contains("--path") && line.contains("ib.sqlite"),
            "{line}"
        );
        let why = if mode == 0o777 { "other users" } else { "link" };
        assert!(line.contains(why), "{line}");
        assert_eq!(fs::read(&victim).unwrap(), before, "the link was followed");
        assert!(!bench.path("root.sqlite-wal").exists());
    }

    // A link at the database's -wal, -shm or -journal name, or nobody's own file at one of
    // the names, in a sticky directory: refused, the victim untouched.
    let shared = dir_with_mode(&bench, "sticky", 0o1777);
    let db = shared.join("ib.sqlite");
    for suffix in [""].into_iter().chain(SIDE_FILES) {
        let at = format!("{}{suffix}", db.display());
        for plant in [&["ln", "-s", path_str(&victim), &at][..], &["touch", &at]] {
            let (ok, text) = as_nobody(plant[0], &plant[1..]);
            assert!(ok, "{plant:?} as nobody: {text}");
            let line = refusal(&load_into(&bench, &db));
            assert!(
                line.contains(&at) && line.contains("--path"),
                "{plant:?}: {line}"
            );
            assert_eq!(fs::read(&victim).unwrap(), before, "{plant:?}");
            fs::remove_file(&at).unwrap();
            for other in [""].into_iter().chain(SIDE_FILES) {
                let name = format!("{}{other}", db.display());
                assert!(!Path::new(&name).exists(), "{plant:?} left {name}");
            }
        }
    }

    // Nothing planted: the sticky directory is usable, and the files are ibench's own.
    load_into(&bench, &db).result();
    let meta = fs::symlink_metadata(&db).unwrap();
    assert!(meta.is_file() && meta.uid() == 0, "{meta:?}");
    // And a run on it again (ibench's own file there now) works.
    load_into(&bench, &db).result();
    for suffix in SIDE_FILES {
        let name = format!("{}{suffix}", db.display());
        assert!(!Path::new(&name).exists(), "{name} left behind");
    }

    // A database of root's own there in rollback-journal mode: its -journal name is free
    // between two transactions, so it is used there only in WAL mode, when asked.
    let mine = shared.join("mine.sqlite");
    rollback_database(
        &mine,
        "CREATE TABLE other (x); INSERT INTO other VALUES (1);",
    );
    let kept = fs::read(&mine).unwrap();
    let line = refusal(&load_into(&bench, &mine));
    assert!(
        line.contains("journal mode") && line.contains("journal_mode=wal"),
        "{line}"
    );
    assert!(fs::read(&mine).unwrap() == kept);
    let wal = ["--sqlite-pragma", "journal_mode=wal"];
    load_into_with(&bench, &mine, &wal).result();
    assert_eq!(header_modes(&mine), [2, 2]);

    // A link given as --path in a private directory is refused too: name the file itself.
    let private = bench.path("link.sqlite");
    std::os::unix::fs::symlink(&victim, &private).unwrap();
    let line = refusal(&load_into(&bench, &private));
    assert!(line.contains("link"), "{line}");
    assert_eq!(fs::read(&victim).unwrap(), before);
}

/// Each command refused on a database of the user's (rollback journal, a table of the
/// benchmark's name that ibench did not create), as `args` on `command`.
const REFUSED: &[(&str, &str, &[&str])] = &[
    ("run", "pi1", &["--steps", "l.i0"]),
    ("run", "pi1", &["--steps", "l.i1"]),
    ("run", "pi1", &["--steps", "l.i2"]),
    ("run", "pi1", &["--steps", "l.x"]),
    ("run", "pi1", &["--steps", "qp100", "--query-seconds", "1"]),
    (
        "run",
        "pi1",
        &["--steps", "qr100,l.i1", "--query-seconds", "1"],
    ),
    ("micro", "sbtest1", &["--benchmarks", "point-query"]),
    (
        "micro",
        "sbtest1",
        &["--no-prepare", "--benchmarks", "update-index"],
    ),
    (
        "micro",
        "sbtest1",
        &["--no-prepare", "--benchmarks", "write-only"],
    ),
    (
        "micro",
        "sbtest1",
        &["--no-prepare", "--benchmarks", "delete"],
    ),
    ("tpcc", "warehouse1", &[]),
    ("tpcc", "warehouse1", &["--no-prepare"]),
];

#[test]
fn a_refused_run_leaves_every_byte_of_a_rollback_journal_database() {
    let bench = Bench::new();
    let db = bench.db();
    rollback_database(
        &db,
        "CREATE TABLE pi1 (transactionid INTEGER PRIMARY KEY, note TEXT);
         INSERT INTO pi1 (note) VALUES ('mine');
         CREATE TABLE sbtest1 (id INTEGER NOT NULL PRIMARY KEY, k INTEGER DEFAULT 0 NOT NULL,
           c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL);
         CREATE INDEX k_1 ON sbtest1 (k);
         INSERT INTO sbtest1 VALUES (1, 1, 'c', 'pad'), (2, 2, 'c', 'pad');
         CREATE TABLE warehouse1 (w_id smallint not null, w_name varchar(10),
           primary key (w_id));
         INSERT INTO warehouse1 VALUES (1, 'mine');",
    );
    let before = fs::read(&db).unwrap();
    let out = path_str(&bench.out()).to_string();
    for (command, table, args) in REFUSED {
        let mut all = vec![*command, "--out", &out, "-q", "--path", path_str(&db)];
        all.extend(["--clients", "1"]);
        if *command == "run" {
            all.extend(["--l0-rows", "100", "--l1-rows", "100", "--l2-rows", "100"]);
        } else {
            all.extend(["--seconds", "1"]);
        }
        all.extend_from_slice(args);
        let line = refusal(&bench.run_raw(&[], &all));
        assert!(line.contains(table), "{command} {args:?}: {line}");
        assert_eq!(
            header_modes(&db),
            [1, 1],
            "{command} {args:?} switched it to WAL"
        );
        assert!(
            fs::read(&db).unwrap() == before,
            "{command} {args:?} changed the file"
        );
        assert!(!bench.path("db.sqlite-wal").exists(), "{command} {args:?}");
    }
}

#[test]
fn a_database_ibench_did_not_create_keeps_its_journal_mode_unless_asked() {
    let bench = Bench::new();
    let db = bench.db();
    rollback_database(
        &db,
        "CREATE TABLE sbtest1 (id INTEGER NOT NULL PRIMARY KEY, k INTEGER DEFAULT 0 NOT NULL,
           c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL);
         CREATE INDEX k_1 ON sbtest1 (k);
         INSERT INTO sbtest1 VALUES (1, 1, 'c', 'pad'), (2, 2, 'c', 'pad');",
    );
    let before = fs::read(&db).unwrap();
    let micro = |more: &[&str]| {
        let args = [
            &[
                "--path",
                path_str(&db),
                "--no-prepare",
                "--tables",
                "1",
                "--table-rows",
                "2",
                "--clients",
                "1",
                "--seconds",
                "1",
                "--benchmarks",
                "point-query",
            ][..],
            more,
        ]
        .concat();
        bench
            .run_raw(&["micro", "--out", path_str(&bench.out()), "-q"], &args)
            .result()
    };
    // Reading the user's tables leaves the file as it was, and the results say so.
    let run = micro(&[]);
    let settings = &run.environment.dbms.settings;
    assert_eq!(settings["journal_mode"], "delete", "{settings:?}");
    assert!(
        settings["journal_mode_changed"].starts_with("no"),
        "{settings:?}"
    );
    assert_eq!(header_modes(&db), [1, 1]);
    assert!(
        fs::read(&db).unwrap() == before,
        "a read-only run changed the file"
    );
    // Asked, ibench switches it, and says it did.
    let run = micro(&["--sqlite-pragma", "journal_mode=wal"]);
    let settings = &run.environment.dbms.settings;
    assert_eq!(settings["journal_mode"], "wal", "{settings:?}");
    let changed = &settings["journal_mode_changed"];
    assert!(
        changed.starts_with("yes")
            && changed.contains("delete")
            && changed.contains("--sqlite-pragma"),
        "{settings:?}"
    );
    assert_eq!(header_modes(&db), [2, 2]);
    let rows: i64 = open_db(&db)
        .query_row("SELECT count(*) FROM sbtest1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 2);

    // A file ibench creates is WAL, as before, and the results say ibench set it.
    let fresh = bench.path("fresh.sqlite");
    let run = load_into(&bench, &fresh).result();
    let settings = &run.environment.dbms.settings;
    assert_eq!(settings["journal_mode"], "wal", "{settings:?}");
    assert!(
        settings["journal_mode_changed"].starts_with("yes"),
        "{settings:?}"
    );
    assert_eq!(header_modes(&fresh), [2, 2]);
}

/// Where sysbench-tpcc's Lua scripts are: the project's shared/peers beside the repository.
fn sysbench_tpcc_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/sysbench-tpcc");
    dir.join("tpcc.lua").exists().then_some(dir)
}

/// Runs sysbench-tpcc's `tpcc.lua` (`command`, from `dir`) on the local PostgreSQL service,
/// one warehouse in one set of tables, in `schema`.
fn sysbench_tpcc(dir: &Path, schema: &str, command: &str) {
    let out = std::process::Command::new("sysbench")
        .arg("./tpcc.lua")
        .args([
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            "--pgsql-port=5432",
            "--pgsql-user=postgres",
            "--pgsql-db=test",
            &format!("--pgsql_schema={schema}"),
            "--tables=1",
            "--scale=1",
            "--threads=1",
            command,
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "sysbench-tpcc {command}: {out:?}");
}

#[test]
fn tpcc_runs_on_tables_sysbench_tpcc_prepared_when_told() {
    if !Path::new("/usr/bin/sysbench").exists() {
        assert!(!ci(), "sysbench is not installed: apt-get install sysbench");
        crate::common::skip("sysbench is not installed (apt-get install sysbench)");
        return;
    }
    let Some(dir) = sysbench_tpcc_dir() else {
        crate::common::skip("no sysbench-tpcc scripts in ../shared/peers/sysbench-tpcc");
        return;
    };
    let Some(pg) = LocalService::reachable()
        .into_iter()
        .find(|s| s.is_postgres())
    else {
        return;
    };
    let schema = format!("zzsbt{}", std::process::id());
    pg.exec(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ));
    let _drop = DropSchema(&pg, &schema);
    sysbench_tpcc(&dir, &schema, "prepare");
    let orders = || pg.row(&format!("SELECT count(*) FROM {schema}.orders1"))[0];
    let before = orders();
    let url = format!("{}?options=-c%20search_path%3D{schema}", pg.url);
    let bench = Bench::new();
    let tpcc = |more: &[&str]| {
        let args = [
            &[
                "--url",
                &url,
                "--no-prepare",
                "--warehouses",
                "1",
                "--clients",
                "1",
                "--seconds",
                "3",
            ][..],
            more,
        ]
        .concat();
        bench.run_raw(&["tpcc", "--out", path_str(&bench.out()), "-q"], &args)
    };
    let line = refusal(&tpcc(&[]));
    assert!(
        line.contains("--write-existing") && !line.contains("give --no-prepare"),
        "{line}"
    );
    assert_eq!(orders(), before, "the refused run wrote");
    let run = tpcc(&["--write-existing"]).result();
    let step = run.steps.last().unwrap();
    let new_orders = &step.tpcc.as_ref().unwrap().transactions["new_order"];
    assert!(new_orders.count > 0, "{step:?}");
    assert_eq!(
        orders() - before,
        (new_orders.count - new_orders.rollbacks) as i64,
        "new orders inserted into sysbench-tpcc's orders1"
    );
}

/// Drops its schema (and the tables in it) when the test ends, passed or failed.
struct DropSchema<'a>(&'a LocalService, &'a str);

impl Drop for DropSchema<'_> {
    fn drop(&mut self) {
        self.0
            .exec(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.1));
    }
}
