//! Reports from results: the terminal summary (more formats come with the results store).

pub mod table;
pub mod terminal;
