//! The roles a [`Dbms`] plays beside its connections, one trait each, so that code asks for
//! the role it needs: [`Observe`] (what the runner reads: counters, gauges, settings, engine
//! status, wait events, size), [`Maintain`] (the pauses between steps) and [`Topology`] (the
//! nodes of a managed cluster or replica set). Every method has a default ("not available",
//! "nothing to do"); a DBMS implements the ones it has.

use std::collections::BTreeMap;

use anyhow::Result;

#[cfg(doc)]
use super::{Dbms, SqlConnection};
use super::{Settled, Table};

/// What the runner reads from a DBMS while it runs: its settings, cumulative counters, gauges,
/// engine status, perf context, wait events and size.
pub trait Observe: Send + Sync {
    /// Effective settings, for diffing runs by configuration. Default: none known.
    fn settings(&self) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::new())
    }

    /// The DBMS's own cumulative counters (pg_stat_*, SHOW GLOBAL STATUS), by name; the runner
    /// reads them at step start and end and stores the differences. Default: none.
    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        Ok(BTreeMap::new())
    }

    /// Waits until the counters include the work of the step's sessions, which have just
    /// closed (default: at once).
    fn settle_counters(&self) {}

    /// Whether counter `name` (from [`Observe::counters`]) is one engineers read first; those are
    /// also reported per op. Default: none.
    fn is_key_counter(&self, _name: &str) -> bool {
        false
    }

    /// Gauges: the DBMS's current levels (files waiting for compaction, memtable bytes, whether
    /// writes are stopped), by name. The runner reads them once a second during a step, off
    /// the clients' path, into the step's per-second series (`efficiency.per_second.gauges`).
    /// Keep it cheap (it runs on the coordinator thread, counted in `sampler_cpu_ms`); a gauge
    /// missing from one reading is recorded as missing for that second. Default: none.
    fn gauges(&self) -> Result<BTreeMap<String, f64>> {
        Ok(BTreeMap::new())
    }

    /// Errors of a kind of their own over a step, by kind, from the step's differences of
    /// [`Observe::counters`] (Galera: `cert_failure`, `bf_abort`, summed over the nodes).
    /// Default: none.
    fn error_counts(&self, _deltas: &BTreeMap<String, f64>) -> BTreeMap<String, u64> {
        BTreeMap::new()
    }

    /// The storage engine's own status report at a step's end, by section (`SHOW ENGINE INNODB
    /// STATUS`, parts of `SHOW ENGINE ROCKSDB STATUS`), stored with the step
    /// (`steps[].engine_status`). Default: none.
    fn engine_status(&self) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::new())
    }

    /// The engine's perf context counters (MyRocks' rocksdb_perf_context_global), read just
    /// before and after each select-min; the workload stores the differences with it
    /// (`select_min.perf_context`). Default: none.
    fn perf_context(&self) -> Result<BTreeMap<String, f64>> {
        Ok(BTreeMap::new())
    }

    /// Starts recording wait events for a step (the runner calls it when the step's clients
    /// are ready, and [`Observe::waits_end`] when they are done). Default: nothing.
    fn waits_start(&self) -> Result<()> {
        Ok(())
    }

    /// The wait events since [`Observe::waits_start`]: seconds spent in each, by name
    /// (`Lock:relation` on PostgreSQL, `wait/io/table/sql/handler` on MariaDB), stored with the
    /// step (`steps[].wait_events`). Default: none.
    fn waits_end(&self) -> Result<BTreeMap<String, f64>> {
        Ok(BTreeMap::new())
    }

    /// Size of the database in bytes as the DBMS reports it, when it can.
    fn size_bytes(&self) -> Result<Option<u64>> {
        Ok(None)
    }
}

/// The pauses a DBMS takes between steps: maintenance (vacuum, checkpoint, flush) and the wait
/// for its background work after writes.
pub trait Maintain: Send + Sync {
    /// The maintenance pause between load and query steps (vacuum, checkpoint, flush...).
    /// Returns a short description of what was done, or `None` when the DBMS needs none.
    /// Without `change_settings` it changes no global setting of the server, not even for a
    /// moment (a server ibench did not start, unless the user allowed it).
    fn maintenance(&self, _tables: &[Table], _change_settings: bool) -> Result<Option<String>> {
        Ok(None)
    }

    /// The pause after writes: [`Maintain::maintenance`] and a wait (at most until `until`) for
    /// the engine's background work to settle (InnoDB's purge before it, MyRocks' compactions
    /// after it), with what was waited for and how long. Default: the maintenance alone.
    fn post_write_maintenance(
        &self,
        tables: &[Table],
        change_settings: bool,
        until: std::time::Instant,
    ) -> Result<(Option<String>, Option<Settled>)> {
        let _ = until;
        Ok((self.maintenance(tables, change_settings)?, None))
    }
}

/// The nodes of a managed cluster or replica set: a node down and up again, DDL applied
/// everywhere, replicas catching up. An embedded DBMS or a single server implements it empty.
pub trait Topology: Send + Sync {
    /// A node of the managed cluster (`n2`, `r1`) died and the run goes on without it: new
    /// client connections no longer go to it, its gauges are no longer read.
    fn node_down(&self, _name: &str) {}

    /// A node taken out by [`Topology::node_down`] is back (started again and synced): client
    /// connections go to it again.
    fn node_up(&self, _name: &str) {}

    /// After the workload's DDL (tables created, indexes built) returned: waits until every
    /// node of a managed Galera cluster has applied it, so that a client on any node finds
    /// the tables and indexes (DDL is replicated in total order, but only the node that ran
    /// it has applied it when it returns). Default: nothing to wait for.
    fn ddl_applied(&self) -> Result<()> {
        Ok(())
    }

    /// With streaming replicas: the primary's WAL position now, then per replica (by name)
    /// the seconds until it had replayed up to it (`None`: not within `timeout`). Empty
    /// without replicas.
    fn replica_catch_up(&self, timeout: std::time::Duration) -> Result<Vec<(String, Option<f64>)>> {
        let _ = timeout;
        Ok(Vec::new())
    }
}
