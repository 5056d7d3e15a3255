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
    store: Option<std::cell::RefCell<crate::results::store::Store>>,
    /// Held until the run's file is final (see `lock.rs`); dropped after everything else.
    _lock: RunLock,
}

impl ResultsFile {
    /// Reserves `<dir>/<stem>.json`, or `<stem>-2.json`, `<stem>-3.json`... if taken, and
    /// takes the run's lock `<stem>.lock`.
    pub fn create(dir: &Path, stem: &str) -> Result<Self> {
        for n in 1..10_000 {
            let name = if n == 1 {
                format!("{stem}.json")
            } else {
                format!("{stem}-{n}.json")
            };
            let path = dir.join(name);
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => {
                    let lock = RunLock::create(&path).map_err(|e| {
                        let _ = fs::remove_file(&path);
                        anyhow::Error::from(e)
                            .context(format!("cannot lock results file {}", path.display()))
                    })?;
                    return Ok(ResultsFile {
                        path,
                        saved: std::cell::Cell::new(false),
                        store: None,
                        _lock: lock,
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

    /// Writes `run` to a temporary file beside the results file and renames it over it.
    pub fn save(&self, run: &RunResult) -> Result<()> {
        write_atomic(&self.path, run)
            .with_context(|| format!("cannot write results to {}", self.path.display()))?;
        self.saved.set(true);
        if let Some(store) = &self.store {
            store.borrow_mut().save(run)?;
        }
        Ok(())
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

/// Writes `run` to `<path>.tmp` and renames it over `path`, so `path` is always a complete
/// document; on any failure (disk full, rename refused) the temporary file is removed.
pub fn write_atomic(path: &Path, run: &RunResult) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let write = || -> std::io::Result<()> {
        // A file left by an earlier failure goes; then O_EXCL, so that a symbolic link
        // planted at the temporary name is never followed.
        let _ = fs::remove_file(&tmp);
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        // Buffered: serde writes a pretty document in many tiny pieces, each a syscall
        // on a bare File (tens of thousands per save).
        let mut f = std::io::BufWriter::new(file);
        serde_json::to_writer_pretty(&mut f, run)?;
        f.write_all(b"\n")?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)
    };
    let result = write();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
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
