//! Prepared datasets: a loaded database saved once under a name (`ibench dataset save`) and
//! restored into each run that names it (`--from-dataset`, an experiment setup's `dataset`),
//! so that every cell of a study starts from the same bytes.
//!
//! Datasets live in `<--out>/datasets/<NAME>/`: `manifest.json` (what was loaded, on which
//! DBMS and version, the bytes' digest) and `data/`, the database's files: a managed server's
//! data directory (stopped cleanly first), or an embedded database's scratch directory. A
//! dataset is written under a temporary name beside it (`.NAME.<random>.tmp`) and renamed to
//! its name only once whole, so a half-saved one is never listed or used; one is removed by
//! renaming it away first. A restore checks the files it restored against the manifest's
//! digest before the run uses them.
//!
//! * `copy.rs` — the tree copy (reflink where the file system allows, else bytes), its
//!   digest and its sizes.
//! * `settle.rs` — the store's lock, and the temporary directories of saves and removals
//!   whose process ended before they finished, removed at the next start.

pub mod copy;
mod settle;
mod source;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use crate::request::check_dataset_name as check_name;
pub use crate::results::dataset::{Method, Restored};
pub use copy::TreeSize;
pub use settle::{StoreLock, hold, settle};
pub use source::{Source, source_of};

use crate::error::UsageError;
use crate::request::RunSpec;

/// The directory of the datasets under an output directory.
pub fn store_dir(out: &Path) -> PathBuf {
    out.join("datasets")
}

/// What a dataset holds, and what a run must match to start from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The DBMS (`sqlite`, `postgres`, `mysql`).
    pub dbms: String,
    /// Its engine, where it has several (`innodb`, `rocksdb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// A managed server's data directory (else an embedded database).
    pub managed: bool,
    /// The workload that loaded it (`tpcc`, `micro`, `insert-benchmark`).
    pub workload: String,
    /// The parameters that shape what the load made (warehouses, table rows, ...).
    pub load: serde_json::Value,
}

impl Identity {
    /// What a run of `spec` starts from (or, after `--prepare-only`, made).
    pub fn of(spec: &RunSpec) -> Identity {
        let (workload, load) = spec.workload.load_identity();
        Identity {
            dbms: spec.target.kind.name().to_string(),
            engine: spec
                .target
                .params
                .get("engine")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            managed: spec.server.is_some(),
            workload: workload.to_string(),
            load,
        }
    }

    /// One line: `postgres (managed) tpcc {"warehouses":1,...}`.
    pub fn describe(&self) -> String {
        format!(
            "{}{}{} {} {}",
            self.dbms,
            self.engine
                .as_deref()
                .map(|e| format!("/{e}"))
                .unwrap_or_default(),
            if self.managed {
                " (managed server)"
            } else {
                ""
            },
            self.workload,
            self.load
        )
    }
}

/// A dataset's `manifest.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Its name.
    pub name: String,
    /// When it was saved.
    pub saved_at: DateTime<Utc>,
    /// What it holds.
    pub identity: Identity,
    /// The DBMS's version string when it was loaded.
    pub version: String,
    /// The run that loaded it.
    pub source_run: String,
    /// SHA-256 over its files (see [`copy::tree_digest`]).
    pub sha256: String,
    /// Its files' sizes.
    pub size: TreeSize,
    /// Seconds the save took.
    pub save_s: f64,
    /// How the save copied the files.
    pub method: Method,
}

/// A saved dataset.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Its directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

impl Dataset {
    /// The database's files.
    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Refuses (one line) a run of `spec` that does not start from what this dataset holds.
    pub fn check_matches(&self, spec: &RunSpec) -> Result<(), UsageError> {
        let want = Identity::of(spec);
        let have = &self.manifest.identity;
        if *have != want {
            return Err(UsageError::new(format!(
                "dataset {} holds {}, but this run is {}: start from a dataset of the same \
                 DBMS and load",
                self.manifest.name,
                have.describe(),
                want.describe()
            )));
        }
        Ok(())
    }

    /// Refuses (one line) a DBMS of another version than the one that loaded the dataset.
    pub fn check_version(&self, version: &str) -> Result<(), UsageError> {
        if version != self.manifest.version {
            return Err(UsageError::new(format!(
                "dataset {} was loaded by {} {}, but this run's is {version}: its files may not \
                 be readable (or not the same) by another version",
                self.manifest.name, self.manifest.identity.dbms, self.manifest.version
            )));
        }
        Ok(())
    }
}

/// The dataset `name` in the store `store`, or a one-line error.
pub fn open(store: &Path, name: &str) -> Result<Dataset, UsageError> {
    check_name(name)?;
    let dir = store.join(name);
    if !crate::safe_fs::is_own_dir(&dir, None) {
        return Err(UsageError::new(format!(
            "no dataset {name} in {} (`ibench dataset list --out {}` lists them)",
            store.display(),
            store.parent().unwrap_or(store).display()
        )));
    }
    let manifest = read_manifest(&dir)
        .map_err(|e| UsageError::new(format!("dataset {name} cannot be read: {e:#}")))?;
    Ok(Dataset { dir, manifest })
}

fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join("manifest.json");
    if !crate::safe_fs::is_own_file(&path) {
        anyhow::bail!("{} is missing or not ibench's own", path.display());
    }
    let text = crate::bounded::read_to_string(&path, 1 << 20)?;
    Ok(serde_json::from_str(&text)?)
}

/// The datasets in `store`, by name (half-saved ones, under temporary names, are not).
pub fn list(store: &Path) -> Vec<Dataset> {
    let mut all: Vec<Dataset> = fs::read_dir(store)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            check_name(&name).ok()?;
            open(store, &name).ok()
        })
        .collect();
    all.sort_by(|a, b| a.manifest.name.cmp(&b.manifest.name));
    all
}

/// Removes the dataset `name`: renamed away first, so no run can start from half of it.
pub fn remove(store: &Path, name: &str) -> Result<()> {
    let dataset = open(store, name)?;
    let _lock = hold(store)?;
    let away = crate::safe_fs::temp_path(&dataset.dir);
    fs::rename(&dataset.dir, &away)
        .with_context(|| format!("cannot remove {}", dataset.dir.display()))?;
    fs::remove_dir_all(&away).with_context(|| format!("cannot remove {}", away.display()))
}

/// Saves `source` (a stopped server's data directory, or an embedded database's directory)
/// as the dataset `name` in `store`: copied under a temporary name, its digest taken, its
/// manifest written, then renamed to `name`, which must not exist.
pub fn save(store: &Path, name: &str, source: &Source) -> Result<Dataset> {
    check_name(name)?;
    fs::create_dir_all(store.parent().unwrap_or(Path::new(".")))
        .with_context(|| format!("cannot create {}", store.display()))?;
    crate::safe_fs::ensure_own_dir(store)
        .with_context(|| format!("cannot use {} for datasets", store.display()))?;
    crate::safe_fs::check_dir(store, "the datasets directory")?;
    let dir = store.join(name);
    if fs::symlink_metadata(&dir).is_ok() {
        return Err(UsageError::new(format!(
            "dataset {name} exists in {}: remove it first (ibench dataset rm {name})",
            store.display()
        ))
        .into());
    }
    // Held until the temporary directory is renamed or removed: while it is, no other
    // ibench takes that directory for a killed save's (see settle.rs).
    let _lock = hold(store)?;
    let tmp = crate::safe_fs::temp_path(&dir);
    let result = (|| {
        crate::safe_fs::create_dir(&tmp)?;
        let start = Instant::now();
        let options = copy::CopyOptions {
            owner: None,
            sync: true,
        };
        let copied = copy::copy_tree(&source.data, &tmp.join("data"), options)
            .with_context(|| format!("cannot copy {}", source.data.display()))?;
        let manifest = Manifest {
            name: name.to_string(),
            saved_at: Utc::now(),
            identity: source.identity.clone(),
            version: source.version.clone(),
            source_run: source.run_id.clone(),
            sha256: copy::tree_digest(&tmp.join("data"))?,
            size: copy::tree_size(&tmp.join("data")),
            save_s: start.elapsed().as_secs_f64(),
            method: copied.method(),
        };
        let text = serde_json::to_string_pretty(&manifest)?;
        crate::safe_fs::write_atomic(&tmp.join("manifest.json"), 0o600, |w| {
            use std::io::Write;
            w.write_all(text.as_bytes())
        })?;
        rename_new(&tmp, &dir)?;
        anyhow::Ok(Dataset { dir, manifest })
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result
}

/// Renames `from` to `to`, failing if anything is at `to` (renameat2 RENAME_NOREPLACE).
fn rename_new(from: &Path, to: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes());
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: both are NUL-terminated paths that live across the call.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("cannot rename {} to {}", from.display(), to.display()));
    }
    Ok(())
}

/// Restores `dataset` into the new directory `to` (files owned by `owner`, a managed
/// server's account): cloned where the file system allows it, else copied, then checked
/// against the manifest's SHA-256 before anything uses it. A restore that fails (a link in
/// the dataset, files that are not what was saved, a full disk) removes `to` again; one of
/// the dataset's own is a [`UsageError`] naming it.
pub fn restore(dataset: &Dataset, to: &Path, owner: Option<(u32, u32)>) -> Result<Restored> {
    let name = &dataset.manifest.name;
    let start = Instant::now();
    let options = copy::CopyOptions { owner, sync: false };
    let copied = copy::copy_tree(&dataset.data(), to, options).map_err(|e| {
        let what = format!("cannot restore dataset {name} into {}: {e}", to.display());
        if e.kind() == std::io::ErrorKind::InvalidInput {
            anyhow::Error::new(UsageError::new(what))
        } else {
            anyhow::anyhow!(what)
        }
    })?;
    let checked = Instant::now();
    if let Err(e) = verify(dataset, to) {
        let _ = fs::remove_dir_all(to);
        return Err(e);
    }
    Ok(Restored {
        name: name.clone(),
        sha256: dataset.manifest.sha256.clone(),
        files: copied.files,
        bytes: copied.bytes,
        method: copied.method(),
        seconds: start.elapsed().as_secs_f64(),
        verify_seconds: checked.elapsed().as_secs_f64(),
    })
}

/// Refuses (one line naming the dataset's manifest) a restored copy `to` whose digest is
/// not the one `dataset` was saved with: its files were changed or damaged since.
fn verify(dataset: &Dataset, to: &Path) -> Result<()> {
    let m = &dataset.manifest;
    let digest = copy::tree_digest(to)
        .with_context(|| format!("cannot read the restored {} to check it", to.display()))?;
    if digest != m.sha256 {
        return Err(UsageError::new(format!(
            "dataset {} is not what was saved: its files ({}) have sha256 {digest}, but {} \
             says {}: they were changed or damaged since; save it again (ibench dataset rm {}, \
             then ibench dataset save)",
            m.name,
            dataset.data().display(),
            dataset.dir.join("manifest.json").display(),
            m.sha256,
            m.name
        ))
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(data: PathBuf) -> Source {
        Source {
            data,
            identity: Identity {
                dbms: "sqlite".into(),
                engine: None,
                managed: false,
                workload: "tpcc".into(),
                load: serde_json::json!({"warehouses": 1}),
            },
            version: "3".into(),
            run_id: "r".into(),
        }
    }

    #[test]
    fn a_save_that_fails_leaves_nothing_usable_and_a_whole_one_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("db");
        fs::create_dir(&data).unwrap();
        fs::write(data.join("ibench.sqlite"), b"rows").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", data.join("planted")).unwrap();
        let store = store_dir(dir.path());
        assert!(save(&store, "d1", &source(data.clone())).is_err());
        assert!(list(&store).is_empty());
        let left: Vec<_> = fs::read_dir(&store)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [".lock"], "no temporary left");
        assert!(open(&store, "d1").is_err());

        fs::remove_file(data.join("planted")).unwrap();
        let saved = save(&store, "d1", &source(data.clone())).unwrap();
        assert_eq!(saved.manifest.size.logical_bytes, 4);
        assert_eq!(saved.manifest.sha256, copy::tree_digest(&data).unwrap());
        assert!(save(&store, "d1", &source(data)).is_err(), "never replaced");
        let names: Vec<String> = list(&store).into_iter().map(|d| d.manifest.name).collect();
        assert_eq!(names, ["d1"]);
        let restored = restore(&saved, &dir.path().join("r"), None).unwrap();
        assert_eq!((restored.files, restored.bytes), (1, 4));
        assert_eq!(
            fs::read(dir.path().join("r/ibench.sqlite")).unwrap(),
            b"rows"
        );
        remove(&store, "d1").unwrap();
        assert!(list(&store).is_empty());
    }
}
