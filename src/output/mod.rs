//! Terminal output: units, stored text made safe to print, and stdout that may be a closed
//! pipe (a step's progress bar is the runner's: `runner/progress.rs`).

pub mod escape;
pub mod format;
pub mod stdout;
