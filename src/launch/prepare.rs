//! A run's request resolved into what it runs on: the scratch database's directory made,
//! the managed server (and pooler) started, what the run's cost is read from. The request
//! itself is never changed: what ibench resolved from it is kept apart ([`Resolved`]) and
//! recorded beside it. [`Prepared::finish`] undoes what was made, and dropping a
//! [`Prepared`] on any other path does too.

use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::managed::{self, Servers};
use super::{RunOptions, watch};
use crate::metrics::proc::Watch;
use crate::request::RunSpec;
use crate::results::file::ResultsFile;
use crate::results::model::{ManagedServerInfo, Resolved};
use crate::server::cgroup::RunCgroup;

/// What a run runs on, ready; it owns the scratch directory and the servers it made.
pub struct Prepared {
    /// Where the run connects and how.
    pub resolved: Resolved,
    /// The managed server ibench started for the run, as recorded.
    pub managed: Option<ManagedServerInfo>,
    /// What the run's cost is read from, and a line saying whose figures they are.
    pub watch: (Watch, String),
    /// The dataset the run starts from, if any.
    pub dataset: Option<crate::dataset::Dataset>,
    /// What restoring it did.
    pub restored: Option<crate::dataset::Restored>,
    /// The scratch database's directory (`<stem>.data`), removed at the end.
    scratch: Option<PathBuf>,
    servers: Option<Servers>,
    keep_data: bool,
    /// The DBMS's own cgroup; removed after the server stops.
    cgroup: Option<RunCgroup>,
}

impl Prepared {
    /// Resolves `spec` for the run saved to `file`: makes the scratch database's directory
    /// beside it, or starts the managed server, and finds what to sample for the cost.
    pub fn start(spec: &RunSpec, file: &ResultsFile, options: &RunOptions) -> Result<Prepared> {
        let mut prepared = Prepared {
            resolved: Resolved {
                target: spec.target.clone(),
                statements: spec.statements,
                cgroup: None,
            },
            managed: None,
            watch: (Watch::default(), String::new()),
            dataset: None,
            restored: None,
            scratch: None,
            servers: None,
            keep_data: spec.keep_data,
            cgroup: None,
        };
        if let Some(name) = &spec.dataset {
            let store = crate::dataset::store_dir(&spec.out_dir);
            let dataset = crate::dataset::open(&store, name)?;
            dataset.check_matches(spec)?;
            prepared.dataset = Some(dataset);
        }
        if spec.scratch_database {
            let dir = file.path().with_extension("data");
            match &prepared.dataset {
                Some(dataset) => {
                    let restored = crate::dataset::restore(dataset, &dir, None)?;
                    say_restored(&restored, options);
                    prepared.restored = Some(restored);
                }
                None => crate::safe_fs::create_dir(&dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?,
            }
            let kind = spec.target.kind;
            prepared.resolved.target.path = Some(dir.join(format!("ibench.{}", kind.name())));
            prepared.scratch = Some(dir);
        }
        if spec.resources.needs_cgroup() {
            let cg = cgroup_for(spec, file, prepared.scratch.as_deref())?;
            prepared.resolved.cgroup = Some(format!("v{}: {}", cg.version, cg.describe()));
            prepared.cgroup = Some(cg);
        }
        prepared.watch = match &spec.server {
            None => {
                if let Some(cg) = prepared.cgroup.as_mut() {
                    // An embedded DBMS lives in ibench's process: ibench moves in.
                    cg.move_self_in()?;
                }
                watch::external(&prepared.resolved.target, options)?
            }
            Some(server_spec) => {
                let join = prepared.cgroup.as_ref().map(RunCgroup::join).transpose()?;
                let servers = managed::start(
                    spec,
                    server_spec,
                    file,
                    options,
                    &mut prepared.resolved,
                    prepared.dataset.as_ref(),
                    join.as_ref(),
                )?;
                if let Some(restored) = &servers.restored {
                    say_restored(restored, options);
                }
                prepared.restored = servers.restored.clone();
                if servers.info.kept
                    && let Some(cg) = prepared.cgroup.as_mut()
                {
                    cg.keep();
                }
                let name = server_spec.kind.server_name();
                let replicas = (servers.info.replicas.iter())
                    .filter_map(|r| Some((r.name.clone(), r.pid?)))
                    .collect();
                // A Galera cluster's nodes are n1..nN; a primary's replicas r1..rN.
                let primary = match server_spec.galera {
                    Some(_) => "n1",
                    None => "primary",
                };
                let data = servers.data_dir();
                let watch = watch::managed(servers.pid(), name, data, primary, replicas);
                prepared.managed = Some(servers.info.clone());
                prepared.servers = Some(servers);
                watch
            }
        };
        if let Some(cg) = &prepared.cgroup {
            prepared.watch.0.cgroup = Some(cg.files.clone());
        }
        Ok(prepared)
    }

    /// How to start each of the managed cluster's other nodes again after it died (none for a
    /// node that cannot be), in the results' `managed_server.replicas` order.
    pub fn rejoins(&self) -> Vec<Option<std::sync::Arc<crate::server::replicas::rejoin::Rejoin>>> {
        self.servers
            .as_ref()
            .map(|s| s.rejoins())
            .unwrap_or_default()
    }

    /// Stops the servers (or leaves a kept one running) and removes what the run made,
    /// unless it keeps its data; an error of stopping the server.
    pub fn finish(mut self) -> Result<()> {
        self.close()
    }

    fn close(&mut self) -> Result<()> {
        let stopped = match self.servers.take() {
            Some(servers) => servers.stop(self.keep_data),
            None => Ok(()),
        };
        if let Some(dir) = self.scratch.take()
            && !self.keep_data
        {
            let _ = fs::remove_dir_all(dir);
        }
        // After the server: a cgroup is removed once its processes have gone.
        if let Some(cg) = self.cgroup.take()
            && let Some(n) = cg.files.read().oom_kills.filter(|&n| n > 0)
        {
            eprintln!(
                "warning: the kernel killed {n} process(es) of the DBMS for want of memory \
                 under the memory limit of {} MiB (raise --memory-limit, or lower the DBMS's \
                 own memory settings)",
                cg.files.memory_limit.unwrap_or(0) >> 20
            );
        }
        stopped
    }
}

/// One line on what restoring a dataset did (unless quiet).
fn say_restored(r: &crate::dataset::Restored, options: &RunOptions) {
    if !options.quiet {
        eprintln!(
            "dataset {}: {} files, {} MiB restored by {} in {:.1} s ({:.1} s of it checking \
             its sha256)",
            r.name,
            r.files,
            r.bytes >> 20,
            r.method.name(),
            r.seconds,
            r.verify_seconds
        );
    }
}

/// The DBMS's cgroup for `spec`, its IO counted on the device of the data's directory (the
/// server's data root or --out; an embedded database's directory).
fn cgroup_for(
    spec: &RunSpec,
    file: &ResultsFile,
    scratch: Option<&std::path::Path>,
) -> Result<RunCgroup> {
    let out = file.path().parent().unwrap_or(std::path::Path::new("."));
    let data_dir = match (&spec.server, scratch, &spec.target.path) {
        (Some(s), _, _) => s.data_root.clone().unwrap_or_else(|| out.to_path_buf()),
        (None, Some(dir), _) => dir.to_path_buf(),
        (None, None, Some(path)) => path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf),
        (None, None, None) => out.to_path_buf(),
    };
    let run_id = file
        .path()
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    RunCgroup::create(&spec.resources, &run_id, &data_dir)
}

impl Drop for Prepared {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
