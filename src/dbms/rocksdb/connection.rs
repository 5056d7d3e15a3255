//! One RocksDB connection: the Insert Benchmark's operations on the data model MyRocks keeps.
//!
//! * A table is a column family named after it: the key is the `transactionid` (8 bytes
//!   big-endian), the value the row (`dateandtime` i64, `cashregisterid`, `customerid`,
//!   `productid` i32, `price` f64, then `data`).
//! * Each secondary index is a column family named like the SQL index (`pi1_marketsegment`):
//!   the key is its columns then the `transactionid`, in an encoding whose byte order is the
//!   columns' order; the value is empty.
//! * An insert is one write batch across the families; a delete reads the rows of its id range
//!   and deletes them and their index entries in one batch; range queries seek an index family
//!   and read up to the limit; point queries are one batched MultiGet; `min(transactionid)` is a
//!   seek to the first key, so tombstones cost what they cost in MyRocks.
//! * ibench's mark on a table it created is a key in the default family.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use anyhow::{Context, Result, anyhow, bail};

use super::Shared;
use super::ffi::{Cf, WriteBatch};
use crate::dbms::{
    InsertBenchmarkConnection, POINT_QUERY_IDS, RANGE_QUERY_LIMIT, RangeQuery, RowBatch,
    SecondaryIndex, TABLE_MARK, Table, TableOrigin,
};

/// Rows per write batch while l.x builds index families.
const INDEX_BUILD_BATCH: usize = 1000;
/// Bytes of a row value before `data`.
const ROW_HEADER: usize = 28;

/// The primary key of `id`.
pub fn id_key(id: i64) -> [u8; 8] {
    (id.max(0) as u64).to_be_bytes()
}

/// The id of a primary key.
pub fn key_id(key: &[u8]) -> Result<i64> {
    let bytes: [u8; 8] = key
        .try_into()
        .map_err(|_| anyhow!("primary key of {} bytes, expected 8", key.len()))?;
    Ok(u64::from_be_bytes(bytes) as i64)
}

/// The key of ibench's mark on table `name` in the default family.
pub fn mark_key(name: &str) -> Vec<u8> {
    format!("ibench.table.{name}").into_bytes()
}

/// Byte-order encodings: comparing the bytes compares the values.
fn push_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&((v as u32) ^ 0x8000_0000).to_be_bytes());
}

fn push_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&((v as u64) ^ (1 << 63)).to_be_bytes());
}

fn push_f64(out: &mut Vec<u8>, v: f64) {
    let bits = v.to_bits();
    let ordered = if bits >> 63 == 1 { !bits } else { bits | (1 << 63) };
    out.extend_from_slice(&ordered.to_be_bytes());
}

/// One row's columns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row<'a> {
    /// Unix seconds.
    pub dateandtime: i64,
    /// `cashregisterid`.
    pub cashregisterid: i32,
    /// `customerid`.
    pub customerid: i32,
    /// `productid`.
    pub productid: i32,
    /// `price`.
    pub price: f64,
    /// `data`.
    pub data: &'a [u8],
}

impl<'a> Row<'a> {
    /// Row `i` of `rows`.
    fn of(rows: &'a RowBatch, i: usize) -> Self {
        Row {
            dateandtime: rows.dateandtime,
            cashregisterid: rows.cashregisterid[i],
            customerid: rows.customerid[i],
            productid: rows.productid[i],
            price: rows.price[i],
            data: rows.data(i).as_bytes(),
        }
    }

    /// The row stored in `value`.
    pub fn decode(value: &'a [u8]) -> Result<Self> {
        if value.len() < ROW_HEADER {
            bail!("row value of {} bytes, expected at least {ROW_HEADER}", value.len());
        }
        let i32_at = |at: usize| i32::from_be_bytes(value[at..at + 4].try_into().unwrap_or_default());
        Ok(Row {
            dateandtime: i64::from_be_bytes(value[0..8].try_into().unwrap_or_default()),
            cashregisterid: i32_at(8),
            customerid: i32_at(12),
            productid: i32_at(16),
            price: f64::from_bits(u64::from_be_bytes(
                value[20..28].try_into().unwrap_or_default(),
            )),
            data: &value[ROW_HEADER..],
        })
    }

    /// The stored value into `out` (cleared first).
    fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.dateandtime.to_be_bytes());
        out.extend_from_slice(&self.cashregisterid.to_be_bytes());
        out.extend_from_slice(&self.customerid.to_be_bytes());
        out.extend_from_slice(&self.productid.to_be_bytes());
        out.extend_from_slice(&self.price.to_bits().to_be_bytes());
        out.extend_from_slice(self.data);
    }

    /// Its key in `index` (cleared first): the index's columns, then the id.
    pub fn index_key(&self, index: SecondaryIndex, id: i64, out: &mut Vec<u8>) {
        out.clear();
        match index {
            SecondaryIndex::MarketSegment => {
                push_f64(out, self.price);
                push_i32(out, self.customerid);
            }
            SecondaryIndex::RegisterSegment => {
                push_i32(out, self.cashregisterid);
                push_f64(out, self.price);
                push_i32(out, self.customerid);
            }
            SecondaryIndex::Pdc => {
                push_f64(out, self.price);
                push_i64(out, self.dateandtime);
                push_i32(out, self.customerid);
            }
        }
        out.extend_from_slice(&id_key(id));
    }
}

/// The families of one table as a connection last resolved them.
struct Handles {
    /// The shared schema epoch they were resolved at.
    epoch: u64,
    primary: Arc<Cf>,
    indexes: Vec<(SecondaryIndex, Arc<Cf>)>,
    next_id: Arc<AtomicI64>,
}

/// A connection: the shared database, the families it resolved, reused buffers.
pub(super) struct RocksConnection {
    shared: Arc<Shared>,
    tables: Vec<Option<Handles>>,
    batch: WriteBatch,
    key: Vec<u8>,
    value: Vec<u8>,
    ids: [[u8; 8]; POINT_QUERY_IDS],
}

/// The families of `table` from `tables`, resolved again when a family was created or dropped
/// since (a free function, so that callers can borrow the connection's buffers beside it).
fn resolve<'t>(
    shared: &Shared,
    tables: &'t mut Vec<Option<Handles>>,
    table: &Table,
) -> Result<&'t Handles> {
    if tables.len() <= table.id {
        tables.resize_with(table.id + 1, || None);
    }
    let epoch = shared.epoch();
    if tables[table.id].as_ref().is_none_or(|h| h.epoch != epoch) {
        let db = &shared.db;
        let primary = db
            .cf(&table.name)
            .with_context(|| format!("table {} does not exist", table.name))?;
        let indexes = SecondaryIndex::ALL
            .iter()
            .filter_map(|&i| Some((i, db.cf(&i.name_on(&table.name))?)))
            .collect();
        let next_id = shared.next_id(&table.name, &primary)?;
        tables[table.id] = Some(Handles {
            epoch,
            primary,
            indexes,
            next_id,
        });
    }
    Ok(tables[table.id].as_ref().expect("resolved above"))
}

impl RocksConnection {
    /// A connection to the shared database.
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        RocksConnection {
            shared,
            tables: Vec::new(),
            batch: WriteBatch::new(),
            key: Vec::with_capacity(64),
            value: Vec::with_capacity(256),
            ids: [[0; 8]; POINT_QUERY_IDS],
        }
    }

    /// The families of `table`, resolved again when a family was created or dropped since.
    fn handles(&mut self, table: &Table) -> Result<&Handles> {
        resolve(&self.shared, &mut self.tables, table)
    }

    /// Writes the index entries of every row of `table` into the families `indexes`, one scan
    /// of the primary family.
    fn build_indexes(&mut self, table: &Table, indexes: &[(SecondaryIndex, Arc<Cf>)]) -> Result<()> {
        let primary = Arc::clone(&self.handles(table)?.primary);
        let db = &self.shared.db;
        let mut it = db.iter(&primary);
        it.seek_to_first();
        self.batch.clear();
        let mut rows = 0;
        while it.valid().map_err(|e| anyhow!("scanning {}: {e}", table.name))? {
            let id = key_id(it.key())?;
            let row = Row::decode(it.value())?;
            for (index, cf) in indexes {
                row.index_key(*index, id, &mut self.key);
                self.batch.put(cf, &self.key, &[]);
            }
            rows += 1;
            if rows % INDEX_BUILD_BATCH == 0 {
                db.write(&self.batch).map_err(|e| anyhow!("building indexes: {e}"))?;
                self.batch.clear();
            }
            it.next();
        }
        if !self.batch.is_empty() {
            db.write(&self.batch).map_err(|e| anyhow!("building indexes: {e}"))?;
        }
        Ok(())
    }
}

impl InsertBenchmarkConnection for RocksConnection {
    fn create_table(&mut self, table: &Table) -> Result<()> {
        let db = &self.shared.db;
        for index in SecondaryIndex::ALL {
            db.drop_cf(&index.name_on(&table.name))
                .map_err(|e| anyhow!("dropping {}: {e}", index.name_on(&table.name)))?;
        }
        db.drop_cf(&table.name)
            .map_err(|e| anyhow!("dropping {}: {e}", table.name))?;
        db.create_cf(&table.name)
            .map_err(|e| anyhow!("creating {}: {e}", table.name))?;
        let default = db.cf("default").context("no default column family")?;
        self.batch.clear();
        self.batch.put(&default, &mark_key(&table.name), TABLE_MARK.as_bytes());
        db.write(&self.batch).map_err(|e| anyhow!("marking {}: {e}", table.name))?;
        self.shared.reset_ids(&table.name);
        self.shared.bump_epoch();
        Ok(())
    }

    fn table_origin(&mut self, table: &Table) -> Result<TableOrigin> {
        let db = &self.shared.db;
        if db.cf(&table.name).is_none() {
            return Ok(TableOrigin::Missing);
        }
        let default = db.cf("default").context("no default column family")?;
        let mark = db
            .get(&default, &mark_key(&table.name))
            .map_err(|e| anyhow!("reading the mark of {}: {e}", table.name))?;
        Ok(if mark.as_deref() == Some(TABLE_MARK.as_bytes()) {
            TableOrigin::Ibench
        } else {
            TableOrigin::Other
        })
    }

    fn create_indexes(
        &mut self,
        table: &Table,
        indexes: &[SecondaryIndex],
        combined: bool,
    ) -> Result<()> {
        let mut created = Vec::new();
        for &index in indexes {
            let name = index.name_on(&table.name);
            let db = &self.shared.db;
            db.drop_cf(&name).map_err(|e| anyhow!("dropping {name}: {e}"))?;
            let cf = db.create_cf(&name).map_err(|e| anyhow!("creating {name}: {e}"))?;
            self.shared.bump_epoch();
            if combined {
                created.push((index, cf));
            } else {
                self.build_indexes(table, &[(index, cf)])?;
            }
        }
        if combined {
            self.build_indexes(table, &created)?;
        }
        Ok(())
    }

    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        let db = &self.shared.db;
        let mut names: Vec<String> = SecondaryIndex::ALL
            .iter()
            .map(|i| i.name_on(&table.name))
            .filter(|n| db.cf(n).is_some())
            .collect();
        names.sort();
        Ok(names)
    }

    fn insert(&mut self, table: &Table, rows: &RowBatch) -> Result<i64> {
        let n = rows.len() as i64;
        let h = resolve(&self.shared, &mut self.tables, table)?;
        let last = h.next_id.fetch_add(n, Ordering::Relaxed) + n;
        let first = last - n + 1;
        let batch = &mut self.batch;
        batch.clear();
        for i in 0..rows.len() {
            let id = first + i as i64;
            let row = Row::of(rows, i);
            row.encode(&mut self.value);
            batch.put(&h.primary, &id_key(id), &self.value);
            for (index, cf) in &h.indexes {
                row.index_key(*index, id, &mut self.key);
                batch.put(cf, &self.key, &[]);
            }
        }
        self.shared
            .db
            .write(batch)
            .map_err(|e| anyhow!("insert into {}: {e}", table.name))?;
        Ok(last)
    }

    fn delete_range(&mut self, table: &Table, lo: i64, hi: i64) -> Result<u64> {
        if hi <= lo {
            return Ok(0);
        }
        let h = resolve(&self.shared, &mut self.tables, table)?;
        let db = &self.shared.db;
        let end = id_key(hi);
        let mut it = db.iter(&h.primary);
        it.seek(&id_key(lo));
        self.batch.clear();
        let mut deleted = 0;
        while it
            .valid()
            .map_err(|e| anyhow!("delete from {}: {e}", table.name))?
        {
            if it.key() >= &end[..] {
                break;
            }
            let id = key_id(it.key())?;
            let row = Row::decode(it.value())?;
            self.batch.delete(&h.primary, it.key());
            for (index, cf) in &h.indexes {
                row.index_key(*index, id, &mut self.key);
                self.batch.delete(cf, &self.key);
            }
            deleted += 1;
            it.next();
        }
        drop(it);
        if deleted > 0 {
            db.write(&self.batch)
                .map_err(|e| anyhow!("delete from {}: {e}", table.name))?;
        }
        Ok(deleted)
    }

    fn min_id(&mut self, table: &Table) -> Result<Option<i64>> {
        let primary = Arc::clone(&self.handles(table)?.primary);
        let mut it = self.shared.db.iter(&primary);
        it.seek_to_first();
        if it.valid().map_err(|e| anyhow!("min of {}: {e}", table.name))? {
            Ok(Some(key_id(it.key())?))
        } else {
            Ok(None)
        }
    }

    fn max_id(&mut self, table: &Table) -> Result<Option<i64>> {
        let primary = Arc::clone(&self.handles(table)?.primary);
        let mut it = self.shared.db.iter(&primary);
        it.seek_to_last();
        if it.valid().map_err(|e| anyhow!("max of {}: {e}", table.name))? {
            Ok(Some(key_id(it.key())?))
        } else {
            Ok(None)
        }
    }

    fn count_rows(&mut self, table: &Table) -> Result<u64> {
        let primary = Arc::clone(&self.handles(table)?.primary);
        let mut it = self.shared.db.iter(&primary);
        it.seek_to_first();
        let mut n = 0;
        while it.valid().map_err(|e| anyhow!("count of {}: {e}", table.name))? {
            n += 1;
            it.next();
        }
        Ok(n)
    }

    fn range_query(&mut self, table: &Table, query: RangeQuery, start: f64) -> Result<usize> {
        let index = query.index();
        let cf = self
            .handles(table)?
            .indexes
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, cf)| Arc::clone(cf))
            .with_context(|| format!("index {} does not exist", index.name_on(&table.name)))?;
        self.key.clear();
        match query {
            RangeQuery::Market | RangeQuery::Pdc => push_f64(&mut self.key, start),
            // cashregisterid >= start: the smallest integer not below it.
            RangeQuery::Register => push_i32(
                &mut self.key,
                start.ceil().clamp(i32::MIN as f64, i32::MAX as f64) as i32,
            ),
        }
        let mut it = self.shared.db.iter(&cf);
        it.seek(&self.key);
        let mut n = 0;
        while n < RANGE_QUERY_LIMIT
            && it
                .valid()
                .map_err(|e| anyhow!("range query on {}: {e}", table.name))?
        {
            std::hint::black_box(it.key());
            n += 1;
            it.next();
        }
        Ok(n)
    }

    fn point_query(&mut self, table: &Table, ids: &[i64], found: &mut Vec<i64>) -> Result<usize> {
        let primary = Arc::clone(&self.handles(table)?.primary);
        found.clear();
        let n = ids.len().min(POINT_QUERY_IDS);
        for (k, id) in self.ids.iter_mut().zip(&ids[..n]) {
            *k = id_key(*id);
        }
        let mut bad = None;
        self.shared
            .db
            .multi_get(&primary, &self.ids[..n], |i, value| {
                if value.len() >= ROW_HEADER {
                    found.push(ids[i]);
                } else {
                    bad = Some(ids[i]);
                }
            })
            .map_err(|e| anyhow!("point query on {}: {e}", table.name))?;
        if let Some(id) = bad {
            bail!("row {id} of {} is not a row ibench wrote", table.name);
        }
        Ok(found.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_keep_order() {
        let enc = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut v = Vec::new();
            f(&mut v);
            v
        };
        let floats = [-1e9, -2.5, -0.0, 0.0, 1e-9, 2.5, 400.0, 1e12];
        for w in floats.windows(2) {
            assert!(enc(&|o| push_f64(o, w[0])) <= enc(&|o| push_f64(o, w[1])), "{w:?}");
        }
        let ints = [i32::MIN, -5, 0, 7, i32::MAX];
        for w in ints.windows(2) {
            assert!(enc(&|o| push_i32(o, w[0])) < enc(&|o| push_i32(o, w[1])));
        }
        let longs = [i64::MIN, -1, 0, 1_700_000_000, i64::MAX];
        for w in longs.windows(2) {
            assert!(enc(&|o| push_i64(o, w[0])) < enc(&|o| push_i64(o, w[1])));
        }
        assert!(id_key(255) < id_key(256));
    }

    #[test]
    fn rows_round_trip() {
        let row = Row {
            dateandtime: 1_700_000_000,
            cashregisterid: 3,
            customerid: -4,
            productid: 5,
            price: 12.25,
            data: b"abc",
        };
        let mut v = Vec::new();
        row.encode(&mut v);
        assert_eq!(Row::decode(&v).unwrap(), row);
        let mut k = Vec::new();
        row.index_key(SecondaryIndex::RegisterSegment, 9, &mut k);
        assert_eq!(k.len(), 4 + 8 + 4 + 8);
        assert_eq!(key_id(&k[k.len() - 8..]).unwrap(), 9);
        assert!(Row::decode(&v[..10]).is_err());
    }
}
