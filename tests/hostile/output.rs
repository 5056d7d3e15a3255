//! Output paths given to `-o`: a write-then-rename replaced whatever node was there, so
//! `report -o /dev/full` (as root, `-o /dev/null` too) turned a device into a file. Devices and
//! FIFOs are written through now, links that only ibench's user or root could have made are
//! followed to them, and what cannot take a report (a directory, a block device, a FIFO nobody
//! reads) is refused in one line. The nodes are made in the test's own directory (mknod as
//! root), so a failing test damages nothing of the machine's.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;
use std::process::Command;

use crate::common::{Bench, Outcome, path_str};

/// A store in `--out` with one short run labelled `x`.
fn bench_with_a_run() -> Bench {
    let bench = Bench::new();
    let db = bench.db();
    bench
        .run(&[
            "--steps",
            "l.i0",
            "--l0-rows",
            "2000",
            "--label",
            "x",
            "--path",
            path_str(&db),
        ])
        .assert_success();
    bench
}

/// `ibench report x` or `ibench history x` with `-o path`.
fn write_to(bench: &Bench, command: &str, path: &Path) -> Outcome {
    let store = bench.out().join("results.db");
    bench.run_raw(
        &[
            command,
            "x",
            "--results",
            path_str(&store),
            "-o",
            path_str(path),
        ],
        &[],
    )
}

fn mknod(path: &Path, kind: &str, major: u32, minor: u32) {
    let ok = Command::new("mknod")
        .args([path_str(path), kind, &major.to_string(), &minor.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "mknod {} (the test runs as root)", path.display());
}

fn is_char_device(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

fn refused(o: &Outcome, needle: &str) {
    o.assert_refused(needle);
}

#[test]
fn devices_and_fifos_are_written_through_never_replaced() {
    let bench = bench_with_a_run();
    for command in ["report", "history"] {
        // A null device takes the report and stays a device.
        let null = bench.path(&format!("null-{command}"));
        mknod(&null, "c", 1, 3);
        write_to(&bench, command, &null).assert_success();
        assert!(
            is_char_device(&null),
            "{command} -o null replaced the device"
        );

        // A full device refuses the write: an error, and the device stays.
        let full = bench.path(&format!("full-{command}"));
        mknod(&full, "c", 1, 7);
        let o = write_to(&bench, command, &full);
        assert_ne!(o.code, Some(0), "{}", o.describe());
        assert!(o.stderr.contains("No space left"), "{}", o.describe());
        assert!(
            is_char_device(&full),
            "{command} -o full replaced the device"
        );

        // A FIFO with a reader gets the whole report; the FIFO stays.
        let fifo = bench.path(&format!("fifo-{command}"));
        assert!(
            Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                fs::File::open(fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        // The reader opens the FIFO first: a write-only open without a reader fails.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let o = loop {
            let o = write_to(&bench, command, &fifo);
            if o.code == Some(0) || std::time::Instant::now() > deadline {
                break o;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        o.assert_success();
        let text = reader.join().unwrap();
        assert!(
            text.contains('x'),
            "{command}'s output reached the FIFO's reader: {text}"
        );
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

        // A FIFO nobody reads: refused at once, not a hang.
        let lonely = bench.path(&format!("lonely-{command}"));
        assert!(
            Command::new("mkfifo")
                .arg(&lonely)
                .status()
                .unwrap()
                .success()
        );
        refused(
            &write_to(&bench, command, &lonely),
            "FIFO that nobody reads",
        );
        assert!(fs::symlink_metadata(&lonely).unwrap().file_type().is_fifo());
    }
}

#[test]
fn what_cannot_take_a_report_is_refused_and_left_alone() {
    let bench = bench_with_a_run();
    let dir = bench.path("a-directory");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("kept"), "kept").unwrap();
    refused(&write_to(&bench, "report", &dir), "a directory");
    assert_eq!(fs::read_to_string(dir.join("kept")).unwrap(), "kept");

    // A block device node (loop0's numbers) is never opened nor replaced.
    let block = bench.path("block");
    mknod(&block, "b", 7, 0);
    refused(&write_to(&bench, "history", &block), "a block device");
    assert!(
        fs::symlink_metadata(&block)
            .unwrap()
            .file_type()
            .is_block_device()
    );
}

#[test]
fn a_link_of_ibenchs_own_to_stdout_is_followed_and_kept() {
    let bench = bench_with_a_run();
    // As /dev/stdout is: root's link, in a directory only root can write to.
    let stdout = bench.path("stdout");
    symlink("/proc/self/fd/1", &stdout).unwrap();
    let o = write_to(&bench, "report", &stdout);
    o.assert_success();
    assert!(
        o.stdout.contains("<html") || o.stdout.contains("<!DOCTYPE"),
        "{}",
        o.describe()
    );
    assert!(
        fs::symlink_metadata(&stdout)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
