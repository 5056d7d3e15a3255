//! After a step: the consistency conditions 1-4 of clause 3.3.2, checked per warehouse and
//! district with ibench's own statements, and after a load the rows of every table.

use std::collections::BTreeMap;

use anyhow::Result;

use super::load::DISTRICTS;
use super::params::{Params, fetch};
use super::schema::{KINDS, Kind, table};
use super::statements::*;
use crate::dbms::Table;
use crate::dbms::sql::{Rows, SqlConnection, Statement};
use crate::results::tpcc::ConsistencyCheck;

/// The conditions' names, by number.
const NAMES: [&str; 4] = [
    "W_YTD = sum(D_YTD)",
    "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
    "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER",
    "sum(O_OL_CNT) = rows in ORDER-LINE",
];

/// Reads what the checks compare.
struct Reader<'a> {
    c: &'a mut dyn SqlConnection,
    tables: &'a [Table],
    p: Params,
    rows: Rows,
}

impl Reader<'_> {
    /// The first row of `s` on `kind`'s table of `set`, as floats (`None` for NULL).
    fn row(
        &mut self,
        set: usize,
        kind: Kind,
        s: &'static Statement,
        keys: &[u32],
    ) -> Result<Vec<Option<f64>>> {
        self.p.clear();
        for &k in keys {
            self.p.int(k);
        }
        fetch(
            self.c,
            table(self.tables, set, kind),
            s,
            &self.p,
            &mut self.rows,
        )?;
        Ok((0..4).map(|i| self.rows.float(0, i)).collect())
    }
}

/// A failure of condition `n` in set `set`, warehouse `w` (and district `d`).
fn failed(out: &mut [ConsistencyCheck; 4], n: usize, at: String) {
    if out[n].pass {
        out[n].pass = false;
        out[n].detail = Some(at);
    }
}

/// Checks conditions 1-4 over every warehouse and district of `sets` sets.
pub fn consistency(
    c: &mut dyn SqlConnection,
    tables: &[Table],
    sets: usize,
    warehouses: u32,
) -> Result<Vec<ConsistencyCheck>> {
    let mut out: [ConsistencyCheck; 4] = std::array::from_fn(|i| ConsistencyCheck {
        condition: i as u8 + 1,
        name: NAMES[i].to_string(),
        pass: true,
        detail: None,
    });
    let mut r = Reader {
        c,
        tables,
        p: Params::default(),
        rows: Rows::default(),
    };
    let v = |row: &[Option<f64>], i: usize| row.get(i).copied().flatten();
    for set in 1..=sets {
        for w in 1..=warehouses {
            let w_ytd = v(&r.row(set, Kind::Warehouse, &CK_W_YTD, &[w])?, 0);
            let d_ytd = v(&r.row(set, Kind::District, &CK_D_YTD, &[w])?, 0);
            if w_ytd.zip(d_ytd).is_none_or(|(a, b)| (a - b).abs() > 0.005) {
                let at = format!("set {set}, warehouse {w}: W_YTD {w_ytd:?}, sum(D_YTD) {d_ytd:?}");
                failed(&mut out, 0, at);
            }
            for d in 1..=DISTRICTS {
                let next = v(&r.row(set, Kind::District, &CK_NEXT_O_ID, &[d, w])?, 0);
                let orders = r.row(set, Kind::Orders, &CK_ORDERS, &[w, d])?;
                let new = r.row(set, Kind::NewOrders, &CK_NEW_ORDERS, &[w, d])?;
                let lines = v(&r.row(set, Kind::OrderLine, &CK_LINES, &[w, d])?, 0);
                let at = format!("set {set}, warehouse {w}, district {d}");
                let (max_o, max_no, min_no) = (v(&orders, 0), v(&new, 0), v(&new, 1));
                let next_1 = next.map(|n| n - 1.0);
                if next_1 != max_o || (max_no.is_some() && max_no != max_o) {
                    let at = format!(
                        "{at}: D_NEXT_O_ID - 1 {next_1:?}, max(O_ID) {max_o:?}, max(NO_O_ID) {max_no:?}"
                    );
                    failed(&mut out, 1, at);
                }
                if let (Some(hi), Some(lo)) = (max_no, min_no)
                    && hi - lo + 1.0 != v(&new, 2).unwrap_or(0.0)
                {
                    let at = format!(
                        "{at}: max {hi} - min {lo} + 1 against {:?} rows",
                        v(&new, 2)
                    );
                    failed(&mut out, 2, at);
                }
                if v(&orders, 1).unwrap_or(0.0) != lines.unwrap_or(0.0) {
                    let at = format!(
                        "{at}: sum(O_OL_CNT) {:?}, order lines {lines:?}",
                        v(&orders, 1)
                    );
                    failed(&mut out, 3, at);
                }
            }
        }
    }
    Ok(out.into())
}

/// The rows of each table, summed over the sets, by base name.
pub fn cardinalities(
    c: &mut dyn SqlConnection,
    tables: &[Table],
    sets: usize,
) -> Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    let (p, mut rows) = (Params::default(), Rows::default());
    for set in 1..=sets {
        for kind in KINDS {
            fetch(c, table(tables, set, kind), &COUNT_ROWS, &p, &mut rows)?;
            *out.entry(kind.def().name.to_string()).or_insert(0) +=
                rows.int(0, 0).unwrap_or(0) as u64;
        }
    }
    Ok(out)
}
