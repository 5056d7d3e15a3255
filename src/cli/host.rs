//! `ibench host list|price`: the machines the stored runs ran on (CPU, cores, memory) and
//! their prices per hour, which reports turn into throughput per unit of cost
//! (`ibench report --by host`).

use std::collections::BTreeMap;

use anyhow::Result;
use clap::{Args, Subcommand};

use super::StoreArgs;
use crate::error::UsageError;
use crate::output::{escape, stdout};
use crate::report::table::Table;
use crate::results::store::Store;

/// Flags of `ibench host`.
#[derive(Debug, Args)]
pub struct HostArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: HostAction,
}

/// `ibench host` subcommands.
#[derive(Debug, Subcommand)]
pub enum HostAction {
    /// The hosts of the stored runs: CPU, cores, memory, runs, price per hour.
    List {
        /// The store.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Set (or clear) a host's price per hour, used for its runs that recorded none
    /// (`ibench run --cost-per-hour` records one with the run).
    Price {
        /// The host name, as the runs recorded it (`ibench host list`).
        host: String,
        /// The price per hour (e.g. 0.68).
        #[arg(value_parser = super::flags::output::parse_price, required_unless_present = "clear")]
        price: Option<f64>,
        /// Remove the host's price.
        #[arg(long, conflicts_with = "price")]
        clear: bool,
        /// The store.
        #[command(flatten)]
        store: StoreArgs,
    },
}

impl HostAction {
    /// The results database the action reads or changes.
    pub fn store(&self) -> &std::path::Path {
        match self {
            HostAction::List { store } | HostAction::Price { store, .. } => &store.results,
        }
    }
}

/// One host as the stored runs describe it.
struct HostRow {
    cpu: String,
    memory_gib: f64,
    runs: usize,
    recorded_prices: Vec<f64>,
}

/// The hosts of every stored run (documents read one at a time).
fn hosts(store: &Store) -> Result<BTreeMap<String, HostRow>> {
    let mut out: BTreeMap<String, HostRow> = BTreeMap::new();
    for row in store.list()? {
        let run = store.load(&row.id)?;
        let e = &run.environment;
        let h = out.entry(e.hostname.clone()).or_insert_with(|| HostRow {
            cpu: format!("{} ({} logical CPUs)", e.cpu_model, e.cpu_cores),
            memory_gib: e.memory_bytes as f64 / (1u64 << 30) as f64,
            runs: 0,
            recorded_prices: Vec::new(),
        });
        h.runs += 1;
        if let Some(p) = e.cost_per_hour
            && !h.recorded_prices.contains(&p)
        {
            h.recorded_prices.push(p);
        }
    }
    Ok(out)
}

/// Runs `ibench host`.
pub fn execute(args: &HostArgs) -> Result<()> {
    match &args.action {
        HostAction::List { store } => {
            let store = Store::open_existing(&store.results)?;
            let hosts = hosts(&store)?;
            if hosts.is_empty() {
                return stdout::print(&format!("no runs in {}\n", store.path().display()));
            }
            let prices = store.host_prices()?;
            let mut t = Table::new([
                "host",
                "cpu",
                "memory",
                "runs",
                "price/h (store)",
                "price/h (runs)",
            ])
            .align_left([0, 1]);
            for (name, h) in hosts {
                t.row([
                    escape::line(&name).into_owned(),
                    escape::line(&h.cpu).into_owned(),
                    format!("{:.1} GiB", h.memory_gib),
                    h.runs.to_string(),
                    prices
                        .get(&name)
                        .map(|p| format!("{p}"))
                        .unwrap_or_else(|| "-".to_string()),
                    if h.recorded_prices.is_empty() {
                        "-".to_string()
                    } else {
                        h.recorded_prices
                            .iter()
                            .map(|p| p.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                ]);
            }
            stdout::print(&t.to_text())
        }
        HostAction::Price {
            host,
            price,
            clear,
            store,
        } => {
            let mut store = Store::open_existing(&store.results)?;
            if host.trim().is_empty() || host.len() > 255 {
                return Err(
                    UsageError::new("expected a host name (see `ibench host list`)").into(),
                );
            }
            if *clear {
                let had = store.clear_host_price(host)?;
                return stdout::print(&if had {
                    format!("host {}: price removed\n", escape::line(host))
                } else {
                    format!("host {}: had no price\n", escape::line(host))
                });
            }
            let price = price.expect("clap requires a price without --clear");
            let known = hosts(&store)?.contains_key(host);
            store.set_host_price(host, price)?;
            stdout::print(&format!(
                "host {}: {price} per hour{}\n",
                escape::line(host),
                if known {
                    ""
                } else {
                    " (no stored run has this host yet)"
                }
            ))
        }
    }
}
