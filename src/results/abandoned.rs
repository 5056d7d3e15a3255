//! Runs whose ibench process ended without finishing them (`kill -9`, a crash, a reboot):
//! their documents say `running` forever, and the scratch database (`<stem>.data`) or managed
//! server directory (`<stem>.server`) they created stays on disk. At the start of a run,
//! [`sweep`] looks at every run lock in `--out` (see `lock.rs`); a lock nobody holds belongs
//! to a run that is over. Such a run still `running` is marked `abandoned` (its file, and its
//! row in the results database when it has one), and the directories ibench created for it
//! are removed unless the run asked to keep them or a server still runs in them; whatever is
//! left is named.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::request::RunSpec;
use crate::results::file::{self, write_atomic};
use crate::results::lock::RunLock;
use crate::results::model::{RunResult, RunStatus};
use crate::results::store::Store;
use crate::safe_fs;

/// How long to wait for a managed server of a dead run to finish stopping (it got SIGTERM
/// from the kernel when ibench died).
const SERVER_EXIT_WAIT: Duration = Duration::from_secs(10);

/// One dead run found and dealt with.
#[derive(Debug, Default)]
pub struct Found {
    /// Its id (results file stem).
    pub run_id: String,
    /// It had saved nothing: its empty results file was removed.
    pub unsaved: bool,
    /// Marked `abandoned` in its results file.
    pub marked: bool,
    /// Also marked in the results database.
    pub stored: bool,
    /// It had ended, but its end had not reached the results database: written there now
    /// from its results file.
    pub synced: bool,
    /// Directories removed.
    pub removed: Vec<PathBuf>,
    /// What is left, and why.
    pub left: Vec<(PathBuf, String)>,
}

impl Found {
    /// One line for the user.
    pub fn describe(&self) -> String {
        let mut s = if self.synced {
            format!(
                "note: run {} ended, but its end had not reached the results database; \
                 written there now from its results file",
                self.run_id
            )
        } else if self.unsaved {
            format!(
                "note: run {} ended before saving anything (its ibench process was killed)",
                self.run_id
            )
        } else {
            format!(
                "note: run {} was abandoned (its ibench process ended without finishing it)",
                self.run_id
            )
        };
        if self.marked {
            s.push_str(if self.stored {
                "; marked abandoned in its results file and the results database"
            } else {
                "; marked abandoned in its results file"
            });
        }
        if !self.removed.is_empty() {
            let dirs: Vec<String> = self
                .removed
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            s.push_str(&format!("; removed {}", dirs.join(", ")));
        }
        for (path, why) in &self.left {
            s.push_str(&format!("; left {} ({why})", path.display()));
        }
        s
    }
}

/// Deals with every dead run in `out` (see the module docs) and prints one line per run.
/// Never fails: what cannot be done is named in the line.
pub fn sweep(out: &Path, store: &Path) {
    for found in find(out, store) {
        eprintln!("{}", found.describe());
    }
}

/// Deals with every dead run in `out`: marks it `abandoned` in its results file and in the
/// results database at `store` (when the run is there), removes its directories.
pub fn find(out: &Path, store: &Path) -> Vec<Found> {
    let Ok(entries) = fs::read_dir(out) else {
        return Vec::new();
    };
    let mut locks: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "lock")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    locks.sort();
    let mut found = Vec::new();
    for path in locks {
        // Held: the run lives. Taken: it is over, and stays ours (no run can start under its
        // name) until dropped, which removes the lock file.
        let Ok(Some(_lock)) = RunLock::take_if_dead(&path) else {
            continue;
        };
        if let Some(f) = settle(&path.with_extension("json"), store) {
            found.push(f);
        }
    }
    found
}

/// The dead run whose results file is `json`: `None` when it ended cleanly, or when the
/// file is not ibench's own (a link or another user's file planted beside a lock: not a run
/// of ours, whatever it says).
fn settle(json: &Path, store: &Path) -> Option<Found> {
    if !safe_fs::is_own_file(json) {
        return None;
    }
    let run_id = json.file_stem()?.to_string_lossy().into_owned();
    let mut found = Found {
        run_id,
        ..Found::default()
    };
    let len = fs::metadata(json).ok()?.len();
    if len == 0 {
        // Killed before its first save (setting up a server, say): nothing was measured.
        found.unsaved = true;
        remove_dirs(json, None, &mut found);
        let _ = fs::remove_file(json);
        return Some(found);
    }
    let mut run = match file::load(json) {
        Ok(run) => run,
        Err(e) => {
            found.left.push((json.to_path_buf(), format!("{e:#}")));
            return Some(found);
        }
    };
    if run.status != RunStatus::Running {
        // It ended, but its last save may not have reached the results database.
        found.synced = update_store(&run, store, &mut found);
        return (found.synced || !found.left.is_empty()).then_some(found);
    }
    run.status = RunStatus::Abandoned;
    run.error = Some(format!(
        "abandoned: the ibench process ended without finishing the run (killed, crashed, or \
         the machine went down); found by a later run at {}",
        Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
    ));
    match write_atomic(json, &run) {
        Ok(()) => found.marked = true,
        Err(e) => found
            .left
            .push((json.to_path_buf(), format!("cannot mark it abandoned: {e}"))),
    }
    found.stored = update_store(&run, store, &mut found);
    remove_dirs(json, Some(&run.config), &mut found);
    Some(found)
}

/// Writes `run` (from its own results file) into the results database at `store` when the
/// store's row agrees with it (the same run, still `running` there, started at the same
/// moment); whether it did. A store that cannot be opened is named in `found`.
fn update_store(run: &RunResult, store: &Path, found: &mut Found) -> bool {
    let started = run.started_at.to_rfc3339();
    let result = Store::open(store).and_then(|mut s| {
        if s.running_since(&run.run_id)?.as_deref() == Some(started.as_str()) {
            s.save(run)?;
            Ok(true)
        } else {
            Ok(false)
        }
    });
    result.unwrap_or_else(|e| {
        found.left.push((
            store.to_path_buf(),
            format!("its row there may still say running: {e:#}"),
        ));
        false
    })
}

/// Removes the scratch database and managed server directories of the run of `json`, unless
/// its spec asked to keep them or a server still runs in one.
fn remove_dirs(json: &Path, spec: Option<&RunSpec>, found: &mut Found) {
    let keep_data = spec.is_some_and(|s| s.keep_data);
    let keep_server = spec.is_some_and(|s| s.server.as_ref().is_some_and(|s| s.keep));
    for (dir, keep) in [
        (json.with_extension("data"), keep_data),
        (json.with_extension("server"), keep_data || keep_server),
    ] {
        if !dir.exists() {
            continue;
        }
        if keep {
            let why = "the run asked to keep it (--keep-data / --keep-server)";
            found.left.push((dir, why.to_string()));
            continue;
        }
        if let Some(pid) = running_server(&dir) {
            let why = format!("server pid {pid} still runs in it; stop it, then remove it");
            found.left.push((dir, why));
            continue;
        }
        // Kept beside the results, unless the directory is a link (the log would be read
        // through it) or a log is there already; never through a link (see `safe_fs`).
        let log = dir.join("server.log");
        let kept_log = json.with_extension("server.log");
        let real_dir = fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
        if real_dir && log.exists() {
            let _ = safe_fs::copy_new(&log, &kept_log);
        }
        match fs::remove_dir_all(&dir) {
            Ok(()) => found.removed.push(dir),
            Err(e) => found.left.push((dir, format!("cannot remove it: {e}"))),
        }
    }
}

/// The pid of a managed server still running in `dir` (PostgreSQL's `data/postmaster.pid`,
/// MariaDB's `mysqld.pid`, checked against the process's working directory, which a server
/// keeps in its data directory), after waiting a little for it to finish stopping.
fn running_server(dir: &Path) -> Option<u32> {
    let pid = [
        dir.join("data").join("postmaster.pid"),
        dir.join("mysqld.pid"),
    ]
    .iter()
    .filter_map(|f| fs::read_to_string(f).ok())
    .find_map(|t| t.lines().next()?.trim().parse::<u32>().ok())?;
    let dir = dir.canonicalize().ok()?;
    let runs_here = || {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let zombie = fs::read_to_string(proc.join("stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        });
        match fs::read_link(proc.join("cwd")) {
            Ok(cwd) => !zombie && cwd.starts_with(&dir),
            // Gone; or not ours to look at, in which case it may well be the server.
            Err(e) => proc.exists() && !zombie && e.kind() == std::io::ErrorKind::PermissionDenied,
        }
    };
    let deadline = Instant::now() + SERVER_EXIT_WAIT;
    while runs_here() {
        if Instant::now() > deadline {
            return Some(pid);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}
