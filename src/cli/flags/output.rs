//! The output's flags: where results go (the results directory and database), the run's
//! label and tags, and how it is shown while it runs.

use std::path::PathBuf;

use clap::Args;

/// Where results go and how the run is shown.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Directory for results (one JSON file per run).
    #[arg(long, value_name = "DIR", default_value = "ibench-results")]
    pub out: PathBuf,
    /// Results database every run is also stored in: an SQLite file, or a postgres:// URL
    /// shared by a team (password from the URL or PGPASSWORD) [default: OUT/results.db].
    #[arg(long, value_name = "FILE|URL")]
    pub results: Option<PathBuf>,
    /// Label naming this configuration in results and reports.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Print a progress line every N seconds (0: progress bar only).
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub report_interval: u64,
    /// Keep the scratch database ibench created under --out.
    #[arg(long)]
    pub keep_data: bool,
    /// No progress display; only the summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Price of this host per hour (e.g. the instance's on-demand price), recorded with the
    /// run: reports show throughput per unit of it and the cost of a million operations.
    #[arg(long, value_name = "PRICE", value_parser = parse_price)]
    pub cost_per_hour: Option<f64>,
    /// Keep every client's full per-second series in the results, not only a summary of
    /// each (ops, rows, rate percentiles, idle seconds): about 75 bytes per client, op type
    /// and second, 280 MB for an hour of one op type at 1,024 clients. The series of all
    /// clients together are always kept in full.
    #[arg(long)]
    pub per_client_series: bool,
    /// Provenance tag KEY=VALUE stored with the run (repeatable; e.g. commit=3f2a9c1,
    /// branch=main): shown by list, show and reports, `ibench list --tag` filters on it,
    /// `ibench history --order tag:KEY` orders by it. Key: 1-64 of a-z 0-9 _ . -
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = crate::request::tags::parse)]
    pub tags: Vec<(String, String)>,
}

/// A price per hour: a positive number (at most 1e6).
pub fn parse_price(s: &str) -> Result<f64, String> {
    match s.trim().trim_start_matches('$').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a price per hour: expected a positive number such as 0.68"
        )),
    }
}
