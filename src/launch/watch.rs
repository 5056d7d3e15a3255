//! What to sample for a run's cost: the managed server's process tree, an external server's
//! (given by pid), or ibench itself for an embedded DBMS; and the files and device of the data.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::RunOptions;
use crate::dbms::TargetSpec;
use crate::error::UsageError;
use crate::metrics::proc::{self, Watch};

/// What to sample for a target that is not a managed server: ibench itself for an embedded
/// DBMS, the given pid for an external server, or nothing (host figures only). Returns the
/// watch and a line saying whose figures the DBMS figures are.
pub fn external(target: &TargetSpec, options: &RunOptions) -> Result<(Watch, String)> {
    if target.kind.embedded() {
        let path = target.file_path()?;
        // The database file or directory and what the DBMS keeps beside it (SQLite's -wal).
        let files = target.kind.data_paths(path);
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        return Ok((
            Watch {
                dbms_pid: None,
                embedded: true,
                device: proc::device_of(dir),
                data_paths: files,
                cgroup: None,
                more_pids: Vec::new(),
                primary_name: String::new(),
            },
            format!(
                "embedded: {} runs inside ibench, so the DBMS figures are ibench's own process",
                target.kind
            ),
        ));
    }
    let pid = options.server_pid;
    if let Some(pid) = pid
        && !Path::new(&format!("/proc/{pid}")).exists()
    {
        return Err(
            UsageError::new(format!("--server-pid {pid}: no such process on this host")).into(),
        );
    }
    let source = match pid {
        Some(pid) => format!("external server, pid {pid} and its children"),
        None => "unknown: no DBMS process is known for an external server (give --server-pid or \
                 --server-pid-file); DBMS figures are not reported, host figures are"
            .to_string(),
    };
    let device = options.data_dir.as_deref().and_then(proc::device_of);
    Ok((
        Watch {
            dbms_pid: pid,
            embedded: false,
            device,
            data_paths: options.data_dir.iter().cloned().collect(),
            cgroup: None,
            more_pids: Vec::new(),
            primary_name: String::new(),
        },
        source,
    ))
}

/// What to sample for a managed server: its process tree (and its replicas' or other
/// nodes', `replicas`, each named), and its data directory (the primary's only: the size of
/// one copy of the data). `primary` names the server itself beside them (`primary`, `n1`).
pub fn managed(
    pid: Option<u32>,
    name: &str,
    data: PathBuf,
    primary: &str,
    replicas: Vec<(String, u32)>,
) -> (Watch, String) {
    let mut source = format!(
        "managed {name} server, pid {} and its children",
        pid.unwrap_or(0)
    );
    if !replicas.is_empty() {
        let more: Vec<String> = (replicas.iter())
            .map(|(n, p)| format!("{n} (pid {p})"))
            .collect();
        source.push_str(&format!(
            " ({primary}), with {} and theirs",
            more.join(", ")
        ));
    }
    (
        Watch {
            dbms_pid: pid,
            embedded: false,
            device: proc::device_of(&data),
            data_paths: vec![data],
            cgroup: None,
            more_pids: (replicas.into_iter())
                .map(|(n, p)| (n, std::sync::Arc::new(p.into())))
                .collect(),
            primary_name: primary.to_string(),
        },
        source,
    )
}
