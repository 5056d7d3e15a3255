//! Storage studies: ext4, XFS and btrfs built on loop devices, one tiny experiment with a
//! setup per file system (`data_dir` on its mount), each run checked against the test's own
//! reading of the loop device: the recorded file system, mount and device, and device bytes
//! written in the load step bounded below by PostgreSQL's own WAL bytes (the WAL must reach
//! the device before a commit returns) and above by /sys/block/loopN/stat over the whole
//! experiment. Runs as root only (loop devices and mounts); fails in CI when it cannot run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use ibench::results::model::RunResult;

use crate::common::{Bench, ci, have, have_files, json_files, path_str, server_bench, skip};

/// A file system on a loop device over a sparse file, mounted; unmounted, detached and removed
/// when dropped, whatever the test did.
pub(crate) struct LoopFs {
    fs_type: &'static str,
    image: PathBuf,
    device: Option<String>,
    pub(crate) mount: PathBuf,
    mounted: bool,
}

fn sh(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl LoopFs {
    pub(crate) fn create(bench: &Bench, fs_type: &'static str) -> LoopFs {
        Self::mounted_with(bench, fs_type, "", fs_type)
    }

    /// As `create`, mounted with `options` (`-o`, none when empty), its image and mount point
    /// named after `name`.
    pub(crate) fn mounted_with(
        bench: &Bench,
        fs_type: &'static str,
        options: &str,
        name: &str,
    ) -> LoopFs {
        let mut lf = LoopFs {
            fs_type,
            image: bench.path(&format!("{name}.img")),
            device: None,
            mount: bench.path(&format!("mnt-{name}")),
            mounted: false,
        };
        // XFS needs 300 MiB at least; the file is sparse.
        fs::File::create(&lf.image)
            .unwrap()
            .set_len(320 << 20)
            .unwrap();
        let dev = sh("losetup", &["--find", "--show", path_str(&lf.image)]).unwrap();
        lf.device = Some(dev.clone());
        let mkfs: &[&str] = match fs_type {
            "ext4" => &["mkfs.ext4", "-q", "-F"],
            "xfs" => &["mkfs.xfs", "-q", "-f"],
            _ => &["mkfs.btrfs", "-q", "-f"],
        };
        let mut args: Vec<&str> = mkfs[1..].to_vec();
        args.push(&dev);
        sh(mkfs[0], &args).unwrap();
        fs::create_dir_all(&lf.mount).unwrap();
        let mut mount = vec![dev.as_str(), path_str(&lf.mount)];
        if !options.is_empty() {
            mount.extend(["-o", options]);
        }
        sh("mount", &mount).unwrap();
        lf.mounted = true;
        sh("chmod", &["755", path_str(&lf.mount)]).unwrap();
        lf
    }

    /// `loopN`.
    pub(crate) fn name(&self) -> String {
        self.device
            .as_deref()
            .unwrap()
            .trim_start_matches("/dev/")
            .to_string()
    }

    /// Bytes written to the device so far, from /sys/block/loopN/stat (sectors of 512).
    fn written(&self) -> u64 {
        let stat = fs::read_to_string(format!("/sys/block/{}/stat", self.name())).unwrap();
        let sectors: u64 = stat.split_whitespace().nth(6).unwrap().parse().unwrap();
        sectors * 512
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        if self.mounted {
            for _ in 0..20 {
                if sh("umount", &[path_str(&self.mount)]).is_ok() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
            // Still busy: detach it lazily rather than leave it.
            let _ = sh("umount", &["-l", path_str(&self.mount)]);
        }
        if let Some(dev) = &self.device {
            let _ = sh("losetup", &["-d", dev]);
        }
        let _ = fs::remove_file(&self.image);
    }
}

fn can_run() -> bool {
    if !nix::unistd::Uid::effective().is_root() {
        let why = "loop devices and mounts need root";
        if ci() {
            panic!("{why} (CI=true: the file-system test must run)");
        }
        skip(why);
        return false;
    }
    have("postgres", "")
        && have_files(
            &["/usr/sbin/mkfs.xfs", "/usr/sbin/losetup"],
            "xfsprogs mount",
        )
        && have_files(&["/sbin/mkfs.btrfs"], "btrfs-progs")
}

#[test]
fn ext4_xfs_and_btrfs_on_loop_devices() {
    if !can_run() {
        return;
    }
    let bench = server_bench();
    let filesystems: Vec<LoopFs> = ["ext4", "xfs", "btrfs"]
        .into_iter()
        .map(|f| LoopFs::create(&bench, f))
        .collect();
    let mut text = String::from(
        r#"name = "fs"
[workload]
steps = "l.i0"
clients = 2
rows_per_client = 20000
[[target]]
name = "pg"
dbms = "postgres"
"#,
    );
    for f in &filesystems {
        text.push_str(&format!(
            "[[setup]]\nname = \"{}\"\ndata_dir = \"{}\"\n",
            f.fs_type,
            f.mount.display()
        ));
    }
    let file = bench.path("fs.toml");
    fs::write(&file, text).unwrap();
    let before: Vec<u64> = filesystems.iter().map(LoopFs::written).collect();
    let out = bench.out();
    let o = bench.run_raw(
        &["experiment", path_str(&file), "--out", path_str(&out), "-q"],
        &[],
    );
    o.assert_success();
    let runs: Vec<RunResult> = json_files(&out)
        .iter()
        .filter_map(|p| ibench::results::file::load(p).ok())
        .collect();
    assert_eq!(runs.len(), 3, "{}", o.describe());
    for (f, before) in filesystems.iter().zip(before) {
        let total = f.written() - before;
        let run = runs
            .iter()
            .find(|r| r.config.label.as_deref() == Some(&format!("pg/default/glibc/{}", f.fs_type)))
            .unwrap_or_else(|| panic!("a run on {}", f.fs_type));
        let storage = run.environment.storage.as_ref().expect("storage recorded");
        assert_eq!(storage.fs_type, f.fs_type, "{storage:?}");
        assert_eq!(storage.source, *f.device.as_ref().unwrap(), "{storage:?}");
        assert_eq!(
            Path::new(&storage.mount_point),
            fs::canonicalize(&f.mount).unwrap(),
            "{storage:?}"
        );
        assert!(
            storage.path.starts_with(&storage.mount_point),
            "the data directory is on the mount: {storage:?}"
        );
        assert_eq!(storage.devices, [f.name()], "{storage:?}");
        assert!(!storage.mount_options.is_empty());

        let step = &run.steps[0];
        let eff = step.efficiency.as_ref().expect("efficiency");
        let device = eff.device.as_ref().expect("device figures (btrfs too)");
        assert_eq!(device.name, f.name());
        let wal = step.dbms_counters["pg_stat_wal.wal_bytes"];
        assert!(wal > 0.0);
        assert!(
            device.write_bytes as f64 >= wal,
            "{}: {} bytes written to the device in l.i0, less than the {wal} WAL bytes \
             PostgreSQL wrote",
            f.fs_type,
            device.write_bytes
        );
        assert!(
            device.write_bytes <= total,
            "{}: the step wrote {} bytes, more than the {total} the device wrote in the whole \
             experiment",
            f.fs_type,
            device.write_bytes
        );
        let per_op = eff.per_op.as_ref().expect("per-op figures");
        let kb = per_op.kb_written.expect("KB written per op");
        let expected = device.write_bytes as f64 / 1024.0 / eff.ops as f64;
        assert!(
            (kb - expected).abs() <= 1e-9 * expected.max(1.0),
            "{}: {kb} KB/op, expected {expected}",
            f.fs_type
        );
        assert_eq!(eff.ops, 40_000);
    }
    // The reports name where each ran.
    let md = bench.run_raw(
        &[
            "report",
            "--results",
            path_str(&out.join("results.db")),
            "--format",
            "md",
        ],
        &[],
    );
    md.assert_success();
    for f in &filesystems {
        assert!(
            md.stdout
                .contains(&format!("{} on {}", f.fs_type, f.device.as_ref().unwrap())),
            "{}",
            md.stdout
        );
    }
    // ibench run's flag does the same.
    let run = bench
        .run(&[
            "--server",
            "postgres",
            "--server-data-root",
            path_str(&filesystems[1].mount),
            "--steps",
            "l.i0",
            "--l0-rows",
            "2000",
        ])
        .result();
    let storage = run.environment.storage.expect("storage recorded");
    assert_eq!(storage.fs_type, "xfs");
    assert_eq!(storage.devices, [filesystems[1].name()]);
    assert!(
        fs::read_dir(&filesystems[1].mount)
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().ends_with(".server")),
        "the data directory is removed after the run"
    );
    drop(filesystems);
}

/// On btrfs `du` counts a compressed file's blocks uncompressed; the run records what the
/// extents take (`btrfs_bytes`, from compsize) and the report's "on disk" reads it: the same
/// SQLite load written to a btrfs that compresses every extent (zstd) and to one that does
/// not takes well under its files' length on the first and about their length on the second.
#[test]
fn btrfs_compression_is_measured() {
    if !can_run() {
        return;
    }
    if !have_files(&["/usr/sbin/compsize"], "btrfs-compsize") {
        return;
    }
    let bench = Bench::new();
    let mut sizes = Vec::new();
    for (name, options) in [("zstd", "compress-force=zstd"), ("plain", "")] {
        let f = LoopFs::mounted_with(&bench, "btrfs", options, name);
        let out = bench.path(&format!("out-{name}"));
        let db = f.mount.join("ib.db");
        bench
            .run_raw(
                &["run", "--dbms", "sqlite", "--path", path_str(&db)],
                &[
                    "--scale",
                    "0.02",
                    "--steps",
                    "l.i0,l.x",
                    "--out",
                    path_str(&out),
                    "-q",
                ],
            )
            .assert_success();
        let run = ibench::results::file::load(&json_files(&out)[0]).unwrap();
        let size = run.steps[1].efficiency.as_ref().unwrap().db_size.clone();
        let files = size.files_bytes.expect("files' length");
        let disk = size.disk_bytes.expect("du's blocks");
        let btrfs = size.btrfs_bytes.expect("compsize's figure on btrfs");
        assert!(files > 1 << 20, "{name}: {size:?}");
        // du cannot see the compression.
        assert!(disk >= files * 9 / 10, "{name}: {size:?}");
        sizes.push((name, btrfs as f64 / files as f64, size));
        // The Markdown report's on-disk figure is compsize's.
        let md = bench.run_raw(
            &["report", "--results", path_str(&out.join("results.db"))],
            &["--format", "md"],
        );
        md.assert_success();
        let line = format!("| on disk MB | {:.1} |", btrfs as f64 / (1u64 << 20) as f64);
        assert!(
            md.stdout.contains(&line),
            "{name}: {line} in\n{}",
            md.stdout
        );
    }
    let (zstd, plain) = (sizes[0].1, sizes[1].1);
    assert!(
        zstd < 0.8 * plain,
        "compressed {zstd:.2} of the files' length vs {plain:.2} uncompressed: {sizes:?}"
    );
    assert!(plain > 0.9, "uncompressed btrfs: {sizes:?}");
}
