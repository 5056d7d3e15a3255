//! Reading files whose size the user controls, with an upper bound: an experiment file, a
//! config fragment or a results document named on the command line may be anything
//! (`/dev/zero`, a huge log), and reading it whole must not exhaust memory.

use std::io::{self, Read};
use std::path::Path;

/// A reader that fails once more than its limit has been read from it (it reads one byte past
/// the limit to tell a file of exactly the limit from a larger one).
#[derive(Debug)]
pub struct Limited<R> {
    inner: R,
    limit: u64,
    read: u64,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = self.limit.saturating_add(1).saturating_sub(self.read);
        let take = usize::try_from(room).unwrap_or(usize::MAX).min(buf.len());
        let n = self.inner.read(&mut buf[..take])?;
        self.read += n as u64;
        if self.read > self.limit {
            return Err(io::Error::other(format!(
                "larger than {}, the most ibench reads from such a file",
                human(self.limit)
            )));
        }
        Ok(n)
    }
}

/// Opens `path` for reading at most `limit` bytes: a regular file larger than that is refused
/// by its size before anything is read; anything else (a pipe, a device) fails once it has
/// given more.
pub fn open(path: &Path, limit: u64) -> io::Result<Limited<std::fs::File>> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(io::Error::other(format!(
            "it is {}, larger than {}, the most ibench reads from such a file",
            human(meta.len()),
            human(limit)
        )));
    }
    Ok(Limited {
        inner: file,
        limit,
        read: 0,
    })
}

/// Reads `path` as UTF-8 text of at most `limit` bytes; a larger file is an error saying so
/// (only `limit + 1` bytes are ever read).
pub fn read_to_string(path: &Path, limit: u64) -> io::Result<String> {
    let mut text = String::new();
    open(path, limit)?.read_to_string(&mut text)?;
    Ok(text)
}

/// `bytes` for a message: whole MiB from 1 MiB up (rounded up: a file just over the limit
/// does not show as the limit itself).
fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes.div_ceil(1 << 20))
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

    #[test]
    fn a_large_file_is_refused_by_its_size_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sparse");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len((4 << 20) + 1).unwrap();
        let err = open(&p, 4 << 20).unwrap_err().to_string();
        assert!(err.contains("it is 5 MiB, larger than 4 MiB"), "{err}");
        let mut limited = open(&p, 5 << 20).unwrap();
        assert_eq!(
            io::copy(&mut limited, &mut io::sink()).unwrap(),
            (4 << 20) + 1
        );
    }
}
