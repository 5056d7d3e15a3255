//! The one cache of prepared statements that every DBMS connection keeps: a statement is
//! prepared on its first use on a table and reused after, until the table is re-created.

use super::insert_benchmark::Table;

/// What one connection prepared, per table (by its dense [`Table::id`]) and key: a
/// vocabulary statement's `Statement::key`, or a multi-row INSERT's batch size. `S` is
/// whatever the DBMS keeps for it: a server's statement handle, or SQL text where the client
/// library keeps the prepared statements itself (rusqlite).
///
/// A lookup compares the keys of one table's entries (a handful), so it hashes, formats and
/// allocates nothing; a miss calls the DBMS's `prepare` once, and an error leaves nothing
/// cached, so the next use prepares again.
#[derive(Debug)]
pub struct StatementCache<K, S> {
    tables: Vec<Vec<(K, S)>>,
}

impl<K, S> Default for StatementCache<K, S> {
    fn default() -> Self {
        StatementCache { tables: Vec::new() }
    }
}

impl<K: PartialEq + Copy, S> StatementCache<K, S> {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The statement cached for `key` on `table`, if any.
    pub fn get(&self, table: &Table, key: K) -> Option<&S> {
        let entries = self.tables.get(table.id)?;
        entries.iter().find(|(k, _)| *k == key).map(|(_, s)| s)
    }

    /// The statement for `key` on `table`, prepared by `prepare` on first use.
    pub fn get_or_try_insert_with<E>(
        &mut self,
        table: &Table,
        key: K,
        prepare: impl FnOnce() -> Result<S, E>,
    ) -> Result<&S, E> {
        if self.tables.len() <= table.id {
            self.tables.resize_with(table.id + 1, Vec::new);
        }
        let entries = &mut self.tables[table.id];
        let pos = match entries.iter().position(|(k, _)| *k == key) {
            Some(pos) => pos,
            None => {
                entries.push((key, prepare()?));
                entries.len() - 1
            }
        };
        Ok(&entries[pos].1)
    }

    /// The statement for `key` on `table`, made by `make` on first use (which cannot fail).
    pub fn get_or_insert_with(&mut self, table: &Table, key: K, make: impl FnOnce() -> S) -> &S {
        match self.get_or_try_insert_with(table, key, || Ok::<S, std::convert::Infallible>(make()))
        {
            Ok(s) => s,
            Err(never) => match never {},
        }
    }

    /// Forgets every statement of `table` (dropped or re-created: the DBMS prepares them
    /// again on their next use).
    pub fn forget(&mut self, table: &Table) {
        if let Some(entries) = self.tables.get_mut(table.id) {
            entries.clear();
        }
    }

    /// Number of statements cached, over all tables.
    pub fn len(&self) -> usize {
        self.tables.iter().map(Vec::len).sum()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn table(id: usize) -> Table {
        Table {
            id,
            name: format!("t{id}"),
        }
    }

    #[test]
    fn prepares_once_per_table_and_key() {
        let prepared = Cell::new(0);
        let mut cache: StatementCache<usize, String> = StatementCache::new();
        let mut get = |t: &Table, key: usize| -> String {
            cache
                .get_or_try_insert_with(t, key, || {
                    prepared.set(prepared.get() + 1);
                    Ok::<_, ()>(format!("{} {key}", t.name))
                })
                .unwrap()
                .clone()
        };
        assert_eq!(get(&table(2), 7), "t2 7");
        assert_eq!(get(&table(2), 7), "t2 7");
        assert_eq!(prepared.get(), 1, "a hit prepares nothing");
        assert_eq!(get(&table(0), 7), "t0 7", "another table has its own");
        assert_eq!(get(&table(2), 8), "t2 8", "another key has its own");
        assert_eq!(prepared.get(), 3);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&table(2), 8).map(String::as_str), Some("t2 8"));
        assert_eq!(cache.get(&table(1), 7), None);
        assert_eq!(cache.get(&table(9), 7), None);
    }

    #[test]
    fn a_failed_prepare_caches_nothing() {
        let mut cache: StatementCache<usize, u32> = StatementCache::new();
        let e = cache.get_or_try_insert_with(&table(0), 1, || Err("no such table"));
        assert_eq!(e, Err("no such table"));
        assert!(cache.is_empty());
        let s = cache.get_or_try_insert_with(&table(0), 1, || Ok::<_, &str>(5));
        assert_eq!(s, Ok(&5), "prepared again on the next use");
    }

    #[test]
    fn forgetting_a_table_keeps_the_others() {
        let mut cache: StatementCache<usize, u32> = StatementCache::new();
        for (t, key) in [(0, 1), (0, 2), (1, 1)] {
            cache.get_or_insert_with(&table(t), key, || (10 * t + key) as u32);
        }
        cache.forget(&table(0));
        cache.forget(&table(5));
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get(&table(0), 1), None);
        assert_eq!(cache.get(&table(1), 1), Some(&11));
        assert_eq!(
            *cache.get_or_insert_with(&table(0), 1, || 99),
            99,
            "made anew"
        );
    }
}
