//! Where a run's files go: `--out` (its file system and free space, whether this user can
//! write there) and the results store (whether it opens).

use std::path::Path;

use super::{Depth, HostFeature, Places, no, yes};
use crate::results::store::{self, Store};

/// The places' features; the results store at [`Depth::Full`] only.
pub fn check(depth: Depth, places: &Places) -> Vec<HostFeature> {
    let mut out = vec![out_dir(&places.out)];
    if depth == Depth::Full {
        out.push(results(&places.out, places.results.as_deref()));
    }
    out
}

/// `dir`, or the nearest directory above it that exists (where it would be created).
fn existing(dir: &Path) -> Option<&Path> {
    dir.ancestors()
        .map(|d| {
            if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            }
        })
        .find(|d| d.is_dir())
}

/// Whether this user may create files in `dir`.
fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
}

/// `--out`: its file system and free space.
fn out_dir(out: &Path) -> HostFeature {
    const NAME: &str = "out";
    let Some(at) = existing(out) else {
        return no(
            NAME,
            format!("{}: no directory above it", out.display()),
            None,
        );
    };
    let created = if at == out {
        String::new()
    } else {
        format!(" (created in {})", at.display())
    };
    if !writable(at) {
        return no(
            NAME,
            format!("{}{created}: this user cannot write there", out.display()),
            None,
        );
    }
    let fs = crate::metrics::storage::storage_of(at)
        .map(|s| format!("{} on {}", s.fs_type, s.source))
        .unwrap_or_else(|| "file system unknown".to_string());
    let free = crate::metrics::storage::free_bytes(at)
        .map(|b| format!("{:.1} GiB free", b as f64 / f64::from(1u32 << 30)))
        .unwrap_or_else(|| "free space unknown".to_string());
    yes(NAME, format!("{}{created}: {fs}, {free}", out.display()))
}

/// The results store: `--results`, else `OUT/results.db` (as `ibench run` chooses).
fn results(out: &Path, given: Option<&Path>) -> HostFeature {
    const NAME: &str = "results-store";
    let default = out.join("results.db");
    let path = given.unwrap_or(&default);
    if !store::location::is_postgres_url(path) && !path.exists() {
        let dir = path.parent().unwrap_or(Path::new("."));
        return match existing(dir) {
            Some(at) if writable(at) => {
                yes(NAME, format!("{}: made at the first run", path.display()))
            }
            _ => no(
                NAME,
                format!("{}: this user cannot create it", path.display()),
                None,
            ),
        };
    }
    match Store::open_existing(path) {
        Ok(s) => yes(NAME, format!("{}: opens", s.path().display())),
        Err(e) => no(NAME, format!("{e:#}"), None),
    }
}
