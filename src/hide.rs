//! A test hook: `IBENCH_TEST_HIDE`, a comma-separated list of paths that ibench's lookups of
//! host files (server binaries, perf, sysbench, plugins, allocators, the Galera provider)
//! treat as absent, so that a test sees what ibench does on a machine without them
//! (`IBENCH_TEST_HIDE=/usr/bin/sysbench ibench doctor`). The test harness's `have_files`
//! honours the same variable. Not meant for users: nothing is hidden when it is unset.
//!
//! A path is hidden when it is one of the list or resolves (symbolic links followed) to the
//! same file as one of them: `/bin/sysbench` on a merged-/usr system is `/usr/bin/sysbench`.

use std::path::{Path, PathBuf};

/// The environment variable.
pub const VARIABLE: &str = "IBENCH_TEST_HIDE";

/// The paths `IBENCH_TEST_HIDE` lists (none when unset).
fn hidden_paths() -> Vec<PathBuf> {
    let Some(list) = std::env::var_os(VARIABLE) else {
        return Vec::new();
    };
    list.to_string_lossy()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Whether `path` is hidden by `IBENCH_TEST_HIDE`.
pub fn hidden(path: &Path) -> bool {
    let list = hidden_paths();
    if list.is_empty() {
        return false;
    }
    let real = std::fs::canonicalize(path).ok();
    list.iter().any(|h| {
        h == path || (real.is_some() && std::fs::canonicalize(h).ok().as_ref() == real.as_ref())
    })
}

/// [`Path::exists`], except for hidden paths.
pub fn exists(path: &Path) -> bool {
    path.exists() && !hidden(path)
}

/// [`Path::is_file`], except for hidden paths.
pub fn is_file(path: &Path) -> bool {
    path.is_file() && !hidden(path)
}
