//! The database file given by `--path`, checked before SQLite opens it.
//!
//! * Where it is: a directory another user can write to is refused unless it is sticky, as
//!   `--out` is ([`crate::safe_fs::check_dir`]). A symbolic link at `--path` is refused
//!   anywhere (SQLite would follow it to whatever file it names), and SQLite opens the file
//!   with `SQLITE_OPEN_NOFOLLOW` under its directory's real path, so a link planted after the
//!   check is not followed either. In a sticky shared directory (/tmp) the database and its
//!   `-wal`, `-shm` and `-journal` names must be absent or ibench's own regular files
//!   (another user's journal or WAL there would be rolled into the database); missing ones are
//!   created by ibench first, and a connection is kept open for the run so that SQLite does
//!   not remove and let others take them; a rollback journal, which SQLite creates and removes
//!   at every transaction, is refused there.
//! * What it holds: ibench switches a database to WAL only when ibench created it (the file
//!   was absent or empty, or holds no table but ibench's): a database of the user's keeps its
//!   journal mode, unless `--sqlite-pragma journal_mode=...` asks for another. So a refused run
//!   leaves every byte of it as it was. The results say which mode was used and whether
//!   ibench changed it ([`JournalPlan::describe`]).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Result;
use rusqlite::{Connection as RawConnection, OpenFlags};

use crate::dbms::TABLE_MARK;
use crate::error::UsageError;
use crate::output::escape;
use crate::safe_fs::{self, DirAccess};

/// What SQLite keeps beside the database file.
pub(super) const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The database file as checked: the name SQLite opens, and who else can write beside it.
pub(super) struct CheckedPath {
    /// `--path` under its directory's real path (no link left for SQLite to follow).
    pub(super) open_path: PathBuf,
    /// Whether other users can create names beside it (a sticky directory such as /tmp).
    pub(super) shared: bool,
}

fn shown(path: &Path) -> String {
    escape::line(&path.display().to_string()).into_owned()
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", path.display()))
}

/// Checks `path` (see the module docs) before anything opens it.
pub(super) fn check_path(path: &Path) -> Result<CheckedPath, UsageError> {
    let name = path
        .file_name()
        .ok_or_else(|| UsageError::new(format!("--path {} names no file", shown(path))))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let flag = format!("--path {}: its directory", shown(path));
    let shared = safe_fs::check_dir(parent, &flag)? == DirAccess::SharedSticky;
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(UsageError::new(format!(
            "--path {} is a symbolic link: ibench opens no database through a link (another \
             user may have planted it); give the path of the database file itself",
            shown(path)
        )));
    }
    if shared {
        for suffix in [""].into_iter().chain(SIDE_FILES) {
            let file = with_suffix(path, suffix);
            if fs::symlink_metadata(&file).is_ok() && !safe_fs::is_own_file(&file) {
                return Err(UsageError::new(format!(
                    "--path {}: {} is not ibench's own file (a link, or another user's file, \
                     in a directory others can write to): remove it, or choose a directory \
                     only you can write to",
                    shown(path),
                    shown(&file)
                )));
            }
        }
    }
    let real = fs::canonicalize(parent).map_err(|e| {
        UsageError::new(format!("--path {}: its directory: {e}", shown(path)))
    })?;
    Ok(CheckedPath {
        open_path: real.join(name),
        shared,
    })
}

/// In a shared (sticky) directory, creates the names SQLite will use in WAL mode (the
/// database, `-wal`, `-shm`) as ibench's own when missing, so that nobody else takes them
/// first; [`check_path`] has refused any that is not ibench's own.
pub(super) fn claim(path: &Path) -> Result<(), UsageError> {
    for suffix in ["", "-wal", "-shm"] {
        let file = with_suffix(path, suffix);
        match safe_fs::create_new(&file, 0o600) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(UsageError::new(format!("cannot create {}: {e}", shown(&file))));
            }
        }
        if !safe_fs::is_own_file(&file) {
            return Err(UsageError::new(format!(
                "{} is not ibench's own file (planted while ibench started): remove it, or \
                 choose a directory only you can write to",
                shown(&file)
            )));
        }
    }
    Ok(())
}

/// In a shared (sticky) directory, refuses a journal mode other than WAL: SQLite creates and
/// removes a rollback journal at every transaction, and between two another user could put a
/// journal of theirs at its name, which SQLite would roll into the database. `asked`: the
/// user's `journal_mode`.
pub(super) fn refuse_rollback_journal(
    path: &Path,
    plan: &JournalPlan,
    asked: Option<&str>,
) -> Result<(), UsageError> {
    let mode = match (&plan.why, asked) {
        (JournalWhy::Asked, Some(mode)) => mode.to_string(),
        (JournalWhy::Kept, _) => plan.before.clone().unwrap_or_default(),
        _ => "wal".to_string(),
    };
    if mode.eq_ignore_ascii_case("wal") {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "--path {}: journal mode {mode} in a directory others can write to: another user \
         could put a journal at its -journal name between two transactions, which SQLite \
         would roll into the database; choose a directory only you can write to, or give \
         --sqlite-pragma journal_mode=wal",
        shown(path)
    )))
}

/// Why ibench sets the journal mode it sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum JournalWhy {
    /// `--sqlite-pragma journal_mode=...`.
    Asked,
    /// ibench's default (WAL) on a file it created.
    Default,
    /// Not set: the file is the user's and keeps its mode.
    Kept,
}

/// The journal mode a run uses, decided before any pragma that writes.
#[derive(Clone, Debug)]
pub(super) struct JournalPlan {
    /// The file's mode before the run (`None`: a new file).
    pub(super) before: Option<String>,
    /// Why the mode is (or is not) set.
    pub(super) why: JournalWhy,
}

impl JournalPlan {
    /// Whether ibench applies its default `journal_mode` on each connection.
    pub(super) fn default_applies(&self) -> bool {
        self.why == JournalWhy::Default
    }

    /// What the results record under `journal_mode_changed`, given the mode in use `now`.
    pub(super) fn describe(&self, now: &str) -> String {
        match (&self.before, &self.why) {
            (_, JournalWhy::Kept) => "no: the database is not ibench's (it holds other tables), \
                 so it keeps its journal mode; --sqlite-pragma journal_mode=... changes it"
                .to_string(),
            (None, JournalWhy::Default) => format!("yes: a new file, set to {now} (ibench's default)"),
            (None, why) => format!("yes: a new file, set to {now} ({})", why.source()),
            (Some(b), _) if b.eq_ignore_ascii_case(now) => format!("no: already {now}"),
            (Some(b), why) => format!("yes: from {b} to {now} ({})", why.source()),
        }
    }
}

impl JournalWhy {
    fn source(&self) -> &'static str {
        match self {
            JournalWhy::Asked => "--sqlite-pragma journal_mode",
            _ => "ibench's default on a file holding only ibench's tables",
        }
    }
}

/// Decides, reading the file only, whether ibench may set the journal mode of `open_path`:
/// when asked (`asked`), or when the file is new, empty or holds no table but ibench's.
pub(super) fn journal_plan(open_path: &Path, asked: bool) -> Result<JournalPlan> {
    let new = fs::symlink_metadata(open_path).map_or(true, |m| m.len() == 0);
    if new {
        let why = if asked {
            JournalWhy::Asked
        } else {
            JournalWhy::Default
        };
        return Ok(JournalPlan { before: None, why });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = RawConnection::open_with_flags(open_path, flags)?;
    let before: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    let foreign: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' \
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND instr(coalesce(sql, ''), ?1) = 0",
        [TABLE_MARK],
        |r| r.get(0),
    )?;
    let why = if asked {
        JournalWhy::Asked
    } else if foreign == 0 {
        JournalWhy::Default
    } else {
        JournalWhy::Kept
    };
    Ok(JournalPlan {
        before: Some(before),
        why,
    })
}
