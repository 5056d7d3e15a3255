//! Targets given by URL: what is refused at its key, what is allowed, and fingerprints
//! without the password.

use std::path::PathBuf;

use super::*;

fn plan(text: &str) -> (Plan, Vec<Problem>) {
    let source = Source {
        path: PathBuf::from("u.toml"),
        text: text.to_string(),
    };
    let file = super::super::file::parse(&source).expect("parses");
    build(file, source, None)
}

const URL_TARGET: &str = r#"name = "u"
[workload]
steps = "l.i0"
[[target]]
name = "ext"
url = "postgres://bench@db1.example:5432/ib"
"#;

fn messages(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(|p| p.to_string()).collect()
}

#[test]
fn a_url_target_names_its_dbms_and_its_cells_connect_to_it() {
    let (p, problems) = plan(URL_TARGET);
    assert!(problems.is_empty(), "{problems:?}");
    let cell = &p.cells[0];
    assert_eq!(cell.label, "ext/default/glibc/default");
    assert_eq!(cell.target.kind.server_name(), "postgres");
    assert!(cell.server.is_none());
    let url = cell.target.url.as_ref().unwrap();
    assert_eq!(url.redacted(), "postgres://bench@db1.example:5432/ib");
    let spec = cell.spec(std::path::Path::new("o"));
    assert!(!spec.scratch_database && !spec.allow_server_changes);
}

#[test]
fn the_fingerprint_has_the_url_and_not_the_password() {
    let (a, _) = plan(URL_TARGET);
    let with_password = crate::dbms::url::ServerUrl::parse(
        "postgres://bench:pw1@db1.example:5432/ib",
        "IBENCH_NO_SUCH_ENV",
    )
    .unwrap();
    // The same cell with a password from the environment: the same fingerprint (the
    // definition hashes the URL without it).
    assert!(with_password.password().is_some());
    assert_eq!(
        with_password.without_password(),
        a.cells[0].target.url.as_ref().unwrap().without_password()
    );
    let (b, _) = plan(&URL_TARGET.replace("db1.example", "db2.example"));
    assert_ne!(a.cells[0].fingerprint, b.cells[0].fingerprint);
    // A managed target of the same DBMS is another cell.
    let (m, _) = plan(&URL_TARGET.replace(
        "url = \"postgres://bench@db1.example:5432/ib\"",
        "dbms = \"postgres\"",
    ));
    assert_ne!(a.cells[0].fingerprint, m.cells[0].fingerprint);
}

#[test]
fn a_password_in_the_file_a_bad_scheme_and_a_mismatch_are_refused() {
    let (_, problems) = plan(&URL_TARGET.replace("bench@", "bench:hunter2@"));
    let m = messages(&problems);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].starts_with("u.toml:6: target ext: url holds a password"),
        "{m:?}"
    );
    assert!(!m[0].contains("hunter2"), "{m:?}");
    let (_, problems) = plan(&URL_TARGET.replace("postgres://", "oracle://"));
    assert!(
        messages(&problems)[0].contains("url scheme \"oracle\" is not supported"),
        "{problems:?}"
    );
    let (_, problems) =
        plan(&URL_TARGET.replace("name = \"ext\"", "name = \"ext\"\ndbms = \"mariadb\""));
    assert!(
        messages(&problems)[0].contains("u.toml:6: target ext: dbms mariadb does not match url"),
        "{problems:?}"
    );
    let (_, problems) = plan(
        &URL_TARGET
            .replace("url = ", "bogus = ")
            .replace("bogus = \"postgres://bench@db1.example:5432/ib\"", ""),
    );
    assert!(
        messages(&problems)[0].contains("target ext: give dbms = "),
        "{problems:?}"
    );
}

#[test]
fn what_only_a_managed_server_takes_is_refused_at_its_key() {
    let text = format!(
        "{URL_TARGET}version = \"17\"\nserver_user = \"bench\"\nallocators = [\"glibc\"]\n\
         [[setup]]\nname = \"s\"\ndbms_cache = \"1G\"\nmemory_limit = \"1G\"\nreplicas = 1\n\
         client_cpus = \"0\"\n"
    )
    .replace("allocators = [\"glibc\"]\n", "");
    let (_, problems) = plan(&text);
    let m = messages(&problems);
    for expected in [
        "u.toml:7: target ext: version is for a server ibench starts",
        "u.toml:8: target ext: server_user is for a server ibench starts",
        "u.toml:10: setup s: dbms_cache is for a server ibench starts; target ext",
        "u.toml:10: setup s: memory_limit is for a server ibench starts",
        "u.toml:10: setup s: replicas is for a server ibench starts",
    ] {
        assert!(
            m.iter().any(|l| l.starts_with(expected)),
            "{expected}: {m:?}"
        );
    }
    // client_cpus pins ibench's own threads: taken.
    assert_eq!(m.len(), 5, "{m:?}");
    let (_, problems) = plan(&format!("allocators = [\"jemalloc\"]\n{URL_TARGET}"));
    assert!(
        messages(&problems)
            .iter()
            .any(|l| l.contains("target ext (postgres) is a server given by url")),
        "{problems:?}"
    );
}

#[test]
fn server_options_need_allow_server_changes_and_become_session_settings() {
    let config = "[[config]]\nname = \"wm\"\noptions = { work_mem = \"64MB\", \
                  search_path = \"a b\" }\n";
    let (_, problems) = plan(&format!("{URL_TARGET}{config}"));
    let m = messages(&problems);
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(
        m.iter()
            .all(|l| l.starts_with("u.toml:9: config wm sets server option ")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|l| l.contains("option work_mem on target ext")),
        "{m:?}"
    );
    let fragment = "[[config]]\nname = \"f\"\ntext = \"work_mem = 64MB\"\n";
    let allowed = format!("allow_server_changes = true\n{URL_TARGET}");
    let (_, problems) = plan(&format!("{allowed}{fragment}"));
    assert!(
        messages(&problems)[0].contains("ibench writes no config file"),
        "{problems:?}"
    );
    let (p, problems) = plan(&format!("{allowed}{config}"));
    assert!(problems.is_empty(), "{problems:?}");
    let cell = &p.cells[0];
    let url = cell.target.url.as_ref().unwrap().without_password();
    assert_eq!(
        url,
        "postgres://bench@db1.example:5432/ib?options=-c%20search_path%3Da%5C%20b%20-c%20\
         work_mem%3D64MB"
    );
    assert!(cell.spec(std::path::Path::new("o")).allow_server_changes);
    let (unset, _) = plan(URL_TARGET);
    assert_ne!(cell.fingerprint, unset.cells[0].fingerprint);
}

#[test]
fn drop_existing_is_a_url_targets_word_and_refused_elsewhere() {
    let (p, problems) = plan(&format!("{URL_TARGET}drop_existing = true\n"));
    assert!(problems.is_empty(), "{problems:?}");
    assert!(p.cells[0].spec(std::path::Path::new("o")).drop_existing);
    let listing = crate::experiment::dry_run(&p, &Default::default());
    assert!(
        listing.contains("replaces tables ibench did not create (drop_existing)"),
        "{listing}"
    );
    // Not given, or false: the run refuses tables it did not create, as without the flag.
    let (unset, _) = plan(URL_TARGET);
    assert!(!unset.cells[0].spec(std::path::Path::new("o")).drop_existing);
    // Not part of what the cell's results are: resume is not disturbed by saying it.
    assert_eq!(unset.cells[0].fingerprint, p.cells[0].fingerprint);
    let (f, _) = plan(&format!("{URL_TARGET}drop_existing = false\n"));
    assert!(!f.cells[0].spec(std::path::Path::new("o")).drop_existing);
    let managed = URL_TARGET.replace(
        "url = \"postgres://bench@db1.example:5432/ib\"",
        "dbms = \"sqlite\"\ndrop_existing = true",
    );
    let (_, problems) = plan(&managed);
    let m = messages(&problems);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].starts_with("u.toml:7: target ext: drop_existing is for a server given by url"),
        "{m:?}"
    );
    let source = Source {
        path: PathBuf::from("u.toml"),
        text: format!("{URL_TARGET}drop_existing = \"yes\"\n"),
    };
    let e = super::super::file::parse(&source).unwrap_err().to_string();
    assert!(
        e.starts_with("u.toml:7: drop_existing: invalid type: string \"yes\", expected a boolean"),
        "{e}"
    );
}

#[test]
fn a_stale_server_pid_file_is_refused_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("postmaster.pid");
    // Above any pid_max (2^22): no such process.
    std::fs::write(&file, "99999999\n/var/lib/postgresql/data\n").unwrap();
    let text = format!("{URL_TARGET}server_pid_file = \"{}\"\n", file.display());
    let (_, problems) = plan(&text);
    let m = messages(&problems);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].starts_with("u.toml:7: target ext: server_pid_file ")
            && m[0].contains("names pid 99999999, no such process on this host")
            && !m[0].contains("--server-pid"),
        "{m:?}"
    );
    // This process's own pid: taken.
    std::fs::write(&file, format!("{}\n", std::process::id())).unwrap();
    let (p, problems) = plan(&text);
    assert!(problems.is_empty(), "{problems:?}");
    let pid = p.cells[0].external.as_ref().unwrap().pid().unwrap();
    assert_eq!(pid, Some(std::process::id()));
    // Stale by the time a cell starts: the same words, from the cell.
    std::fs::write(&file, "99999999\n").unwrap();
    let e = p.cells[0].external.as_ref().unwrap().pid().unwrap_err();
    assert!(e.to_string().starts_with("server_pid_file "), "{e}");
}
