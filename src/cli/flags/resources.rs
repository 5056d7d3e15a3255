//! The flags of a run's resource conditions (`--memory-limit`, `--io-limit`, `--os-cache`,
//! `--server-cpus`, `--client-cpus`), shared by `run`, `micro` and `tpcc` through
//! [`super::ConditionArgs`]; checked into a [`Resources`].

use clap::Args;

use crate::error::UsageError;
use crate::request::resources::{self, CpuList, IoLimit, OsCache, Resources};

/// Memory cap, IO limits, CPUs and OS cache mode of the DBMS (docs/studies.md: IO-bound
/// studies).
#[derive(Debug, Args)]
pub struct ResourceArgs {
    /// Run the managed server (with an embedded DBMS: ibench itself) in a cgroup of its own
    /// with this memory limit, page cache included (e.g. 512M, 2G); needs root and the
    /// memory controller (cgroup v2 or v1).
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<String>,
    /// Throttle the DBMS's IO on its data directory's device through its cgroup:
    /// riops=N,wiops=N,rbps=SIZE,wbps=SIZE (any of them).
    #[arg(long, value_name = "LIMITS")]
    pub io_limit: Option<String>,
    /// The OS page cache of the database's files: keep, or drop-before-step (written back
    /// and dropped before every step).
    #[arg(long, value_name = "MODE", default_value = "keep")]
    pub os_cache: String,
    /// CPUs the managed server's processes may run on (a cpuset of its cgroup), e.g. 0 or
    /// 2-3.
    #[arg(long, value_name = "LIST")]
    pub server_cpus: Option<String>,
    /// CPUs ibench's client threads may run on (sched_setaffinity), e.g. 1.
    #[arg(long, value_name = "LIST")]
    pub client_cpus: Option<String>,
}

impl ResourceArgs {
    /// The flags checked; `embedded`: the DBMS runs inside ibench; `managed`: ibench starts
    /// the server (an external server's processes are not ibench's to move).
    pub fn spec(&self, embedded: bool, managed: bool) -> Result<Resources, UsageError> {
        let bad = |flag: &str, msg: String| UsageError::new(format!("{flag}: {msg}"));
        let online = resources::online_cpus();
        let cpus = |flag: &str, v: &Option<String>| {
            v.as_deref()
                .map(|t| CpuList::parse(t, &online).map_err(|m| bad(flag, m)))
                .transpose()
        };
        let r = Resources {
            memory_limit: self
                .memory_limit
                .as_deref()
                .map(|t| resources::parse_memory_limit(t).map_err(|m| bad("--memory-limit", m)))
                .transpose()?,
            io_limit: self
                .io_limit
                .as_deref()
                .map(|t| IoLimit::parse(t).map_err(|m| bad("--io-limit", m)))
                .transpose()?,
            os_cache: OsCache::parse(&self.os_cache).map_err(|m| bad("--os-cache", m))?,
            server_cpus: cpus("--server-cpus", &self.server_cpus)?,
            client_cpus: cpus("--client-cpus", &self.client_cpus)?,
        };
        if !embedded && !managed && r.needs_cgroup() {
            let flag = if r.memory_limit.is_some() {
                "--memory-limit"
            } else if r.io_limit.is_some() {
                "--io-limit"
            } else {
                "--server-cpus"
            };
            return Err(UsageError::new(format!(
                "{flag} applies to a server ibench starts (--server) or an embedded DBMS: it \
                 does not move an external server's processes"
            )));
        }
        if embedded && r.server_cpus.is_some() {
            return Err(UsageError::new(
                "--server-cpus: an embedded DBMS runs in ibench's client threads; pin them with \
                 --client-cpus",
            ));
        }
        Ok(r)
    }
}
