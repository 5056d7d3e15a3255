//! Terminal output: progress bars and units.

pub mod format;
pub mod progress;
