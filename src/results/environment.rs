//! The machine a run ran on, read from /proc and /etc/os-release.

use std::fs;

use procfs::Current;

use crate::dbms::Dbms;
use crate::results::model::{DbmsInfo, Environment};

fn read_trimmed(path: &str) -> String {
    fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn os_name() -> String {
    let text = fs::read_to_string("/etc/os-release").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.to_string())
}

/// Describes this machine and the target DBMS. Figures that cannot be read are left empty
/// rather than guessed; a DBMS that cannot report its version fails the run.
pub fn collect(dbms: &dyn Dbms) -> anyhow::Result<Environment> {
    let cpu_model = procfs::CpuInfo::current()
        .ok()
        .and_then(|c| c.model_name(0).map(str::to_string))
        .unwrap_or_default();
    let memory_bytes = procfs::Meminfo::current().map(|m| m.mem_total).unwrap_or(0);
    Ok(Environment {
        ibench_version: env!("CARGO_PKG_VERSION").to_string(),
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
        os: os_name(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        cpu_model,
        cpu_cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0),
        memory_bytes,
        dbms: DbmsInfo {
            name: dbms.kind().name().to_string(),
            version: dbms.version()?,
            location: dbms.location(),
            settings: dbms.settings()?,
        },
        storage: None,
        cost_per_hour: None,
        host_features: Vec::new(),
        canary: None,
    })
}
