//! Versions of server binaries: what a binary says with `--version`, and whether it is the
//! version asked for. Used by binary lookup and by installed builds.

use std::path::Path;
use std::process::{Command, Stdio};

use super::libs::with_library_path;

/// The version a server binary prints with `--version` (`15.14`, `10.11.19`).
pub fn binary_version(binary: &Path) -> Option<String> {
    let mut cmd = Command::new(binary);
    with_library_path(&mut cmd, binary);
    let out = cmd.arg("--version").stdin(Stdio::null()).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().find_map(version_in)
}

/// The version number a word begins with (`15.14` of `15.14-0+deb12u1`, `10.11.19`): digits
/// and dots, with at least one dot; `None` for any other word.
pub fn version_in(word: &str) -> Option<String> {
    let v: String = word
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let v = v.trim_end_matches('.');
    (v.contains('.') && v.starts_with(|c: char| c.is_ascii_digit())).then(|| v.to_string())
}

/// Whether `found` (`10.11.19`) is the `wanted` version (`10.11`, `10.11.19`).
pub fn version_matches(found: &str, wanted: &str) -> bool {
    let f: Vec<&str> = found.split('.').collect();
    let w: Vec<&str> = wanted.trim().split('.').collect();
    w.len() <= f.len() && w.iter().zip(&f).all(|(a, b)| a == b)
}
