//! What the client threads of one step recorded, before it is summarized into a
//! [`crate::results::model::StepResult`].

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::metrics::efficiency::StepCosts;
use crate::metrics::recorder::Recorder;

/// What the threads of a step did.
pub struct StepOutcome {
    /// Wall-clock time of the step start.
    pub started_at: DateTime<Utc>,
    /// From the step start until the last op ended (or the last thread finished, for threads
    /// that record no ops, such as index creation).
    pub duration: Duration,
    /// One recorder per thread, in the order the threads were given.
    pub recorders: Vec<Recorder>,
    /// The first error, naming its client and role.
    pub error: Option<String>,
    /// The run was interrupted during the step.
    pub interrupted: bool,
    /// What the step cost (samples of /proc and DBMS counters), when sampled.
    pub costs: Option<StepCosts>,
    /// Keep each client's full per-second series in the step's results (`--per-client-series`),
    /// not only their summaries.
    pub per_client_series: bool,
}
