//! Terminal output: progress bars, units, and stored text made safe to print.

pub mod escape;
pub mod format;
pub mod progress;
