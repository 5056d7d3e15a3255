//! Duet (`ibench experiment --duet`, the file's `duet = true`; docs/experiments.md, "Duet"):
//! the two cells of each round run at the same time on the host, so that what the host does
//! to one (a neighbour, steal, a slower disk for a while) it does to the other, and the
//! round's A/B ratio keeps little of it (Bulej et al., "Duet Benchmarking: Improving
//! Measurement Accuracy in the Cloud", ICPE 2020).
//!
//! Each run of a pair is a child process of the experiment (this binary, with the hidden
//! `--duet-cell LABEL --duet-round N`), which runs that one cell into the same results file
//! directory and store as any cell, so each run's figures stay its own. The children start
//! together: each says `ready` on its stdout once it has read the plan, and waits for one
//! byte on its stdin, which the experiment writes to both at once ([`run_pair`],
//! [`child_start`]). Each later step starts together too: a child says when it waits to start
//! one, and the experiment lets both go once both wait, or the other is done
//! (`runner/duet_gate.rs`, [`Relay`]). They run in process groups of their own: a Ctrl-C reaches the experiment
//! alone, which passes the one signal on to both, so each saves its run as interrupted; a
//! child whose experiment is gone (kill -9) stops the same way. Each child also gets the experiment's pid ([`crate::metrics::proc::DUET_ROOT_ENV`]): the
//! interference test counts that whole tree (both runs, their servers) as the target, since
//! the partner is expected beside it.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use anyhow::Result;

use super::Plan;
use super::plan::Cell;
use crate::dbms::url::ServerUrl;
use crate::error::UsageError;
use crate::runner::duet_gate;

/// How often the experiment looks at its children while a pair runs.
const POLL: Duration = Duration::from_millis(20);

/// How often a child looks whether its experiment is still there.
const ORPHAN_POLL: Duration = Duration::from_millis(200);

/// What a child says on its stdout when it is ready to start.
const READY: &str = "ready";

/// Refuses, in one line, what duet cannot run (`canary`: `--canary` was given): anything but
/// two cells a round, a server given by URL (both runs would share it), a DBMS in a cgroup
/// of its own or pinned CPUs (the runs would no longer meet the same host), and the canary
/// (its probes would run during the partner's steps).
pub fn check(plan: &Plan, canary: bool) -> Result<(), UsageError> {
    let Some(at) = &plan.duet else {
        return Ok(());
    };
    let refuse = |why: String| Err(UsageError::new(format!("{at}: duet: {why}")));
    let once: Vec<&Cell> = plan.cells.iter().filter(|c| c.repeat == 1).collect();
    if once.len() != 2 {
        let names: Vec<&str> = once.iter().take(4).map(|c| c.label.as_str()).collect();
        return refuse(format!(
            "runs the two cells of each round at once, as a pair; this experiment has {} \
             cell(s) a round ({}{}): give it exactly two (say, two configs of one target)",
            once.len(),
            names.join(", "),
            if once.len() > names.len() {
                ", ..."
            } else {
                ""
            }
        ));
    }
    for c in &once {
        let target = c.label.split('/').next().unwrap_or_default();
        if c.external.is_some() {
            return refuse(format!(
                "target {target} is a server given by url, which both runs of a pair would \
                 share; duet needs targets ibench embeds or starts (each run its own database \
                 or server)"
            ));
        }
        let r = &c.resources;
        if r.needs_cgroup() || r.client_cpus.is_some() {
            return refuse(format!(
                "cell {} limits its DBMS or pins CPUs (memory_limit, io_limit, server_cpus, \
                 client_cpus), so the two runs would not meet the same host; run it without \
                 duet",
                c.label
            ));
        }
    }
    if canary {
        return refuse(
            "--canary probes the host before and after each run, which in duet would run \
             during the partner's steps; leave one of them out"
                .to_string(),
        );
    }
    Ok(())
}

/// The pairs, round by round: the indices (into `plan.cells`) of each round's two cells, in
/// the round's order.
pub fn pairs(plan: &Plan) -> Vec<[usize; 2]> {
    (1..=plan.repeats)
        .filter_map(|r| {
            let mut of = (0..plan.cells.len()).filter(|&i| plan.cells[i].repeat == r);
            Some([of.next()?, of.next()?])
        })
        .collect()
}

/// The other cell of `cell`'s round.
pub fn partner<'p>(plan: &'p Plan, cell: &Cell) -> Option<&'p Cell> {
    plan.cells
        .iter()
        .find(|c| c.repeat == cell.repeat && c.label != cell.label)
}

/// Where the children write, and what they are tagged with: the experiment's own.
#[derive(Clone, Copy, Debug)]
pub struct Invocation<'a> {
    /// `--out`.
    pub out: &'a Path,
    /// `--results`.
    pub store: &'a Path,
    /// `--tag`s.
    pub tags: &'a crate::request::tags::Tags,
}

/// How a child's run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Ended {
    /// Exit 0: the run is complete in the store.
    Complete,
    /// Stopped by SIGINT or SIGTERM (its run saved as interrupted).
    Interrupted,
    /// Anything else, in words (the child printed its error).
    Failed(String),
}

/// Runs the two cells of a round at once, each in a child process, started together, each
/// step of one started with the other's (the relay below); waits for both, passing an
/// interruption on to them.
pub fn run_pair(plan: &Plan, pair: [&Cell; 2], how: &Invocation<'_>) -> [Ended; 2] {
    let mut children: Vec<Result<Child, String>> = pair
        .iter()
        .map(|c| spawn(plan, c, how).map_err(|e| format!("cannot start its process: {e}")))
        .collect();
    // Both ready, then one byte to each: their first steps begin within a few ms.
    let (tx, rx) = mpsc::channel();
    let ready: Vec<bool> = children
        .iter_mut()
        .enumerate()
        .map(|(i, c)| c.as_mut().is_ok_and(|c| wait_ready(c, i, tx.clone())))
        .collect();
    drop(tx);
    let go = ready.iter().all(|&r| r);
    let mut relay = Relay {
        events: rx,
        stdins: children
            .iter_mut()
            .map(|c| c.as_mut().ok().and_then(|c| c.stdin.take()).filter(|_| go))
            .collect(),
        // A child that did not start waits for nothing: done from the start.
        at: children
            .iter()
            .map(|c| if c.is_ok() { At::Running } else { At::Done })
            .collect(),
    };
    for stdin in relay.stdins.iter_mut().flatten() {
        let _ = stdin.write_all(b"g");
    }
    let statuses = wait_all(&mut children, &mut relay);
    let mut ended = statuses.into_iter().map(|s| match s {
        Err(e) => Ended::Failed(e),
        Ok(s) if s.success() => Ended::Complete,
        Ok(s) if matches!(s.code(), Some(130 | 143)) => Ended::Interrupted,
        Ok(s) if s.code().is_none() && crate::interrupt::requested() => Ended::Interrupted,
        Ok(s) => Ended::Failed(format!("its process exited with {s} (its error is above)")),
    });
    let first = ended.next().unwrap_or(Ended::Failed("not run".to_string()));
    let second = ended.next().unwrap_or(Ended::Failed("not run".to_string()));
    [first, second]
}

/// Where a child of the pair is, as its lines say.
#[derive(Clone, Copy, Debug, PartialEq)]
enum At {
    /// In a step, or its pause.
    Running,
    /// Waiting to start its next step.
    Waiting,
    /// Its steps are over (it said so, or its stdout closed).
    Done,
}

/// The experiment's side of the step gate (`runner/duet_gate.rs`): a child waiting to start a
/// step is let go once the other waits too, or is done.
struct Relay {
    /// (child, whether at a step (`true`) or done) as each child's reader thread reads it.
    events: Receiver<(usize, bool)>,
    /// The children's stdins: one byte each lets a child start its step; `None` when closed.
    stdins: Vec<Option<ChildStdin>>,
    /// Where each child is.
    at: Vec<At>,
}

impl Relay {
    /// Takes what the children said within `timeout` and lets go whoever may start.
    fn step(&mut self, timeout: Duration) {
        if let Ok(event) = self.events.recv_timeout(timeout) {
            self.take(event);
            while let Ok(event) = self.events.try_recv() {
                self.take(event);
            }
        }
        if self.at.contains(&At::Running) || !self.at.contains(&At::Waiting) {
            return;
        }
        for (at, stdin) in self.at.iter_mut().zip(self.stdins.iter_mut()) {
            if *at == At::Waiting {
                *at = At::Running;
                if let Some(s) = stdin
                    && s.write_all(b"s").is_err()
                {
                    *stdin = None;
                }
            }
        }
    }

    fn take(&mut self, (child, at_step): (usize, bool)) {
        if let Some(at) = self.at.get_mut(child) {
            *at = if at_step { At::Waiting } else { At::Done };
        }
    }

    /// Closes every stdin: a child waiting for its step stops (interrupted, or with an error).
    fn close(&mut self) {
        self.stdins.iter_mut().for_each(|s| *s = None);
    }
}

/// Starts the child that runs `cell` (its process group of its own, the experiment's pid in
/// [`crate::metrics::proc::DUET_ROOT_ENV`], stdin and stdout piped for the start).
fn spawn(plan: &Plan, cell: &Cell, how: &Invocation<'_>) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    // A PostgreSQL store's password goes to the child in its environment, never on its
    // command line (`ps` shows that to every user of the host).
    let mut store = how.store.as_os_str().to_owned();
    if crate::results::store::location::is_postgres_url(how.store)
        && let Ok(url) = ServerUrl::parse(&how.store.to_string_lossy(), "PGPASSWORD")
    {
        if let Some(password) = url.password() {
            cmd.env("PGPASSWORD", password);
        }
        store = url.without_password().into();
    }
    cmd.arg("experiment")
        .arg(&plan.source.path)
        .arg("--out")
        .arg(how.out)
        .arg("--results")
        .arg(store)
        .arg("--scale")
        .arg(plan.scale.to_string())
        .args(["--quiet", "--duet", "--duet-cell"])
        .arg(&cell.label)
        .arg("--duet-round")
        .arg(cell.repeat.to_string());
    for (k, v) in how.tags {
        cmd.arg("--tag").arg(format!("{k}={v}"));
    }
    cmd.env(
        crate::metrics::proc::DUET_ROOT_ENV,
        std::process::id().to_string(),
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit())
    .process_group(0)
    .spawn()
}

/// Waits for `child` (the pair's `index`) to say it is ready; `false` when it ended first.
/// After that, a thread reads its stdout: the step gate's lines go to `events`, the rest is
/// passed on to the experiment's stdout; its end is the child's end of steps.
fn wait_ready(child: &mut Child, index: usize, events: Sender<(usize, bool)>) -> bool {
    let Some(stdout) = child.stdout.take() else {
        return false;
    };
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    let ready = reader.read_line(&mut line).is_ok() && line.trim() == READY;
    std::thread::spawn(move || {
        let mut line = String::new();
        while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            match duet_gate::parse(&line) {
                Some(at_step) => {
                    let _ = events.send((index, at_step));
                }
                None => {
                    let _ = std::io::stdout().write_all(line.as_bytes());
                }
            }
            line.clear();
        }
        let _ = events.send((index, false));
    });
    ready
}

/// Waits until every child has ended, relaying their steps' starts; on the first
/// interruption of the experiment, sends the same signal once to each child still running and
/// closes their stdins (a child waiting for its step stops).
fn wait_all(
    children: &mut [Result<Child, String>],
    relay: &mut Relay,
) -> Vec<Result<ExitStatus, String>> {
    let mut statuses: Vec<Option<Result<ExitStatus, String>>> = children
        .iter()
        .map(|c| c.as_ref().err().map(|e| Err(e.clone())))
        .collect();
    let mut passed_on = false;
    loop {
        for (child, status) in children.iter_mut().zip(statuses.iter_mut()) {
            let (Ok(c), None) = (child, &status) else {
                continue;
            };
            *status = match c.try_wait() {
                Ok(Some(s)) => Some(Ok(s)),
                Ok(None) => None,
                Err(e) => Some(Err(format!("cannot wait for its process: {e}"))),
            };
        }
        if statuses.iter().all(Option::is_some) {
            return statuses.into_iter().flatten().collect();
        }
        if crate::interrupt::requested() && !passed_on {
            passed_on = true;
            relay.close();
            let sig = crate::interrupt::signal()
                .and_then(|s| nix::sys::signal::Signal::try_from(s).ok())
                .unwrap_or(nix::sys::signal::Signal::SIGINT);
            for (child, status) in children.iter().zip(&statuses) {
                if let (Ok(c), None) = (child, status) {
                    let pid = nix::unistd::Pid::from_raw(c.id() as i32);
                    let _ = nix::sys::signal::kill(pid, sig);
                }
            }
        }
        relay.step(POLL);
    }
}

/// In a child: stops with the experiment (one SIGTERM to itself once the experiment is gone,
/// which saves the run as interrupted), says it is ready, and waits for the experiment's go.
/// An error when the experiment is gone or closed the pipe without a go (the partner did not
/// start).
pub fn child_start() -> Result<()> {
    let root = crate::metrics::proc::duet_root().ok_or_else(|| {
        UsageError::new(
            "--duet-cell is for the runs an `ibench experiment --duet` starts itself".to_string(),
        )
    })?;
    if nix::unistd::getppid().as_raw() != root {
        anyhow::bail!("the experiment that started this duet run has ended");
    }
    // Not PR_SET_PDEATHSIG: the kernel sends it again as each of the experiment's threads
    // exits, and a second signal ends a run at once, unsaved.
    std::thread::spawn(move || {
        while nix::unistd::getppid().as_raw() == root {
            std::thread::sleep(ORPHAN_POLL);
        }
        let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), nix::sys::signal::Signal::SIGTERM);
    });
    let mut out = std::io::stdout();
    writeln!(out, "{READY}")?;
    out.flush()?;
    let mut go = [0u8; 1];
    match std::io::stdin().read(&mut go) {
        Ok(1) => Ok(()),
        _ => anyhow::bail!("its duet partner did not start, so neither run does"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::file::{self, Source};

    /// The plan of `text` (no problems), in duet as the file's line 2 asks.
    fn plan(text: &str) -> Plan {
        let source = Source {
            path: std::path::PathBuf::from("d.toml"),
            text: format!("name = \"d\"\nduet = true\n{text}"),
        };
        let parsed = file::parse(&source).expect("parses");
        let (plan, problems) = super::super::plan::build(parsed, source, None);
        assert!(problems.is_empty(), "{problems:?}");
        plan
    }

    const TWO: &str = "repeats = 3\n[[target]]\nname = \"lite\"\ndbms = \"sqlite\"\n\
                       [[config]]\nname = \"a\"\n[[config]]\nname = \"b\"\n";

    fn refusal(plan: &Plan, canary: bool) -> String {
        check(plan, canary).unwrap_err().to_string()
    }

    #[test]
    fn two_cells_a_round_pair_up_round_by_round() {
        let p = plan(TWO);
        assert_eq!(p.duet.as_deref(), Some("d.toml:2"));
        check(&p, false).unwrap();
        let pairs = pairs(&p);
        assert_eq!(pairs.len(), 3);
        for (r, [a, b]) in pairs.iter().enumerate() {
            let (a, b) = (&p.cells[*a], &p.cells[*b]);
            assert_eq!((a.repeat, b.repeat), (r as u32 + 1, r as u32 + 1));
            assert_ne!(a.label, b.label);
            assert_eq!(partner(&p, a).map(|c| &c.label), Some(&b.label));
        }
    }

    #[test]
    fn what_duet_cannot_run_is_one_line_at_its_key() {
        let three = plan(&format!("{TWO}[[config]]\nname = \"c\"\n"));
        let why = refusal(&three, false);
        assert!(why.starts_with("d.toml:2: duet: "), "{why}");
        assert!(why.contains("3 cell(s) a round"), "{why}");
        assert!(!why.contains('\n'), "{why}");
        let mut capped = plan(TWO);
        capped.cells[1].resources.memory_limit = Some(512 << 20);
        assert!(refusal(&capped, false).contains("memory_limit"));
        let mut pinned = plan(TWO);
        pinned.cells[0].resources.client_cpus = Some(crate::request::CpuList {
            text: "0".to_string(),
            cpus: vec![0],
        });
        assert!(refusal(&pinned, false).contains("client_cpus"));
        assert!(refusal(&plan(TWO), true).contains("--canary"));
        let mut alone = plan(TWO);
        alone.duet = None;
        check(&alone, true).unwrap();
    }
}
