//! The Insert Benchmark's operations (`InsertBenchmarkConnection`), each result counted against
//! the rows the test reads with its own client: ids that grow per table in insert order,
//! min/max/count, point and range queries, deletes of exactly the range asked, indexes, scans.

use ibench::dbms::{
    Dbms, InsertBenchmarkConnection, RANGE_QUERY_LIMIT, RangeQuery, RowBatch, SecondaryIndex,
    Table, TableOrigin,
};

use super::own::IbRow;
use super::{Target, table};

/// `dateandtime` of every batch.
const WHEN: i64 = 1_700_000_000;

/// [`WHEN`] as every DBMS shows it.
const WHEN_TEXT: &str = "2023-11-14 22:13:20";

/// Row `i` of the suite's data (its id unknown until inserted): `customerid` i (so that the
/// test can tell which row got which id), `cashregisterid` i % 7, `productid` i % 3, `price`
/// i + 0.5, and `data` with a quote and a backslash in it (plain SQL must escape them).
fn row(i: usize) -> IbRow {
    IbRow {
        id: 0,
        customerid: i as i64,
        cashregisterid: (i % 7) as i64,
        productid: (i % 3) as i64,
        price: i as f64 + 0.5,
        dateandtime: WHEN_TEXT.to_string(),
        data: format!("row '{i}' \\ {}", "x".repeat(i % 4)),
    }
}

/// Rows `from..to` of the suite's data (see [`row`]).
pub fn rows(from: usize, to: usize) -> RowBatch {
    let mut b = RowBatch {
        dateandtime: WHEN,
        ..Default::default()
    };
    for r in (from..to).map(row) {
        b.cashregisterid.push(r.cashregisterid as i32);
        b.customerid.push(r.customerid as i32);
        b.productid.push(r.productid as i32);
        b.price.push(r.price);
        b.data.push_str(&r.data);
        b.data_ends.push(b.data.len());
    }
    b
}

/// Checks that `own` holds rows `0..n` of the suite's data, each with its id.
fn same_rows(t: &Target, own: &[IbRow], n: usize) {
    let expected: Vec<IbRow> = (0..n).map(row).collect();
    let got: Vec<IbRow> = own.iter().map(|r| IbRow { id: 0, ..r.clone() }).collect();
    assert_eq!(got, expected, "{}: the rows as inserted, by id", t.label);
}

/// The id the test reads for the row numbered `customer`.
fn id_of(rows: &[IbRow], customer: i64) -> i64 {
    rows.iter()
        .find(|r| r.customerid == customer)
        .unwrap_or_else(|| panic!("no row {customer}"))
        .id
}

/// Every check on tables `<prefix>1` and `<prefix>2` of a new connection.
pub fn check(db: &dyn Dbms, t: &Target, prefix: &str) {
    let who = &t.label;
    let mut c = db.connect_insert_benchmark().expect("connect");
    let (t1, t2) = (
        table(0, &format!("{prefix}1")),
        table(1, &format!("{prefix}2")),
    );
    assert_eq!(c.table_origin(&t1).unwrap(), TableOrigin::Missing, "{who}");
    c.create_table(&t1).unwrap();
    assert_eq!(c.table_origin(&t1).unwrap(), TableOrigin::Ibench, "{who}");
    assert!(c.table_exists(&t1).unwrap(), "{who}: {} exists", t1.name);
    assert_eq!(c.min_id(&t1).unwrap(), None, "{who}: min of an empty table");
    assert_eq!(c.max_id(&t1).unwrap(), None, "{who}: max of an empty table");
    assert_eq!(c.count_rows(&t1).unwrap(), 0, "{who}");
    assert!(
        c.index_names(&t1).unwrap().is_empty(),
        "{who}: no index yet"
    );

    // Batches of 10, 1 and 13 rows: each returns its largest id, ids grow in insert order.
    let last = [(0, 10), (10, 11), (11, 24)].map(|(a, b)| c.insert(&t1, &rows(a, b)).unwrap());
    assert!(
        last[0] < last[1] && last[1] < last[2],
        "{who}: last ids {last:?}"
    );
    let own = t.own.ib_rows(&t1.name);
    same_rows(t, &own, 24);
    for (customer, id) in [(9, last[0]), (10, last[1]), (23, last[2])] {
        assert_eq!(
            id_of(&own, customer),
            id,
            "{who}: insert's id of row {customer}"
        );
    }
    assert_eq!(c.min_id(&t1).unwrap(), Some(own[0].id), "{who}: min_id");
    assert_eq!(c.max_id(&t1).unwrap(), Some(last[2]), "{who}: max_id");
    assert_eq!(c.count_rows(&t1).unwrap(), 24, "{who}: count_rows");

    // Another table has ids of its own, and leaves the first alone.
    c.create_table(&t2).unwrap();
    let last2 = c.insert(&t2, &rows(100, 103)).unwrap();
    let own2 = t.own.ib_rows(&t2.name);
    assert_eq!(own2.len(), 3, "{who}: {}", t2.name);
    assert_eq!(own2[2].id, last2, "{who}: {} ids", t2.name);
    assert_eq!(
        c.count_rows(&t1).unwrap(),
        24,
        "{who}: {} untouched",
        t1.name
    );

    point_queries(&mut *c, t, &t1, &own);
    indexes(&mut *c, t, [&t1, &t2]);
    ranges(&mut *c, t, &t1, &own);

    // Deletes remove exactly the ids of their range.
    let (lo, hi) = (own[0].id, id_of(&own, 5));
    let in_range: Vec<&IbRow> = own.iter().filter(|r| (lo..hi).contains(&r.id)).collect();
    assert_eq!(
        c.delete_range(&t1, lo, hi).unwrap(),
        in_range.len() as u64,
        "{who}"
    );
    let after = t.own.ib_rows(&t1.name);
    let expected: Vec<IbRow> = own
        .iter()
        .filter(|r| !(lo..hi).contains(&r.id))
        .cloned()
        .collect();
    assert_eq!(
        after, expected,
        "{who}: rows left by delete_range({lo}, {hi})"
    );
    assert_eq!(
        c.delete_range(&t1, lo, hi).unwrap(),
        0,
        "{who}: deleted twice"
    );
    assert_eq!(
        c.delete_range(&t1, hi, hi).unwrap(),
        0,
        "{who}: empty range"
    );
    assert_eq!(
        c.delete_range(&t1, hi, lo).unwrap(),
        0,
        "{who}: reversed range"
    );
    assert_eq!(
        c.min_id(&t1).unwrap(),
        Some(after[0].id),
        "{who}: min after delete"
    );
    assert_eq!(
        c.max_id(&t1).unwrap(),
        Some(last[2]),
        "{who}: max after delete"
    );
    assert_eq!(c.count_rows(&t1).unwrap(), after.len() as u64, "{who}");
    let mut found = Vec::new();
    assert_eq!(
        c.point_query(&t1, &[lo], &mut found).unwrap(),
        0,
        "{who}: deleted row"
    );
    assert!(found.is_empty(), "{who}: {found:?}");
    ranges(&mut *c, t, &t1, &after);
    scans(&mut *c, t, &t1, after.len() as u64);

    // Inserts after deletes keep growing.
    let more = c.insert(&t1, &rows(24, 26)).unwrap();
    assert!(more > last[2], "{who}: id {more} after {}", last[2]);
    assert_eq!(c.count_rows(&t1).unwrap(), after.len() as u64 + 2, "{who}");
    recreated(db, &mut *c, t, &t1);
    concurrent(db, t, &table(2, &format!("{prefix}c")));
}

/// An inserter and a deleter on one table at once, each with its connection, as l.i1 runs
/// them: the deleter deletes every other batch as soon as it is inserted, by the ids the
/// inserter returned; every delete removes exactly its batch, and the rows left are exactly
/// the other batches'.
fn concurrent(db: &dyn Dbms, t: &Target, tbl: &Table) {
    const BATCHES: usize = 20;
    const ROWS: usize = 5;
    let who = &t.label;
    let mut inserter = db.connect_insert_benchmark().expect("connect");
    let mut deleter = db.connect_insert_benchmark().expect("connect");
    inserter.create_table(tbl).unwrap();
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(move || {
            for b in 0..BATCHES {
                let last = inserter.insert(tbl, &rows(b * ROWS, (b + 1) * ROWS));
                sent.send(last.map_err(|e| format!("{e:#}"))).unwrap();
            }
        });
        let mut before = 0;
        for (b, last) in received.iter().enumerate() {
            let last = last.unwrap_or_else(|e| panic!("{who}: insert beside a deleter: {e}"));
            assert!(last > before, "{who}: id {last} after {before}");
            if b % 2 == 0 {
                let n = deleter.delete_range(tbl, before + 1, last + 1).unwrap();
                assert_eq!(
                    n, ROWS as u64,
                    "{who}: delete of batch {b} beside an inserter"
                );
            }
            before = last;
        }
    });
    let left: Vec<i64> = t
        .own
        .ib_rows(&tbl.name)
        .iter()
        .map(|r| r.customerid)
        .collect();
    let expected: Vec<i64> = (0..BATCHES * ROWS)
        .filter(|i| (i / ROWS) % 2 == 1)
        .map(|i| i as i64)
        .collect();
    assert_eq!(
        left, expected,
        "{who}: rows left by an inserter and a deleter"
    );
}

/// A table re-created by another connection, which this one's prepared statements then reach:
/// empty, without indexes, its new rows the only ones.
fn recreated(db: &dyn Dbms, c: &mut dyn InsertBenchmarkConnection, t: &Target, t1: &Table) {
    let who = &t.label;
    let mut other = db.connect_insert_benchmark().expect("connect");
    other.create_table(t1).unwrap();
    assert!(
        c.index_names(t1).unwrap().is_empty(),
        "{who}: re-created without indexes"
    );
    assert_eq!(c.count_rows(t1).unwrap(), 0, "{who}: re-created empty");
    assert_eq!(c.max_id(t1).unwrap(), None, "{who}: re-created empty");
    let last = c.insert(t1, &rows(0, 4)).unwrap();
    let own = t.own.ib_rows(&t1.name);
    same_rows(t, &own, 4);
    assert_eq!(own[3].id, last, "{who}: the id insert returned");
    assert_eq!(c.count_rows(t1).unwrap(), 4, "{who}");
    assert_eq!(c.min_id(t1).unwrap(), Some(own[0].id), "{who}");
    // Every row deleted: no min, no max.
    assert_eq!(
        c.delete_range(t1, 0, i64::MAX).unwrap(),
        4,
        "{who}: delete all"
    );
    assert_eq!(
        (c.min_id(t1).unwrap(), c.max_id(t1).unwrap()),
        (None, None),
        "{who}"
    );
    assert_eq!(c.count_rows(t1).unwrap(), 0, "{who}");
    assert!(t.own.ib_rows(&t1.name).is_empty(), "{who}: rows left");
}

/// Point queries on `tbl` return exactly the ids asked for that exist.
fn point_queries(c: &mut dyn InsertBenchmarkConnection, t: &Target, tbl: &Table, own: &[IbRow]) {
    let who = &t.label;
    let max = own.iter().map(|r| r.id).max().unwrap();
    let asked = [own[0].id, own[5].id, max, max + 1000];
    let mut found = vec![-1];
    let n = c.point_query(tbl, &asked, &mut found).unwrap();
    found.sort();
    assert_eq!(
        found,
        [own[0].id, own[5].id, max],
        "{who}: point query {asked:?}"
    );
    assert_eq!(n, 3, "{who}: rows returned");
    let ten: Vec<i64> = own[..10].iter().map(|r| r.id).collect();
    let n = c.point_query(tbl, &ten, &mut found).unwrap();
    found.sort();
    assert_eq!((n, &found), (10, &ten), "{who}: ten ids");
    assert_eq!(c.point_query(tbl, &[], &mut found).unwrap(), 0, "{who}");
    assert!(found.is_empty(), "{who}: no ids, no rows");
}

/// The three secondary indexes, one statement each, and in one where the DBMS allows it.
fn indexes(c: &mut dyn InsertBenchmarkConnection, t: &Target, tables: [&Table; 2]) {
    let who = &t.label;
    let names = |tbl: &Table| {
        let mut n: Vec<String> = SecondaryIndex::ALL
            .iter()
            .map(|i| i.name_on(&tbl.name))
            .collect();
        n.sort();
        n
    };
    // The first index, then the others (`--secondary-indexes 1`, then more).
    let (first, rest) = SecondaryIndex::ALL.split_at(1);
    c.create_indexes(tables[0], first, false).unwrap();
    let one = vec![first[0].name_on(&tables[0].name)];
    assert_eq!(c.index_names(tables[0]).unwrap(), one, "{who}");
    c.create_indexes(tables[0], rest, false).unwrap();
    assert_eq!(c.index_names(tables[0]).unwrap(), names(tables[0]), "{who}");
    if t.kind().combined_index_ddl(&t.spec.params) {
        c.create_indexes(tables[1], &SecondaryIndex::ALL, true)
            .unwrap();
        assert_eq!(
            c.index_names(tables[1]).unwrap(),
            names(tables[1]),
            "{who}: combined"
        );
        let n = c.range_query(tables[1], RangeQuery::Market, 0.0).unwrap();
        assert_eq!(
            n, 3,
            "{who}: range query through an index built in one statement"
        );
    } else {
        // Refused with one line naming the way that works, and nothing created.
        let err = c
            .create_indexes(tables[1], &SecondaryIndex::ALL, true)
            .expect_err("combined index DDL where the descriptor says no");
        let msg = format!("{err:#}");
        assert!(
            msg.contains("one index per statement") && msg.contains("--index-ddl separate"),
            "{who}: {msg}"
        );
        assert!(c.index_names(tables[1]).unwrap().is_empty(), "{who}");
    }
}

/// Range queries on `tbl` return the rows of their range (at most ten), for starts below,
/// inside and above the values `own` holds; a cashregisterid start between two integers
/// starts at the next one.
fn ranges(c: &mut dyn InsertBenchmarkConnection, t: &Target, tbl: &Table, own: &[IbRow]) {
    let cases = [
        (RangeQuery::Market, 0.0),
        (RangeQuery::Market, 20.0),
        (RangeQuery::Market, 1e9),
        (RangeQuery::Pdc, 20.0),
        (RangeQuery::Pdc, 7.25),
        (RangeQuery::Register, 0.0),
        (RangeQuery::Register, 5.0),
        (RangeQuery::Register, 4.5),
        (RangeQuery::Register, 7.0),
    ];
    for (query, start) in cases {
        let expected = own
            .iter()
            .filter(|r| match query {
                RangeQuery::Register => r.cashregisterid as f64 >= start,
                RangeQuery::Market | RangeQuery::Pdc => r.price >= start,
            })
            .count()
            .min(RANGE_QUERY_LIMIT);
        let n = c.range_query(tbl, query, start).unwrap();
        assert_eq!(n, expected, "{}: {query:?} from {start}", t.label);
    }
}

/// Full scans read every row, through the primary key and each index.
fn scans(c: &mut dyn InsertBenchmarkConnection, t: &Target, tbl: &Table, rows: u64) {
    let who = &t.label;
    if !c.can_scan() {
        t.not_checked("the scan step", "can_scan is false");
        return;
    }
    assert_eq!(
        c.scan(tbl, None).unwrap(),
        rows,
        "{who}: scan of the primary key"
    );
    for index in SecondaryIndex::ALL {
        assert_eq!(
            c.scan(tbl, Some(index)).unwrap(),
            rows,
            "{who}: scan of {index:?}"
        );
    }
}
