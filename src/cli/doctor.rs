//! `ibench doctor`: what this host can do, one line per feature (available or not, what was
//! found or why not, the Debian command that installs it), as a table or JSON. Always exits
//! 0: a missing feature is an answer, not an error.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::doctor::{self, Depth, HostFeature, Places};
use crate::output::stdout;
use crate::report::table::Table;

/// Flags of `ibench doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON (`{"features": [{"name", "available", "detail", "install"}]}`) instead of
    /// the table: the form each run records in its results' environment.
    #[arg(long)]
    pub json: bool,
    /// The output directory to check (file system, free space, write access), as `ibench run
    /// --out` would use it.
    #[arg(long, value_name = "DIR", default_value = "ibench-results")]
    pub out: PathBuf,
    /// The results database to check (opened, never created) [default: OUT/results.db].
    #[arg(long, value_name = "FILE|URL")]
    pub results: Option<PathBuf>,
}

/// The JSON document `--json` prints.
#[derive(serde::Serialize)]
struct Report<'a> {
    features: &'a [HostFeature],
}

/// Checks every feature and prints them.
pub fn execute(args: &DoctorArgs) -> Result<()> {
    let places = Places {
        out: args.out.clone(),
        results: args.results.clone(),
    };
    let features = doctor::check(Depth::Full, &places);
    if args.json {
        let text = serde_json::to_string_pretty(&Report {
            features: &features,
        })?;
        return stdout::print(&format!("{text}\n"));
    }
    stdout::print(&table(&features))
}

/// The table: feature, yes/no, what was found or why not and what installs it.
fn table(features: &[HostFeature]) -> String {
    let mut t = Table::new(["feature", "ok", "found / why not"]).align_left([1, 2]);
    for f in features {
        let detail = match &f.install {
            Some(cmd) => format!("{}; install: {cmd}", f.detail),
            None => f.detail.clone(),
        };
        t.row([
            f.name.clone(),
            if f.available { "yes" } else { "no" }.to_string(),
            detail,
        ]);
    }
    let missing = crate::results::features::missing(features);
    let summary = if missing.is_empty() {
        "every feature is available".to_string()
    } else {
        format!(
            "{} of {} available; missing: {}",
            features.len() - missing.len(),
            features.len(),
            missing.join(", ")
        )
    };
    format!("{}{summary}\n", t.to_text())
}
