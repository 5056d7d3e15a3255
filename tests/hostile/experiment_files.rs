//! Experiment files and their config fragments: `[[config]] file = "../../../../etc/shadow"`
//! with `--dry-run` printed every line of a root-only file as an error (MariaDB rejected each
//! as a setting, quoting it). A relative fragment must lie in the experiment's directory (links
//! resolved); an absolute one may be anywhere, but a file that is not a config fragment is
//! refused at its first line without its text, and what a server says of a setting in a file
//! not every user may read shows only the setting's name.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};

use crate::common::{Bench, Outcome, have, path_str};

/// Runs `ibench experiment --dry-run` on an experiment in `dir` (under the bench) whose one
/// MariaDB config reads `file`.
fn dry_run(bench: &Bench, dir: &str, file: &str) -> Outcome {
    let dir = bench.path(dir);
    fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("e.toml");
    fs::write(
        &toml,
        format!(
            "name = \"e\"\n[workload]\nsteps = \"l.i0\"\n[[target]]\nname = \"m\"\n\
             dbms = \"mariadb\"\n[[config]]\nname = \"c\"\nfile = {file:?}\n"
        ),
    )
    .unwrap();
    let out = bench.out();
    bench.run_raw(
        &[
            "experiment",
            path_str(&toml),
            "--out",
            path_str(&out),
            "--dry-run",
        ],
        &[],
    )
}

/// Exit 2, one `error:` line holding `needle`, and none of `secrets` anywhere.
fn refused_without(o: &Outcome, needle: &str, secrets: &[&str]) {
    let all = o.assert_refused(needle);
    for secret in secrets {
        assert!(!all.contains(secret), "the output shows {secret:?}: {all}");
    }
}

/// The accounts /etc/shadow lists, as `name:` (what a line of it starts with).
fn shadow_lines() -> Vec<String> {
    let text = fs::read_to_string("/etc/shadow").unwrap();
    text.lines()
        .filter_map(|l| l.split_once(':').map(|(name, _)| format!("{name}:")))
        .collect()
}

#[test]
fn a_fragment_outside_the_experiments_directory_is_read_only_when_given_absolute() {
    if !have("mariadb", "innodb") {
        return;
    }
    let bench = Bench::new();
    let shadow = shadow_lines();
    let secrets: Vec<&str> = shadow.iter().map(String::as_str).collect();
    // Up from the bench's directory to / and down again: outside the experiment's directory.
    let up = "../".repeat(bench.path("a/b").components().count());
    let o = dry_run(&bench, "a/b", &format!("{up}etc/shadow"));
    refused_without(&o, "outside the experiment's directory", &secrets);

    // A link in the experiment's directory to a file outside it: the same.
    symlink("/etc/shadow", bench.path("a/b/base.cnf")).unwrap();
    let o = dry_run(&bench, "a/b", "base.cnf");
    refused_without(&o, "outside the experiment's directory", &secrets);

    // Given absolute, it is read, but it is no config fragment: its first line is named, not shown.
    let o = dry_run(&bench, "a/b", "/etc/shadow");
    refused_without(
        &o,
        "/etc/shadow:1: config c: line 1 of file /etc/shadow is not a setting",
        &secrets,
    );
}

#[test]
fn what_a_server_says_of_a_private_files_setting_shows_only_its_name() {
    if !have("mariadb", "innodb") {
        return;
    }
    let bench = Bench::new();
    let dir = bench.path("x");
    fs::create_dir_all(&dir).unwrap();
    let cnf = dir.join("private.cnf");
    fs::write(
        &cnf,
        "innodb_buffer_pool_size = 64M\nsecret_thing = hunter2\n",
    )
    .unwrap();
    fs::set_permissions(&cnf, fs::Permissions::from_mode(0o600)).unwrap();
    let o = dry_run(&bench, "x", "private.cnf");
    refused_without(
        &o,
        "private.cnf:2: mariadb rejects setting secret_thing",
        &["hunter2"],
    );

    // A file every user can read holds nothing to hide: the server's own words are shown.
    fs::set_permissions(&cnf, fs::Permissions::from_mode(0o644)).unwrap();
    let o = dry_run(&bench, "x", "private.cnf");
    refused_without(&o, "unknown variable 'secret_thing=hunter2'", &[]);
}
