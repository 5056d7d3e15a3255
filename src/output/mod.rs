//! Terminal output: progress bars, units, stored text made safe to print, and stdout that may
//! be a closed pipe.

pub mod escape;
pub mod format;
pub mod progress;
pub mod stdout;
