//! The `prepare` step's data, as sysbench-tpcc's prepare makes it (`load_tables`, `item`),
//! split into parts that the load's threads share ([`Unit`]): items and stock in chunks,
//! each warehouse with its districts, each district's customers, history, orders, new
//! orders and order lines. Each part draws from its own seeded stream, so the data do not
//! depend on how many threads load them. The last thread to finish creates the indexes and
//! the foreign keys.

use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};
use rand::Rng;
use rand::seq::SliceRandom;
use rand_pcg::Pcg64Mcg;

use super::data::{Constants, push_digits, push_last_name, push_letters, push_repeated, rng};
use super::params::Params;
use super::schema::{FOREIGN_KEYS, INDEXES, Kind, table};
use super::statements::*;
use crate::dbms::Table;
use crate::dbms::sql::{SqlConnection, Statement};
use crate::metrics::recorder::{Op, Recorder};
use crate::runner::client::ThreadCtx;
use crate::runner::client_loop::Driver;
use crate::runner::session::Session;

/// Items and stock rows per part.
const CHUNK: u32 = 10_000;
/// Items in a set, stock rows of a warehouse.
pub const ITEMS: u32 = 100_000;
/// Districts of a warehouse.
pub const DISTRICTS: u32 = 10;
/// Customers (and orders) of a district.
pub const CUSTOMERS: u32 = 3_000;
/// The first order of a district that is still new (undelivered): the last 900 are.
pub const FIRST_NEW_ORDER: u32 = 2_101;

/// A part of the load.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    /// Items `from..from + CHUNK` of a set.
    Items { set: usize, from: u32 },
    /// A warehouse and its ten districts.
    Warehouse { set: usize, w: u32 },
    /// Stock rows `from..from + CHUNK` of a warehouse.
    Stock { set: usize, w: u32, from: u32 },
    /// A district's customers, history, orders, new orders and order lines.
    District { set: usize, w: u32, d: u32 },
}

/// Every part of a load of `sets` sets of `warehouses` warehouses, the large ones first.
pub fn units(sets: usize, warehouses: u32) -> Vec<Unit> {
    let mut out = Vec::new();
    for set in 1..=sets {
        for w in 1..=warehouses {
            out.extend((1..=DISTRICTS).map(|d| Unit::District { set, w, d }));
        }
        for w in 1..=warehouses {
            out.extend((0..ITEMS / CHUNK).map(|i| Unit::Stock {
                set,
                w,
                from: 1 + i * CHUNK,
            }));
            out.push(Unit::Warehouse { set, w });
        }
        out.extend((0..ITEMS / CHUNK).map(|i| Unit::Items {
            set,
            from: 1 + i * CHUNK,
        }));
    }
    out
}

/// Statements run together on one table: `rows` rows of `per_row` values each, as one
/// multi-row INSERT (`statement` of LOAD_BATCH rows), or as one INSERT per row.
pub struct Batch {
    kind: Kind,
    set: usize,
    statement: &'static Statement,
    rows: usize,
    per_row: usize,
    params: Params,
}

/// Collects one table's rows into batches of LOAD_BATCH rows; the rest go one row each.
struct Batcher<'a> {
    out: &'a mut Vec<Batch>,
    kind: Kind,
    set: usize,
    batch: &'static Statement,
    one: &'static Statement,
    cur: Params,
    rows: usize,
}

impl<'a> Batcher<'a> {
    fn new(
        out: &'a mut Vec<Batch>,
        set: usize,
        kind: Kind,
        (batch, one): (&'static Statement, &'static Statement),
    ) -> Self {
        Batcher {
            out,
            kind,
            set,
            batch,
            one,
            cur: Params::default(),
            rows: 0,
        }
    }

    /// The buffer to write one row's values into; the row ends at the next call or finish.
    fn row(&mut self) -> &mut Params {
        if self.rows == LOAD_BATCH {
            self.flush(self.batch);
        }
        self.rows += 1;
        &mut self.cur
    }

    fn flush(&mut self, statement: &'static Statement) {
        if self.rows == 0 {
            return;
        }
        let per_row = self.cur.len() / self.rows;
        self.out.push(Batch {
            kind: self.kind,
            set: self.set,
            statement,
            rows: self.rows,
            per_row,
            params: std::mem::take(&mut self.cur),
        });
        self.rows = 0;
    }

    fn finish(mut self) {
        let statement = if self.rows == LOAD_BATCH {
            self.batch
        } else {
            self.one
        };
        self.flush(statement);
    }
}

/// A uniform float in `[0, 1)`, as sysbench's `uniform_double`.
fn unit_float(r: &mut Pcg64Mcg) -> f64 {
    r.random::<f64>()
}

fn items(out: &mut Vec<Batch>, r: &mut Pcg64Mcg, set: usize, from: u32) {
    let mut b = Batcher::new(out, set, Kind::Item, (&LOAD_ITEM, &LOAD_ITEM_1));
    let mut name = String::new();
    for i in from..from + CHUNK {
        let im: u32 = r.random_range(1..=10_000);
        let price = (unit_float(r) * 100.0 + 1.0).min(100.99);
        name.clear();
        push_letters(&mut name, r, &format!("item-{im}-{price:.6}-"), 5);
        let mut data = String::new();
        push_letters(&mut data, r, &format!("data-{name}-"), 5);
        b.row()
            .int(i)
            .int(im)
            .str_max(&name, 24)
            .float(price)
            .str_max(&data, 50);
    }
    b.finish();
}

/// Name, two streets, city, state and zip, as sysbench-tpcc writes an address.
fn address(p: &mut Params, r: &mut Pcg64Mcg) {
    p.text(|t| push_letters(t, r, "name-", 5))
        .text(|t| push_letters(t, r, "street1-", 10))
        .text(|t| push_letters(t, r, "street2-", 10))
        .text(|t| push_letters(t, r, "city-", 10))
        .text(|t| push_letters(t, r, "", 2))
        .text(|t| push_digits(t, r, "zip-", 5));
}

fn warehouse(out: &mut Vec<Batch>, r: &mut Pcg64Mcg, set: usize, w: u32) {
    let mut b = Batcher::new(
        out,
        set,
        Kind::Warehouse,
        (&LOAD_WAREHOUSE, &LOAD_WAREHOUSE_1),
    );
    let p = b.row().int(w);
    address(p, r);
    p.float(unit_float(r) * 0.2).int(300_000);
    b.finish();
    let mut b = Batcher::new(out, set, Kind::District, (&LOAD_DISTRICT, &LOAD_DISTRICT_1));
    for d in 1..=DISTRICTS {
        let p = b.row().int(d).int(w);
        address(p, r);
        p.float(unit_float(r) * 0.2).int(30_000).int(3_001);
    }
    b.finish();
}

fn stock(out: &mut Vec<Batch>, r: &mut Pcg64Mcg, set: usize, w: u32, from: u32) {
    let mut b = Batcher::new(out, set, Kind::Stock, (&LOAD_STOCK, &LOAD_STOCK_1));
    for i in from..from + CHUNK {
        let p = b.row().int(i).int(w).int(r.random_range(10..=100));
        for _ in 0..10 {
            p.text(|t| push_repeated(t, r, 24));
        }
        let n = r.random_range(26..=50);
        p.int(0).int(0).int(0).text(|t| push_repeated(t, r, n));
    }
    b.finish();
}

fn customers(
    out: &mut Vec<Batch>,
    r: &mut Pcg64Mcg,
    c: &Constants,
    (set, w, d): (usize, u32, u32),
) {
    let mut b = Batcher::new(out, set, Kind::Customer, (&LOAD_CUSTOMER, &LOAD_CUSTOMER_1));
    for id in 1..=CUSTOMERS {
        let last = if id <= 1000 {
            id - 1
        } else {
            c.nurand(r, 255, 0, 999)
        };
        let first = r.random_range(2..=10);
        let p = b.row().int(id).int(d).int(w);
        p.text(|t| push_letters(t, r, "first-", first))
            .str("OE")
            .text(|t| push_last_name(t, last))
            .text(|t| push_letters(t, r, "street1-", 10))
            .text(|t| push_letters(t, r, "street2-", 10))
            .text(|t| push_letters(t, r, "city-", 10))
            .text(|t| push_letters(t, r, "", 2))
            .text(|t| push_digits(t, r, "zip-", 5))
            .text(|t| push_digits(t, r, "", 16));
        let credit = if r.random_range(1..=100) > 10 {
            "GC"
        } else {
            "BC"
        };
        let n = r.random_range(300..=500);
        p.str(credit)
            .int(50_000)
            .float(unit_float(r) * 0.5)
            .int(-10)
            .int(10)
            .int(1)
            .int(0)
            .text(|t| push_repeated(t, r, n));
    }
    b.finish();
    let mut b = Batcher::new(out, set, Kind::History, (&LOAD_HISTORY, &LOAD_HISTORY_1));
    for id in 1..=CUSTOMERS {
        let n = r.random_range(12..=24);
        b.row()
            .int(id)
            .int(d)
            .int(w)
            .int(d)
            .int(w)
            .int(10)
            .text(|t| push_repeated(t, r, n));
    }
    b.finish();
}

fn orders(out: &mut Vec<Batch>, r: &mut Pcg64Mcg, (set, w, d): (usize, u32, u32)) {
    let mut customers: Vec<u32> = (1..=CUSTOMERS).collect();
    customers.shuffle(r);
    let counts: Vec<u32> = (0..CUSTOMERS).map(|_| r.random_range(5..=15)).collect();
    let mut b = Batcher::new(
        out,
        set,
        Kind::Orders,
        (&LOAD_ORDER_DONE, &LOAD_ORDER_DONE_1),
    );
    for o in 1..FIRST_NEW_ORDER {
        let (c, n) = (customers[o as usize - 1], counts[o as usize - 1]);
        let carrier = r.random_range(1..=10);
        b.row()
            .int(o)
            .int(d)
            .int(w)
            .int(c)
            .int(carrier)
            .int(n)
            .int(1);
    }
    b.finish();
    let mut b = Batcher::new(out, set, Kind::Orders, (&LOAD_ORDER_NEW, &LOAD_ORDER_NEW_1));
    for o in FIRST_NEW_ORDER..=CUSTOMERS {
        let (c, n) = (customers[o as usize - 1], counts[o as usize - 1]);
        b.row().int(o).int(d).int(w).int(c).int(n).int(1);
    }
    b.finish();
    let mut b = Batcher::new(
        out,
        set,
        Kind::NewOrders,
        (&LOAD_NEW_ORDER, &LOAD_NEW_ORDER_1),
    );
    for o in FIRST_NEW_ORDER..=CUSTOMERS {
        b.row().int(o).int(d).int(w);
    }
    b.finish();
    let mut b = Batcher::new(
        out,
        set,
        Kind::OrderLine,
        (&LOAD_LINE_DONE, &LOAD_LINE_DONE_1),
    );
    for o in 1..FIRST_NEW_ORDER {
        for n in 1..=counts[o as usize - 1] {
            let item = r.random_range(1..=ITEMS);
            let p = b.row().int(o).int(d).int(w).int(n).int(item).int(w);
            p.int(5).float(0.0).text(|t| push_repeated(t, r, 24));
        }
    }
    b.finish();
    let mut b = Batcher::new(
        out,
        set,
        Kind::OrderLine,
        (&LOAD_LINE_NEW, &LOAD_LINE_NEW_1),
    );
    for o in FIRST_NEW_ORDER..=CUSTOMERS {
        for n in 1..=counts[o as usize - 1] {
            let item = r.random_range(1..=ITEMS);
            let amount = unit_float(r) * 9999.99;
            let p = b.row().int(o).int(d).int(w).int(n).int(item).int(w);
            p.int(5).float(amount).text(|t| push_repeated(t, r, 24));
        }
    }
    b.finish();
}

/// The batches of `unit` (number `index` of the load), drawn from its own stream.
pub fn generate(unit: Unit, index: usize, seed: u64, out: &mut Vec<Batch>) {
    let r = &mut rng(seed, "tpcc-load", index);
    match unit {
        Unit::Items { set, from } => items(out, r, set, from),
        Unit::Warehouse { set, w } => warehouse(out, r, set, w),
        Unit::Stock { set, w, from } => stock(out, r, set, w, from),
        Unit::District { set, w, d } => {
            customers(out, r, &Constants::load(seed), (set, w, d));
            orders(out, r, (set, w, d));
        }
    }
}

/// One thread of the load: its parts in turn, then, if it is the last to finish, the
/// indexes and foreign keys of every set.
pub struct Loader<'s> {
    /// Every table of the run.
    pub tables: &'s [Table],
    /// The parts of the load with their numbers, this thread's.
    pub units: Vec<(usize, Unit)>,
    /// The seed.
    pub seed: u64,
    /// Batches of the current part not sent yet (in reverse).
    pub pending: Vec<Batch>,
    /// The batch being sent.
    pub current: Option<Batch>,
    /// Threads of the load still loading.
    pub running: &'s AtomicUsize,
    /// Table sets.
    pub sets: usize,
    /// Add the foreign keys after the indexes.
    pub foreign_keys: bool,
}

impl Driver for Loader<'_> {
    type Conn = dyn SqlConnection;

    fn next(&mut self, _ctx: &ThreadCtx) -> Result<Option<Op>> {
        while self.pending.is_empty() {
            let Some((index, unit)) = self.units.pop() else {
                return Ok(None);
            };
            generate(unit, index, self.seed, &mut self.pending);
            self.pending.reverse();
        }
        self.current = self.pending.pop();
        Ok(Some(Op::Insert))
    }

    fn send(
        &mut self,
        session: &mut Session<'_, dyn SqlConnection>,
        rec: &mut Recorder,
    ) -> Result<u64> {
        let Some(b) = self.current.take() else {
            return Ok(0);
        };
        let t = table(self.tables, b.set, b.kind);
        let whole = matches!(b.statement, Statement::Put { rows, .. } if *rows == b.rows);
        if whole {
            session
                .run(rec, Op::Insert, |c| {
                    c.execute(t, b.statement, b.params.args())
                })
                .with_context(|| format!("insert into {}", t.name))?;
        } else {
            for i in 0..b.rows {
                let args = b.params.slice(i * b.per_row..(i + 1) * b.per_row);
                session
                    .run(rec, Op::Insert, |c| c.execute(t, b.statement, args))
                    .with_context(|| format!("insert into {}", t.name))?;
            }
        }
        Ok(b.rows as u64)
    }

    fn after(
        &mut self,
        session: &mut Session<'_, dyn SqlConnection>,
        rec: &mut Recorder,
    ) -> Result<()> {
        if self.running.fetch_sub(1, Ordering::AcqRel) != 1 {
            return Ok(());
        }
        let fks = self.foreign_keys
            && session.run(rec, Op::Insert, |c| {
                Ok(c.dialect().no_foreign_keys.is_none())
            })?;
        let none = Params::default();
        for set in 1..=self.sets {
            let ddl = INDEXES.iter().chain(FOREIGN_KEYS.iter().filter(|_| fks));
            for (kind, statement) in ddl {
                let t = table(self.tables, set, *kind);
                session
                    .run(rec, Op::Insert, |c| c.execute(t, statement, none.args()))
                    .with_context(|| format!("index or foreign key on {}", t.name))?;
            }
        }
        Ok(())
    }
}
