//! The store's prices per hour of hosts (`hosts`, `ibench host`).

use anyhow::{Context, Result};

use super::{Param, Store, text};

impl Store {
    /// Sets the price per hour of `hostname` (replacing an earlier one).
    pub fn set_host_price(&mut self, hostname: &str, cost_per_hour: f64) -> Result<()> {
        self.write(&[
            (
                "DELETE FROM hosts WHERE hostname = ?1",
                vec![text(hostname)],
            ),
            (
                "INSERT INTO hosts (hostname, cost_per_hour) VALUES (?1, ?2)",
                vec![text(hostname), Param::Real(cost_per_hour)],
            ),
        ])
        .with_context(|| format!("cannot set the price of host {hostname}"))
    }

    /// Removes the price of `hostname`; whether it had one.
    pub fn clear_host_price(&mut self, hostname: &str) -> Result<bool> {
        let had = self.host_prices()?.contains_key(hostname);
        self.write(&[(
            "DELETE FROM hosts WHERE hostname = ?1",
            vec![text(hostname)],
        )])?;
        Ok(had)
    }

    /// The price per hour of every host that has one.
    pub fn host_prices(&self) -> Result<std::collections::BTreeMap<String, f64>> {
        let rows = self.rows(
            "SELECT hostname, CAST(cost_per_hour AS TEXT) FROM hosts ORDER BY hostname",
            &[],
        )?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let mut it = r.into_iter();
                let host = it.next().flatten()?;
                let price = it.next().flatten()?.parse().ok()?;
                Some((host, price))
            })
            .collect())
    }
}
