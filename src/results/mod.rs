//! Results: the versioned JSON model (with a step's per-second series), the file it is
//! written to (and the lock a run holds beside it), the results database, runs found
//! abandoned, imported documents checked (and the bounds of a run's text fields), the
//! environment a run records (with what the host could do: `features.rs`), and the record of a run made by several client hosts
//! (`group.rs`; the group itself is `crate::group`).

pub mod abandoned;
pub mod bounds;
pub mod canary;
pub mod cost;
pub mod dataset;
pub mod environment;
pub mod features;
pub mod file;
pub mod group;
pub mod histogram;
pub mod interference;
pub mod lock;
pub mod memory;
pub mod model;
pub mod nodes;
pub mod resolved;
pub mod series;
pub mod store;
pub mod tpcc;
pub mod validate;
