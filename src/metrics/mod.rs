//! Measurements: the per-thread recorder, histograms, step summaries, and what a step cost
//! (/proc sampling and its per-op figures).

pub mod cgroup;
pub mod compact;
pub mod compressed;
pub mod efficiency;
pub mod histogram;
pub mod outcome;
pub mod proc;
pub mod profile;
pub mod recorder;
pub mod replication;
pub mod seconds;
pub mod series;
pub mod storage;
pub mod summary;
