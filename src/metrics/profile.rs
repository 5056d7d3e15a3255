//! `--profile`: `perf record -g` of the DBMS's processes (ibench's own for an embedded DBMS)
//! during each step, folded in Rust (inferno) into one SVG flame graph per step, kept beside
//! the results (`<results>.profiles/<step>.svg`, and the folded stacks as `<step>.folded` for
//! differential flame graphs).
//!
//! A machine where perf is missing, or whose kernel forbids it, gives one line
//! (`note: --profile: ...`) and the run goes on without profiles.

use std::fs;
use std::io::{BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use inferno::collapse::Collapse;
use inferno::collapse::perf::{Folder, Options as CollapseOptions};
use inferno::flamegraph::{self, Options as FlameOptions};

use crate::metrics::proc::{Watch, process_tree};

/// Where perf is looked for first (Debian's `linux-perf`), then on the PATH.
const PERF: &str = "/usr/bin/perf";
/// Sampling frequency, Hz (a prime, off the timer ticks).
const FREQUENCY: &str = "499";
/// How long perf gets to start (or fail) before the step goes on.
const START_WAIT: Duration = Duration::from_millis(300);

/// The profiler of a run: where its flame graphs go, and whether perf works here.
pub struct Profiler {
    dir: PathBuf,
    /// Set once perf failed: what went wrong (said once; no more attempts).
    failed: Mutex<Option<String>>,
}

/// A `perf record` under way for one step.
pub struct Recording {
    child: Child,
    data: PathBuf,
    log: PathBuf,
}

impl Profiler {
    /// A profiler writing into `dir` (created at the first profile).
    pub fn new(dir: PathBuf) -> Profiler {
        Profiler {
            dir,
            failed: Mutex::new(None),
        }
    }

    /// Starts `perf record -g` of the processes `watch` follows, for step `step`. `Err` holds
    /// the one line to show the user, the first time only (later steps: `Ok(None)`).
    pub fn start(&self, watch: &Watch, step: &str) -> Result<Option<Recording>, String> {
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        if failed.is_some() {
            return Ok(None);
        }
        match self.try_start(watch, step) {
            Ok(r) => Ok(Some(r)),
            Err(e) => {
                let line = format!("--profile: {e:#}; the run goes on without profiles");
                *failed = Some(line.clone());
                Err(line)
            }
        }
    }

    fn try_start(&self, watch: &Watch, step: &str) -> Result<Recording> {
        let pids: Vec<i32> = if watch.embedded {
            vec![std::process::id() as i32]
        } else {
            let Some(root) = watch.dbms_pid else {
                bail!("no DBMS process is known (give --server-pid for a server by URL)");
            };
            process_tree(root as i32).iter().map(|p| p.pid).collect()
        };
        if pids.is_empty() {
            bail!("the DBMS's processes are gone");
        }
        crate::safe_fs::ensure_own_dir(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let stem = file_stem(step);
        let data = self.dir.join(format!("{stem}.perf.data"));
        let log = self.dir.join(format!("{stem}.perf.log"));
        let pid_list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
        let mut cmd = Command::new(perf_binary());
        cmd.args(["record", "-g", "-F", FREQUENCY, "-q", "-o"])
            .arg(&data)
            .args(["-p", &pid_list.join(",")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(&log).context("perf's log")?);
        // perf attached to a server ibench did not start would outlive a killed ibench (kill
        // -9) for good: it gets SIGTERM when the thread that started it ends (this step's
        // sampler, which stops it before it ends) and writes its data and exits.
        // SAFETY: prctl is async-signal-safe; it runs in the child after fork, before exec.
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM)
                    .map_err(std::io::Error::from)
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot run perf ({e}): apt-get install linux-perf"))?;
        let mut rec = Recording { child, data, log };
        // perf refuses at once when the kernel forbids it (perf_event_paranoid).
        let deadline = Instant::now() + START_WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = rec.child.try_wait() {
                let text = fs::read_to_string(&rec.log).unwrap_or_default();
                let first = text
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("no message")
                    .to_string();
                rec.discard();
                bail!("perf record exited at once ({status}): {first}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(rec)
    }
}

impl Recording {
    /// Stops perf (SIGINT: it writes its data and exits).
    pub fn stop(&mut self) {
        // Already ended (and reaped: its pid may belong to another process by now).
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Folds the recording into `<step>.folded` and draws `<step>.svg` beside it (the perf
    /// data and log are removed); returns the SVG's path relative to the results' directory
    /// (`<results>.profiles/<step>.svg`).
    pub fn finish(mut self, title: &str) -> Result<String> {
        self.stop();
        let svg = self.data.with_extension("").with_extension("svg");
        let folded = self.data.with_extension("").with_extension("folded");
        let result = fold_and_draw(&self.data, &folded, &svg, title);
        self.discard();
        result?;
        let dir = svg.parent().and_then(|d| d.file_name()).unwrap_or_default();
        let name = svg.file_name().unwrap_or_default();
        Ok(Path::new(dir).join(name).to_string_lossy().into_owned())
    }

    /// Removes the perf data and log.
    fn discard(&mut self) {
        let _ = fs::remove_file(&self.data);
        let _ = fs::remove_file(&self.log);
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
            self.discard();
        }
    }
}

/// `perf script` of `data`, folded into `folded`, drawn into `svg`.
fn fold_and_draw(data: &Path, folded: &Path, svg: &Path, title: &str) -> Result<()> {
    let mut script = Command::new(perf_binary())
        .args(["script", "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("perf script")?;
    let stdout = script.stdout.take().context("perf script's output")?;
    let mut stacks = Vec::new();
    let folding = Folder::from(CollapseOptions::default())
        .collapse(BufReader::new(stdout), &mut stacks)
        .context("folding perf's stacks");
    let status = script.wait().context("perf script")?;
    folding?;
    if !status.success() {
        bail!("perf script failed ({status})");
    }
    if stacks.is_empty() {
        bail!("perf recorded no samples (the processes were idle)");
    }
    fs::write(folded, &stacks).with_context(|| format!("cannot write {}", folded.display()))?;
    draw(&stacks[..], svg, title)
}

/// Draws folded stacks (`inferno`'s collapsed format) read from `folded` into `svg`.
pub fn draw(folded: impl Read, svg: &Path, title: &str) -> Result<()> {
    let mut opts = FlameOptions::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    // A new file renamed into place: `compare --flame-graphs DIR` may be a shared directory.
    crate::safe_fs::write_atomic(svg, 0o644, |out| {
        flamegraph::from_reader(&mut opts, BufReader::new(folded), out)
            .map_err(|e| std::io::Error::other(format!("drawing: {e:#}")))
    })
    .with_context(|| format!("cannot write {}", svg.display()))
}

/// A differential flame graph of two folded profiles: B's stacks, coloured by how their share
/// changed from A (red grew, blue shrank), into `svg`.
pub fn draw_differential(a: &Path, b: &Path, svg: &Path, title: &str) -> Result<()> {
    let mut diff = Vec::new();
    inferno::differential::from_files(Default::default(), a, b, &mut diff)
        .context("differential stacks")?;
    draw(&diff[..], svg, title)
}

/// A step name as a file name (`l.i1` stays; anything but letters, digits, `.`, `-`, `_`
/// becomes `_`).
pub fn file_stem(step: &str) -> String {
    step.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// perf: `IBENCH_PERF` when set, else [`PERF`] when it exists, else `perf` on the PATH.
pub fn perf_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("IBENCH_PERF") {
        return PathBuf::from(p);
    }
    if crate::hide::exists(Path::new(PERF)) {
        PathBuf::from(PERF)
    } else {
        PathBuf::from("perf")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_are_safe_file_names() {
        assert_eq!(file_stem("l.i1"), "l.i1");
        assert_eq!(file_stem("point-query.c32"), "point-query.c32");
        assert_eq!(file_stem("../x y"), ".._x_y");
    }

    #[test]
    fn folded_stacks_draw_an_svg_with_their_frames() {
        let dir = std::env::temp_dir().join(format!("ibench-fg-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("t.svg");
        draw(
            &b"postgres;main;ExecInsert 30\npostgres;main;XLogFlush 10\n"[..],
            &svg,
            "t",
        )
        .unwrap();
        let text = fs::read_to_string(&svg).unwrap();
        assert!(text.contains("ExecInsert") && text.contains("XLogFlush"));
        let a = dir.join("a.folded");
        let b = dir.join("b.folded");
        fs::write(&a, "p;f 10\np;g 10\n").unwrap();
        fs::write(&b, "p;f 30\np;g 10\n").unwrap();
        draw_differential(&a, &b, &svg, "diff").unwrap();
        assert!(fs::read_to_string(&svg).unwrap().contains("p"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
