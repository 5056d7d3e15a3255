//! Reports from results: the terminal summary of one run, and reports over many runs
//! (HTML, Markdown, JSON) built from one model, plus the statistics of `ibench compare`.

pub mod build;
pub mod cells;
pub mod charts;
pub mod client_hosts;
pub mod compaction;
pub mod compare;
/// The registry of figures lives below the runner, which names them too
/// (`metrics/figures.rs`); the report's modules reach it by its old path.
pub use crate::metrics::figures;
pub mod gauges;
pub mod group;
pub mod interference;
pub mod marks;
pub mod measured;
pub mod micro;
pub mod model;
pub mod names;
pub mod pacing;
pub mod per_second;
pub mod perf_context;
pub mod render;
pub mod replication;
pub mod resources;
pub mod seconds;
pub mod sections;
pub mod select;
pub mod settings;
pub mod stat;
pub mod step_figures;
pub mod table;
pub mod terminal;
pub mod timeline;
pub mod tpcc;
pub mod verdict;
pub mod versions;
