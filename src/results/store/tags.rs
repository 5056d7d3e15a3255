//! The store's provenance tags of runs (`run_tags`), read for `list` and `history`.

use std::collections::BTreeMap;

use anyhow::Result;

use super::Store;
use crate::request::tags::Tags;

impl Store {
    /// The tags of every run that has some, by run id.
    pub fn all_tags(&self) -> Result<BTreeMap<String, Tags>> {
        let rows = self.rows(
            "SELECT run_id, key, value FROM run_tags ORDER BY run_id, key",
            &[],
        )?;
        let mut tags: BTreeMap<String, Tags> = BTreeMap::new();
        for r in rows {
            let mut it = r.into_iter();
            let (Some(id), Some(k), Some(v)) = (
                it.next().flatten(),
                it.next().flatten(),
                it.next().flatten(),
            ) else {
                continue;
            };
            tags.entry(id).or_default().insert(k, v);
        }
        Ok(tags)
    }

    /// The ids of the runs that have every tag of `wanted` (key and value).
    pub fn runs_tagged(&self, wanted: &Tags) -> Result<Vec<String>> {
        Ok(self
            .all_tags()?
            .into_iter()
            .filter(|(_, tags)| wanted.iter().all(|(k, v)| tags.get(k) == Some(v)))
            .map(|(id, _)| id)
            .collect())
    }
}
