//! Results: the versioned JSON model, the file it is written to, the results database, and
//! the environment a run records.

pub mod environment;
pub mod file;
pub mod model;
pub mod store;
