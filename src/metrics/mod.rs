//! Measurements: the per-thread recorder, histograms, and step summaries.

pub mod histogram;
pub mod recorder;
pub mod summary;
