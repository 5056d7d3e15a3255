//! The flags of the conditions a run measures under: how ibench's client threads drive their
//! connections, the DBMS's resources (`resources.rs`), the pause between steps, and what is
//! recorded besides the figures (sampling once a second, profiles).

use clap::Args;

/// The conditions of the run.
#[derive(Debug, Args)]
pub struct ConditionArgs {
    /// Record `perf record -g` of the DBMS's processes (ibench's own for an embedded DBMS)
    /// during each step into one SVG flame graph per step, beside the results
    /// (`<run>.profiles/<step>.svg`). Without perf, or where the kernel forbids it, the run
    /// goes on without profiles.
    #[arg(long)]
    pub profile: bool,
    /// Threads that drive a server's client connections, each thread many connections
    /// (one readiness wait for all of them) when a step has more connections than threads
    /// [default: one per core, once a step has more than 4 connections per core]; 0: a
    /// thread per connection. Embedded DBMS always have a thread per connection.
    #[arg(long, value_name = "N")]
    pub client_threads: Option<usize>,
    /// How client threads wait for their many connections: io-uring (a query's send and
    /// receive in one system call) or epoll [default: io-uring where the kernel allows it,
    /// else epoll].
    #[arg(long, value_name = "IO")]
    pub client_io: Option<crate::mux::Backend>,
    /// Memory cap, IO limits, CPUs and OS cache mode of the DBMS.
    #[command(flatten)]
    pub resources: super::resources::ResourceArgs,
    /// Seconds of pause before every step but the first (between client counts and between
    /// steps), for the DBMS's background work to settle; recorded with each step.
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub cooldown: u64,
    /// No once-a-second /proc and DBMS gauge readings and no wait-event sampling during
    /// steps: only each step's start and end readings (cost per op still measured; no
    /// per-second gauges or wait events). To measure what the sampling costs.
    #[arg(long)]
    pub no_sampling: bool,
    /// Probe the host before and after the run (a fixed CPU loop, a 4 KiB fdatasync in the
    /// results' directory, a 64 MiB memory copy; about 0.1 s each time), so that drift of the
    /// host itself shows as drift of the canary (`show`, `history`).
    #[arg(long)]
    pub canary: bool,
}
