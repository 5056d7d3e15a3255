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

/// Reads a results document (at most [`MAX_DOCUMENT_BYTES`]).
pub fn load(path: &Path) -> Result<RunResult> {
    let text = crate::bounded::read_to_string(path, MAX_DOCUMENT_BYTES)
        .with_context(|| format!("cannot read results file {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not an ibench results document", path.display()))
}
