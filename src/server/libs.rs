//! The shared libraries a relocatable server build brings along, and running its binaries
//! with them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory of the shared libraries a build in `binary`'s directory brings along:
/// `../lib` beside its `bin` when it holds a versioned shared library (`libicuuc.so.60`), as
/// relocatable builds (`ibench server install`) and self-built prefixes do. Debian's
/// `/usr/lib/postgresql/15/lib` holds only the server's modules, and is not one.
pub fn library_path(binary: &Path) -> Option<PathBuf> {
    let lib = binary.parent()?.parent()?.join("lib");
    let has_library = std::fs::read_dir(&lib).ok()?.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.starts_with("lib") && name.contains(".so.")
    });
    has_library.then_some(lib)
}

/// Lets `cmd` (running `binary`) find the libraries of [`library_path`], ahead of any
/// `LD_LIBRARY_PATH` ibench was given.
pub fn with_library_path(cmd: &mut Command, binary: &Path) {
    if let Some(lib) = library_path(binary) {
        let mut paths = vec![lib];
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
            paths.extend(std::env::split_paths(&old));
        }
        if let Ok(joined) = std::env::join_paths(paths) {
            cmd.env("LD_LIBRARY_PATH", joined);
        }
    }
}
