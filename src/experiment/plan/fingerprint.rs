//! A cell's fingerprint: a hash of everything that defines its results, so that resuming an
//! experiment reruns nothing whose definition is unchanged and refuses what changed.

use std::path::Path;

use serde::Serialize;

use crate::dbms::{Params, StatementMode};
use crate::request::{Malloc, WorkloadSpec};

/// The parts of a server spec that define a cell: binaries, engine, fragment, options,
/// allocator.
type ServerDefinition<'a> = (
    Option<&'a Path>,
    serde_json::Value,
    &'a Option<String>,
    &'a [(String, String)],
    Malloc,
);

/// Serializable definition of a cell, hashed into its fingerprint.
#[derive(Serialize)]
pub(super) struct Definition<'a> {
    pub dbms: &'static str,
    pub server: Option<ServerDefinition<'a>>,
    pub version: Option<&'a str>,
    /// A server given by URL: the URL without its password (session settings included);
    /// absent for the other targets, so that their experiments resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<&'a str>,
    /// Where the data directory goes: absent (and so not hashed) by default, so that older
    /// experiments resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<&'a Path>,
    /// The pooler in front of the server: hashed only when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooler: Option<&'a crate::request::PoolerSpec>,
    /// The server's replicas: hashed only when there are some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<&'a crate::request::ReplicaSpec>,
    /// A Galera cluster instead of one server: hashed only when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub galera: Option<&'a crate::request::GaleraSpec>,
    pub pragmas: &'a [(String, String)],
    /// The dataset the cell starts from: hashed only when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<&'a str>,
    /// Serialized untagged: an Insert Benchmark cell hashes as it always did.
    pub workload: &'a WorkloadSpec,
    pub maintenance: bool,
    pub statements: StatementMode,
    /// Memory cap, IO limits, CPUs, OS cache mode: hashed only when set, so that older
    /// experiments resume.
    #[serde(skip_serializing_if = "crate::request::Resources::is_default")]
    pub resources: &'a crate::request::Resources,
    /// The pause before each step (`[workload] cooldown`): hashed only when set.
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub cooldown_s: u64,
    /// No once-a-second sampling (`no_sampling`): hashed only when set.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_sampling: bool,
}

/// The server part of a definition. Earlier versions hashed the server's table engine (InnoDB
/// unless set) here; it is kept in that form so that experiments resume across versions.
pub(super) fn server<'a>(
    bin_dir: Option<&'a Path>,
    params: &Params,
    config_text: &'a Option<String>,
    options: &'a [(String, String)],
    malloc: Malloc,
) -> ServerDefinition<'a> {
    let engine = params
        .get("engine")
        .cloned()
        .unwrap_or_else(|| serde_json::Value::from("innodb"));
    (bin_dir, engine, config_text, options, malloc)
}

impl Definition<'_> {
    /// The fingerprint: FNV-1a (64 bits, stable across builds and platforms, unlike std's
    /// hasher) of the definition's JSON, in hex.
    pub fn fingerprint(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        let h = json.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        });
        format!("{h:016x}")
    }
}
