//! The report's sections, one file a section: each reads the model (`model.rs`) alone and
//! makes a [`Section`](crate::report::cells::Section) of tables of cells that every format
//! renders. `view.rs` holds the tables of the figures themselves and orders the sections; the
//! verdict (`verdict.rs`) comes first in HTML and Markdown. None computes a figure: the model
//! has them, and the statistics (`compare/`, `marks.rs`) judged them.

pub mod client_hosts;
pub mod compaction;
pub mod cost;
pub mod headline;
pub mod pacing;
pub mod perf_context;
pub mod replication;
pub mod sanity;
pub mod seconds;
pub mod verdict;
pub mod versions;
pub mod view;
pub mod waits;
