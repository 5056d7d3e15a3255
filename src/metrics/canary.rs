//! `--canary`: a probe of the host's capacity, taken before and after a run (MongoDB's canary
//! workloads, issue #37): a fixed CPU loop, the latency of a small write and fdatasync in the
//! results' directory, a memory copy. It takes about a tenth of a second. A host that got
//! slower (a noisy neighbour, a throttled CPU, a busy disk) shows as a slower canary, told
//! apart from a slower DBMS; `ibench show` prints it and `ibench history` follows it (not
//! gated).

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

use crate::results::canary::Probe;

/// Iterations of the CPU loop (about 40 ms on a 2-core VM of 2026 in a release build).
const CPU_ITERATIONS: u64 = 20_000_000;
/// fdatasyncs timed.
const SYNCS: usize = 9;
/// Bytes copied.
const COPY_BYTES: usize = 64 << 20;

/// Milliseconds the fixed CPU loop takes.
fn cpu_ms() -> f64 {
    let t = Instant::now();
    let mut x = 0x9e3779b97f4a7c15u64;
    for _ in 0..std::hint::black_box(CPU_ITERATIONS) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x);
    t.elapsed().as_secs_f64() * 1e3
}

/// Median milliseconds of a 4 KiB write and fdatasync of a new file in `dir` (created
/// without following a link, removed after); 0 when the directory cannot take it.
fn fsync_ms(dir: &Path) -> f64 {
    let path = dir.join(format!(".ibench-canary-{}", std::process::id()));
    let Ok(mut f) = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
    else {
        return 0.0;
    };
    let block = [0x5au8; 4096];
    let mut times: Vec<f64> = (0..SYNCS)
        .filter_map(|_| {
            let t = Instant::now();
            f.write_all(&block).ok()?;
            f.sync_data().ok()?;
            Some(t.elapsed().as_secs_f64() * 1e3)
        })
        .collect();
    let _ = std::fs::remove_file(&path);
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(0.0)
}

/// GB per second of a memory copy of [`COPY_BYTES`] (the best of three).
fn memcpy_gb_s() -> f64 {
    let src = vec![1u8; COPY_BYTES];
    let mut dst = vec![0u8; COPY_BYTES];
    let best = (0..3)
        .map(|_| {
            let t = Instant::now();
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&dst);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    if best > 0.0 {
        COPY_BYTES as f64 / best / 1e9
    } else {
        0.0
    }
}

/// Probes the host, the fsync in `dir`.
pub fn probe(dir: &Path) -> Probe {
    Probe {
        cpu_ms: cpu_ms(),
        fsync_ms: fsync_ms(dir),
        memcpy_gb_s: memcpy_gb_s(),
    }
}

/// The canary in one line for `show`: before, after, and how the CPU loop moved.
pub fn text(c: &crate::results::canary::Canary) -> String {
    let p = |p: &Probe| {
        format!(
            "CPU loop {:.1} ms, fsync {:.2} ms, memcpy {:.1} GB/s",
            p.cpu_ms, p.fsync_ms, p.memcpy_gb_s
        )
    };
    match &c.after {
        Some(a) => format!(
            "host canary: before: {}; after: {} (CPU loop {:+.0}%)",
            p(&c.before),
            p(a),
            (a.cpu_ms / c.before.cpu_ms - 1.0) * 100.0
        ),
        None => format!("host canary: before: {}", p(&c.before)),
    }
}
