//! Reading files whose size the user controls, with an upper bound: an experiment file, a
//! config fragment or a results document named on the command line may be anything
//! (`/dev/zero`, a huge log), and reading it whole must not exhaust memory.

use std::io::{self, Read};
use std::path::Path;

/// Reads `path` as UTF-8 text of at most `limit` bytes; a larger file is an error saying so
/// (only `limit + 1` bytes are ever read).
pub fn read_to_string(path: &Path, limit: u64) -> io::Result<String> {
    let file = std::fs::File::open(path)?;
    let mut text = String::new();
    file.take(limit.saturating_add(1))
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(io::Error::other(format!(
            "larger than {}, the most ibench reads from such a file",
            human(limit)
        )));
    }
    Ok(text)
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_an_error_after_the_limit() {
        let err = read_to_string(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(err.to_string().contains("larger than 1 MiB"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "abc").unwrap();
        assert_eq!(read_to_string(&p, 3).unwrap(), "abc");
        assert!(read_to_string(&p, 2).is_err());
    }
}
