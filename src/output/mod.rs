//! Terminal output: progress bars, units, and stdout that may be a closed pipe.

pub mod format;
pub mod progress;
pub mod stdout;
