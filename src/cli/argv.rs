//! Passwords on the command line (`--url postgres://user:secret@host/db`, `?password=...`,
//! `--results postgres://...`) are readable by every user of the machine in `ps` and
//! `/proc/PID/cmdline` for as long as the process runs. As the mysql client does, ibench
//! overwrites them with `x` in its own argument memory as soon as the command line is parsed
//! (clap has copied the arguments by then); `/proc/PID/cmdline` reads that very memory, so `ps`
//! shows `postgres://user:xxxxxx@host/db` from then on. The moment between `exec` and the
//! overwrite remains: PGPASSWORD / MYSQL_PWD (readable only by the same user and root, in
//! `/proc/PID/environ`) are the safe way, and the help says so.
//!
//! Finding the argument memory: on Linux with glibc, the functions in the `.init_array`
//! section are called before `main` with `(argc, argv, envp)` (the standard library captures
//! `argv` the same way). `argv[i]` point into the process's original argument area, which is
//! writable and which nothing else references (`std::env::args` copies out of it when called;
//! after the overwrite it returns the masked text). Each argument keeps its length and its
//! terminating NUL, so the layout the kernel reports is unchanged. Elsewhere (musl, other
//! systems) nothing is captured and nothing is overwritten.

use std::ffi::{CStr, c_char, c_int};
use std::ops::Range;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

static ARGC: AtomicUsize = AtomicUsize::new(0);
static ARGV: AtomicPtr<*mut c_char> = AtomicPtr::new(std::ptr::null_mut());

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
#[unsafe(link_section = ".init_array")]
static CAPTURE: extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) = capture;

/// Called by glibc before `main` (see the module docs).
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
extern "C" fn capture(argc: c_int, argv: *mut *mut c_char, _envp: *mut *mut c_char) {
    ARGC.store(usize::try_from(argc).unwrap_or(0), Ordering::SeqCst);
    ARGV.store(argv, Ordering::SeqCst);
}

/// Overwrites every password in the process's own arguments with `x` (see the module docs);
/// returns how many were overwritten. Call once the command line is parsed, before any thread
/// is started.
pub fn hide_passwords() -> usize {
    let argv = ARGV.load(Ordering::SeqCst);
    if argv.is_null() {
        return 0;
    }
    let mut hidden = 0;
    for i in 0..ARGC.load(Ordering::SeqCst) {
        // SAFETY: glibc passed `argc` valid pointers in `argv` (a NULL ends it early), each to
        // a NUL-terminated string in the argument area, which stays mapped and writable for
        // the life of the process. Nothing borrows that memory: std only copies out of it.
        // Bytes are replaced in place, never the NUL, so every string keeps its length.
        unsafe {
            let arg = *argv.add(i);
            if arg.is_null() {
                break;
            }
            let len = CStr::from_ptr(arg).to_bytes().len();
            let bytes = std::slice::from_raw_parts_mut(arg.cast::<u8>(), len);
            for range in secret_ranges(bytes) {
                bytes[range].fill(b'x');
                hidden += 1;
            }
        }
    }
    hidden
}

/// Where the passwords are in one argument: the password of every `scheme://user:password@`
/// in it, and the value of every secret query parameter (`password=`, `pass=`, `pwd=`, as
/// `ServerUrl` takes them) after it.
pub fn secret_ranges(arg: &[u8]) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(at) = find(&arg[from..], b"://").map(|i| from + i) {
        let start = at + 3;
        let end = arg[start..]
            .iter()
            .position(|b| matches!(b, b'/' | b'?' | b'#'))
            .map_or(arg.len(), |i| start + i);
        let authority = &arg[start..end];
        if let Some(at_sign) = authority.iter().rposition(|&b| b == b'@')
            && let Some(colon) = authority[..at_sign].iter().position(|&b| b == b':')
            && colon + 1 < at_sign
        {
            ranges.push(start + colon + 1..start + at_sign);
        }
        // The query, up to a fragment or the next URL.
        let next = find(&arg[end..], b"://").map_or(arg.len(), |i| end + i);
        if let Some(q) = arg[end..next].iter().position(|&b| b == b'?') {
            let mut pos = end + q + 1;
            let stop = arg[pos..next]
                .iter()
                .position(|&b| b == b'#')
                .map_or(next, |i| pos + i);
            while pos < stop {
                let pair_end = arg[pos..stop]
                    .iter()
                    .position(|&b| b == b'&')
                    .map_or(stop, |i| pos + i);
                if let Some(eq) = arg[pos..pair_end].iter().position(|&b| b == b'=') {
                    let key = String::from_utf8_lossy(&arg[pos..pos + eq]);
                    if crate::dbms::url::is_secret_key(&key) && pos + eq + 1 < pair_end {
                        ranges.push(pos + eq + 1..pair_end);
                    }
                }
                pos = pair_end + 1;
            }
        }
        from = end.max(start);
    }
    ranges
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(arg: &str) -> String {
        let mut bytes = arg.as_bytes().to_vec();
        for r in secret_ranges(&bytes) {
            bytes[r].fill(b'x');
        }
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn passwords_are_found_in_every_form() {
        for (arg, want) in [
            (
                "postgres://bob:s3cret@h:5432/db",
                "postgres://bob:xxxxxx@h:5432/db",
            ),
            ("--url=mysql://root:pw@h/db", "--url=mysql://root:xx@h/db"),
            (
                "postgres://bob:p%40ss@word@h",
                "postgres://bob:xxxxxxxxxxx@h",
            ),
            (
                "postgres://u@h/db?sslmode=disable&password=abc&x=1",
                "postgres://u@h/db?sslmode=disable&password=xxx&x=1",
            ),
            ("mysql://u@h/db?PWD=q#frag", "mysql://u@h/db?PWD=x#frag"),
            ("postgres://u:a@h/db?pass=b", "postgres://u:x@h/db?pass=x"),
            ("postgres://bob@h/db", "postgres://bob@h/db"),
            ("postgres://bob:@h/db", "postgres://bob:@h/db"),
            ("l.i0,qr100", "l.i0,qr100"),
            ("://", "://"),
            ("a://u:p@h?password=", "a://u:x@h?password="),
        ] {
            assert_eq!(masked(arg), want, "{arg}");
        }
    }

    #[test]
    fn this_test_binary_had_its_arguments_captured() {
        // The test harness is an ordinary glibc program: capture ran before main.
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            assert!(!ARGV.load(Ordering::SeqCst).is_null());
            assert!(ARGC.load(Ordering::SeqCst) >= 1);
        }
    }
}
