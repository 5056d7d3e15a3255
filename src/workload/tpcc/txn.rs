//! The five transactions (clause 2), as sysbench-tpcc runs them, statement for statement,
//! and a client that draws them from the mix ([`Terminal`]). Every input of a transaction is
//! drawn before it starts, so a retried transaction (a deadlock, a serialization failure)
//! runs again with the same inputs.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, bail};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::data::{Constants, push_last_name};
use super::load::{CUSTOMERS, DISTRICTS, ITEMS};
use super::params::{Params, exec, fetch};
use super::schema::{Kind, table};
use super::statements::*;
use crate::dbms::Table;
use crate::dbms::sql::{Rows, SqlConnection};
use crate::metrics::recorder::{Op, Recorder};
use crate::runner::client::ThreadCtx;
use crate::runner::client_loop::Driver;
use crate::runner::session::Session;

/// What the clients of a step count beside the recorder, shared by all of them.
#[derive(Debug, Default)]
pub struct Tally {
    /// Transactions rolled back by their own logic, per type (New-Order's unused item).
    pub rollbacks: [AtomicU64; 5],
    /// Districts a Delivery found without a new order.
    pub delivery_skipped: AtomicU64,
}

/// One New-Order line: item, supplying warehouse, quantity.
#[derive(Clone, Copy, Debug, Default)]
struct Line {
    item: u32,
    supply: u32,
    qty: u32,
}

/// The inputs of one transaction.
#[derive(Clone, Debug, Default)]
struct Input {
    set: usize,
    w: u32,
    d: u32,
    /// The customer by id, or (Payment, Order-Status) by last name.
    c: u32,
    last_name: Option<u32>,
    /// Payment: the customer's warehouse and district.
    c_w: u32,
    c_d: u32,
    amount: i64,
    lines: Vec<Line>,
    /// Delivery's carrier, Stock-Level's threshold.
    carrier: u32,
}

/// One client: draws transactions from the mix and runs them.
pub struct Terminal<'s> {
    /// Every table of the run.
    pub tables: &'s [Table],
    /// Table sets.
    pub sets: usize,
    /// Warehouses per set.
    pub warehouses: u32,
    /// The mix's weights, New-Order first.
    pub weights: [u32; 5],
    /// The run's NURand constants.
    pub constants: Constants,
    /// This client's stream.
    pub rng: Pcg64Mcg,
    /// Shared counts.
    pub tally: &'s Tally,
    op: Op,
    input: Input,
    params: Params,
    rows: Rows,
}

impl<'s> Terminal<'s> {
    /// A client of `tables` drawing with `rng`.
    pub fn new(
        tables: &'s [Table],
        (sets, warehouses): (usize, u32),
        weights: [u32; 5],
        constants: Constants,
        rng: Pcg64Mcg,
        tally: &'s Tally,
    ) -> Self {
        Terminal {
            tables,
            sets,
            warehouses,
            weights,
            constants,
            rng,
            tally,
            op: Op::NewOrder,
            input: Input::default(),
            params: Params::default(),
            rows: Rows::default(),
        }
    }

    /// A warehouse other than `w` when there is one (sysbench-tpcc's `other_ware`).
    fn other_warehouse(&mut self, w: u32) -> u32 {
        if self.warehouses == 1 {
            return w;
        }
        loop {
            let o = self.rng.random_range(1..=self.warehouses);
            if o != w {
                return o;
            }
        }
    }

    /// Draws the next transaction's type and inputs.
    fn draw(&mut self) {
        let total: u32 = self.weights.iter().sum();
        let mut x = self.rng.random_range(0..total);
        let mut kind = 0;
        while x >= self.weights[kind] {
            x -= self.weights[kind];
            kind += 1;
        }
        self.op = Op::TPCC[kind];
        let r = &mut self.rng;
        let c = self.constants;
        let w = r.random_range(1..=self.warehouses);
        let mut i = Input {
            set: r.random_range(1..=self.sets),
            w,
            d: r.random_range(1..=DISTRICTS),
            c: c.nurand(r, 1023, 1, CUSTOMERS),
            c_w: w,
            lines: std::mem::take(&mut self.input.lines),
            ..Input::default()
        };
        i.c_d = i.d;
        i.lines.clear();
        match self.op {
            Op::NewOrder => self.draw_lines(&mut i),
            Op::Payment | Op::OrderStatus => {
                if self.rng.random_range(1..=100) <= 60 {
                    i.last_name = Some(c.nurand(&mut self.rng, 255, 0, 999));
                }
                i.amount = self.rng.random_range(1..=5000);
                if self.op == Op::Payment && self.rng.random_range(1..=100) > 85 {
                    i.c_w = self.other_warehouse(w);
                    i.c_d = self.rng.random_range(1..=DISTRICTS);
                }
            }
            Op::Delivery => i.carrier = self.rng.random_range(1..=10),
            _ => i.carrier = self.rng.random_range(10..=20),
        }
        self.input = i;
    }

    /// New-Order's 5 to 15 lines: NURand(8191) items, 1% from a remote warehouse, and in 1%
    /// of the transactions an unused item id last (the transaction then rolls back).
    fn draw_lines(&mut self, i: &mut Input) {
        let n = self.rng.random_range(5..=15);
        let rollback = self.rng.random_range(1..=100) == 1;
        for k in 0..n {
            let mut item = self.constants.nurand(&mut self.rng, 8191, 1, ITEMS);
            if rollback && k == n - 1 {
                item = ITEMS + 1;
            }
            let supply = if self.rng.random_range(1..=100) == 1 {
                self.other_warehouse(i.w)
            } else {
                i.w
            };
            let qty = self.rng.random_range(1..=10);
            i.lines.push(Line { item, supply, qty });
        }
    }
}

/// What a transaction runs with: the connection, its set's tables, the buffers.
struct Tx<'a> {
    c: &'a mut dyn SqlConnection,
    tables: &'a [Table],
    set: usize,
    p: &'a mut Params,
    rows: &'a mut Rows,
}

impl Tx<'_> {
    /// Runs `s` on `kind`'s table with the values `bind` writes; the rows changed.
    fn exec(
        &mut self,
        kind: Kind,
        s: &'static crate::dbms::sql::Statement,
        bind: impl FnOnce(&mut Params),
    ) -> Result<u64> {
        bind(self.p.clear());
        let t = table(self.tables, self.set, kind);
        exec(self.c, t, s, self.p)
    }

    /// Runs `s` on `kind`'s table, its rows kept in `self.rows`; how many.
    fn fetch(
        &mut self,
        kind: Kind,
        s: &'static crate::dbms::sql::Statement,
        bind: impl FnOnce(&mut Params),
    ) -> Result<usize> {
        bind(self.p.clear());
        let t = table(self.tables, self.set, kind);
        fetch(self.c, t, s, self.p, self.rows)?;
        Ok(self.rows.len())
    }

    /// The value `col` of the first row as an integer, or an error naming `what`.
    fn int(&self, col: usize, what: &str) -> Result<i64> {
        match self.rows.int(0, col) {
            Some(v) => Ok(v),
            None => bail!("{what}: no row or no value returned"),
        }
    }

    fn float(&self, col: usize) -> f64 {
        self.rows.float(0, col).unwrap_or(0.0)
    }
}

fn new_order(x: &mut Tx<'_>, i: &Input) -> Result<Option<()>> {
    let (w, d) = (i.w, i.d);
    if x.fetch(Kind::Customer, &NO_CUSTOMER, |p| {
        p.int(w).int(d).int(i.c);
    })? == 0
    {
        bail!(
            "new-order: customer {} of district {d}, warehouse {w} not found",
            i.c
        );
    }
    let (discount, w_tax) = (x.float(0), x.float(3));
    x.fetch(Kind::District, &NO_DISTRICT, |p| {
        p.int(w).int(d);
    })?;
    let (o_id, d_tax) = (x.int(0, "d_next_o_id")?, x.float(1));
    x.exec(Kind::District, &NO_DISTRICT_NEXT, |p| {
        p.int(o_id + 1).int(d).int(w);
    })?;
    let all_local = i.lines.iter().all(|l| l.supply == w);
    let n = i.lines.len() as i64;
    x.exec(Kind::Orders, &NO_ORDER, |p| {
        p.int(o_id).int(d).int(w).int(i.c).int(n).int(all_local);
    })?;
    x.exec(Kind::NewOrders, &NO_NEW_ORDER, |p| {
        p.int(o_id).int(d).int(w);
    })?;
    for (k, l) in i.lines.iter().enumerate() {
        if x.fetch(Kind::Item, &NO_ITEM, |p| {
            p.int(l.item);
        })? == 0
        {
            return Ok(None);
        }
        let price = x.float(0);
        x.fetch(Kind::Stock, &NO_STOCK[d as usize - 1], |p| {
            p.int(l.item).int(l.supply);
        })?;
        let s_qty = x.int(0, "s_quantity")?;
        let qty = i64::from(l.qty);
        let left = if s_qty > qty {
            s_qty - qty
        } else {
            s_qty - qty + 91
        };
        x.exec(Kind::Stock, &NO_STOCK_UPDATE, |p| {
            p.int(left).int(l.item).int(l.supply);
        })?;
        let amount = qty as f64 * price * (1.0 + w_tax + d_tax) * (1.0 - discount);
        let rows = &*x.rows;
        bind_line(
            x.p.clear(),
            (o_id, d, w, k as i64 + 1),
            l,
            amount,
            rows.text(0, 2),
        );
        let t = table(x.tables, x.set, Kind::OrderLine);
        exec(x.c, t, &NO_ORDER_LINE, x.p)?;
    }
    Ok(Some(()))
}

fn bind_line(
    p: &mut Params,
    (o, d, w, n): (i64, u32, u32, i64),
    l: &Line,
    amount: f64,
    dist: &str,
) {
    p.int(o)
        .int(d)
        .int(w)
        .int(n)
        .int(l.item)
        .int(l.supply)
        .int(l.qty)
        .float(amount);
    p.str(dist);
}

/// The customer of a last name, as TPC-C picks one: the one at position n/2 (rounded up)
/// of those of the name by first name; `None` when there is none.
fn middle(x: &Tx<'_>, id_col: usize) -> Option<u32> {
    let n = x.rows.len();
    if n == 0 {
        return None;
    }
    x.rows.int(n.div_ceil(2) - 1, id_col).map(|v| v as u32)
}

fn payment(x: &mut Tx<'_>, i: &Input) -> Result<Option<()>> {
    let (w, d, amount) = (i.w, i.d, i.amount);
    x.exec(Kind::Warehouse, &PAY_WAREHOUSE, |p| {
        p.int(amount).int(w);
    })?;
    x.fetch(Kind::Warehouse, &PAY_WAREHOUSE_READ, |p| {
        p.int(w);
    })?;
    let w_name = x.rows.text(0, 5).to_string();
    x.exec(Kind::District, &PAY_DISTRICT, |p| {
        p.int(amount).int(w).int(d);
    })?;
    x.fetch(Kind::District, &PAY_DISTRICT_READ, |p| {
        p.int(w).int(d);
    })?;
    let d_name = x.rows.text(0, 5).to_string();
    let (c_w, c_d) = (i.c_w, i.c_d);
    let mut c = i.c;
    if let Some(last) = i.last_name {
        let name = |p: &mut Params| {
            p.int(c_w).int(c_d).text(|t| push_last_name(t, last));
        };
        x.fetch(Kind::Customer, &CUSTOMERS_NAMED, name)?;
        x.fetch(Kind::Customer, &PAY_CUSTOMER_IDS, name)?;
        c = middle(x, 0).unwrap_or(c);
    }
    let by_id = |p: &mut Params| {
        p.int(c_w).int(c_d).int(c);
    };
    if x.fetch(Kind::Customer, &PAY_CUSTOMER, by_id)? == 0 {
        bail!("payment: customer {c} of district {c_d}, warehouse {c_w} not found");
    }
    let bad = x.rows.text(0, 9) == "BC";
    let balance = x.float(12) - amount as f64;
    let ytd = x.float(13) + amount as f64;
    if bad {
        x.fetch(Kind::Customer, &PAY_CUSTOMER_DATA, by_id)?;
        let now = chrono::Utc::now().timestamp();
        let mut data = format!(
            "| {c:4} {c_d:2} {c_w:4} {d:2} {w:4} ${:7.2} {now:12} {}",
            amount as f64,
            x.rows.text(0, 0)
        );
        data.truncate(500);
        x.exec(Kind::Customer, &PAY_CUSTOMER_BC, |p| {
            p.float(balance).float(ytd).str(&data);
            by_id(p);
        })?;
    } else {
        x.exec(Kind::Customer, &PAY_CUSTOMER_GC, |p| {
            p.float(balance).float(ytd);
            by_id(p);
        })?;
    }
    let h_data = format!("{w_name:>10.10} {d_name:>10.10}   ");
    x.exec(Kind::History, &PAY_HISTORY, |p| {
        p.int(c_d)
            .int(c_w)
            .int(c)
            .int(d)
            .int(w)
            .int(amount)
            .str(&h_data);
    })?;
    Ok(Some(()))
}

fn order_status(x: &mut Tx<'_>, i: &Input) -> Result<Option<()>> {
    let (w, d) = (i.w, i.d);
    let mut c = i.c;
    if let Some(last) = i.last_name {
        let name = |p: &mut Params| {
            p.int(w).int(d).text(|t| push_last_name(t, last));
        };
        x.fetch(Kind::Customer, &CUSTOMERS_NAMED, name)?;
        x.fetch(Kind::Customer, &OS_CUSTOMERS, name)?;
        c = middle(x, 3).unwrap_or(c);
    } else {
        x.fetch(Kind::Customer, &OS_CUSTOMER, |p| {
            p.int(w).int(d).int(c);
        })?;
    }
    if x.fetch(Kind::Orders, &OS_ORDER, |p| {
        p.int(w).int(d).int(c);
    })? > 0
    {
        let o = x.int(0, "o_id")?;
        x.fetch(Kind::OrderLine, &OS_LINES, |p| {
            p.int(w).int(d).int(o);
        })?;
    }
    Ok(Some(()))
}

/// Delivers the oldest new order of each district; returns the districts that had none.
fn delivery(x: &mut Tx<'_>, i: &Input) -> Result<u64> {
    let w = i.w;
    let mut skipped = 0;
    for d in 1..=DISTRICTS {
        let key = |o: i64| {
            move |p: &mut Params| {
                p.int(o).int(d).int(w);
            }
        };
        if x.fetch(Kind::NewOrders, &DL_NEW_ORDER, |p| {
            p.int(d).int(w);
        })? == 0
        {
            skipped += 1;
            continue;
        }
        let o = x.int(0, "no_o_id")?;
        if x.exec(Kind::NewOrders, &DL_DELETE, key(o))? == 0 {
            skipped += 1;
            continue;
        }
        x.fetch(Kind::Orders, &DL_ORDER, key(o))?;
        let c = x.int(0, "o_c_id")?;
        x.exec(Kind::Orders, &DL_CARRIER, |p| {
            p.int(i.carrier);
            key(o)(p);
        })?;
        x.exec(Kind::OrderLine, &DL_LINES, key(o))?;
        x.fetch(Kind::OrderLine, &DL_AMOUNT, key(o))?;
        let amount = x.float(0);
        x.exec(Kind::Customer, &DL_CUSTOMER, |p| {
            p.float(amount).int(c).int(d).int(w);
        })?;
    }
    Ok(skipped)
}

fn stock_level(x: &mut Tx<'_>, i: &Input) -> Result<Option<()>> {
    let (w, d) = (i.w, i.d);
    x.fetch(Kind::District, &SL_DISTRICT, |p| {
        p.int(d).int(w);
    })?;
    let next = x.int(0, "d_next_o_id")?;
    x.fetch(Kind::OrderLine, &SL_COUNT, |p| {
        p.int(w)
            .int(d)
            .int(next)
            .int(next - 20)
            .int(w)
            .int(i.carrier);
    })?;
    Ok(Some(()))
}

impl Driver for Terminal<'_> {
    type Conn = dyn SqlConnection;

    fn next(&mut self, _ctx: &ThreadCtx) -> Result<Option<Op>> {
        self.draw();
        Ok(Some(self.op))
    }

    fn send(
        &mut self,
        session: &mut Session<'_, dyn SqlConnection>,
        rec: &mut Recorder,
    ) -> Result<u64> {
        let (op, input, tables) = (self.op, &self.input, self.tables);
        let (p, rows) = (&mut self.params, &mut self.rows);
        let writes = matches!(op, Op::NewOrder | Op::Payment | Op::Delivery);
        let mut skipped = 0;
        let done = session
            .transaction_or_rollback(rec, op, writes, |c| {
                let x = &mut Tx {
                    c,
                    tables,
                    set: input.set,
                    p,
                    rows,
                };
                match op {
                    Op::NewOrder => new_order(x, input),
                    Op::Payment => payment(x, input),
                    Op::OrderStatus => order_status(x, input),
                    Op::Delivery => {
                        skipped = delivery(x, input)?;
                        Ok(Some(()))
                    }
                    _ => stock_level(x, input),
                }
            })
            .with_context(|| op.name().replace('_', "-"))?;
        if done.is_none() {
            let k = Op::TPCC.iter().position(|&o| o == op).unwrap_or(0);
            self.tally.rollbacks[k].fetch_add(1, Ordering::Relaxed);
        }
        if skipped > 0 {
            self.tally
                .delivery_skipped
                .fetch_add(skipped, Ordering::Relaxed);
        }
        Ok(1)
    }
}
