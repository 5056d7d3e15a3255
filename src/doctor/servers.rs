//! The servers ibench can manage: each family's binaries and version, PostgreSQL builds
//! installed by `ibench server install`, MyRocks, Galera and PgBouncer.

use super::{Depth, HostFeature, apt, find, no, with_version, yes};
use crate::server::{self, Binaries, install, mariadb, pooler, replicas::galera};

/// The servers' features.
pub fn check(depth: Depth) -> Vec<HostFeature> {
    let mut out: Vec<HostFeature> = server::families()
        .iter()
        .map(|f| family(*f, depth))
        .collect();
    out.push(builds());
    out.push(myrocks());
    out.push(galera_cluster());
    out.push(pgbouncer(depth));
    out
}

/// A family's binaries (as `--server` finds them without `--server-bin`) and its version.
fn family(f: &dyn server::ServerFamily, depth: Depth) -> HostFeature {
    let name = f.dbms().server_name();
    let install = apt(f.debian_packages());
    match Binaries::locate(f, None, None, "--server-bin") {
        Ok(b) => match with_version(depth, &b.server) {
            Ok(found) => yes(name, found),
            Err(why) => no(name, why, install),
        },
        Err(p) => no(name, p.message, install),
    }
}

/// PostgreSQL builds installed by `ibench server install` (studies across versions).
fn builds() -> HostFeature {
    const NAME: &str = "postgres-builds";
    let versions: Vec<String> = install::installed()
        .into_iter()
        .filter(|b| b.server == "postgres")
        .map(|b| b.version)
        .collect();
    let root = install::cache_root();
    if versions.is_empty() {
        no(
            NAME,
            format!(
                "none installed in {} (studies across versions install them)",
                root.display()
            ),
            install::install_hint("postgres", "17"),
        )
    } else {
        yes(
            NAME,
            format!("{} in {}", versions.join(", "), root.display()),
        )
    }
}

/// MyRocks: MariaDB's RocksDB plugin (`--engine rocksdb`).
fn myrocks() -> HostFeature {
    match mariadb::rocksdb_plugin() {
        Some(p) => yes("myrocks", p.display().to_string()),
        None => no(
            "myrocks",
            format!(
                "ha_rocksdb.so not found in {}",
                mariadb::PLUGIN_DIRS.join(", ")
            ),
            apt(mariadb::ROCKSDB_PACKAGE),
        ),
    }
}

/// Galera (`--galera`): the provider and rsync for the state transfer.
fn galera_cluster() -> HostFeature {
    let install = apt(galera::PACKAGES);
    match (galera::provider(), find("rsync", &["/usr/bin/rsync"])) {
        (Some(p), Some(r)) => yes(
            "galera",
            format!("{}, state transfer by {}", p.display(), r.display()),
        ),
        (None, _) => no(
            "galera",
            format!("no Galera provider ({})", galera::PROVIDER),
            install,
        ),
        (Some(_), None) => no(
            "galera",
            "no rsync for the state transfer".to_string(),
            apt("rsync"),
        ),
    }
}

/// PgBouncer (`--pooler pgbouncer`).
fn pgbouncer(depth: Depth) -> HostFeature {
    match pooler::binary() {
        Ok(p) => match with_version(depth, &p) {
            Ok(found) => yes("pgbouncer", found),
            Err(why) => no("pgbouncer", why, apt("pgbouncer")),
        },
        Err(_) => no(
            "pgbouncer",
            "not found (/usr/sbin/pgbouncer, PATH)".to_string(),
            apt("pgbouncer"),
        ),
    }
}
