//! What `--results` may name: an SQLite file, or a PostgreSQL database by its `postgres://`
//! (`postgresql://`) URL. Any other `scheme://...` is refused before anything is created: taken
//! as a file name, `mysql://root:pw@host/db` would become directories whose names hold the
//! password.

use std::path::Path;

use crate::error::UsageError;

/// The scheme of `text` when it starts as a URL does (`scheme://`, the scheme a letter then
/// letters, digits, `+`, `-` or `.`), whatever its case.
fn scheme(text: &str) -> Option<&str> {
    let (head, _) = text.split_once("://")?;
    let mut chars = head.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(head)
}

/// Whether `--results` names a PostgreSQL database (`postgres://` or `postgresql://`, in any
/// case) rather than a file.
pub fn is_postgres_url(path: &Path) -> bool {
    let text = path.to_string_lossy();
    scheme(&text)
        .is_some_and(|s| s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql"))
}

/// Checks that `--results` is a file path or a PostgreSQL URL. Another scheme is refused
/// naming the scheme alone: the rest of the text may hold a password.
pub fn check(path: &Path) -> Result<(), UsageError> {
    let text = path.to_string_lossy();
    match scheme(&text) {
        Some(s) if !is_postgres_url(path) => Err(UsageError::new(format!(
            "--results {s}://... is not supported: give an SQLite file path or a postgres:// URL"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_postgres_urls_are_accepted_other_schemes_named_alone() {
        for ok in [
            "ibench-results/results.db",
            "/tmp/r.db",
            "postgres://u:pw@h/db",
            "postgresql://h/db",
            "POSTGRES://h/db",
            "dir:with/colon",
            "./mysql://x",
            "1a://x",
        ] {
            assert!(check(Path::new(ok)).is_ok(), "{ok}");
        }
        assert!(is_postgres_url(Path::new("PostgreSQL://h/db")));
        assert!(!is_postgres_url(Path::new("./postgres://h/db")));
        for (bad, scheme) in [
            ("mysql://root:secret@host/db", "mysql"),
            ("https://u:secret@h/x", "https"),
            ("sqlite:///x", "sqlite"),
            ("file:///tmp/x.db", "file"),
            ("svn+ssh://u:secret@h", "svn+ssh"),
        ] {
            let e = check(Path::new(bad)).unwrap_err().to_string();
            assert!(e.contains(&format!("--results {scheme}://...")), "{e}");
            assert!(!e.contains("secret") && !e.contains("host/db"), "{e}");
        }
    }
}
