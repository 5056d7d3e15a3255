//! Files ibench writes in directories that other users may write to as well.
//!
//! `--out` may be a shared directory (mode 1777, as /tmp), and ibench often runs as root, so
//! another local user can plant a symbolic link (or a file of their own) at any name ibench
//! is about to write: the results' temporary file, a lock, a server log, the results
//! database. So every file ibench writes is created here:
//!
//! * new files with `O_CREAT | O_EXCL | O_NOFOLLOW` ([`create_new`]): a name that exists,
//!   a symbolic link included, is an error, never followed;
//! * whole files under an unpredictable temporary name, then renamed over the target
//!   ([`write_atomic`]): a rename replaces a planted link itself, not what it points to;
//! * logs appended with `O_NOFOLLOW`, and only when the file is ibench's own
//!   ([`open_append`]);
//! * directories with `mkdir`, which never follows a link, private (0700) ([`create_dir`]).
//!
//! A directory that another user can write to and that is not sticky lets them rename or
//! remove ibench's files after the fact, so [`check_dir`] refuses it as an output directory;
//! in a sticky one only the owner of a file may replace it, so ibench's own files stay its
//! own and only names it has not created yet can be planted, which the rules above defeat.
//! Files ibench reads back from such a directory (an abandoned run's lock and document, the
//! results database) are trusted only when they are its own ([`is_own_file`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rand::Rng;

use crate::error::UsageError;

/// Creates `path` as a new file with `mode`, failing if anything (a symbolic link included)
/// is there already.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// 12 random lowercase letters and digits: a name part nobody can predict.
fn random_tag() -> String {
    let mut rng = rand::rng();
    (0..12)
        .map(|_| char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[rng.random_range(0..36)]))
        .collect()
}

/// A name beside `path` that nobody can predict: `.<file name>.<random>.tmp`.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.{}.tmp", random_tag()))
}

/// Writes `path` whole: `write` fills a new file of `mode` under an unpredictable temporary
/// name beside it, which is synced and renamed over `path`, so `path` is always complete
/// and a link planted at it is replaced, never followed. On any failure the temporary file
/// is removed.
pub fn write_atomic(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut out = BufWriter::new(create_new(&tmp, mode)?);
        write(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes a file the user named (`report -o`, `history -o`) whole, without replacing
/// anything that is not a file: a regular file, a link another user may have planted
/// (replaced, never followed) or nothing is written as [`write_atomic`] does; a character
/// device or a FIFO (`/dev/null`, `/dev/stdout`, a named pipe) is written through, never
/// renamed over (as root that would replace `/dev/null` with a file); anything else (a
/// directory, a block device, a socket) is refused. A link is followed only to reach a
/// device or FIFO, and only when no other user could have made it: it is root's or ibench's
/// user's, in a directory nobody else can write to (`/dev/stdout` is such a link).
pub fn write_output(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let node = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return write_atomic(path, mode, write),
        other => other?,
    };
    let kind = node.file_type();
    let stream = |t: fs::FileType| t.is_char_device() || t.is_fifo();
    if kind.is_file() {
        return write_atomic(path, mode, write);
    }
    if kind.is_symlink() {
        let trusted = (node.uid() == euid() || node.uid() == 0)
            && path.parent().is_some_and(|dir| {
                let dir = if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                };
                dir_access(dir).is_ok_and(|a| a == DirAccess::Private)
            });
        if trusted && fs::metadata(path).is_ok_and(|m| stream(m.file_type())) {
            return write_through(path, false, write);
        }
        return write_atomic(path, mode, write);
    }
    if stream(kind) {
        return write_through(path, true, write);
    }
    Err(io::Error::other(format!(
        "it is {}, not a file",
        node_kind(kind)
    )))
}

/// Writes into the character device or FIFO at `path` (never through a link when
/// `no_follow`):
/// opened without creating or truncating anything, and without waiting for a reader (a FIFO
/// nobody reads is an error, not a hang).
fn write_through(
    path: &Path,
    no_follow: bool,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let flags = libc::O_NONBLOCK | libc::O_CLOEXEC | if no_follow { libc::O_NOFOLLOW } else { 0 };
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => io::Error::other("it is a FIFO that nobody reads"),
            _ => e,
        })?;
    let meta = file.metadata()?;
    if !(meta.file_type().is_char_device() || meta.file_type().is_fifo()) {
        return Err(io::Error::other("it changed while being opened"));
    }
    // Writes wait for a slow reader as they would on any pipe.
    nix::fcntl::fcntl(
        &file,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
    )
    .map_err(io::Error::from)?;
    let mut out = BufWriter::new(file);
    write(&mut out)?;
    out.flush()
}

/// What a node that is not a regular file is, for messages.
fn node_kind(kind: fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens the log `path` for appending, creating it (mode 0600) when missing. An existing
/// `path` must be a regular file of ibench's own user: a link or another user's file
/// planted at the name is an error, not followed or written.
pub fn open_append(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != euid() || meta.nlink() != 1 {
        return Err(io::Error::other(format!(
            "{} is not a file of ibench's own (another user's file, or a link, is there)",
            path.display()
        )));
    }
    Ok(file)
}

/// Copies the regular file `from` (not a link, one name only, so no other file can be
/// reached through it) to the new file `to` (mode 0600).
pub fn copy_new(from: &Path, to: &Path) -> io::Result<u64> {
    let mut src = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(from)?;
    let meta = src.metadata()?;
    if !meta.is_file() || meta.nlink() != 1 {
        return Err(io::Error::other(format!(
            "{} is not a plain file",
            from.display()
        )));
    }
    let mut dst = create_new(to, 0o600)?;
    let n = io::copy(&mut src, &mut dst)?;
    dst.flush()?;
    Ok(n)
}

/// Creates the directory `path` (mode 0700); an existing name, a link included, is an error.
pub fn create_dir(path: &Path) -> io::Result<()> {
    fs::DirBuilder::new().mode(0o700).create(path)
}

/// Makes sure each of `files` is ibench's own before a library opens it by name: a missing
/// one is created empty (mode 0644), so the name is taken; a link or another user's file at
/// a name is refused, the message ending with `remedy`.
pub fn claim_files(files: &[&Path], remedy: &str) -> Result<(), UsageError> {
    for file in files {
        if fs::symlink_metadata(file).is_err() {
            match create_new(file, 0o644) {
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(UsageError::new(format!(
                        "cannot create {}: {e}",
                        file.display()
                    )));
                }
            }
        }
        if !is_own_file(file) {
            return Err(UsageError::new(format!(
                "{} is not ibench's own file (a link, or another user's file, in a directory \
                 others can write to): remove it, or {remedy}",
                file.display()
            )));
        }
    }
    Ok(())
}

/// Creates a new private directory (0700) in the system's temporary directory, named
/// `<prefix><random>`: nobody can predict its name or plant anything at it first.
pub fn private_temp_dir(prefix: &str) -> io::Result<PathBuf> {
    let base = std::env::temp_dir();
    loop {
        let dir = base.join(format!("{prefix}{}", random_tag()));
        match create_dir(&dir) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            other => return other.map(|()| dir),
        }
    }
}

/// Creates the private directory `path` (as [`create_dir`]) unless ibench's user already
/// has one there; anything else at the name (a link, another user's directory) is an error.
pub fn ensure_own_dir(path: &Path) -> io::Result<()> {
    match create_dir(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && is_own_dir(path, None) => Ok(()),
        other => other,
    }
}

/// Whether `path` is a regular file (not a link) owned by ibench's user with one name.
pub fn is_own_file(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.uid() == euid() && m.nlink() == 1)
}

/// Whether `path` is a directory (not a link) owned by ibench's user or by `other` (the
/// account a managed server ran as).
pub fn is_own_dir(path: &Path, other: Option<u32>) -> bool {
    fs::symlink_metadata(path)
        .is_ok_and(|m| m.is_dir() && (m.uid() == euid() || Some(m.uid()) == other))
}

/// How far the directory `dir` is ibench's alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirAccess {
    /// Only ibench's user (and root) can create or remove names in it.
    Private,
    /// Others can create names, but the sticky bit keeps them from removing or renaming
    /// ibench's files: usable, with every file checked to be ibench's own.
    SharedSticky,
    /// Others can remove or rename ibench's files in it.
    Shared,
}

/// Who else can write to the directory `dir` (followed if a link: the user named it):
/// another owner (not root) with write permission, a group of other members, or everyone.
pub fn dir_access(dir: &Path) -> io::Result<DirAccess> {
    let meta = fs::metadata(dir)?;
    let mode = meta.mode();
    let owner_is_other = meta.uid() != euid() && meta.uid() != 0;
    let group_is_other = mode & 0o020 != 0 && !private_group(meta.gid());
    let others_write = (owner_is_other && mode & 0o200 != 0) || group_is_other || mode & 0o002 != 0;
    Ok(if !others_write {
        DirAccess::Private
    } else if mode & 0o1000 != 0 {
        DirAccess::SharedSticky
    } else {
        DirAccess::Shared
    })
}

/// Refuses (one line naming `flag` and the directory) an output directory that another user
/// can write to unless it is sticky (see the module docs).
pub fn check_dir(dir: &Path, flag: &str) -> Result<DirAccess, UsageError> {
    let access = dir_access(dir)
        .map_err(|e| UsageError::new(format!("cannot use {flag} {}: {e}", dir.display())))?;
    if access == DirAccess::Shared {
        let mode = fs::metadata(dir).map(|m| m.mode() & 0o7777).unwrap_or(0);
        return Err(UsageError::new(format!(
            "{flag} {} (mode {mode:o}) can be written by other users, who could replace \
             ibench's files in it: choose a directory only you can write to, or make it \
             sticky (chmod +t) as /tmp is",
            dir.display()
        )));
    }
    Ok(access)
}

/// Whether group `gid` is ibench's user's own (its primary group, named as the user, with no
/// other member listed): the user-private groups of Debian's `adduser`.
fn private_group(gid: u32) -> bool {
    use nix::unistd::{Gid, Group, User};
    let Ok(Some(user)) = User::from_uid(nix::unistd::Uid::effective()) else {
        return false;
    };
    let Ok(Some(group)) = Group::from_gid(Gid::from_raw(gid)) else {
        return false;
    };
    user.gid.as_raw() == gid && group.name == user.name && group.mem.iter().all(|m| *m == user.name)
}

/// ibench's effective user id.
pub fn euid() -> u32 {
    nix::unistd::Uid::effective().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn nothing_is_written_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("planted");
        symlink(&victim, &link).unwrap();
        assert!(create_new(&link, 0o600).is_err());
        assert!(open_append(&link).is_err());
        assert!(copy_new(&victim, &link).is_err());
        assert!(copy_new(&link, &dir.path().join("copy")).is_err());
        assert!(create_dir(&link).is_err());
        // A whole-file write replaces the link itself.
        write_atomic(&link, 0o644, |w| w.write_all(b"new")).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(&link).unwrap(), "new");
        assert!(!fs::symlink_metadata(&link).unwrap().is_symlink());
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let err = write_atomic(&path, 0o644, |_| Err(io::Error::other("disk full")));
        assert!(err.is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn shared_directories_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let set = |mode| fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
        set(0o755);
        assert_eq!(dir_access(p).unwrap(), DirAccess::Private);
        set(0o777);
        assert_eq!(dir_access(p).unwrap(), DirAccess::Shared);
        assert!(
            check_dir(p, "--out")
                .unwrap_err()
                .to_string()
                .contains("chmod +t")
        );
        set(0o1777);
        assert_eq!(dir_access(p).unwrap(), DirAccess::SharedSticky);
        // Group-writable: shared unless the group is the user's own private one.
        set(0o775);
        let own = private_group(fs::metadata(p).unwrap().gid());
        let expected = if own {
            DirAccess::Private
        } else {
            DirAccess::Shared
        };
        assert_eq!(dir_access(p).unwrap(), expected);
        let nogroup = nix::unistd::Gid::from_raw(65534);
        if nix::unistd::chown(p, None, Some(nogroup)).is_ok() {
            assert_eq!(dir_access(p).unwrap(), DirAccess::Shared);
        }
    }
}
