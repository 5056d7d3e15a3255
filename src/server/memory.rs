//! What a managed server's settings let it take of memory, against the run's memory limit
//! (`--memory-limit`, an experiment setup's `memory_limit`): read from the server's effective
//! settings once it runs, before the first step, so that a limit the settings exceed is said
//! in one line (with settings that would fit) rather than found when the kernel kills a
//! backend mid-step.
//!
//! The estimate is what the settings allow the run's own work to take at once, not a
//! measurement: PostgreSQL's shared buffers and WAL buffers, one `maintenance_work_mem` per
//! table an index build (one per table in l.x; a build's parallel workers share it) or an
//! autovacuum worker works on at once (the two never run on one table together; an
//! `autovacuum_work_mem` of its own is counted apart), and `work_mem` per connection the
//! run opens; MariaDB's buffer pool (and MyRocks'
//! block cache), its log buffer, three `innodb_sort_buffer_size` per index build and the
//! per-connection sort, read, join and binlog buffers and thread stack. MariaDB's MyISAM key
//! cache and Aria page cache are left out: ibench's tables are InnoDB or MyRocks, and those
//! caches take memory only as they are used. Each server of a cluster (replicas, Galera nodes)
//! counts its own buffers: they share the limit.

use std::collections::BTreeMap;

use crate::results::memory::{MemoryEstimate, MemoryPart, mib};

/// What the run does that takes server memory at once.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    /// Connections the run opens (its clients' and its own).
    pub connections: u64,
    /// Index builds that run at once (l.x builds one per table).
    pub index_builds: u64,
    /// The run's tables (autovacuum works on as many at once, up to its workers).
    pub tables: u64,
    /// Servers sharing the limit (a primary and its replicas, Galera's nodes).
    pub servers: u64,
}

/// One term of the estimate: `times` x the value of `setting`.
struct Term {
    setting: &'static str,
    value: u64,
    times: u64,
    /// What each one is for (`index builds`).
    per: &'static str,
    /// Lowest value ibench suggests for it; `None`: not suggested (fixed here).
    floor: Option<u64>,
}

impl Term {
    fn new(setting: &'static str, value: u64, times: u64, per: &'static str) -> Self {
        Term {
            setting,
            value,
            times,
            per,
            floor: None,
        }
    }

    fn tunable(mut self, floor: u64) -> Self {
        self.floor = Some(floor);
        self
    }
}

/// The terms of a server family's settings; empty for a family not known here.
fn terms(family: &str, s: &BTreeMap<String, String>, load: Load) -> Vec<Term> {
    match family {
        "postgres" => postgres_terms(s, load),
        "mariadb" => mariadb_terms(s, load),
        _ => Vec::new(),
    }
}

fn postgres_terms(s: &BTreeMap<String, String>, load: Load) -> Vec<Term> {
    let size = |name: &str| {
        s.get(name)
            .and_then(|v| crate::dbms::postgres::pg_size(v))
            .unwrap_or(0)
    };
    let maintenance = size("maintenance_work_mem");
    let mut terms = vec![
        Term::new(
            "shared_buffers",
            size("shared_buffers"),
            load.servers,
            "servers",
        )
        .tunable(8 << 20),
        Term::new("wal_buffers", size("wal_buffers"), load.servers, "servers"),
    ];
    let vacuums = if s.get("autovacuum").is_some_and(|v| v == "on") {
        s.get("autovacuum_max_workers")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            .min(load.tables)
    } else {
        0
    };
    // An index build and a vacuum never run on one table at once (their locks conflict): with
    // autovacuum taking maintenance_work_mem (-1), one per table busy either way.
    match s.get("autovacuum_work_mem").map(String::as_str) {
        Some("-1") | None => terms.push(
            Term::new(
                "maintenance_work_mem",
                maintenance,
                load.index_builds.max(vacuums),
                "index builds or vacuums",
            )
            .tunable(1 << 20),
        ),
        Some(_) => {
            terms.push(
                Term::new(
                    "maintenance_work_mem",
                    maintenance,
                    load.index_builds,
                    "index builds",
                )
                .tunable(1 << 20),
            );
            terms.push(
                Term::new(
                    "autovacuum_work_mem",
                    size("autovacuum_work_mem"),
                    vacuums,
                    "autovacuum workers",
                )
                .tunable(1 << 20),
            );
        }
    }
    terms.push(
        Term::new(
            "work_mem",
            size("work_mem"),
            load.connections,
            "connections",
        )
        .tunable(1 << 20),
    );
    terms
}

fn mariadb_terms(s: &BTreeMap<String, String>, load: Load) -> Vec<Term> {
    let bytes = |name: &str| s.get(name).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let servers = "servers";
    let mut terms = vec![
        Term::new(
            "innodb_buffer_pool_size",
            bytes("innodb_buffer_pool_size"),
            load.servers,
            servers,
        )
        .tunable(8 << 20),
        Term::new(
            "innodb_log_buffer_size",
            bytes("innodb_log_buffer_size"),
            load.servers,
            servers,
        ),
    ];
    if s.contains_key("rocksdb_block_cache_size") {
        terms.push(
            Term::new(
                "rocksdb_block_cache_size",
                bytes("rocksdb_block_cache_size"),
                load.servers,
                servers,
            )
            .tunable(8 << 20),
        );
    }
    terms.push(Term::new(
        "innodb_sort_buffer_size",
        bytes("innodb_sort_buffer_size"),
        3 * load.index_builds,
        "sort buffers (3 per index build)",
    ));
    let per_connection: u64 = [
        "sort_buffer_size",
        "read_buffer_size",
        "read_rnd_buffer_size",
        "join_buffer_size",
        "binlog_cache_size",
        "thread_stack",
    ]
    .iter()
    .map(|n| bytes(n))
    .sum();
    terms.push(Term::new(
        "per-connection buffers and stack",
        per_connection,
        load.connections,
        "connections",
    ));
    terms
}

fn sum(terms: &[Term], value: impl Fn(&Term) -> u64) -> u64 {
    terms
        .iter()
        .map(|t| value(t).saturating_mul(t.times))
        .fold(0, u64::saturating_add)
}

/// Estimates what `family`'s settings `s` (as the server reports them) let it take under
/// `load`, against `limit` bytes; `None` for a family not known here.
pub fn estimate(
    family: &str,
    s: &BTreeMap<String, String>,
    load: Load,
    limit: u64,
) -> Option<MemoryEstimate> {
    let terms = terms(family, s, load);
    if terms.is_empty() {
        return None;
    }
    let mut parts: Vec<MemoryPart> = terms
        .iter()
        .filter(|t| t.times > 0 && t.value > 0)
        .map(|t| MemoryPart {
            setting: t.setting.to_string(),
            each_bytes: t.value,
            times: t.times,
            per: if t.times == 1 { "" } else { t.per }.to_string(),
            bytes: t.value.saturating_mul(t.times),
        })
        .collect();
    parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    Some(MemoryEstimate {
        bytes: sum(&terms, |t| t.value),
        limit_bytes: limit,
        parts,
    })
}

/// Settings that bring `family`'s estimate to three quarters of `limit` (the rest is the
/// server's own code and the page cache): each one suggested scaled down alike, to a power
/// of two MiB, no lower than its floor; the settings and the estimate with them.
fn fitting(
    family: &str,
    s: &BTreeMap<String, String>,
    load: Load,
    limit: u64,
) -> (Vec<(&'static str, u64)>, u64) {
    let terms = terms(family, s, load);
    let target = limit / 4 * 3;
    let fixed = sum(&terms, |t| if t.floor.is_some() { 0 } else { t.value });
    let tunable = sum(&terms, |t| if t.floor.is_some() { t.value } else { 0 });
    let scale = target.saturating_sub(fixed) as f64 / tunable.max(1) as f64;
    let mut chosen: Vec<(&'static str, u64)> = Vec::new();
    for t in &terms {
        let Some(floor) = t.floor else { continue };
        if chosen.iter().any(|(n, _)| *n == t.setting) {
            continue;
        }
        let mib = ((t.value as f64 * scale) as u64 >> 20).max(1);
        let new = ((1u64 << (63 - mib.leading_zeros())) << 20).max(floor);
        if new < t.value {
            chosen.push((t.setting, new));
        }
    }
    let value = |t: &Term| {
        chosen
            .iter()
            .find(|(n, _)| *n == t.setting)
            .map_or(t.value, |(_, v)| *v)
    };
    (chosen.clone(), sum(&terms, value))
}

/// A setting's value as the server's config takes it (`16MB`, `16M`).
fn config_value(family: &str, bytes: u64) -> String {
    match family {
        "postgres" => format!("{}MB", bytes >> 20),
        _ => format!("{}M", bytes >> 20),
    }
}

/// The warning (without `warning: `) when `e` exceeds its limit: the limit, the estimate,
/// its main parts, and the `--server-option`s that bring it under (or that the limit must
/// be raised when no setting can).
pub fn warning(
    e: &MemoryEstimate,
    family: &str,
    s: &BTreeMap<String, String>,
    load: Load,
) -> Option<String> {
    if e.bytes <= e.limit_bytes {
        return None;
    }
    let parts: Vec<String> = e.parts.iter().take(4).map(MemoryPart::describe).collect();
    let (settings, fits) = fitting(family, s, load, e.limit_bytes);
    let remedy = if settings.is_empty() || fits > e.limit_bytes {
        "raise --memory-limit".to_string()
    } else {
        let options: Vec<String> = settings
            .iter()
            .map(|(n, v)| format!("--server-option {n}={}", config_value(family, *v)))
            .collect();
        format!(
            "{} (an experiment: those settings in the target's config) bring it to {}, or \
             raise --memory-limit",
            options.join(" "),
            mib(fits)
        )
    };
    Some(format!(
        "the memory limit of {} is below the {} the {family} server's settings allow \
         ({}): the kernel may kill a server process mid-step; {remedy}",
        mib(e.limit_bytes),
        mib(e.bytes),
        parts.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    const LOAD: Load = Load {
        connections: 4,
        index_builds: 1,
        tables: 1,
        servers: 1,
    };

    #[test]
    fn postgres_defaults_exceed_128m_and_the_suggested_settings_fit() {
        let s = settings(&[
            ("shared_buffers", "128MB"),
            ("wal_buffers", "4MB"),
            ("maintenance_work_mem", "64MB"),
            ("autovacuum", "on"),
            ("autovacuum_max_workers", "3"),
            ("autovacuum_work_mem", "-1"),
            ("work_mem", "4MB"),
        ]);
        let e = estimate("postgres", &s, LOAD, 128 << 20).unwrap();
        // 128 + 4 + 64 (one table: an index build or a vacuum) + 4 x 4.
        assert_eq!(e.bytes, 212 << 20);
        assert_eq!(e.parts[0].describe(), "shared_buffers 128 MiB");
        assert_eq!(e.parts[1].describe(), "maintenance_work_mem 64 MiB");
        let w = warning(&e, "postgres", &s, LOAD).unwrap();
        assert!(w.contains("128 MiB") && w.contains("212 MiB"), "{w}");
        let (chosen, fits) = fitting("postgres", &s, LOAD, 128 << 20);
        assert!(fits <= 96 << 20, "{chosen:?} {fits}");
        assert!(w.contains("--server-option shared_buffers="), "{w}");
        let mut small = s.clone();
        for (n, v) in &chosen {
            small.insert(n.to_string(), config_value("postgres", *v));
        }
        let e = estimate("postgres", &small, LOAD, 128 << 20).unwrap();
        assert_eq!(e.bytes, fits);
        assert!(warning(&e, "postgres", &small, LOAD).is_none());
    }

    #[test]
    fn mariadb_counts_each_server_of_a_cluster() {
        let s = settings(&[
            ("innodb_buffer_pool_size", "134217728"),
            ("innodb_log_buffer_size", "16777216"),
            ("innodb_sort_buffer_size", "1048576"),
            ("sort_buffer_size", "2097152"),
        ]);
        let load = Load { servers: 3, ..LOAD };
        let e = estimate("mariadb", &s, load, 256 << 20).unwrap();
        assert_eq!(e.bytes, (3 * 144 + 3 + 4 * 2) << 20);
        assert_eq!(
            e.parts[0].describe(),
            "innodb_buffer_pool_size 128 MiB x 3 servers"
        );
        let w = warning(&e, "mariadb", &s, load).unwrap();
        assert!(
            w.contains("innodb_buffer_pool_size=") && w.contains("M "),
            "{w}"
        );
        assert!(estimate("sqlite", &s, load, 1).is_none());
    }
}
