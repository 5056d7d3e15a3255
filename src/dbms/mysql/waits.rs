//! MariaDB/MySQL wait events over a step: performance_schema's
//! `events_waits_summary_global_by_event_name`, read at the step start and end, when
//! performance_schema is on (`--server-option performance_schema=ON` on a managed server).

use std::collections::BTreeMap;
use std::sync::Mutex;

use anyhow::Result;
use mysql::Conn;
use mysql::prelude::Queryable;

/// Total wait time per instrumented event, picoseconds.
const SUMMARY: &str = "SELECT event_name, sum_timer_wait \
     FROM performance_schema.events_waits_summary_global_by_event_name \
     WHERE sum_timer_wait > 0";
const ENABLED: &str = "SELECT @@performance_schema";

/// The step start's reading.
#[derive(Default)]
pub(super) struct Waits {
    start: Mutex<Option<BTreeMap<String, f64>>>,
}

impl Waits {
    /// Reads the summary at the step start (nothing when performance_schema is off).
    pub(super) fn start(&self, conn: &mut Conn) -> Result<()> {
        let on: Option<i64> = conn.query_first(ENABLED)?;
        let reading = if on == Some(1) {
            Some(summary(conn)?)
        } else {
            None
        };
        *self.start.lock().unwrap_or_else(|e| e.into_inner()) = reading;
        Ok(())
    }

    /// Seconds waited per event over the step (end − start; events that did not grow are
    /// left out).
    pub(super) fn stop(&self, conn: &mut Conn) -> Result<BTreeMap<String, f64>> {
        let Some(start) = self.start.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Ok(BTreeMap::new());
        };
        Ok(summary(conn)?
            .into_iter()
            .filter_map(|(k, end)| {
                let d = end - start.get(&k).copied().unwrap_or(0.0);
                (d > 0.0).then_some((k, d))
            })
            .collect())
    }
}

/// Seconds waited per event since the server started.
fn summary(conn: &mut Conn) -> Result<BTreeMap<String, f64>> {
    let rows: Vec<(String, String)> = conn.query(SUMMARY)?;
    Ok(rows
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.parse::<f64>().ok()? / 1e12)))
        .collect())
}
