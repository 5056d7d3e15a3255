//! `insert-random-pk`: `INSERT INTO sbrandpkN (id, k, c, pad)` with a random 26-character id
//! (UUID-like): inserts land anywhere in the primary key, the b-tree write amplification of a
//! bad key. The tables are created afresh at the start of each step, or, with
//! `--random-pk-rows N`, created and loaded with N rows each by `prepare` and kept from one
//! step to the next (a random-key insert into a large table).

use rand_pcg::Pcg64Mcg;

use super::data::{PAD_GROUPS, push_digit_groups, push_random_key};
use super::sysbench::c_value;
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{IdSource, Shape, Statement};

static RANDOM: Statement = Statement::Insert {
    id: IdSource::Given,
};

/// The registry's entry.
pub static INSERT_RANDOM_PK: Benchmark = Benchmark {
    name: "insert-random-pk",
    about: "INSERT INTO sbrandpkN (id, k, c, pad), id a random 26-character string, tables of \
            its own: b-tree write amplification from a bad primary key",
    writes: true,
    transaction: false,
    shape: Shape::RandomPk,
    statements: &[&RANDOM],
    generator: |s| Box::new(InsertRandomPk(*s)),
};

struct InsertRandomPk(Scope);

impl Generator for InsertRandomPk {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.0.table(rng);
        push_row(&self.0, rng, op, table);
    }
}

/// Adds the insert of one row with a random key into table `table` (0-based) to `op`: the
/// steps' inserts, and the rows `--random-pk-rows` loads in `prepare`.
pub(super) fn push_row(scope: &Scope, rng: &mut Pcg64Mcg, op: &mut Operation, table: usize) {
    op.push(&RANDOM, table, Some(1));
    op.text(|s| push_random_key(s, rng));
    let k = scope.id(rng);
    op.int(k);
    c_value(op, rng);
    op.text(|s| push_digit_groups(s, rng, PAD_GROUPS));
}
