//! Results: the versioned JSON model, the file it is written to, and the environment it records.

pub mod environment;
pub mod file;
pub mod model;
