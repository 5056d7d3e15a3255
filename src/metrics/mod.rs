//! Measurements: the per-thread recorder, histograms, step summaries, what a step cost
//! (/proc sampling and its per-op figures), and the registry of figures (figures.rs: what
//! each is called, its unit and direction) the runner's lines and every report read.

pub mod canary;
pub mod cgroup;
pub mod compact;
pub mod compressed;
pub mod efficiency;
pub mod figures;
pub mod histogram;
pub mod interference;
pub mod outcome;
pub mod pressure;
pub mod proc;
pub mod profile;
pub mod recorder;
pub mod replication;
pub mod seconds;
pub mod series;
pub mod storage;
pub mod summary;
