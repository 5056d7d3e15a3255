//! The report's sections, one file a section: each reads the model (`model.rs`) alone and
//! makes a [`Section`](crate::report::cells::Section) of tables of cells that every format
//! renders (`view.rs` orders them). None computes a figure: the model has them.

pub mod client_hosts;
pub mod compaction;
pub mod pacing;
pub mod perf_context;
pub mod seconds;
