//! The nine tables of the TPC-C specification (clause 1.3), with its table and column names
//! after corescale's prefix, their primary keys, and the two indexes its transactions'
//! lookups need (customers by last name, a customer's last order), written for each dialect.

use crate::db::product::Dialect;

/// The order-entry workload's tables: this, then the TPC-C specification's table name.
pub const TPCC_PREFIX: &str = "corescale_tpcc_";

/// A column's type, as clause 1.3 gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Int,
    /// Signed numeric of (precision, scale).
    Decimal(u8, u8),
    Varchar(u16),
    Char(u16),
    Time,
}

/// One table: its name in the specification, its columns (nullable ones marked), its primary
/// key, and its secondary index if it has one.
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Type, Nullable)],
    pub primary_key: &'static [&'static str],
    /// Its secondary index's columns: the index is named `<table>_key`, the one name
    /// teardown takes for corescale's own index of a table.
    pub index: Option<&'static [&'static str]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nullable {
    No,
    Yes,
}

use Nullable::{No, Yes};
use Type::{Char, Decimal, Int, Time, Varchar};

pub const WAREHOUSE: Table = Table {
    name: "warehouse",
    columns: &[
        ("w_id", Int, No),
        ("w_name", Varchar(10), No),
        ("w_street_1", Varchar(20), No),
        ("w_street_2", Varchar(20), No),
        ("w_city", Varchar(20), No),
        ("w_state", Char(2), No),
        ("w_zip", Char(9), No),
        ("w_tax", Decimal(4, 4), No),
        ("w_ytd", Decimal(12, 2), No),
    ],
    primary_key: &["w_id"],
    index: None,
};

pub const DISTRICT: Table = Table {
    name: "district",
    columns: &[
        ("d_id", Int, No),
        ("d_w_id", Int, No),
        ("d_name", Varchar(10), No),
        ("d_street_1", Varchar(20), No),
        ("d_street_2", Varchar(20), No),
        ("d_city", Varchar(20), No),
        ("d_state", Char(2), No),
        ("d_zip", Char(9), No),
        ("d_tax", Decimal(4, 4), No),
        ("d_ytd", Decimal(12, 2), No),
        ("d_next_o_id", Int, No),
    ],
    primary_key: &["d_w_id", "d_id"],
    index: None,
};

pub const CUSTOMER: Table = Table {
    name: "customer",
    columns: &[
        ("c_id", Int, No),
        ("c_d_id", Int, No),
        ("c_w_id", Int, No),
        ("c_first", Varchar(16), No),
        ("c_middle", Char(2), No),
        ("c_last", Varchar(16), No),
        ("c_street_1", Varchar(20), No),
        ("c_street_2", Varchar(20), No),
        ("c_city", Varchar(20), No),
        ("c_state", Char(2), No),
        ("c_zip", Char(9), No),
        ("c_phone", Char(16), No),
        ("c_since", Time, No),
        ("c_credit", Char(2), No),
        ("c_credit_lim", Decimal(12, 2), No),
        ("c_discount", Decimal(4, 4), No),
        ("c_balance", Decimal(12, 2), No),
        ("c_ytd_payment", Decimal(12, 2), No),
        ("c_payment_cnt", Int, No),
        ("c_delivery_cnt", Int, No),
        ("c_data", Varchar(500), No),
    ],
    primary_key: &["c_w_id", "c_d_id", "c_id"],
    index: Some(&["c_w_id", "c_d_id", "c_last", "c_first"]),
};

pub const HISTORY: Table = Table {
    name: "history",
    columns: &[
        ("h_c_id", Int, No),
        ("h_c_d_id", Int, No),
        ("h_c_w_id", Int, No),
        ("h_d_id", Int, No),
        ("h_w_id", Int, No),
        ("h_date", Time, No),
        ("h_amount", Decimal(6, 2), No),
        ("h_data", Varchar(24), No),
    ],
    // The specification gives history no key.
    primary_key: &[],
    index: None,
};

pub const NEW_ORDER: Table = Table {
    name: "new_order",
    columns: &[
        ("no_o_id", Int, No),
        ("no_d_id", Int, No),
        ("no_w_id", Int, No),
    ],
    primary_key: &["no_w_id", "no_d_id", "no_o_id"],
    index: None,
};

pub const ORDERS: Table = Table {
    name: "orders",
    columns: &[
        ("o_id", Int, No),
        ("o_d_id", Int, No),
        ("o_w_id", Int, No),
        ("o_c_id", Int, No),
        ("o_entry_d", Time, No),
        ("o_carrier_id", Int, Yes),
        ("o_ol_cnt", Int, No),
        ("o_all_local", Int, No),
    ],
    primary_key: &["o_w_id", "o_d_id", "o_id"],
    index: Some(&["o_w_id", "o_d_id", "o_c_id", "o_id"]),
};

pub const ORDER_LINE: Table = Table {
    name: "order_line",
    columns: &[
        ("ol_o_id", Int, No),
        ("ol_d_id", Int, No),
        ("ol_w_id", Int, No),
        ("ol_number", Int, No),
        ("ol_i_id", Int, No),
        ("ol_supply_w_id", Int, No),
        ("ol_delivery_d", Time, Yes),
        ("ol_quantity", Int, No),
        ("ol_amount", Decimal(6, 2), No),
        ("ol_dist_info", Char(24), No),
    ],
    primary_key: &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
    index: None,
};

pub const ITEM: Table = Table {
    name: "item",
    columns: &[
        ("i_id", Int, No),
        ("i_im_id", Int, No),
        ("i_name", Varchar(24), No),
        ("i_price", Decimal(5, 2), No),
        ("i_data", Varchar(50), No),
    ],
    primary_key: &["i_id"],
    index: None,
};

pub const STOCK: Table = Table {
    name: "stock",
    columns: &[
        ("s_i_id", Int, No),
        ("s_w_id", Int, No),
        ("s_quantity", Int, No),
        ("s_dist_01", Char(24), No),
        ("s_dist_02", Char(24), No),
        ("s_dist_03", Char(24), No),
        ("s_dist_04", Char(24), No),
        ("s_dist_05", Char(24), No),
        ("s_dist_06", Char(24), No),
        ("s_dist_07", Char(24), No),
        ("s_dist_08", Char(24), No),
        ("s_dist_09", Char(24), No),
        ("s_dist_10", Char(24), No),
        ("s_ytd", Decimal(8, 0), No),
        ("s_order_cnt", Int, No),
        ("s_remote_cnt", Int, No),
        ("s_data", Varchar(50), No),
    ],
    primary_key: &["s_w_id", "s_i_id"],
    index: None,
};

/// All nine, in the order they are created and loaded.
pub const TABLES: [&Table; 9] = [
    &ITEM,
    &WAREHOUSE,
    &STOCK,
    &DISTRICT,
    &CUSTOMER,
    &HISTORY,
    &ORDERS,
    &NEW_ORDER,
    &ORDER_LINE,
];

impl Table {
    /// The table's name in the database: corescale's prefix, then the specification's name.
    pub fn stored_name(&self) -> String {
        format!("{TPCC_PREFIX}{}", self.name)
    }

    pub fn column_names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|(name, _, _)| *name).collect()
    }

    /// CREATE TABLE, naming the table as `named` (quoted and qualified by the layer), with
    /// its primary key; the database's default storage otherwise (InnoDB on MySQL/MariaDB).
    pub fn create(&self, dialect: Dialect, named: &str) -> String {
        let mut parts: Vec<String> = self
            .columns
            .iter()
            .map(|(name, kind, nullable)| {
                let null = if *nullable == Yes { "NULL" } else { "NOT NULL" };
                format!(
                    "{} {} {null}",
                    quoted(dialect, name),
                    type_name(dialect, *kind)
                )
            })
            .collect();
        if !self.primary_key.is_empty() {
            parts.push(format!(
                "PRIMARY KEY ({})",
                column_list(dialect, self.primary_key)
            ));
        }
        let engine = match dialect {
            Dialect::MySql => " ENGINE=InnoDB",
            _ => "",
        };
        format!("CREATE TABLE {named} ({}){engine}", parts.join(", "))
    }

    /// CREATE INDEX for its secondary index, built once the rows are in.
    pub fn create_index(&self, dialect: Dialect, named: &str) -> Option<String> {
        let columns = self.index?;
        let index = quoted(dialect, &format!("{}_key", self.stored_name()));
        Some(format!(
            "CREATE INDEX {index} ON {named} ({})",
            column_list(dialect, columns)
        ))
    }
}

fn quoted(dialect: Dialect, name: &str) -> String {
    match dialect {
        Dialect::MySql => crate::db::quote_backtick(name),
        _ => crate::db::quote_double(name),
    }
}

fn column_list(dialect: Dialect, columns: &[&str]) -> String {
    columns
        .iter()
        .map(|column| quoted(dialect, column))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The type by the dialect's own names; PostgreSQL's qualified by pg_catalog.
fn type_name(dialect: Dialect, kind: Type) -> String {
    match (dialect, kind) {
        (Dialect::PostgreSql, Int) => "pg_catalog.int4".into(),
        (Dialect::PostgreSql, Decimal(precision, scale)) => {
            format!("pg_catalog.numeric({precision}, {scale})")
        }
        (Dialect::PostgreSql, Varchar(length)) => format!("pg_catalog.varchar({length})"),
        (Dialect::PostgreSql, Char(length)) => format!("pg_catalog.bpchar({length})"),
        (Dialect::PostgreSql, Time) => "pg_catalog.timestamp".into(),
        (Dialect::MySql, Int) => "INT".into(),
        (Dialect::MySql, Time) => "DATETIME".into(),
        (Dialect::Oracle, Int) => "NUMBER(10)".into(),
        (Dialect::Oracle, Time) => "DATE".into(),
        (Dialect::Oracle, Varchar(length)) => format!("VARCHAR2({length})"),
        (Dialect::MySql | Dialect::Oracle, Decimal(precision, scale)) => {
            format!("DECIMAL({precision}, {scale})")
        }
        (Dialect::MySql, Varchar(length)) => format!("VARCHAR({length})"),
        (Dialect::MySql | Dialect::Oracle, Char(length)) => format!("CHAR({length})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_the_specifications_columns_and_key() {
        // Clause 1.3: columns per table.
        let widths: Vec<(&str, usize)> = TABLES
            .iter()
            .map(|table| (table.name, table.columns.len()))
            .collect();
        assert_eq!(
            widths,
            [
                ("item", 5),
                ("warehouse", 9),
                ("stock", 17),
                ("district", 11),
                ("customer", 21),
                ("history", 8),
                ("orders", 8),
                ("new_order", 3),
                ("order_line", 10)
            ]
        );
        for table in TABLES {
            for key in table.primary_key {
                assert!(table.column_names().contains(key), "{}.{key}", table.name);
            }
        }
    }

    #[test]
    fn ddl_quotes_names_and_qualifies_postgresql_types() {
        let create = NEW_ORDER.create(Dialect::PostgreSql, "\"s\".\"corescale_tpcc_new_order\"");
        assert_eq!(
            create,
            "CREATE TABLE \"s\".\"corescale_tpcc_new_order\" (\"no_o_id\" pg_catalog.int4 NOT NULL, \"no_d_id\" pg_catalog.int4 NOT NULL, \"no_w_id\" pg_catalog.int4 NOT NULL, PRIMARY KEY (\"no_w_id\", \"no_d_id\", \"no_o_id\"))"
        );
        let index = CUSTOMER
            .create_index(Dialect::MySql, "`corescale_tpcc_customer`")
            .unwrap();
        assert_eq!(
            index,
            "CREATE INDEX `corescale_tpcc_customer_key` ON `corescale_tpcc_customer` (`c_w_id`, `c_d_id`, `c_last`, `c_first`)"
        );
        assert!(
            ORDER_LINE
                .create(Dialect::MySql, "t")
                .contains("`ol_delivery_d` DATETIME NULL")
        );
    }
}
