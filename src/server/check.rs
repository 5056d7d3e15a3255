//! Asking a server DBMS itself whether it knows every setting of a configuration, before any
//! run starts: each family runs its own binaries on the configuration (`mariadbd --help
//! --verbose`, `postgres -C`) and names each setting they reject. Each problem points at the
//! place where the setting was written (`file:line`).

use crate::dbms::Params;
use crate::spec::ServerSpec;

/// A setting and where it was written.
#[derive(Clone, Debug)]
pub struct Located {
    /// Name as written.
    pub key: String,
    /// `file:line`.
    pub at: String,
}

/// One server configuration to check.
#[derive(Clone, Debug)]
pub struct SettingsCheck {
    /// The server, as a run would start it.
    pub server: ServerSpec,
    /// The target's DBMS parameters (e.g. the engine: MyRocks settings need its plugin).
    pub params: Params,
    /// Every setting of the configuration with its location, in order (later wins).
    pub settings: Vec<Located>,
    /// Where to point when a problem names no setting (the configuration's name).
    pub at: String,
}

/// A setting the server rejected, with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingProblem {
    /// `file:line`.
    pub at: String,
    /// One line.
    pub message: String,
}

impl SettingsCheck {
    /// The location of the last definition of `name`, else the configuration's.
    pub fn locate(&self, name: &str) -> String {
        let n = normalize(name);
        self.settings
            .iter()
            .rev()
            .find(|l| normalize(&l.key) == n)
            .map(|l| l.at.clone())
            .unwrap_or_else(|| self.at.clone())
    }

    /// A problem at the configuration itself.
    pub fn problem(&self, message: impl Into<String>) -> SettingProblem {
        SettingProblem {
            at: self.at.clone(),
            message: message.into(),
        }
    }
}

/// Every problem the servers report with `checks`, each family asked once for all of its own.
pub fn check_all(checks: &[SettingsCheck]) -> Vec<SettingProblem> {
    let mut problems = Vec::new();
    for family in super::REGISTRY {
        let mine: Vec<&SettingsCheck> = checks
            .iter()
            .filter(|c| c.server.kind == family.dbms())
            .collect();
        if mine.is_empty() {
            continue;
        }
        for p in family.check_settings(&mine) {
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
    }
    problems
}

/// Normal form of a setting name for comparisons: lowercase, `-` as `_`.
pub fn normalize(key: &str) -> String {
    key.trim_start_matches("--")
        .to_ascii_lowercase()
        .replace('-', "_")
}

/// The text between the first pair of `quote`s after `marker` in `line`.
pub fn quoted_after<'a>(line: &'a str, marker: &str, quote: char) -> Option<&'a str> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let start = rest.find(quote)? + 1;
    let end = rest[start..].find(quote)? + start;
    Some(&rest[start..end])
}
