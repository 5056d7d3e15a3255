//! What the workloads on SQL connections (the microbenchmarks and TPC-C) share: their client
//! threads ([`thread`]) and the check before their first step ([`check_ready`]).

use anyhow::{Result, bail};

use crate::dbms::{Dbms, SqlConnection, Table};
use crate::runner::client::ThreadSpec;
use crate::runner::client_loop::{self, Driver, Pacing};
use crate::workload::ForeignTables;

/// A client thread running `driver` on a new connection of `dbms` at `pacing` (with the
/// warm-up the pacing has), its transient errors and lost connections tried again as `tries`
/// (tries, reconnects) allow. The connection is a reader's (a replica's with `--read-from
/// replicas`) when `reads_only`, else the primary's.
pub fn thread<'s, D>(
    dbms: &'s dyn Dbms,
    tries: (u32, u32),
    client: usize,
    (role, reads_only): (&'static str, bool),
    driver: D,
    pacing: Pacing,
) -> ThreadSpec<'s>
where
    D: Driver<Conn = dyn SqlConnection> + Send + 's,
{
    let connect = move || {
        if reads_only {
            dbms.connect_sql_reader(client)
        } else {
            dbms.connect_sql()
        }
    };
    client_loop::thread(
        client,
        role,
        connect,
        tries,
        driver,
        pacing,
        pacing.warmup(),
    )
}

/// What a workload checks before its first step, in this order.
pub struct Readiness<'a> {
    /// Tables the run replaces, each refused unless ibench created it or the user allows it;
    /// `also` says what else the user can do.
    pub replaced: &'a [Table],
    /// See `replaced`.
    pub also: &'a str,
    /// The first step loads the tables: nothing more to check.
    pub loads: bool,
    /// Tables written into as they are, and what would write into them (`None`: nothing is).
    pub written: Option<(&'a [Table], &'a str)>,
    /// Tables that must exist; `missing` says how to make them.
    pub needed: &'a [Table],
    /// See `needed`.
    pub missing: &'a str,
}

/// Checks `ready` on a new connection of `dbms`: tables the run would replace or write into
/// that ibench did not create are refused unless `foreign` allows it, and a table the steps
/// need must exist.
pub fn check_ready(dbms: &dyn Dbms, foreign: ForeignTables, ready: Readiness<'_>) -> Result<()> {
    let mut conn = dbms.connect_sql()?;
    let location = dbms.location();
    super::check_replaceable(ready.replaced, foreign, &location, ready.also, |t| {
        conn.table_origin(t)
    })?;
    if ready.loads {
        return Ok(());
    }
    if let Some((tables, action)) = ready.written {
        super::check_writable(tables, foreign, &location, action, |t| conn.table_origin(t))?;
    }
    for t in ready.needed {
        if !conn.table_exists(t)? {
            bail!("table {} does not exist: {}", t.name, ready.missing);
        }
    }
    Ok(())
}
