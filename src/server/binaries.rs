//! Finding a server family's binaries (a directory given, the family's default locations, then
//! PATH) and their version.

use std::path::{Path, PathBuf};

use super::ServerFamily;
use crate::error::UsageError;

/// A family's binaries, found.
#[derive(Clone, Debug)]
pub struct Binaries {
    /// The directory they were asked for in (`None`: default locations).
    pub dir: Option<PathBuf>,
    /// The set-up command (`initdb`, `mariadb-install-db`).
    pub setup: PathBuf,
    /// The server (`postgres`, `mariadbd`).
    pub server: PathBuf,
}

/// Which input a binary problem is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryField {
    /// The binary directory (`--server-bin`, `bin_dir`).
    BinDir,
    /// The version asked for.
    Version,
    /// Neither: the binaries are not installed.
    Install,
}

/// Why the binaries cannot be used: which input is wrong, and one line naming the binary
/// directory in the caller's terms.
#[derive(Clone, Debug)]
pub struct BinaryProblem {
    /// What the problem is about.
    pub field: BinaryField,
    /// One line.
    pub message: String,
}

impl Binaries {
    /// Finds `family`'s binaries in `dir` (or its default locations, or the directory of an
    /// installed `version`), and checks that the server is `version` when one is given.
    /// `dir_name` is what the caller calls the directory (`--server-bin`, `bin_dir`).
    pub fn locate(
        family: &dyn ServerFamily,
        dir: Option<&Path>,
        version: Option<&str>,
        dir_name: &str,
    ) -> Result<Binaries, BinaryProblem> {
        let problem = |field, message: String| BinaryProblem { field, message };
        if let Some(d) = dir
            && !d.is_dir()
        {
            return Err(problem(
                BinaryField::BinDir,
                format!("{dir_name} {} is not a directory", d.display()),
            ));
        }
        let mut dir = dir.map(Path::to_path_buf);
        if dir.is_none()
            && let Some(v) = version
        {
            match family.bin_dir_for_version(v) {
                Some(d) if d.is_dir() => dir = Some(d),
                Some(d) => {
                    let name = family.dbms().server_name();
                    let how = super::install::install_hint(name, v)
                        .map(|c| format!("install it (`{c}`)"))
                        .unwrap_or_else(|| "install it".to_string());
                    return Err(problem(
                        BinaryField::Version,
                        format!(
                            "{name} {v} is not installed ({} does not exist): {how}, or give \
                             {dir_name}",
                            d.display()
                        ),
                    ));
                }
                None => {}
            }
        }
        let defaults = family.default_bin_dirs();
        let [setup, server] = family.binaries().map(|name| {
            let candidates: Vec<PathBuf> = defaults.iter().map(|d| d.join(name)).collect();
            find_binary(name, dir.as_deref(), &candidates, dir_name)
        });
        let field = if dir.is_some() {
            BinaryField::BinDir
        } else {
            BinaryField::Install
        };
        let setup = setup.map_err(|e| problem(field, e.to_string()))?;
        let server = server.map_err(|e| problem(field, e.to_string()))?;
        if let Some(v) = version {
            match binary_version(&server) {
                Some(found) if version_matches(&found, v) => {}
                Some(found) => {
                    return Err(problem(
                        BinaryField::Version,
                        format!("{} is version {found}, not {v}", server.display()),
                    ));
                }
                None => {
                    return Err(problem(
                        BinaryField::Version,
                        format!("cannot tell the version of {}", server.display()),
                    ));
                }
            }
        }
        Ok(Binaries { dir, setup, server })
    }
}

/// Finds `name` in `bin_dir`, then in `candidates`, then on PATH; `dir_name` is what the
/// caller calls the directory. Files hidden by `IBENCH_TEST_HIDE` ([`crate::hide`]) are not
/// found.
pub fn find_binary(
    name: &str,
    bin_dir: Option<&Path>,
    candidates: &[PathBuf],
    dir_name: &str,
) -> Result<PathBuf, UsageError> {
    if let Some(dir) = bin_dir {
        let p = dir.join(name);
        return if crate::hide::is_file(&p) {
            Ok(p)
        } else {
            Err(UsageError::new(format!(
                "{dir_name} {}: no {name} there",
                dir.display()
            )))
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    candidates
        .iter()
        .cloned()
        .chain(on_path)
        .find(|p| crate::hide::is_file(p))
        .ok_or_else(|| {
            UsageError::new(format!(
                "{name} not found (looked in standard locations and PATH); install the server \
                 package or give {dir_name} DIR"
            ))
        })
}

pub use super::libs::{library_path, with_library_path};
pub use super::version::{binary_version, version_matches};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_match_by_prefix_of_components() {
        assert!(version_matches("10.11.19", "10.11"));
        assert!(version_matches("15.14", "15"));
        assert!(!version_matches("15.14", "15.1"));
        assert!(!version_matches("10.11", "10.11.2"));
    }
}
