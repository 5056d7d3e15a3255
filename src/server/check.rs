//! Asking a server DBMS itself whether it knows every setting of a configuration, before any
//! run starts: each family runs its own binaries on the configuration (`mariadbd --help
//! --verbose`, `postgres -C`) and names each setting they reject. Each problem points at the
//! place where the setting was written (`file:line`).

use crate::dbms::Params;
use crate::request::ServerSpec;

/// A setting and where it was written.
#[derive(Clone, Debug)]
pub struct Located {
    /// Name as written.
    pub key: String,
    /// `file:line`.
    pub at: String,
    /// Written in a file not every user may read: a server's message about it, which may
    /// quote its value, is not shown.
    pub private: bool,
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
            let p = hide_private(&mine, p);
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
    }
    problems
}

/// `p` as shown: for a setting written in a private file (see [`Located::private`]), only its
/// name; the server's own words may quote the file's text.
fn hide_private(checks: &[&SettingsCheck], p: SettingProblem) -> SettingProblem {
    let private = checks.iter().find_map(|c| {
        let l = c.settings.iter().find(|l| l.private && l.at == p.at)?;
        Some((c.server.kind, l))
    });
    match private {
        Some((kind, l)) => SettingProblem {
            message: format!(
                "{} rejects setting {}: what it said is not shown (the file is not \
                 readable by every user, and the message may quote it)",
                // The family's own word ("mariadb rejects setting x: ...") where it has one.
                p.message
                    .split_once(" rejects setting ")
                    .map_or(kind.to_string(), |(who, _)| who.to_string()),
                normalize(&l.key)
            ),
            at: p.at,
        },
        None => p,
    }
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
