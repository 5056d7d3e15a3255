//! The settings that tell configurations apart: each run's options and the DBMS's effective
//! settings, flattened to `key = value`, without what only names one server instance or run;
//! and the keys whose value differs from the base.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::report::select::Group;
use crate::results::model::RunResult;

/// A setting that differs from the base.
#[derive(Clone, Debug, Serialize)]
pub struct Difference {
    /// `setting.NAME` (DBMS setting) or `config.PATH` (ibench option).
    pub key: String,
    /// Value in the base (`-` when unset).
    pub base: String,
    /// Value in this group.
    pub value: String,
}

/// Settings that name one server instance rather than a configuration choice; never shown as
/// differences.
const INSTANCE_KEYS: &[&str] = &[
    "port",
    "socket",
    "datadir",
    "data_directory",
    "pid_file",
    "external_pid_file",
    "log_error",
    "hba_file",
    "ident_file",
    "config_file",
    "general_log_file",
    "slow_query_log_file",
    "tmpdir",
    "unix_socket_directories",
    "log_directory",
    "hostname",
    "server_uuid",
    "log_bin_basename",
    "log_bin_index",
    "relay_log_basename",
    "relay_log_index",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "rocksdb_datadir",
    "rocksdb_wal_dir",
    "plugin_dir",
    "basedir",
    "pid-file",
    "report_port",
    "server_uid",
];

/// Config paths that differ per run by construction.
const RUN_KEYS: &[&str] = &["config.label", "config.out_dir", "config.target.path"];

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        Value::Array(items) if items.iter().any(|i| i.is_object()) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}.{i}"), v, out);
            }
        }
        Value::Array(items) if items.is_empty() => {
            out.insert(prefix.to_string(), "-".to_string());
        }
        Value::Array(items) => {
            // Name/value pairs (pragmas, server options) read as `name=value`.
            let parts: Vec<String> = items
                .iter()
                .map(|i| match i {
                    Value::Array(pair) => pair.iter().map(scalar).collect::<Vec<_>>().join("="),
                    other => scalar(other),
                })
                .collect();
            out.insert(prefix.to_string(), parts.join(","));
        }
        other => {
            out.insert(prefix.to_string(), scalar(other));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// The settings and options of one run that describe its configuration, flattened.
fn describe(run: &RunResult) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(config) = serde_json::to_value(&run.config) {
        flatten("config", &config, &mut out);
    }
    for k in RUN_KEYS {
        out.remove(*k);
    }
    if run.managed_server.is_some() {
        // A managed server's URL names the free port it was given for this run only.
        out.remove("config.target.url");
    }
    out.retain(|k, _| !k.starts_with("config.server.data_dir"));
    for (k, v) in &run.environment.dbms.settings {
        // A managed server lives in a directory named after the run: a setting whose value
        // names it (aria_log_dir_path, wsrep_data_home_dir, ...) is that instance's.
        let names_the_run = !run.run_id.is_empty() && v.contains(run.run_id.as_str());
        if !INSTANCE_KEYS.contains(&k.as_str()) && !names_the_run {
            out.insert(format!("setting.{k}"), v.clone());
        }
    }
    out.insert(
        "dbms.version".to_string(),
        run.environment.dbms.version.clone(),
    );
    if let Some(m) = &run.managed_server {
        out.insert(
            "server.malloc".to_string(),
            m.preload.clone().unwrap_or_else(|| "glibc".to_string()),
        );
        if let Some(account) = &m.account {
            out.insert("server.account".to_string(), account.clone());
        }
    }
    out
}

/// The keys whose value is the same in every run of the group, with that value; keys that
/// vary between its runs (ports, paths) are not configuration and are left out.
fn constant_settings(group: &Group) -> (BTreeMap<String, String>, BTreeSet<String>) {
    let described: Vec<BTreeMap<String, String>> = group.runs.iter().map(describe).collect();
    let mut common = described.first().cloned().unwrap_or_default();
    let mut varies = BTreeSet::new();
    for other in &described[1.min(described.len())..] {
        for k in common.keys().chain(other.keys()) {
            if common.get(k) != other.get(k) {
                varies.insert(k.clone());
            }
        }
    }
    common.retain(|k, _| !varies.contains(k));
    (common, varies)
}

/// The settings whose value differs between `base` and `group` (keys that vary between the
/// runs of either are left out).
pub fn differences(base: &Group, group: &Group) -> Vec<Difference> {
    let (b, b_varies) = constant_settings(base);
    let (g, g_varies) = constant_settings(group);
    let keys: BTreeSet<&String> = b.keys().chain(g.keys()).collect();
    keys.into_iter()
        .filter(|k| b.get(*k) != g.get(*k))
        .filter(|k| !b_varies.contains(*k) && !g_varies.contains(*k))
        .map(|k| Difference {
            key: k.clone(),
            base: b.get(k).cloned().unwrap_or_else(|| "-".to_string()),
            value: g.get(k).cloned().unwrap_or_else(|| "-".to_string()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_names_nested_fields() {
        let mut out = BTreeMap::new();
        let v = serde_json::json!({"a": {"b": 1, "c": ["x", "y"]}, "d": null});
        flatten("config", &v, &mut out);
        assert_eq!(out["config.a.b"], "1");
        assert_eq!(out["config.a.c"], "x,y");
        assert_eq!(out["config.d"], "-");
    }
}
