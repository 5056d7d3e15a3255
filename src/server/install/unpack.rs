//! Unpacking a verified tarball's `package/native/` (bin, lib, share) into a directory, with
//! bounds on what a tarball may make ibench write, and the shared libraries' soname links the
//! tarballs drop (`libicui18n.so.60 -> libicui18n.so.60.2`).

use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use flate2::read::GzDecoder;

/// Most bytes unpacked from one tarball (a build is ~100 MiB).
const MAX_UNPACKED: u64 = 4 << 30;
/// Most entries unpacked from one tarball (a build has ~1000-3000).
const MAX_ENTRIES: usize = 100_000;
/// The part of the tarball that is the build.
const PREFIX: &str = "package/native";

/// Unpacks the build in the gzipped tarball `tarball` into `dest` (created): regular files
/// and directories under `package/native/`, readable by everyone (the managed server runs as
/// another account when ibench is root), executables stay executable. Paths that would leave
/// `dest` are refused. Returns the files written.
pub fn unpack(tarball: &Path, dest: &Path) -> Result<usize> {
    let file =
        fs::File::open(tarball).with_context(|| format!("cannot open {}", tarball.display()))?;
    let mut archive = tar::Archive::new(GzDecoder::new(io::BufReader::new(file)));
    fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
    let mut budget = MAX_UNPACKED;
    let mut files = 0usize;
    let entries = archive
        .entries()
        .context("the tarball cannot be read as a gzipped tar file")?;
    for (i, entry) in entries.enumerate() {
        if i >= MAX_ENTRIES {
            bail!("the tarball has more than {MAX_ENTRIES} entries: not installed");
        }
        if crate::interrupt::requested() {
            return Err(crate::error::Interrupted.into());
        }
        let mut entry = entry.context("the tarball is damaged")?;
        let path = entry
            .path()
            .context("a tarball entry has no path")?
            .into_owned();
        let Some(rel) = relative(&path)? else {
            continue;
        };
        let target = dest.join(&rel);
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            fs::create_dir_all(&target)
                .with_context(|| format!("cannot create {}", target.display()))?;
            continue;
        }
        if !kind.is_file() {
            // npm tarballs hold files and directories only; anything else is not needed.
            continue;
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let mode = entry.header().mode().unwrap_or(0o644);
        let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&target)
            .with_context(|| format!("cannot create {}", target.display()))?;
        let written = io::copy(&mut (&mut entry).take(budget + 1), &mut out)
            .with_context(|| format!("cannot write {}", target.display()))?;
        if written > budget {
            bail!(
                "the tarball unpacks to more than {} GiB: not installed",
                MAX_UNPACKED >> 30
            );
        }
        budget -= written;
        // The umask may have taken read bits away.
        fs::set_permissions(&target, fs::Permissions::from_mode(mode))?;
        files += 1;
    }
    open_dirs(dest)?;
    Ok(files)
}

/// The path of `path` below `package/native/`; `None` for entries outside it; an error for a
/// path that is absolute or climbs out (`..`).
fn relative(path: &Path) -> Result<Option<PathBuf>> {
    let mut rel = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => rel.push(p),
            Component::CurDir => {}
            _ => bail!(
                "the tarball holds an unsafe path {}: not installed",
                path.display()
            ),
        }
    }
    Ok(rel
        .strip_prefix(PREFIX)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .map(Path::to_path_buf))
}

/// Every directory under `dir` (and `dir`) mode 0755.
fn open_dirs(dir: &Path) -> Result<()> {
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755))?;
    for e in fs::read_dir(dir)?.flatten() {
        if e.file_type()?.is_dir() {
            open_dirs(&e.path())?;
        }
    }
    Ok(())
}

/// Gives every shared library in `lib` the link its soname asks for (read from the ELF
/// file; derived from the name, `libx.so.60.2` -> `libx.so.60`, when it cannot be read).
/// Returns the links made.
pub fn soname_links(lib: &Path) -> Result<Vec<(String, String)>> {
    let mut made = Vec::new();
    let Ok(entries) = fs::read_dir(lib) else {
        return Ok(made);
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.contains(".so"))
        .collect();
    names.sort();
    for name in names {
        let soname = elf_soname(&lib.join(&name)).or_else(|| soname_from_name(&name));
        let Some(soname) = soname else { continue };
        if soname == name || soname.contains('/') || lib.join(&soname).exists() {
            continue;
        }
        std::os::unix::fs::symlink(&name, lib.join(&soname))
            .with_context(|| format!("cannot link {} to {name}", lib.join(&soname).display()))?;
        made.push((soname, name));
    }
    Ok(made)
}

/// `libicui18n.so.60.2` -> `libicui18n.so.60`; `None` when the name has no version.
fn soname_from_name(name: &str) -> Option<String> {
    let (stem, version) = name.split_once(".so.")?;
    let major = version.split('.').next()?;
    (!major.is_empty() && major.chars().all(|c| c.is_ascii_digit()))
        .then(|| format!("{stem}.so.{major}"))
}

/// The `DT_SONAME` of a 64-bit little-endian ELF shared library, read from its dynamic
/// section (only the headers and the string are read, not the file).
pub fn elf_soname(path: &Path) -> Option<String> {
    let mut f = fs::File::open(path).ok()?;
    let mut read_at = |offset: u64, len: usize| -> Option<Vec<u8>> {
        let mut buf = vec![0u8; len];
        f.seek(SeekFrom::Start(offset)).ok()?;
        f.read_exact(&mut buf).ok()?;
        Some(buf)
    };
    let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let header = read_at(0, 64)?;
    // Magic, 64-bit, little-endian.
    if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return None;
    }
    let phoff = u64_at(&header, 0x20);
    let phentsize = u16_at(&header, 0x36) as usize;
    let phnum = u16_at(&header, 0x38) as usize;
    if phentsize < 56 || phnum == 0 || phnum > 256 {
        return None;
    }
    let table = read_at(phoff, phentsize * phnum)?;
    // (vaddr, offset, filesz) of each PT_LOAD; the PT_DYNAMIC's (offset, filesz).
    let mut loads = Vec::new();
    let mut dynamic = None;
    for i in 0..phnum {
        let h = &table[i * phentsize..(i + 1) * phentsize];
        let kind = u32_at(h, 0);
        let (offset, vaddr, filesz) = (u64_at(h, 8), u64_at(h, 16), u64_at(h, 32));
        match kind {
            1 => loads.push((vaddr, offset, filesz)),
            2 => dynamic = Some((offset, filesz)),
            _ => {}
        }
    }
    let (dyn_off, dyn_size) = dynamic?;
    if dyn_size > 1 << 20 {
        return None;
    }
    let entries = read_at(dyn_off, dyn_size as usize)?;
    let (mut strtab, mut soname) = (None, None);
    for e in entries.chunks_exact(16) {
        match u64_at(e, 0) {
            0 => break,
            5 => strtab = Some(u64_at(e, 8)),
            14 => soname = Some(u64_at(e, 8)),
            _ => {}
        }
    }
    let (strtab, soname) = (strtab?, soname?);
    let file_off = loads
        .iter()
        .find(|(v, _, size)| strtab >= *v && strtab < v + size)
        .map(|(v, off, _)| strtab - v + off)?;
    let bytes = read_at(file_off + soname, 256).or_else(|| read_at(file_off + soname, 64))?;
    let end = bytes.iter().position(|&b| b == 0)?;
    let name = std::str::from_utf8(&bytes[..end]).ok()?;
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sonames_from_names() {
        assert_eq!(
            soname_from_name("libicui18n.so.60.2").as_deref(),
            Some("libicui18n.so.60")
        );
        assert_eq!(
            soname_from_name("libpq.so.5.13").as_deref(),
            Some("libpq.so.5")
        );
        assert_eq!(soname_from_name("libz.so.1").as_deref(), Some("libz.so.1"));
        assert_eq!(soname_from_name("libpq.a"), None);
    }

    #[test]
    fn the_soname_is_read_from_the_elf_file() {
        // The C library this test links against names itself libc.so.6.
        let libc = [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/lib/aarch64-linux-gnu/libc.so.6",
        ]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists());
        if let Some(libc) = libc {
            assert_eq!(elf_soname(libc).as_deref(), Some("libc.so.6"));
        }
        assert_eq!(elf_soname(Path::new("/etc/hostname")), None);
    }

    #[test]
    fn paths_outside_the_build_are_skipped_and_climbing_ones_refused() {
        assert_eq!(
            relative(Path::new("package/native/bin/initdb")).unwrap(),
            Some(PathBuf::from("bin/initdb"))
        );
        assert_eq!(relative(Path::new("package/package.json")).unwrap(), None);
        assert!(relative(Path::new("package/native/../../etc/passwd")).is_err());
        assert!(relative(Path::new("/etc/passwd")).is_err());
    }
}
