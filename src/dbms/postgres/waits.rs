//! PostgreSQL's wait events over a step: a thread of its own samples the wait event of every
//! active backend (`pg_stat_activity`) ten times a second, on a connection of its own, and
//! counts what it saw. A backend seen waiting on `Lock:relation` in 30 samples waited about
//! 3 s on it; one active with no wait event is `CPU:running` (on a CPU, or waiting on
//! something PostgreSQL does not instrument).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Result;
use postgres::{Client, Config, NoTls, Statement};

/// Time between samples.
pub(super) const INTERVAL: Duration = Duration::from_millis(100);
/// `application_name` of the sampler's session.
const APPLICATION_NAME: &str = "ibench waits";
/// Active backends (client backends and autovacuum workers; background processes have no
/// state) by wait event, ibench's own sessions of gauges and sampling left out.
const SAMPLE: &str = "SELECT coalesce(wait_event_type, 'CPU') || ':' || \
     coalesce(wait_event, 'running'), count(*)::float8 FROM pg_stat_activity \
     WHERE state = 'active' AND pid <> pg_backend_pid() \
       AND application_name NOT IN ('ibench gauges', 'ibench waits') \
     GROUP BY 1";

/// A running sampler: its stop flag and thread (which returns the profile).
type Running = (Arc<AtomicBool>, JoinHandle<Result<Profile>>);

/// Samples seen per wait event, and how many samples were taken.
#[derive(Default)]
struct Profile {
    seen: BTreeMap<String, f64>,
    samples: u64,
    elapsed: Duration,
    /// The sampler's connection, kept for the next step.
    connection: Option<(Client, Statement)>,
}

/// The wait-event sampler of a step.
#[derive(Default)]
pub(super) struct Waits {
    running: Mutex<Option<Running>>,
    /// The sampler's connection between steps.
    idle: Mutex<Option<(Client, Statement)>>,
}

impl Waits {
    /// Starts sampling (a sampler still running from an earlier step is stopped first). The
    /// sampler's connection is opened by its thread (the step does not wait for it) at the
    /// first step and kept for the next.
    pub(super) fn start(&self, config: &Config) -> Result<()> {
        let _ = self.stop();
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut config = config.clone();
        config.application_name(APPLICATION_NAME);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("ibench-waits".into())
            .spawn(move || {
                let (mut client, statement) = match idle {
                    Some(c) => c,
                    None => {
                        let mut client = config.connect(NoTls)?;
                        let statement = client.prepare(SAMPLE)?;
                        (client, statement)
                    }
                };
                let mut p = Profile::default();
                let begin = Instant::now();
                let mut next = begin;
                while !flag.load(Ordering::Relaxed) {
                    for row in client.query(&statement, &[])? {
                        *p.seen.entry(row.get(0)).or_default() += row.get::<_, f64>(1);
                    }
                    p.samples += 1;
                    next += INTERVAL;
                    let now = Instant::now();
                    if next > now {
                        std::thread::sleep(next - now);
                    } else {
                        next = now;
                    }
                }
                p.elapsed = begin.elapsed();
                p.connection = Some((client, statement));
                Ok(p)
            })?;
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some((stop, thread));
        Ok(())
    }

    /// Stops sampling; per wait event, the estimated seconds backends spent in it (samples
    /// seen × the step's length / samples taken). Empty when not sampling.
    pub(super) fn stop(&self) -> Result<BTreeMap<String, f64>> {
        let Some((stop, thread)) = self.running.lock().unwrap_or_else(|e| e.into_inner()).take()
        else {
            return Ok(BTreeMap::new());
        };
        stop.store(true, Ordering::Relaxed);
        let mut p = thread
            .join()
            .map_err(|_| anyhow::anyhow!("the wait-event sampler panicked"))??;
        *self.idle.lock().unwrap_or_else(|e| e.into_inner()) = p.connection.take();
        if p.samples == 0 {
            return Ok(BTreeMap::new());
        }
        let per_sample = p.elapsed.as_secs_f64() / p.samples as f64;
        Ok(std::mem::take(&mut p.seen)
            .into_iter()
            .map(|(k, n)| (k, n * per_sample))
            .collect())
    }
}

impl Drop for Waits {
    /// A sampler left running (a step that ended in an error) stops with the target.
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
