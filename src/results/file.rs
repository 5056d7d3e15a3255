//! Results on disk: one JSON document per run, never overwriting another run's file, rewritten
//! atomically (temp file + rename) after every step so that a failure keeps what was measured
//! (and leaves no temporary file). Each run holds its [`RunLock`] beside the file for its
//! whole life.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::results::lock::RunLock;
use crate::results::model::RunResult;
use crate::safe_fs;

/// Largest results document `load` reads (hours of per-second series of many clients).
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 30;

/// Most memory `load` lets one document take as it reads it. A run's per-second series take
/// up to 8 times their JSON text (`0,` is 2 bytes, the number 8): within the size limit, a
/// document could otherwise take 8 GiB and abort ibench on a failed allocation.
pub const MAX_DOCUMENT_MEMORY: u64 = 1 << 30;

/// How often [`MemoryBound`] looks at the memory taken, in bytes read.
const MEMORY_CHECK_EVERY: u64 = 1 << 20;

/// A reader that fails once the process's resident memory has grown by more than its budget
/// since it was created: what is read is being parsed into memory.
struct MemoryBound<R> {
    inner: R,
    start: u64,
    budget: u64,
    unchecked: u64,
}

/// [`MAX_DOCUMENT_MEMORY`], or less for tests: `IBENCH_TEST_MAX_DOCUMENT_MEMORY` (bytes) lowers
/// it so that a test need not build a gigabyte of runs; it never raises it.
fn memory_budget() -> u64 {
    std::env::var("IBENCH_TEST_MAX_DOCUMENT_MEMORY")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(MAX_DOCUMENT_MEMORY, |v| v.min(MAX_DOCUMENT_MEMORY))
}

/// The process's resident memory, bytes (0 where /proc cannot tell).
fn resident_bytes() -> u64 {
    procfs::process::Process::myself()
        .and_then(|p| p.statm())
        .map(|m| m.resident * procfs::page_size())
        .unwrap_or(0)
}

impl<R: std::io::Read> std::io::Read for MemoryBound<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.unchecked += n as u64;
        if self.unchecked >= MEMORY_CHECK_EVERY {
            self.unchecked = 0;
            if resident_bytes().saturating_sub(self.start) > self.budget {
                return Err(std::io::Error::other(format!(
                    "it takes more than {} MiB of memory to read, the most ibench spends on one \
                     results document",
                    self.budget >> 20
                )));
            }
        }
        Ok(n)
    }
}

/// The results file of one run.
#[derive(Debug)]
pub struct ResultsFile {
    path: PathBuf,
    saved: std::cell::Cell<bool>,
    /// The last save did not reach the file or the store: the run's lock file stays when
    /// the run ends, so the next run in the directory settles it (see `abandoned.rs`).
    stale: std::cell::Cell<bool>,
    /// The last save reached neither the file nor the store: only memory holds the run.
    lost: std::cell::Cell<bool>,
    /// A save between steps failed since the last one that wrote everywhere.
    failing: std::cell::Cell<bool>,
    store: Option<std::cell::RefCell<crate::results::store::Store>>,
    /// Held until the run's file is final (see `lock.rs`); dropped after everything else.
    lock: RunLock,
}

impl ResultsFile {
    /// Reserves `<dir>/<stem>.json`, or `<stem>-2.json`, `<stem>-3.json`... if taken (or if
    /// a name the run derives from it is: its lock, scratch database, server directory and
    /// log), and takes the run's lock `<stem>.lock`. The file is created new, never through
    /// a link planted at its name (see `safe_fs`).
    pub fn create(dir: &Path, stem: &str) -> Result<Self> {
        for n in 1..10_000 {
            let name = if n == 1 {
                format!("{stem}.json")
            } else {
                format!("{stem}-{n}.json")
            };
            let path = dir.join(name);
            let taken = COMPANIONS
                .iter()
                .any(|ext| fs::symlink_metadata(path.with_extension(ext)).is_ok());
            if taken {
                continue;
            }
            match safe_fs::create_new(&path, 0o644) {
                Ok(_) => {
                    let lock = RunLock::create(&path).map_err(|e| {
                        let _ = fs::remove_file(&path);
                        anyhow::Error::from(e)
                            .context(format!("cannot lock results file {}", path.display()))
                    })?;
                    return Ok(ResultsFile {
                        path,
                        saved: std::cell::Cell::new(false),
                        stale: std::cell::Cell::new(false),
                        lost: std::cell::Cell::new(false),
                        failing: std::cell::Cell::new(false),
                        store: None,
                        lock,
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot create results file {}", path.display()));
                }
            }
        }
        anyhow::bail!("no free results file name for {stem} in {}", dir.display())
    }

    /// Also writes every save into `store` (the results database).
    pub fn with_store(mut self, store: crate::results::store::Store) -> Self {
        self.store = Some(std::cell::RefCell::new(store));
        self
    }

    /// Where the results are.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `run` to a temporary file beside the results file and renames it over it, and
    /// into the results database: each as far as it goes (a full disk under one does not keep
    /// the run from the other). An error says where the run's results are.
    pub fn save(&self, run: &RunResult) -> Result<()> {
        let (written, stored) = self.write_both(run);
        let stored_ok = matches!(stored, Some(Ok(())));
        match (written, stored) {
            (Err(e), _) => Err(anyhow::Error::from(e).context(format!(
                "cannot write results to {} (it holds the run as last saved{})",
                self.path.display(),
                if stored_ok {
                    "; the results database has it as it is now"
                } else {
                    ""
                }
            ))),
            (Ok(()), Some(Err(e))) => Err(e.context(format!(
                "the results file {} has the run; the results database does not",
                self.path.display()
            ))),
            (Ok(()), _) => Ok(()),
        }
    }

    /// Writes `run` to the file and the store, each as far as it goes (see [`Self::save`]).
    fn write_both(&self, run: &RunResult) -> (std::io::Result<()>, Option<Result<()>>) {
        let written = write_atomic(&self.path, run);
        let stored = self.store.as_ref().map(|s| s.borrow_mut().save(run));
        let stored_ok = matches!(stored, Some(Ok(())));
        self.stale
            .set(written.is_err() || stored.as_ref().is_some_and(Result::is_err));
        self.lost.set(written.is_err() && !stored_ok);
        if written.is_ok() {
            self.saved.set(true);
        }
        (written, stored)
    }

    /// A save between steps: a write that fails (a full disk) does not stop the run, which
    /// holds every step in memory; each later save writes them all again, once there is room.
    /// A failure is said in one `warning:` line, a save that then reaches everything in one
    /// `note:` line.
    pub fn save_between_steps(&self, run: &RunResult) {
        let (written, stored) = self.write_both(run);
        let steps = run.steps.len();
        let file = || format!("results to {}", self.path.display());
        let kept = format!(
            "the run's {steps} measured step(s) are kept in memory and written at the next save"
        );
        let problem = match (written, stored) {
            (Err(e), Some(Err(s))) => Some(format!(
                "cannot write {} ({e}), nor to the results database ({s:#}): {kept}",
                file()
            )),
            (Err(e), Some(Ok(()))) => Some(format!(
                "cannot write {} ({e}); the results database has the run, and the file is \
                 written again at the next save",
                file()
            )),
            (Err(e), None) => Some(format!(
                "cannot write {} ({e}; it holds the run as last saved): {kept}",
                file()
            )),
            (Ok(()), Some(Err(s))) => Some(format!(
                "cannot write to the results database ({s:#}); the results file has the run, \
                 and the database is written again at the next save"
            )),
            (Ok(()), _) => None,
        };
        match problem {
            Some(p) => {
                eprintln!("warning: {p}");
                self.failing.set(true);
            }
            None if self.failing.replace(false) => {
                eprintln!("note: the results are written again ({steps} step(s))");
            }
            None => {}
        }
    }

    /// `error` of the run's last save, when it reached neither the file nor the store and
    /// steps were measured: the run is written whole to a new private directory in the
    /// system's temporary directory (another file system, most often), and the error says
    /// where, or that nothing could be written anywhere.
    pub fn rescue(&self, run: &RunResult, error: anyhow::Error) -> anyhow::Error {
        if !self.lost.get() || run.steps.is_empty() {
            return error;
        }
        let n = run.steps.len();
        let name = self.path.file_name().unwrap_or_default().to_os_string();
        let written = safe_fs::private_temp_dir("ibench-rescued-").and_then(|dir| {
            let path = dir.join(name);
            write_atomic(&path, run).map(|()| path)
        });
        error.context(match written {
            Ok(path) => format!(
                "the run's {n} measured step(s) are in {} (nothing reached the results file \
                 or database; `ibench import --replace` takes it into one)",
                path.display()
            ),
            Err(e) => format!(
                "the run's {n} measured step(s) are lost: nothing reached the results file, \
                 the results database or {} ({e})",
                std::env::temp_dir().display()
            ),
        })
    }

    /// Whether a document has been written (the reserved file is empty until then).
    pub fn is_saved(&self) -> bool {
        self.saved.get()
    }

    /// Removes the reserved file if nothing was ever written to it, so a run that failed
    /// before it started leaves no empty results file behind.
    pub fn discard_if_unsaved(&self) {
        if !self.saved.get() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

impl Drop for ResultsFile {
    fn drop(&mut self) {
        if self.stale.get() {
            // The file or the store still says `running` (or lacks the end): the lock file
            // stays, released by the kernel, for the next run to settle.
            self.lock.keep_file();
        }
    }
}

/// Names a run derives from its results file `<stem>.json` (`<stem>.lock`, ...).
const COMPANIONS: [&str; 7] = [
    "json",
    "lock",
    "data",
    "server",
    "server.log",
    "pooler.log",
    "profiles",
];

/// Writes `run` under a temporary name beside `path` and renames it over `path`, so `path`
/// is always a complete document; on any failure (disk full, rename refused) the temporary
/// file is removed (see `safe_fs::write_atomic`).
pub fn write_atomic(path: &Path, run: &RunResult) -> std::io::Result<()> {
    // Buffered: serde writes a pretty document in many tiny pieces.
    safe_fs::write_atomic(path, 0o644, |f| {
        serde_json::to_writer_pretty(&mut *f, run)?;
        f.write_all(b"\n")
    })
}

/// Reads a results document (at most [`MAX_DOCUMENT_BYTES`]: a larger file is refused by its
/// size before it is read). The document is parsed as it is read, never held as text: only
/// the run it describes is in memory, and at most [`MAX_DOCUMENT_MEMORY`] of it.
pub fn load(path: &Path) -> Result<RunResult> {
    let cannot_read = || format!("cannot read results file {}", path.display());
    let file = crate::bounded::open(path, MAX_DOCUMENT_BYTES).with_context(cannot_read)?;
    let bounded = MemoryBound {
        inner: file,
        start: resident_bytes(),
        budget: memory_budget(),
        unchecked: 0,
    };
    serde_json::from_reader(std::io::BufReader::with_capacity(1 << 16, bounded)).map_err(|e| {
        if e.is_io() {
            anyhow::Error::from(std::io::Error::from(e)).context(cannot_read())
        } else {
            anyhow::Error::from(e).context(format!(
                "{} is not an ibench results document",
                path.display()
            ))
        }
    })
}
