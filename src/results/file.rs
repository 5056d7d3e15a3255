//! Results on disk: one JSON document per run, never overwriting another run's file, rewritten
//! atomically (temp file + rename) after every step so that a failure keeps what was measured.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::results::model::RunResult;

/// The results file of one run.
#[derive(Debug)]
pub struct ResultsFile {
    path: PathBuf,
    saved: std::cell::Cell<bool>,
    store: Option<std::cell::RefCell<crate::results::store::Store>>,
}

impl ResultsFile {
    /// Reserves `<dir>/<stem>.json`, or `<stem>-2.json`, `<stem>-3.json`... if taken.
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
                    return Ok(ResultsFile {
                        path,
                        saved: std::cell::Cell::new(false),
                        store: None,
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
        let tmp = self.path.with_extension("json.tmp");
        let write = || -> std::io::Result<()> {
            // Buffered: serde writes a pretty document in many tiny pieces, each a syscall
            // on a bare File (tens of thousands per save).
            let mut f = std::io::BufWriter::new(fs::File::create(&tmp)?);
            serde_json::to_writer_pretty(&mut f, run)?;
            f.write_all(b"\n")?;
            f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            fs::rename(&tmp, &self.path)
        };
        write().with_context(|| format!("cannot write results to {}", self.path.display()))?;
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

/// Reads a results document.
pub fn load(path: &Path) -> Result<RunResult> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("cannot read results file {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not an ibench results document", path.display()))
}
