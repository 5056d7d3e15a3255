//! What ibench resolved a run's request into, kept beside the request (`config`) in the
//! results: the target it connected to and how it sent statements.

use serde::{Deserialize, Serialize};

use super::model::RunResult;

/// What ibench resolved a run's request into, beside the request itself.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Resolved {
    /// The target the run connected to: the request's, with the scratch database's path, the
    /// managed server's URL and a pooler's URL (`client_url`) filled in. URLs are stored
    /// without their password.
    pub target: crate::dbms::TargetSpec,
    /// How statements were sent: as asked, or plain SQL behind a pooler that keeps no named
    /// prepared statements.
    pub statements: crate::dbms::StatementMode,
    /// The DBMS's own cgroup, when the run asked for one (`--memory-limit`, `--io-limit`,
    /// `--server-cpus`): `v1: <dirs>` or `v2: <dir>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

impl RunResult {
    /// The target the run connected to (older documents: the one in `config`).
    pub fn target(&self) -> &crate::dbms::TargetSpec {
        self.resolved
            .as_ref()
            .map_or(&self.config.target, |r| &r.target)
    }

    /// How the run sent statements (older documents: as `config` says).
    pub fn statements(&self) -> crate::dbms::StatementMode {
        self.resolved
            .as_ref()
            .map_or(self.config.statements, |r| r.statements)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document of schema version 1 (before the split): `config` held the resolved target.
    #[test]
    fn a_version_1_document_reads_its_target_from_its_config() {
        let text = include_str!("../../tests/fixtures/results-v1.json");
        let run: RunResult = serde_json::from_str(text).unwrap();
        assert_eq!(run.schema_version, 1);
        assert!(run.resolved.is_none());
        let path = run.target().path.as_ref().unwrap();
        assert!(path.ends_with("ibench-20261123T083256-sqlite.data/ibench.sqlite"));
        assert_eq!(run.statements(), run.config.statements);
    }
}
