//! `ibench show RUN`: one run's summary, as `ibench run` printed it.

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::report::terminal;
use crate::results::store::Store;

/// Flags of `ibench show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id, a unique prefix of one, or a label (the latest run with it).
    pub run: String,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Prints the run's summary tables.
pub fn execute(args: &ShowArgs) -> Result<()> {
    let store = Store::open_existing(&args.store.results)?;
    let run = store.load(&args.run)?;
    let id = crate::output::escape::line(&run.run_id);
    println!("run {id} ({})", format!("{:?}", run.status).to_lowercase());
    print!("{}", terminal::summary(&run));
    Ok(())
}
