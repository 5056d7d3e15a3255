//! A database's files copied as a tree: each file cloned (the `FICLONE` ioctl: a reflink,
//! sharing the blocks until either side writes) where the file system allows it, else
//! copied; every name created new (`O_EXCL | O_NOFOLLOW`, `mkdir`), links refused, modes
//! kept (PostgreSQL insists on its own); and the tree's sizes as `du` counts them.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

pub use crate::metrics::storage::{TreeSize, tree_size};
pub use crate::results::dataset::Method;
use sha2::{Digest, Sha256};

/// What copying a tree did.
#[derive(Clone, Debug, Default)]
pub struct Copied {
    /// Regular files.
    pub files: u64,
    /// Their bytes (logical sizes).
    pub bytes: u64,
    /// Files cloned.
    pub cloned: u64,
}

impl Copied {
    /// How the files were copied, all told.
    pub fn method(&self) -> Method {
        if self.files > 0 && self.cloned == self.files {
            Method::Reflink
        } else if self.cloned > 0 {
            Method::Mixed
        } else {
            Method::Copy
        }
    }
}

/// How a copy is made.
#[derive(Clone, Copy, Debug, Default)]
pub struct CopyOptions {
    /// Owner (uid, gid) of every name made (a managed server's account); `None`: ibench's.
    pub owner: Option<(u32, u32)>,
    /// Sync each file to disk (a dataset being saved; a restore leaves that to the DBMS).
    pub sync: bool,
}

/// Copies the directory `from` to the new directory `to` (which must not exist), file by
/// file: cloned where possible, else copied. A symbolic link or a special file in `from` is
/// an error (nothing outside the tree is ever reached through it; its kind is
/// `InvalidInput`). A copy that fails removes what it made: `to` and all in it.
pub fn copy_tree(from: &Path, to: &Path, options: CopyOptions) -> io::Result<Copied> {
    let meta = fs::symlink_metadata(from)?;
    if !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a directory", from.display()),
        ));
    }
    crate::safe_fs::create_dir(to)?;
    let mut copied = Copied::default();
    let result = fill_dir(from, to, &meta, options, &mut copied);
    if result.is_err() {
        // `to` is the directory made above (private, so nobody else put anything in it);
        // remove_dir_all does not follow links.
        let _ = fs::remove_dir_all(to);
    }
    result.map(|()| copied)
}

/// Copies the entries of the directory `from` (its metadata `meta`) into the new, empty
/// directory `to`, then gives `to` the owner and mode `from` has.
fn fill_dir(
    from: &Path,
    to: &Path,
    meta: &fs::Metadata,
    options: CopyOptions,
    copied: &mut Copied,
) -> io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            let meta = fs::symlink_metadata(&src)?;
            crate::safe_fs::create_dir(&dst)?;
            fill_dir(&src, &dst, &meta, options, copied)?;
        } else if kind.is_file() {
            copied.bytes += copy_file(&src, &dst, options, &mut copied.cloned)?;
            copied.files += 1;
        } else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link or a special file: a database's files are plain \
                     files and directories",
                    src.display()
                ),
            ));
        }
    }
    if let Some((uid, gid)) = options.owner {
        std::os::unix::fs::chown(to, Some(uid), Some(gid))?;
    }
    fs::set_permissions(to, fs::Permissions::from_mode(meta.mode() & 0o7777))
}

/// Copies one regular file (not a link) to the new file `to`, cloned where the file system
/// allows it (`cloned` counts those); its length.
fn copy_file(from: &Path, to: &Path, options: CopyOptions, cloned: &mut u64) -> io::Result<u64> {
    let mut src = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(from)?;
    let meta = src.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a plain file", from.display()),
        ));
    }
    let mut dst = crate::safe_fs::create_new(to, meta.mode() & 0o777)?;
    if clone(&src, &dst) {
        *cloned += 1;
    } else {
        io::copy(&mut src, &mut dst)?;
        dst.flush()?;
    }
    if let Some((uid, gid)) = options.owner {
        std::os::unix::fs::fchown(&dst, Some(uid), Some(gid))?;
    }
    if options.sync {
        dst.sync_all()?;
    }
    Ok(meta.len())
}

/// Clones `src` into the empty `dst` (FICLONE); false where the file system cannot.
fn clone(src: &File, dst: &File) -> bool {
    // SAFETY: both descriptors are open for the duration of the call; FICLONE takes the
    // source descriptor as its argument and touches no memory of ours.
    unsafe { libc::ioctl(dst.as_raw_fd(), libc::FICLONE, src.as_raw_fd()) == 0 }
}

/// A SHA-256 over the tree: each file's path (relative to `root`), length and bytes, in name
/// order; links are not followed. Two trees with the same digest hold the same bytes.
pub fn tree_digest(root: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    digest_dir(root, Path::new(""), &mut hasher)?;
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn digest_dir(root: &Path, rel: &Path, hasher: &mut Sha256) -> io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(root.join(rel))?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    let mut buf = vec![0u8; 1 << 16];
    for entry in entries {
        let name = rel.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            hasher.update(format!("d {}\n", name.display()).as_bytes());
            digest_dir(root, &name, hasher)?;
        } else if kind.is_file() {
            let mut f = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(root.join(&name))?;
            let len = f.metadata()?.len();
            hasher.update(format!("f {} {len}\n", name.display()).as_bytes());
            loop {
                let n = f.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_copied_whole_and_links_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir_all(src.join("sub")).unwrap();
        fs::write(src.join("a"), b"alpha").unwrap();
        fs::write(src.join("sub/b"), vec![7u8; 100_000]).unwrap();
        fs::set_permissions(src.join("a"), fs::Permissions::from_mode(0o640)).unwrap();
        let copied = copy_tree(&src, &dir.path().join("dst"), CopyOptions::default()).unwrap();
        assert_eq!((copied.files, copied.bytes), (2, 100_005));
        let dst = dir.path().join("dst");
        assert_eq!(fs::read(dst.join("sub/b")).unwrap(), vec![7u8; 100_000]);
        let mode = fs::metadata(dst.join("a")).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(tree_digest(&src).unwrap(), tree_digest(&dst).unwrap());
        assert_eq!(tree_size(&dst).logical_bytes, 100_005);
        // An existing destination is never written into.
        assert!(copy_tree(&src, &dst, CopyOptions::default()).is_err());
        fs::write(dst.join("a"), b"alphA").unwrap();
        assert_ne!(tree_digest(&src).unwrap(), tree_digest(&dst).unwrap());
        // A link (after the files, in name order): refused, and what was copied removed.
        std::os::unix::fs::symlink("/etc/passwd", src.join("zz")).unwrap();
        let refused = copy_tree(&src, &dir.path().join("dst2"), CopyOptions::default());
        assert_eq!(refused.unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert!(!dir.path().join("dst2").exists());
    }
}
