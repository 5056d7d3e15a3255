//! sysbench-tpcc's nine tables ([`Kind`], declared once as [`TableDef`]s for every DBMS), their
//! secondary indexes and foreign keys, named as sysbench-tpcc names them (`idx_customer1`,
//! `fkey_orders_1_1`).

use crate::dbms::Table;
use crate::dbms::sql::{ColumnDef, Ddl, Statement, TableDef, Type};

/// One of the nine tables of a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `warehouseN`.
    Warehouse,
    /// `districtN`.
    District,
    /// `customerN`.
    Customer,
    /// `historyN`.
    History,
    /// `ordersN`.
    Orders,
    /// `new_ordersN`.
    NewOrders,
    /// `order_lineN`.
    OrderLine,
    /// `stockN`.
    Stock,
    /// `itemN`.
    Item,
}

/// The kinds in the order their tables are (re-)created: a table before the tables it
/// references, after those that reference it (sysbench-tpcc's cleanup order), so that a set
/// re-created over an old one never drops a table another still references.
pub const KINDS: [Kind; 9] = [
    Kind::History,
    Kind::NewOrders,
    Kind::OrderLine,
    Kind::Orders,
    Kind::Customer,
    Kind::District,
    Kind::Stock,
    Kind::Item,
    Kind::Warehouse,
];

const fn col(name: &'static str, ty: Type) -> ColumnDef {
    ColumnDef {
        name,
        ty,
        not_null: false,
    }
}

const fn key(name: &'static str, ty: Type) -> ColumnDef {
    ColumnDef {
        name,
        ty,
        not_null: true,
    }
}

use Type::{Char, DateTime, Decimal, Int, SmallInt, Text, TinyInt, VarChar};

static WAREHOUSE: TableDef = TableDef {
    name: "warehouse",
    columns: &[
        key("w_id", SmallInt),
        col("w_name", VarChar(10)),
        col("w_street_1", VarChar(20)),
        col("w_street_2", VarChar(20)),
        col("w_city", VarChar(20)),
        col("w_state", Char(2)),
        col("w_zip", Char(9)),
        col("w_tax", Decimal(4, 2)),
        col("w_ytd", Decimal(12, 2)),
    ],
    primary_key: &["w_id"],
};

static DISTRICT: TableDef = TableDef {
    name: "district",
    columns: &[
        key("d_id", TinyInt),
        key("d_w_id", SmallInt),
        col("d_name", VarChar(10)),
        col("d_street_1", VarChar(20)),
        col("d_street_2", VarChar(20)),
        col("d_city", VarChar(20)),
        col("d_state", Char(2)),
        col("d_zip", Char(9)),
        col("d_tax", Decimal(4, 2)),
        col("d_ytd", Decimal(12, 2)),
        col("d_next_o_id", Int),
    ],
    primary_key: &["d_w_id", "d_id"],
};

static CUSTOMER: TableDef = TableDef {
    name: "customer",
    columns: &[
        key("c_id", Int),
        key("c_d_id", TinyInt),
        key("c_w_id", SmallInt),
        col("c_first", VarChar(16)),
        col("c_middle", Char(2)),
        col("c_last", VarChar(16)),
        col("c_street_1", VarChar(20)),
        col("c_street_2", VarChar(20)),
        col("c_city", VarChar(20)),
        col("c_state", Char(2)),
        col("c_zip", Char(9)),
        col("c_phone", Char(16)),
        col("c_since", DateTime),
        col("c_credit", Char(2)),
        col("c_credit_lim", Type::BigInt),
        col("c_discount", Decimal(4, 2)),
        col("c_balance", Decimal(12, 2)),
        col("c_ytd_payment", Decimal(12, 2)),
        col("c_payment_cnt", SmallInt),
        col("c_delivery_cnt", SmallInt),
        col("c_data", Text),
    ],
    primary_key: &["c_w_id", "c_d_id", "c_id"],
};

static HISTORY: TableDef = TableDef {
    name: "history",
    columns: &[
        col("h_c_id", Int),
        col("h_c_d_id", TinyInt),
        col("h_c_w_id", SmallInt),
        col("h_d_id", TinyInt),
        col("h_w_id", SmallInt),
        col("h_date", DateTime),
        col("h_amount", Decimal(6, 2)),
        col("h_data", VarChar(24)),
    ],
    primary_key: &[],
};

static ORDERS: TableDef = TableDef {
    name: "orders",
    columns: &[
        key("o_id", Int),
        key("o_d_id", TinyInt),
        key("o_w_id", SmallInt),
        col("o_c_id", Int),
        col("o_entry_d", DateTime),
        col("o_carrier_id", TinyInt),
        col("o_ol_cnt", TinyInt),
        col("o_all_local", TinyInt),
    ],
    primary_key: &["o_w_id", "o_d_id", "o_id"],
};

static NEW_ORDERS: TableDef = TableDef {
    name: "new_orders",
    columns: &[
        key("no_o_id", Int),
        key("no_d_id", TinyInt),
        key("no_w_id", SmallInt),
    ],
    primary_key: &["no_w_id", "no_d_id", "no_o_id"],
};

static ORDER_LINE: TableDef = TableDef {
    name: "order_line",
    columns: &[
        key("ol_o_id", Int),
        key("ol_d_id", TinyInt),
        key("ol_w_id", SmallInt),
        key("ol_number", TinyInt),
        col("ol_i_id", Int),
        col("ol_supply_w_id", SmallInt),
        col("ol_delivery_d", DateTime),
        col("ol_quantity", TinyInt),
        col("ol_amount", Decimal(6, 2)),
        col("ol_dist_info", Char(24)),
    ],
    primary_key: &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
};

static STOCK: TableDef = TableDef {
    name: "stock",
    columns: &[
        key("s_i_id", Int),
        key("s_w_id", SmallInt),
        col("s_quantity", SmallInt),
        col("s_dist_01", Char(24)),
        col("s_dist_02", Char(24)),
        col("s_dist_03", Char(24)),
        col("s_dist_04", Char(24)),
        col("s_dist_05", Char(24)),
        col("s_dist_06", Char(24)),
        col("s_dist_07", Char(24)),
        col("s_dist_08", Char(24)),
        col("s_dist_09", Char(24)),
        col("s_dist_10", Char(24)),
        col("s_ytd", Decimal(8, 0)),
        col("s_order_cnt", SmallInt),
        col("s_remote_cnt", SmallInt),
        col("s_data", VarChar(50)),
    ],
    primary_key: &["s_w_id", "s_i_id"],
};

static ITEM: TableDef = TableDef {
    name: "item",
    columns: &[
        key("i_id", Int),
        col("i_im_id", Int),
        col("i_name", VarChar(24)),
        col("i_price", Decimal(5, 2)),
        col("i_data", VarChar(50)),
    ],
    primary_key: &["i_id"],
};

impl Kind {
    /// The table's declaration.
    pub fn def(self) -> &'static TableDef {
        match self {
            Kind::Warehouse => &WAREHOUSE,
            Kind::District => &DISTRICT,
            Kind::Customer => &CUSTOMER,
            Kind::History => &HISTORY,
            Kind::Orders => &ORDERS,
            Kind::NewOrders => &NEW_ORDERS,
            Kind::OrderLine => &ORDER_LINE,
            Kind::Stock => &STOCK,
            Kind::Item => &ITEM,
        }
    }

    /// Position in [`KINDS`].
    fn index(self) -> usize {
        KINDS.iter().position(|&k| k == self).unwrap_or(0)
    }
}

/// The tables of every set, `KINDS.len()` per set in [`KINDS`] order, with dense ids.
pub fn tables(sets: usize) -> Vec<Table> {
    let mut out = Vec::with_capacity(sets * KINDS.len());
    for set in 1..=sets {
        for kind in KINDS {
            out.push(Table {
                id: out.len(),
                name: format!("{}{set}", kind.def().name),
            });
        }
    }
    out
}

/// The table of `kind` in set `set` (1-based) of `tables` (as [`tables`] made them).
pub fn table(tables: &[Table], set: usize, kind: Kind) -> &Table {
    &tables[(set - 1) * KINDS.len() + kind.index()]
}

/// sysbench-tpcc's secondary indexes: the table each is on, and the statement.
pub static INDEXES: [(Kind, Statement); 6] = [
    (
        Kind::Customer,
        Statement::Ddl(Ddl::Index {
            name: "idx_customer",
            columns: &["c_w_id", "c_d_id", "c_last", "c_first"],
        }),
    ),
    (
        Kind::Orders,
        Statement::Ddl(Ddl::Index {
            name: "idx_orders",
            columns: &["o_w_id", "o_d_id", "o_c_id", "o_id"],
        }),
    ),
    (
        Kind::Stock,
        Statement::Ddl(Ddl::Index {
            name: "fkey_stock_2",
            columns: &["s_i_id"],
        }),
    ),
    (
        Kind::OrderLine,
        Statement::Ddl(Ddl::Index {
            name: "fkey_order_line_2",
            columns: &["ol_supply_w_id", "ol_i_id"],
        }),
    ),
    (
        Kind::History,
        Statement::Ddl(Ddl::Index {
            name: "fkey_history_1",
            columns: &["h_c_w_id", "h_c_d_id", "h_c_id"],
        }),
    ),
    (
        Kind::History,
        Statement::Ddl(Ddl::Index {
            name: "fkey_history_2",
            columns: &["h_w_id", "h_d_id"],
        }),
    ),
];

const fn fk(
    name: &'static str,
    columns: &'static [&'static str],
    parent: &'static str,
    parent_columns: &'static [&'static str],
) -> Statement {
    Statement::Ddl(Ddl::ForeignKey {
        name,
        columns,
        parent,
        parent_columns,
    })
}

/// sysbench-tpcc's foreign keys: the table each is on, and the statement.
pub static FOREIGN_KEYS: [(Kind, Statement); 10] = [
    (
        Kind::NewOrders,
        fk(
            "fkey_new_orders_1_",
            &["no_w_id", "no_d_id", "no_o_id"],
            "orders",
            &["o_w_id", "o_d_id", "o_id"],
        ),
    ),
    (
        Kind::Orders,
        fk(
            "fkey_orders_1_",
            &["o_w_id", "o_d_id", "o_c_id"],
            "customer",
            &["c_w_id", "c_d_id", "c_id"],
        ),
    ),
    (
        Kind::Customer,
        fk(
            "fkey_customer_1_",
            &["c_w_id", "c_d_id"],
            "district",
            &["d_w_id", "d_id"],
        ),
    ),
    (
        Kind::History,
        fk(
            "fkey_history_1_",
            &["h_c_w_id", "h_c_d_id", "h_c_id"],
            "customer",
            &["c_w_id", "c_d_id", "c_id"],
        ),
    ),
    (
        Kind::History,
        fk(
            "fkey_history_2_",
            &["h_w_id", "h_d_id"],
            "district",
            &["d_w_id", "d_id"],
        ),
    ),
    (
        Kind::District,
        fk("fkey_district_1_", &["d_w_id"], "warehouse", &["w_id"]),
    ),
    (
        Kind::OrderLine,
        fk(
            "fkey_order_line_1_",
            &["ol_w_id", "ol_d_id", "ol_o_id"],
            "orders",
            &["o_w_id", "o_d_id", "o_id"],
        ),
    ),
    (
        Kind::OrderLine,
        fk(
            "fkey_order_line_2_",
            &["ol_supply_w_id", "ol_i_id"],
            "stock",
            &["s_w_id", "s_i_id"],
        ),
    ),
    (
        Kind::Stock,
        fk("fkey_stock_1_", &["s_w_id"], "warehouse", &["w_id"]),
    ),
    (
        Kind::Stock,
        fk("fkey_stock_2_", &["s_i_id"], "item", &["i_id"]),
    ),
];
