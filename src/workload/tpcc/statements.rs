//! The statements of the five transactions and of the load, in the vocabulary of
//! `dbms::sql` (no SQL here): sysbench-tpcc's, shape for shape, with the set's sibling
//! tables joined by name (`warehouse` beside `customerN`).

use crate::dbms::sql::Column::Named as N;
use crate::dbms::sql::{Column, Cond, Expr, Item, Query, Statement};

/// Rows per multi-row INSERT of the load.
pub const LOAD_BATCH: usize = 100;

const fn eq2(a: &'static str, b: &'static str) -> [Cond; 2] {
    [Cond::Eq(N(a)), Cond::Eq(N(b))]
}

const fn select(what: &'static [Item], filter: &'static [Cond]) -> Statement {
    Statement::Query(Query {
        what,
        join: None,
        filter,
        order_by: None,
        limit: None,
        lock: false,
    })
}

const fn locking(what: &'static [Item], filter: &'static [Cond]) -> Statement {
    Statement::Query(Query {
        what,
        join: None,
        filter,
        order_by: None,
        limit: None,
        lock: true,
    })
}

const fn cols<const K: usize>(names: [&'static str; K]) -> [Item; K] {
    let mut out = [Item::Count; K];
    let mut i = 0;
    while i < K {
        out[i] = Item::Col(N(names[i]));
        i += 1;
    }
    out
}

// New-Order.

/// On customerN: the customer's discount, name, credit and the warehouse's tax.
pub static NO_CUSTOMER: Statement = Statement::Query(Query {
    what: &cols(["c_discount", "c_last", "c_credit", "w_tax"]),
    join: Some("warehouse"),
    filter: &[
        Cond::Eq(N("w_id")),
        Cond::Same(N("c_w_id"), N("w_id")),
        Cond::Eq(N("c_d_id")),
        Cond::Eq(N("c_id")),
    ],
    order_by: None,
    limit: None,
    lock: false,
});
/// On districtN, locking: the next order id and the district's tax.
pub static NO_DISTRICT: Statement =
    locking(&cols(["d_next_o_id", "d_tax"]), &eq2("d_w_id", "d_id"));
/// On districtN: the next order id set.
pub static NO_DISTRICT_NEXT: Statement = Statement::Change {
    set: &[(N("d_next_o_id"), Expr::Param)],
    filter: &eq2("d_id", "d_w_id"),
};
/// On ordersN: the new order.
pub static NO_ORDER: Statement = Statement::Put {
    values: &[
        (N("o_id"), Expr::Param),
        (N("o_d_id"), Expr::Param),
        (N("o_w_id"), Expr::Param),
        (N("o_c_id"), Expr::Param),
        (N("o_entry_d"), Expr::Now),
        (N("o_ol_cnt"), Expr::Param),
        (N("o_all_local"), Expr::Param),
    ],
    rows: 1,
};
const NEW_ORDER_VALUES: [(Column, Expr); 3] = [
    (N("no_o_id"), Expr::Param),
    (N("no_d_id"), Expr::Param),
    (N("no_w_id"), Expr::Param),
];
/// On new_ordersN: the new order's entry.
pub static NO_NEW_ORDER: Statement = Statement::Put {
    values: &NEW_ORDER_VALUES,
    rows: 1,
};
/// On itemN: an item's price, name and data (no row: the unused item id of a rollback).
pub static NO_ITEM: Statement = select(
    &cols(["i_price", "i_name", "i_data"]),
    &[Cond::Eq(N("i_id"))],
);
macro_rules! stock {
    ($dist:literal) => {
        locking(
            &[
                Item::Col(N("s_quantity")),
                Item::Col(N("s_data")),
                Item::Col(N($dist)),
            ],
            &[Cond::Eq(N("s_i_id")), Cond::Eq(N("s_w_id"))],
        )
    };
}
/// On stockN, locking: the quantity, data and the district's `s_dist_XX`, by district.
pub static NO_STOCK: [Statement; 10] = [
    stock!("s_dist_01"),
    stock!("s_dist_02"),
    stock!("s_dist_03"),
    stock!("s_dist_04"),
    stock!("s_dist_05"),
    stock!("s_dist_06"),
    stock!("s_dist_07"),
    stock!("s_dist_08"),
    stock!("s_dist_09"),
    stock!("s_dist_10"),
];
/// On stockN: the new quantity.
pub static NO_STOCK_UPDATE: Statement = Statement::Change {
    set: &[(N("s_quantity"), Expr::Param)],
    filter: &eq2("s_i_id", "s_w_id"),
};
/// On order_lineN: one line of the new order.
pub static NO_ORDER_LINE: Statement = Statement::Put {
    values: &[
        (N("ol_o_id"), Expr::Param),
        (N("ol_d_id"), Expr::Param),
        (N("ol_w_id"), Expr::Param),
        (N("ol_number"), Expr::Param),
        (N("ol_i_id"), Expr::Param),
        (N("ol_supply_w_id"), Expr::Param),
        (N("ol_quantity"), Expr::Param),
        (N("ol_amount"), Expr::Param),
        (N("ol_dist_info"), Expr::Param),
    ],
    rows: 1,
};

// Payment.

/// On warehouseN: the payment added to the year to date.
pub static PAY_WAREHOUSE: Statement = Statement::Change {
    set: &[(N("w_ytd"), Expr::PlusParam)],
    filter: &[Cond::Eq(N("w_id"))],
};
/// On warehouseN: its address.
pub static PAY_WAREHOUSE_READ: Statement = select(
    &cols([
        "w_street_1",
        "w_street_2",
        "w_city",
        "w_state",
        "w_zip",
        "w_name",
    ]),
    &[Cond::Eq(N("w_id"))],
);
/// On districtN: the payment added to the year to date.
pub static PAY_DISTRICT: Statement = Statement::Change {
    set: &[(N("d_ytd"), Expr::PlusParam)],
    filter: &eq2("d_w_id", "d_id"),
};
/// On districtN: its address.
pub static PAY_DISTRICT_READ: Statement = select(
    &cols([
        "d_street_1",
        "d_street_2",
        "d_city",
        "d_state",
        "d_zip",
        "d_name",
    ]),
    &eq2("d_w_id", "d_id"),
);
const BY_NAME: [Cond; 3] = [
    Cond::Eq(N("c_w_id")),
    Cond::Eq(N("c_d_id")),
    Cond::Eq(N("c_last")),
];
const BY_ID: [Cond; 3] = [
    Cond::Eq(N("c_w_id")),
    Cond::Eq(N("c_d_id")),
    Cond::Eq(N("c_id")),
];
/// On customerN: customers of a last name in a district.
pub static CUSTOMERS_NAMED: Statement = select(&[Item::Count], &BY_NAME);
/// On customerN: their ids, by first name.
pub static PAY_CUSTOMER_IDS: Statement = Statement::Query(Query {
    what: &cols(["c_id"]),
    join: None,
    filter: &BY_NAME,
    order_by: Some((N("c_first"), false)),
    limit: None,
    lock: false,
});
/// On customerN, locking: the paying customer.
pub static PAY_CUSTOMER: Statement = locking(
    &cols([
        "c_first",
        "c_middle",
        "c_last",
        "c_street_1",
        "c_street_2",
        "c_city",
        "c_state",
        "c_zip",
        "c_phone",
        "c_credit",
        "c_credit_lim",
        "c_discount",
        "c_balance",
        "c_ytd_payment",
        "c_since",
    ]),
    &BY_ID,
);
/// On customerN: a bad-credit customer's data.
pub static PAY_CUSTOMER_DATA: Statement = select(&cols(["c_data"]), &BY_ID);
/// On customerN: balance, payments and data (bad credit).
pub static PAY_CUSTOMER_BC: Statement = Statement::Change {
    set: &[
        (N("c_balance"), Expr::Param),
        (N("c_ytd_payment"), Expr::Param),
        (N("c_data"), Expr::Param),
    ],
    filter: &BY_ID,
};
/// On customerN: balance and payments (good credit).
pub static PAY_CUSTOMER_GC: Statement = Statement::Change {
    set: &[
        (N("c_balance"), Expr::Param),
        (N("c_ytd_payment"), Expr::Param),
    ],
    filter: &BY_ID,
};
/// On historyN: the payment.
pub static PAY_HISTORY: Statement = Statement::Put {
    values: &[
        (N("h_c_d_id"), Expr::Param),
        (N("h_c_w_id"), Expr::Param),
        (N("h_c_id"), Expr::Param),
        (N("h_d_id"), Expr::Param),
        (N("h_w_id"), Expr::Param),
        (N("h_date"), Expr::Now),
        (N("h_amount"), Expr::Param),
        (N("h_data"), Expr::Param),
    ],
    rows: 1,
};

// Order-Status.

/// On customerN: balance and names of the customers of a last name, by first name.
pub static OS_CUSTOMERS: Statement = Statement::Query(Query {
    what: &cols(["c_balance", "c_first", "c_middle", "c_id"]),
    join: None,
    filter: &BY_NAME,
    order_by: Some((N("c_first"), false)),
    limit: None,
    lock: false,
});
/// On customerN: one customer's balance and names.
pub static OS_CUSTOMER: Statement = select(
    &cols(["c_balance", "c_first", "c_middle", "c_last"]),
    &BY_ID,
);
/// On ordersN: the customer's latest order.
pub static OS_ORDER: Statement = Statement::Query(Query {
    what: &cols(["o_id", "o_carrier_id", "o_entry_d"]),
    join: None,
    filter: &[
        Cond::Eq(N("o_w_id")),
        Cond::Eq(N("o_d_id")),
        Cond::Eq(N("o_c_id")),
    ],
    order_by: Some((N("o_id"), true)),
    limit: Some(1),
    lock: false,
});
const ORDER_LINES: [Cond; 3] = [
    Cond::Eq(N("ol_w_id")),
    Cond::Eq(N("ol_d_id")),
    Cond::Eq(N("ol_o_id")),
];
/// On order_lineN: the order's lines.
pub static OS_LINES: Statement = select(
    &cols([
        "ol_i_id",
        "ol_supply_w_id",
        "ol_quantity",
        "ol_amount",
        "ol_delivery_d",
    ]),
    &ORDER_LINES,
);

// Delivery.

/// On new_ordersN, locking: the district's oldest new order.
pub static DL_NEW_ORDER: Statement = Statement::Query(Query {
    what: &cols(["no_o_id"]),
    join: None,
    filter: &eq2("no_d_id", "no_w_id"),
    order_by: Some((N("no_o_id"), false)),
    limit: Some(1),
    lock: true,
});
/// On new_ordersN: that entry deleted.
pub static DL_DELETE: Statement = Statement::Remove {
    filter: &[
        Cond::Eq(N("no_o_id")),
        Cond::Eq(N("no_d_id")),
        Cond::Eq(N("no_w_id")),
    ],
};
const ORDER: [Cond; 3] = [
    Cond::Eq(N("o_id")),
    Cond::Eq(N("o_d_id")),
    Cond::Eq(N("o_w_id")),
];
/// On ordersN: the order's customer.
pub static DL_ORDER: Statement = select(&cols(["o_c_id"]), &ORDER);
/// On ordersN: the carrier set.
pub static DL_CARRIER: Statement = Statement::Change {
    set: &[(N("o_carrier_id"), Expr::Param)],
    filter: &ORDER,
};
const LINES_OF: [Cond; 3] = [
    Cond::Eq(N("ol_o_id")),
    Cond::Eq(N("ol_d_id")),
    Cond::Eq(N("ol_w_id")),
];
/// On order_lineN: the lines delivered now.
pub static DL_LINES: Statement = Statement::Change {
    set: &[(N("ol_delivery_d"), Expr::Now)],
    filter: &LINES_OF,
};
/// On order_lineN: the order's amount.
pub static DL_AMOUNT: Statement = select(&[Item::Sum(N("ol_amount"))], &LINES_OF);
/// On customerN: the amount added to the balance, one more delivery.
pub static DL_CUSTOMER: Statement = Statement::Change {
    set: &[
        (N("c_balance"), Expr::PlusParam),
        (N("c_delivery_cnt"), Expr::PlusOne),
    ],
    filter: &[
        Cond::Eq(N("c_id")),
        Cond::Eq(N("c_d_id")),
        Cond::Eq(N("c_w_id")),
    ],
};

// Stock-Level.

/// On districtN: the next order id.
pub static SL_DISTRICT: Statement = select(&cols(["d_next_o_id"]), &eq2("d_id", "d_w_id"));
/// On order_lineN joined with stockN: distinct items of the last 20 orders below the
/// threshold.
pub static SL_COUNT: Statement = Statement::Query(Query {
    what: &[Item::CountDistinct(N("s_i_id"))],
    join: Some("stock"),
    filter: &[
        Cond::Eq(N("ol_w_id")),
        Cond::Eq(N("ol_d_id")),
        Cond::Lt(N("ol_o_id")),
        Cond::Ge(N("ol_o_id")),
        Cond::Eq(N("s_w_id")),
        Cond::Same(N("s_i_id"), N("ol_i_id")),
        Cond::Lt(N("s_quantity")),
    ],
    order_by: None,
    limit: None,
    lock: false,
});

// The load: each table's columns, a batch of LOAD_BATCH rows and one row.

macro_rules! load {
    ($batch:ident, $one:ident, $values:expr) => {
        /// Multi-row INSERT of the load.
        pub static $batch: Statement = Statement::Put {
            values: $values,
            rows: LOAD_BATCH,
        };
        /// One-row INSERT of the load (the rest of a batch).
        pub static $one: Statement = Statement::Put {
            values: $values,
            rows: 1,
        };
    };
}

const fn params<const K: usize>(names: [&'static str; K]) -> [(Column, Expr); K] {
    let mut out = [(N(""), Expr::Param); K];
    let mut i = 0;
    while i < K {
        out[i] = (N(names[i]), Expr::Param);
        i += 1;
    }
    out
}

load!(
    LOAD_ITEM,
    LOAD_ITEM_1,
    &params(["i_id", "i_im_id", "i_name", "i_price", "i_data"])
);
load!(
    LOAD_WAREHOUSE,
    LOAD_WAREHOUSE_1,
    &params([
        "w_id",
        "w_name",
        "w_street_1",
        "w_street_2",
        "w_city",
        "w_state",
        "w_zip",
        "w_tax",
        "w_ytd",
    ])
);
load!(
    LOAD_DISTRICT,
    LOAD_DISTRICT_1,
    &params([
        "d_id",
        "d_w_id",
        "d_name",
        "d_street_1",
        "d_street_2",
        "d_city",
        "d_state",
        "d_zip",
        "d_tax",
        "d_ytd",
        "d_next_o_id",
    ])
);
const CUSTOMER_VALUES: [(Column, Expr); 21] = {
    let mut v = params([
        "c_id",
        "c_d_id",
        "c_w_id",
        "c_first",
        "c_middle",
        "c_last",
        "c_street_1",
        "c_street_2",
        "c_city",
        "c_state",
        "c_zip",
        "c_phone",
        "c_since",
        "c_credit",
        "c_credit_lim",
        "c_discount",
        "c_balance",
        "c_ytd_payment",
        "c_payment_cnt",
        "c_delivery_cnt",
        "c_data",
    ]);
    v[12].1 = Expr::Now;
    v
};
load!(LOAD_CUSTOMER, LOAD_CUSTOMER_1, &CUSTOMER_VALUES);
const HISTORY_VALUES: [(Column, Expr); 8] = {
    let mut v = params([
        "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data",
    ]);
    v[5].1 = Expr::Now;
    v
};
load!(LOAD_HISTORY, LOAD_HISTORY_1, &HISTORY_VALUES);
const ORDER_DELIVERED: [(Column, Expr); 8] = {
    let mut v = params([
        "o_id",
        "o_d_id",
        "o_w_id",
        "o_c_id",
        "o_entry_d",
        "o_carrier_id",
        "o_ol_cnt",
        "o_all_local",
    ]);
    v[4].1 = Expr::Now;
    v
};
load!(LOAD_ORDER_DONE, LOAD_ORDER_DONE_1, &ORDER_DELIVERED);
const ORDER_NEW: [(Column, Expr); 7] = {
    let mut v = params([
        "o_id",
        "o_d_id",
        "o_w_id",
        "o_c_id",
        "o_entry_d",
        "o_ol_cnt",
        "o_all_local",
    ]);
    v[4].1 = Expr::Now;
    v
};
load!(LOAD_ORDER_NEW, LOAD_ORDER_NEW_1, &ORDER_NEW);
load!(LOAD_NEW_ORDER, LOAD_NEW_ORDER_1, &NEW_ORDER_VALUES);
const LINE_DELIVERED: [(Column, Expr); 10] = {
    let mut v = params([
        "ol_o_id",
        "ol_d_id",
        "ol_w_id",
        "ol_number",
        "ol_i_id",
        "ol_supply_w_id",
        "ol_delivery_d",
        "ol_quantity",
        "ol_amount",
        "ol_dist_info",
    ]);
    v[6].1 = Expr::Now;
    v
};
load!(LOAD_LINE_DONE, LOAD_LINE_DONE_1, &LINE_DELIVERED);
load!(
    LOAD_LINE_NEW,
    LOAD_LINE_NEW_1,
    &params([
        "ol_o_id",
        "ol_d_id",
        "ol_w_id",
        "ol_number",
        "ol_i_id",
        "ol_supply_w_id",
        "ol_quantity",
        "ol_amount",
        "ol_dist_info",
    ])
);
load!(
    LOAD_STOCK,
    LOAD_STOCK_1,
    &params([
        "s_i_id",
        "s_w_id",
        "s_quantity",
        "s_dist_01",
        "s_dist_02",
        "s_dist_03",
        "s_dist_04",
        "s_dist_05",
        "s_dist_06",
        "s_dist_07",
        "s_dist_08",
        "s_dist_09",
        "s_dist_10",
        "s_ytd",
        "s_order_cnt",
        "s_remote_cnt",
        "s_data",
    ])
);

// The consistency conditions (clause 3.3.2), per district.

/// On warehouseN: the year to date.
pub static CK_W_YTD: Statement = select(&cols(["w_ytd"]), &[Cond::Eq(N("w_id"))]);
/// On districtN: the sum of the districts' year to date.
pub static CK_D_YTD: Statement = select(&[Item::Sum(N("d_ytd"))], &[Cond::Eq(N("d_w_id"))]);
/// On districtN: the next order id.
pub static CK_NEXT_O_ID: Statement = select(&cols(["d_next_o_id"]), &eq2("d_id", "d_w_id"));
/// On ordersN: the largest order id and the sum of the order line counts of a district.
pub static CK_ORDERS: Statement = select(
    &[Item::Max(N("o_id")), Item::Sum(N("o_ol_cnt"))],
    &eq2("o_w_id", "o_d_id"),
);
/// On new_ordersN: the largest and smallest new order id and their count.
pub static CK_NEW_ORDERS: Statement = select(
    &[
        Item::Max(N("no_o_id")),
        Item::Min(N("no_o_id")),
        Item::Count,
    ],
    &eq2("no_w_id", "no_d_id"),
);
/// On order_lineN: the lines of a district.
pub static CK_LINES: Statement = select(&[Item::Count], &eq2("ol_w_id", "ol_d_id"));
/// On any table: its rows (the cardinalities after a load).
pub static COUNT_ROWS: Statement = select(&[Item::Count], &[]);
