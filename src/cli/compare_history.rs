//! The earlier runs `ibench compare` learns each figure's noise from (`report::compare::noise`):
//! the stored complete runs of A's and of B's configuration (`history::series::fingerprint`) on
//! the host the compared runs ran on, the compared runs themselves left out.

use std::collections::BTreeSet;

use anyhow::Result;

use crate::report::compare::noise::{self, Learned};
use crate::results::model::RunResult;
use crate::results::store::Store;

/// The noise the earlier runs of `a`'s and `b`'s configurations on their host say.
pub fn learned(store: &Store, a: &[RunResult], b: &[RunResult]) -> Result<Learned> {
    let (Some(first_a), Some(first_b)) = (a.first(), b.first()) else {
        return Ok(Learned::default());
    };
    let host = &first_a.environment.hostname;
    if a.iter().chain(b).any(|r| &r.environment.hostname != host) {
        return Ok(Learned::default());
    }
    let compared: BTreeSet<&str> = a.iter().chain(b).map(|r| r.run_id.as_str()).collect();
    let fingerprints: BTreeSet<String> = [first_a, first_b]
        .into_iter()
        .map(crate::history::series::fingerprint)
        .collect();
    let mut groups: Vec<Vec<RunResult>> = vec![Vec::new(); fingerprints.len()];
    let dbms: BTreeSet<&str> = [first_a, first_b]
        .iter()
        .map(|r| r.environment.dbms.name.as_str())
        .collect();
    for name in dbms {
        for r in store.complete_runs_of(name)? {
            if &r.environment.hostname != host || compared.contains(r.run_id.as_str()) {
                continue;
            }
            let f = crate::history::series::fingerprint(&r);
            if let Some(i) = fingerprints.iter().position(|x| *x == f) {
                groups[i].push(r);
            }
        }
    }
    Ok(noise::learn(&groups))
}
