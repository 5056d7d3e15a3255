//! Managed throwaway servers: a [`ServerFamily`] per server DBMS (one file each, listed once
//! in the registry below) knows its binaries, how to initialise a data directory, its config
//! file, how to start and stop it and how to ask it about settings; [`ManagedServer`] is one
//! running server. A server's settings as a user gives them (flags, an experiment's keys) are
//! checked in [`settings`], for both.
//!
//! Every managed server is reachable by ibench alone: it runs as an unprivileged account
//! (never root, nor the host DBMS's own account: when ibench runs as root, the dedicated
//! system account `ibench-server` or the one `--server-user` names; see [`account`]),
//! listens on 127.0.0.1 only, keeps its files (and any Unix socket) in a directory only that
//! account can enter, refuses connections without a password, and its superuser's password
//! is random per run, held in memory only (never printed, logged or stored; a
//! `--keep-server` server's password is written to a file only its owner can read). File
//! import and export are limited to a private directory.
//!
//! Servers run in their own process group (a Ctrl-C in the terminal reaches only ibench, which
//! then stops them cleanly), as do their set-up commands, and get SIGTERM from the kernel if
//! ibench itself dies (PR_SET_PDEATHSIG), so none is left behind.

pub mod account;
pub mod binaries;
pub mod cgroup;
pub mod check;
pub mod install;
pub mod libs;
pub mod memory;
pub mod pooler;
mod process;
pub mod replicas;
pub use replicas::Replication;
pub mod settings;
mod socket_dir;
pub mod version;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, User};

use crate::dbms::url::ServerUrl;
use crate::dbms::{DbmsKind, Params};
use crate::error::{Interrupted, UsageError};
use crate::request::{Pooler, ReplicaSpec, ServerSpec};
pub use binaries::{Binaries, BinaryField, BinaryProblem, find_binary};
pub use check::{Located, SettingProblem, SettingsCheck, normalize};
pub use process::{free_port, log_error_line, log_tail};
pub use settings::{Refusal, ServerProblem, ServerSetting, ServerSettings};

/// The registry: declares each server family's module and lists it.
macro_rules! registry {
    ($($module:ident :: $family:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// Every server family ibench can manage.
        static REGISTRY: &[&dyn ServerFamily] = &[$(&$module::$family),*];
    };
}

registry! {
    postgres::POSTGRES,
    mariadb::MARIADB,
}

/// What a managed server's start needs beyond its family: the spec, the target's DBMS
/// parameters, where its files go, and who runs it.
pub struct StartContext<'a> {
    /// How to start it.
    pub spec: &'a ServerSpec,
    /// The target's DBMS parameters (e.g. the MySQL engine: MyRocks loads a plugin).
    pub params: &'a Params,
    /// Its private root directory (mode 0700, owned by `account`): data directory and files.
    pub dir: &'a Path,
    /// The server log (outside `dir`, so it outlives it).
    pub log: &'a Path,
    /// The TCP port on 127.0.0.1.
    pub port: u16,
    /// The account it runs as (`None`: ibench's own, which is not root).
    pub account: Option<&'a User>,
    /// Its binaries.
    pub binaries: &'a Binaries,
    /// Its superuser's password.
    pub password: &'a str,
    /// The library to LD_PRELOAD (its allocator), if any.
    pub preload: Option<PathBuf>,
    /// Connections the run opens at most (its clients' and ibench's own); the family sizes
    /// the server's connection limit for them when its default is smaller (a user's config
    /// still has the last word). 0: leave the default.
    pub connections: usize,
    /// The data directory was restored from a dataset: the family starts the server on it
    /// (with this run's port and password) instead of initialising one.
    pub restored: bool,
    /// `cgroup.procs` files of the run's cgroup (open), which the server process joins
    /// between fork and exec; empty: none.
    pub cgroup_procs: Vec<std::os::fd::RawFd>,
}

impl<'a> StartContext<'a> {
    /// The context of another server of this one's cluster (a replica, a Galera node): the
    /// same account, binaries, password and allocator, in the same cgroup (a memory cap or IO
    /// limit holds for the cluster), with its own `spec`, directory, log and port; never
    /// restored from a dataset.
    pub fn node<'b>(
        &'b self,
        spec: &'b ServerSpec,
        dir: &'b Path,
        log: &'b Path,
        port: u16,
    ) -> StartContext<'b>
    where
        'a: 'b,
    {
        StartContext {
            spec,
            params: self.params,
            dir,
            log,
            port,
            account: self.account,
            binaries: self.binaries,
            password: self.password,
            preload: self.preload.clone(),
            connections: self.connections,
            restored: false,
            cgroup_procs: self.cgroup_procs.clone(),
        }
    }
}

/// How long a clean stop may take before the family's escalation signal is sent. A
/// PostgreSQL whose fast shutdown came while it was recovering from a crashed backend (one
/// the kernel killed under --memory-limit) waited until killed at 120 s; immediate shutdown
/// ended it at once.
pub const ESCALATE_AFTER: Duration = Duration::from_secs(30);

/// Connections ibench itself may hold beside a run's clients: counters, maintenance, set-up.
pub const OWN_CONNECTIONS: usize = 10;

/// A server DBMS ibench can initialise, configure, start and stop.
pub trait ServerFamily: Sync {
    /// The DBMS it serves; its server name is the family's name (`--server`).
    fn dbms(&self) -> DbmsKind;

    /// Binaries it needs: the set-up command and the server, which prints `--version`.
    fn binaries(&self) -> [&'static str; 2];

    /// Directories to look in when no binary directory is given, preferred first (then PATH).
    fn default_bin_dirs(&self) -> Vec<PathBuf>;

    /// The Debian packages that install its binaries (`postgresql`), for `ibench doctor`.
    fn debian_packages(&self) -> &'static str;

    /// The binary directory of an installed `version` when none is given, if the family can
    /// tell (Debian's /usr/lib/postgresql/<major>/bin).
    fn bin_dir_for_version(&self, _version: &str) -> Option<PathBuf> {
        None
    }

    /// Checks, before anything starts, what the target's parameters need (MyRocks: its
    /// plugin is installed); the message names what to install.
    fn check_params(&self, _params: &Params) -> Result<(), String> {
        Ok(())
    }

    /// Builds of it installed by the operating system's packages, each with its version, for
    /// `ibench server list` (Debian's PostgreSQL: one directory per major). Default: none
    /// listed.
    fn system_builds(&self) -> Vec<(String, PathBuf)> {
        Vec::new()
    }

    /// The connection poolers ibench can start in front of it. Default: none.
    fn poolers(&self) -> &'static [Pooler] {
        &[]
    }

    /// A value as written into its config file (PostgreSQL quotes what is not a word).
    fn config_value(&self, value: &str) -> String {
        value.to_string()
    }

    /// Initialises a data directory under `ctx.dir` and starts the server; returns the running
    /// server once it accepts connections, with the URL (and password) to reach it.
    fn start(&self, ctx: &StartContext<'_>) -> Result<ManagedServer>;

    /// Replication this family can set up beside a managed server (`--replicas`): the most
    /// synchronous replicas it can wait for, or `None` when it has none. Default: none.
    fn replication(&self) -> Option<Replication> {
        None
    }

    /// Starts the replicas `spec` asks for of `primary` (started with `ctx`), each
    /// replicating once this returns; one that fails stops those started before it (their
    /// `Drop`). Called only for a family whose [`ServerFamily::replication`] is `Some`.
    fn start_replicas(
        &self,
        _primary: &ManagedServer,
        _ctx: &StartContext<'_>,
        _spec: &ReplicaSpec,
    ) -> Result<Vec<ManagedServer>> {
        anyhow::bail!("{} has no replicas", self.dbms().server_name())
    }

    /// The signal that stops it cleanly.
    fn stop_signal(&self) -> Signal {
        Signal::SIGTERM
    }

    /// A signal that stops it at once, sent when the clean stop has not ended it within
    /// [`ESCALATE_AFTER`] (PostgreSQL: SIGQUIT, immediate shutdown). Default: none (killed at
    /// the end of the wait).
    fn escalation_signal(&self) -> Option<Signal> {
        None
    }

    /// A file telling how to connect to a kept server (credentials only its owner may read),
    /// and the line to print about it.
    fn credentials_file(&self, server: &ManagedServer) -> Result<String>;

    /// Every problem the server's own binaries find with the settings of `checks` (all of
    /// this family), each pointing at where the setting was written.
    fn check_settings(&self, checks: &[&SettingsCheck]) -> Vec<SettingProblem>;
}

/// The family that manages `kind`, if any.
pub fn family(kind: DbmsKind) -> Option<&'static dyn ServerFamily> {
    REGISTRY.iter().copied().find(|f| f.dbms() == kind)
}

/// Every family ibench can manage, in registry order.
pub fn families() -> &'static [&'static dyn ServerFamily] {
    REGISTRY
}

/// Names of the families `pooler` can be started in front of (`postgres`), for messages.
pub fn pooler_servers(pooler: Pooler) -> String {
    REGISTRY
        .iter()
        .filter(|f| f.poolers().contains(&pooler))
        .map(|f| f.dbms().server_name())
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Names of the families (`postgres, mariadb`), for messages.
pub fn family_names() -> String {
    REGISTRY
        .iter()
        .map(|f| f.dbms().server_name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The DBMS whose managed server is called `name` (`--server` values).
pub fn parse_server(name: &str) -> Result<DbmsKind, String> {
    REGISTRY
        .iter()
        .map(|f| f.dbms())
        .find(|k| k.server_name().eq_ignore_ascii_case(name) || k.name() == name)
        .ok_or_else(|| {
            format!(
                "unknown server {name:?}: expected one of {}",
                family_names()
            )
        })
}

/// The family of `kind`, or a usage error naming the ones there are.
pub fn require_family(kind: DbmsKind) -> Result<&'static dyn ServerFamily, UsageError> {
    family(kind).ok_or_else(|| {
        UsageError::new(format!(
            "ibench cannot start a {kind} server (it manages {})",
            family_names()
        ))
    })
}

/// A running managed server. Dropping it stops the server (unless kept).
pub struct ManagedServer {
    child: Option<Child>,
    /// How to reach it; holds its superuser's password (never shown).
    pub url: ServerUrl,
    /// Its private root directory (data directory inside).
    pub dir: PathBuf,
    /// Its log file.
    pub log: PathBuf,
    /// The server binary that was started.
    pub binary: PathBuf,
    /// LD_PRELOAD library, if any.
    pub preload: Option<PathBuf>,
    /// The account it runs as.
    pub account: String,
    /// That account when ibench switched to it (as root); `None`: ibench's own.
    user: Option<User>,
    /// Directories outside `dir` it uses (a Unix socket's), removed once it has stopped.
    pub cleanup: Vec<PathBuf>,
    /// For a kept server: where its credentials are, and how to connect.
    pub credentials: Option<String>,
    /// What restoring a dataset into its data directory did, if it started from one.
    pub restored: Option<crate::dataset::Restored>,
    /// Its streaming replicas (`--replicas`), stopped before it.
    pub replicas: Vec<ManagedServer>,
    /// How to start it again after it died (a Galera node, a replica); the
    /// server started so is its server from then on.
    pub rejoin: Option<std::sync::Arc<replicas::rejoin::Rejoin>>,
    family: &'static dyn ServerFamily,
    keep: bool,
}

impl ManagedServer {
    /// Initialises and starts a server for the target's `params` in `dir` (created; must not
    /// exist yet), logging to `log`, with room for `connections` client connections (0: the
    /// server's default limit); its data directory restored from `dataset` when given.
    pub fn start(
        spec: &ServerSpec,
        params: &Params,
        dir: &Path,
        log: &Path,
        connections: usize,
        dataset: Option<&crate::dataset::Dataset>,
    ) -> Result<Self> {
        Self::start_in(spec, params, dir, log, connections, dataset, None)
    }

    /// [`ManagedServer::start`] with the server process in the run's cgroup (`join`).
    pub fn start_in(
        spec: &ServerSpec,
        params: &Params,
        dir: &Path,
        log: &Path,
        connections: usize,
        dataset: Option<&crate::dataset::Dataset>,
        join: Option<&cgroup::Join>,
    ) -> Result<Self> {
        let family = require_family(spec.kind)?;
        family.check_params(params).map_err(UsageError::new)?;
        let binaries = Binaries::locate(family, spec.bin_dir.as_deref(), None, "--server-bin")
            .map_err(|p| UsageError::new(p.message))?;
        if let Some(d) = dataset {
            check_dataset_version(d, &binaries.server)?;
        }
        let preload = spec
            .malloc
            .find_library()
            .map_err(|m| UsageError::new(format!("allocator {m}")))?;
        let account = account::resolve(spec.user.as_deref(), "--server-user")?;
        if let Some(u) = &account
            && let Some(blocked) = process::first_closed_parent(&binaries.server, u)
        {
            return Err(UsageError::new(format!(
                "the managed server runs as '{}', which cannot enter {} to start {}: install \
                 builds where it can (`ibench server install` as root uses \
                 /var/cache/ibench/servers; IBENCH_SERVER_CACHE chooses another), or chmod o+x \
                 the directory",
                u.name,
                blocked.display(),
                binaries.server.display()
            ))
            .into());
        }
        // A new directory: it is made private to the server's account below, which must
        // never reach a directory planted (or linked) at its name.
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        crate::safe_fs::create_dir(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        // Servers resolve relative paths against their own base directory (mariadbd: /usr),
        // not ours.
        let dir = std::path::absolute(dir)
            .with_context(|| format!("cannot resolve {}", dir.display()))?;
        let log = std::path::absolute(log)
            .with_context(|| format!("cannot resolve {}", log.display()))?;
        private_dir(&dir, account.as_ref())?;
        let restored = match dataset {
            Some(d) => {
                let owner = account.as_ref().map(|u| (u.uid.as_raw(), u.gid.as_raw()));
                match crate::dataset::restore(d, &dir.join("data"), owner) {
                    Ok(restored) => Some(restored),
                    Err(e) => {
                        // The restore removed what it copied: `dir`, made above, is empty.
                        let _ = fs::remove_dir(&dir);
                        return Err(e);
                    }
                }
            }
            None => None,
        };
        let password = process::random_password();
        let ctx = StartContext {
            spec,
            params,
            dir: &dir,
            log: &log,
            port: free_port()?,
            account: account.as_ref(),
            binaries: &binaries,
            password: &password,
            preload: preload.clone(),
            connections: if connections == 0 {
                0
            } else {
                connections.saturating_add(OWN_CONNECTIONS)
            },
            restored: restored.is_some(),
            cgroup_procs: join.map(cgroup::Join::fds).unwrap_or_default(),
        };
        let mut server = family.start(&ctx)?;
        if let Some(r) = &spec.replicas {
            server.replicas = family.start_replicas(&server, &ctx, r)?;
        }
        server.set_keep(spec.keep);
        server.preload = preload;
        server.restored = restored;
        if server.keep {
            // A server left running is for the user to inspect, during the run too: how to
            // reach it goes to a file only the user can read, as soon as it runs.
            server.credentials = Some(
                family
                    .credentials_file(&server)
                    .unwrap_or_else(|e| format!("its credentials could not be written: {e:#}")),
            );
        }
        Ok(server)
    }

    /// A server just spawned by a family's `start`, not yet known to accept connections.
    pub fn spawned(
        family: &'static dyn ServerFamily,
        child: Child,
        url: ServerUrl,
        ctx: &StartContext<'_>,
    ) -> Self {
        ManagedServer {
            child: Some(child),
            url,
            dir: ctx.dir.to_path_buf(),
            log: ctx.log.to_path_buf(),
            binary: ctx.binaries.server.clone(),
            preload: None,
            account: ctx
                .account
                .map(|u| u.name.clone())
                .unwrap_or_else(account::own_name),
            user: ctx.account.cloned(),
            cleanup: Vec::new(),
            credentials: None,
            restored: None,
            replicas: Vec::new(),
            rejoin: None,
            family,
            // Kept (`--keep-server`) only once the whole cluster runs (`start_in`): a start
            // that fails stops every server it made.
            keep: false,
        }
    }

    /// Process id of the server (postmaster / mariadbd).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Leaves it and its replicas running when dropped (`--keep-server`), or not.
    fn set_keep(&mut self, keep: bool) {
        self.keep = keep;
        for r in &mut self.replicas {
            r.set_keep(keep);
        }
    }

    /// Takes over the server started again after this one died ([`ManagedServer::rejoin`]),
    /// reaping the dead one: what stops or leaves running the server then acts on it.
    fn adopt_rejoined(&mut self) {
        let Some(again) = self.rejoin.as_ref().and_then(|r| r.take_child()) else {
            return;
        };
        if let Some(mut dead) = self.child.replace(again) {
            let _ = dead.kill();
            let _ = dead.wait();
        }
    }

    /// Its family's name (`postgres`, `mariadb`).
    pub fn name(&self) -> &'static str {
        self.family.dbms().server_name()
    }

    /// Stops the server with its family's signal, then SIGKILL if it has not exited within
    /// two minutes.
    pub fn stop(&mut self) -> Result<()> {
        // Replicas first: the primary's fast shutdown would wait for them to receive its WAL.
        for mut r in self.replicas.drain(..) {
            let _ = r.stop();
        }
        self.adopt_rejoined();
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = Pid::from_raw(child.id() as i32);
        let _ = kill(pid, self.family.stop_signal());
        let start = Instant::now();
        let deadline = start + Duration::from_secs(120);
        let mut escalation = self.family.escalation_signal();
        let mut stopped = false;
        while Instant::now() < deadline {
            if child.try_wait()?.is_some() {
                stopped = true;
                break;
            }
            if start.elapsed() > ESCALATE_AFTER
                && let Some(signal) = escalation.take()
            {
                let _ = kill(pid, signal);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if !stopped {
            let _ = child.kill();
            let _ = child.wait();
        }
        for d in self.cleanup.drain(..) {
            let _ = fs::remove_dir_all(d);
        }
        if !stopped {
            bail!("server pid {pid} did not stop within 120 s and was killed");
        }
        Ok(())
    }

    /// Leaves the server running (for `--keep-server`); returns its pid and a line saying
    /// where its credentials are.
    pub fn detach(&mut self) -> (Option<u32>, String) {
        self.adopt_rejoined();
        let mut note = self.credentials.clone().unwrap_or_default();
        for r in &mut self.replicas {
            let port = r.url.url().port().unwrap_or_default();
            if let (Some(pid), _) = r.detach() {
                note.push_str(&format!(
                    "\nreplica left running on 127.0.0.1:{port} (pid {pid}, same password); \
                     stop it with kill {pid}"
                ));
            }
        }
        // A server that died during the run (a cluster's node, `--on-node-failure continue`)
        // is not left running: it is reaped, and no pid is said of it.
        let running = self
            .child
            .take()
            .and_then(|mut c| matches!(c.try_wait(), Ok(None)).then(|| c.id()));
        (running, note)
    }

    /// The account ibench switched to to run it (as root), for what runs beside it (its
    /// pooler); `None`: ibench's own.
    pub fn user(&self) -> Option<&User> {
        self.user.as_ref()
    }

    /// Whether the server is left running when dropped.
    pub fn keep(&self) -> bool {
        self.keep
    }

    /// Stops the server and returns an error saying `what` failed, with the log's error line
    /// and tail.
    pub fn fail_with_log(&mut self, what: &str) -> anyhow::Error {
        let _ = self.stop();
        process::failure(what, &self.log)
    }

    /// Waits until `probe` succeeds, the server exits, the run is interrupted, or the timeout
    /// passes.
    pub fn wait_ready(&mut self, timeout: Duration, mut probe: impl FnMut() -> bool) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                self.child = None;
                return Err(
                    self.fail_with_log(&format!("server exited during start-up ({status})"))
                );
            }
            if crate::interrupt::requested() {
                let _ = self.stop();
                return Err(Interrupted.into());
            }
            if probe() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(self.fail_with_log(&format!(
                    "server did not accept connections within {} s",
                    timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.stop();
        }
    }
}

/// Refuses (one line) to restore `dataset` for a server binary of another version than the
/// one that loaded it (a server would not start on the files, or not read them the same),
/// before anything is made.
fn check_dataset_version(dataset: &crate::dataset::Dataset, server: &Path) -> Result<()> {
    let m = &dataset.manifest;
    let saved = m.version.split_whitespace().find_map(version::version_in);
    let here = version::binary_version(server);
    if let (Some(saved), Some(here)) = (saved, here)
        && saved != here
    {
        bail!(UsageError::new(format!(
            "dataset {} was loaded by {} {saved}, but {} is {here}: start from a dataset of \
             this version (or give --server-bin of that one)",
            m.name,
            m.identity.dbms,
            server.display()
        )));
    }
    Ok(())
}

/// Makes `dir` private to the server's account: mode 0700, owned by it. Every parent
/// directory must let that account pass (the message says so when one does not).
fn private_dir(dir: &Path, account: Option<&User>) -> Result<()> {
    if let Some(u) = account {
        nix::unistd::chown(dir, Some(u.uid), Some(u.gid))
            .with_context(|| format!("cannot give {} to account {}", dir.display(), u.name))?;
        if let Some(blocked) = process::first_closed_parent(dir, u) {
            bail!(UsageError::new(format!(
                "the managed server runs as '{}', which cannot enter {} (mode {:o}): choose an \
                 --out (or data root) whose parent directories others may enter (chmod o+x), \
                 e.g. under /tmp",
                u.name,
                blocked.display(),
                fs::metadata(&blocked)
                    .map(|m| m.permissions().mode() & 0o777)
                    .unwrap_or(0)
            )));
        }
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot make {} private", dir.display()))?;
    Ok(())
}
