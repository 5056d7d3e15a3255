//! Which tables a run uses and which client uses which. Column and index definitions are in
//! `dbms::SecondaryIndex` and the DBMS files, since their SQL differs per DBMS.

use crate::dbms::Table;
use crate::request::{InsertBenchmarkSpec, TableMode};

/// The tables of a run: `<prefix>1` .. `<prefix>N`, one per client, or one shared.
pub fn tables(spec: &InsertBenchmarkSpec) -> Vec<Table> {
    (0..spec.table_count())
        .map(|id| Table {
            id,
            name: format!("{}{}", spec.table_prefix, id + 1),
        })
        .collect()
}

/// Index (into [`tables`]) of the table client `client` works on.
pub fn table_of(spec: &InsertBenchmarkSpec, client: usize) -> usize {
    match spec.table_mode {
        TableMode::PerClient => client,
        TableMode::Shared => 0,
    }
}

/// The first client working on table `table` (it owns the table's set-up work and ops).
pub fn owner(spec: &InsertBenchmarkSpec, table: usize) -> usize {
    (0..spec.clients)
        .find(|&c| table_of(spec, c) == table)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_client_and_shared_tables() {
        let mut spec = InsertBenchmarkSpec {
            clients: 3,
            ..Default::default()
        };
        let names: Vec<_> = tables(&spec).into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["pi1", "pi2", "pi3"]);
        assert_eq!(table_of(&spec, 2), 2);
        assert_eq!(owner(&spec, 1), 1);
        spec.table_mode = TableMode::Shared;
        assert_eq!(tables(&spec).len(), 1);
        assert_eq!(table_of(&spec, 2), 0);
    }
}
