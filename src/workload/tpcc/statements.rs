//! The five transactions' statements (clause 2), written once for PostgreSQL and
//! MySQL/MariaDB: `{table}` names one of corescale's tables, `?` a bound value, `{sum}` and
//! the like a built-in (qualified by `pg_catalog` on PostgreSQL). Every value a transaction
//! reads back is the statement's last column, an integer (the layer's `Answer::value`);
//! what the specification computes from text or money is computed by the server.

use super::schema::{self, Table};
use crate::db::Database;
use crate::db::product::Dialect;

/// A statement's number: its index among the prepared statements of a session.
pub type Sql = usize;

/// The statements in order; `STOCK_READ` and `LINE_INSERT` are ten each, one per district
/// (`s_dist_01` to `s_dist_10`), numbered from their constant.
const TEMPLATES: &[&str] = &[
    // New-Order (clause 2.4.2).
    "SELECT w_tax FROM {warehouse} WHERE w_id = ?",
    "SELECT c_discount, c_last, c_credit FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "SELECT d_tax, d_next_o_id FROM {district} WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
    "UPDATE {district} SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?",
    "INSERT INTO {orders} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
    "INSERT INTO {new_order} (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
    "SELECT i_price, i_name, i_data FROM {item} WHERE i_id = ?",
    "UPDATE {stock} SET s_quantity = CASE WHEN s_quantity - ? >= 10 THEN s_quantity - ? ELSE s_quantity - ? + 91 END, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
    // Payment (clause 2.5.2).
    "UPDATE {warehouse} SET w_ytd = w_ytd + CAST(? AS DECIMAL(6, 2)) WHERE w_id = ?",
    "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM {warehouse} WHERE w_id = ?",
    "UPDATE {district} SET d_ytd = d_ytd + CAST(? AS DECIMAL(6, 2)) WHERE d_w_id = ? AND d_id = ?",
    "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM {district} WHERE d_w_id = ? AND d_id = ?",
    "SELECT {count}(*) FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?",
    "SELECT c_id FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first LIMIT 1 OFFSET ?",
    "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN 1 ELSE 0 END FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
    "UPDATE {customer} SET c_balance = c_balance - CAST(? AS DECIMAL(6, 2)), c_ytd_payment = c_ytd_payment + CAST(? AS DECIMAL(6, 2)), c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "UPDATE {customer} SET c_balance = c_balance - CAST(? AS DECIMAL(6, 2)), c_ytd_payment = c_ytd_payment + CAST(? AS DECIMAL(6, 2)), c_payment_cnt = c_payment_cnt + 1, c_data = {substr}({concat}(c_id, ' ', c_d_id, ' ', c_w_id, ' ', CAST(? AS {int}), ' ', CAST(? AS {int}), ' ', CAST(? AS DECIMAL(6, 2)), ' ', c_data), 1, 500) WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "INSERT INTO {history} (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, CAST(? AS DECIMAL(6, 2)), (SELECT {concat}(w_name, '    ', d_name) FROM {warehouse}, {district} WHERE w_id = ? AND d_w_id = ? AND d_id = ?))",
    // Order-Status (clause 2.6.2).
    "SELECT c_balance, c_first, c_middle, c_last FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "SELECT o_carrier_id, o_entry_d, o_id FROM {orders} WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM {order_line} WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    // Delivery (clause 2.7.4).
    "SELECT no_o_id FROM {new_order} WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
    "DELETE FROM {new_order} WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
    // Locking, so at REPEATABLE READ it sees an order committed after the transaction's
    // first read, as the new order before it did.
    "SELECT o_c_id FROM {orders} WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? FOR UPDATE",
    "UPDATE {orders} SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
    "UPDATE {order_line} SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    "UPDATE {customer} SET c_balance = c_balance + (SELECT COALESCE({sum}(ol_amount), 0) FROM {order_line} WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?), c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    // Stock-Level (clause 2.8.2).
    "SELECT d_next_o_id FROM {district} WHERE d_w_id = ? AND d_id = ?",
    "SELECT {count}(DISTINCT s.s_i_id) FROM {order_line} l, {stock} s WHERE l.ol_w_id = ? AND l.ol_d_id = ? AND l.ol_o_id < ? AND l.ol_o_id >= ? AND s.s_w_id = ? AND s.s_i_id = l.ol_i_id AND s.s_quantity < ?",
    // The order counters of the districts of the run's own warehouses (a campaign's part's:
    // those whose number less one leaves the part divided by the parts), read around a level
    // for its NOPM.
    "SELECT {sum}(d_next_o_id) FROM {district} WHERE {mod}(d_w_id - 1, ?) = ?",
];

pub const NO_WAREHOUSE: Sql = 0;
pub const NO_CUSTOMER: Sql = 1;
pub const NO_DISTRICT: Sql = 2;
pub const NO_DISTRICT_NEXT: Sql = 3;
pub const NO_ORDER: Sql = 4;
pub const NO_NEW_ORDER: Sql = 5;
pub const NO_ITEM: Sql = 6;
pub const NO_STOCK_UPDATE: Sql = 7;
pub const P_WAREHOUSE: Sql = 8;
pub const P_WAREHOUSE_READ: Sql = 9;
pub const P_DISTRICT: Sql = 10;
pub const P_DISTRICT_READ: Sql = 11;
pub const BY_NAME_COUNT: Sql = 12;
pub const BY_NAME_PICK: Sql = 13;
pub const P_CUSTOMER: Sql = 14;
pub const P_CUSTOMER_PAY: Sql = 15;
pub const P_CUSTOMER_PAY_BC: Sql = 16;
pub const P_HISTORY: Sql = 17;
pub const OS_CUSTOMER: Sql = 18;
pub const OS_ORDER: Sql = 19;
pub const OS_LINES: Sql = 20;
pub const D_OLDEST: Sql = 21;
pub const D_DELETE: Sql = 22;
pub const D_ORDER: Sql = 23;
pub const D_CARRIER: Sql = 24;
pub const D_LINES: Sql = 25;
pub const D_CUSTOMER: Sql = 26;
pub const SL_DISTRICT: Sql = 27;
pub const SL_COUNT: Sql = 28;
pub const DISTRICT_ORDERS: Sql = 29;
/// New-Order's stock read of district d: `STOCK_READ + d - 1`.
pub const STOCK_READ: Sql = TEMPLATES.len();
/// New-Order's order line of district d: `LINE_INSERT + d - 1`.
pub const LINE_INSERT: Sql = STOCK_READ + 10;
/// The statements a session may prepare: every index above is below it.
pub const STATEMENT_COUNT: Sql = LINE_INSERT + 10;

/// Every statement rendered for one database: its tables' names, built-ins and placeholders.
pub struct Statements {
    sql: Vec<String>,
}

impl Statements {
    pub fn new(database: &dyn Database) -> Self {
        let product = &database.target().product;
        let name = |table: &Table| database.own_name(&table.stored_name());
        let mut templates: Vec<String> = TEMPLATES.iter().map(|sql| (*sql).to_string()).collect();
        for district in 1..=10 {
            templates.push(format!(
                "SELECT s_data, s_dist_{district:02}, s_quantity FROM {{stock}} WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE"
            ));
        }
        for district in 1..=10 {
            templates.push(format!(
                "INSERT INTO {{order_line}} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ? * (SELECT i_price FROM {{item}} WHERE i_id = ?), (SELECT s_dist_{district:02} FROM {{stock}} WHERE s_i_id = ? AND s_w_id = ?))"
            ));
        }
        // Tables named last, in one pass: a quoted schema's name holding `?` or `{sum}` is
        // never read as a placeholder or a built-in.
        let sql = templates
            .iter()
            .map(|template| {
                let bound = placeholders(&builtins(template, product.dialect), product.placeholder);
                tables_named(&bound, &name)
            })
            .collect();
        Statements { sql }
    }

    pub fn get(&self, statement: Sql) -> &str {
        &self.sql[statement]
    }

    pub fn len(&self) -> usize {
        self.sql.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sql.is_empty()
    }
}

/// The sessions' isolation level, named by a number (the layer answers integers): 1 read
/// uncommitted, 2 read committed, 3 repeatable read, 4 serializable, 0 another. MySQL 8 and
/// MariaDB 11.1 name the variable `transaction_isolation`; MariaDB before 11.1 and MySQL 5.7
/// `tx_isolation`: the second is asked when the first is refused.
pub fn isolation_queries(dialect: Dialect) -> [&'static str; 2] {
    match dialect {
        Dialect::PostgreSql => [
            "SELECT CASE pg_catalog.current_setting('transaction_isolation') WHEN 'read uncommitted' THEN 1 WHEN 'read committed' THEN 2 WHEN 'repeatable read' THEN 3 WHEN 'serializable' THEN 4 ELSE 0 END",
            "SELECT 0",
        ],
        _ => [
            "SELECT CASE @@SESSION.transaction_isolation WHEN 'READ-UNCOMMITTED' THEN 1 WHEN 'READ-COMMITTED' THEN 2 WHEN 'REPEATABLE-READ' THEN 3 WHEN 'SERIALIZABLE' THEN 4 ELSE 0 END",
            "SELECT CASE @@SESSION.tx_isolation WHEN 'READ-UNCOMMITTED' THEN 1 WHEN 'READ-COMMITTED' THEN 2 WHEN 'REPEATABLE-READ' THEN 3 WHEN 'SERIALIZABLE' THEN 4 ELSE 0 END",
        ],
    }
}

/// The name of an isolation level [`isolation_queries`] answered.
pub fn isolation_name(level: i64) -> &'static str {
    match level {
        1 => "read uncommitted",
        2 => "read committed",
        3 => "repeatable read",
        4 => "serializable",
        _ => "an isolation level not named in SQL",
    }
}

/// `{sum}`, `{count}`, `{mod}`, `{concat}`, `{substr}` and `{int}` as the dialect names them: on
/// PostgreSQL qualified by `pg_catalog`, so no object of the role's own can stand in.
fn builtins(sql: &str, dialect: Dialect) -> String {
    let postgres = dialect == Dialect::PostgreSql;
    [
        ("{sum}", "SUM"),
        ("{count}", "COUNT"),
        ("{mod}", "MOD"),
        ("{concat}", "CONCAT"),
        ("{substr}", "SUBSTR"),
    ]
    .iter()
    .fold(sql.to_string(), |sql, (placeholder, function)| {
        let named = if postgres {
            format!("pg_catalog.{}", function.to_lowercase())
        } else {
            (*function).to_string()
        };
        sql.replace(placeholder, &named)
    })
    .replace("{int}", if postgres { "INTEGER" } else { "SIGNED" })
}

/// Each `{table}` of the schema's tables as `name` gives it, in one pass over the template:
/// nothing a name holds is read again.
fn tables_named(sql: &str, name: &dyn Fn(&Table) -> String) -> String {
    let mut out = String::with_capacity(sql.len() + 256);
    let mut rest = sql;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let table = after.find('}').and_then(|close| {
            let table = schema::TABLES
                .iter()
                .find(|table| table.name == &after[..close])?;
            Some((table, close))
        });
        match table {
            Some((table, close)) => {
                out.push_str(&name(table));
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Each `?` as the product's n-th placeholder (`$1`, `?`); the statements hold no `?` in a
/// literal.
fn placeholders(sql: &str, placeholder: fn(usize) -> String) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for character in sql.chars() {
        if character == '?' {
            n += 1;
            out.push_str(&placeholder(n));
        } else {
            out.push(character);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_in_order_and_builtins_qualified_on_postgres() {
        assert_eq!(
            placeholders("a = ? AND b = ?", |n| format!("${n}")),
            "a = $1 AND b = $2"
        );
        assert_eq!(
            builtins("SELECT {sum}(x), CAST(? AS {int})", Dialect::PostgreSql),
            "SELECT pg_catalog.sum(x), CAST(? AS INTEGER)"
        );
        assert_eq!(
            builtins("SELECT {sum}(x), CAST(? AS {int})", Dialect::MySql),
            "SELECT SUM(x), CAST(? AS SIGNED)"
        );
        for sql in TEMPLATES {
            // Outside literals ('...' with '' inside), every `?` is a placeholder.
            let mut in_literal = false;
            for character in sql.chars() {
                match character {
                    '\'' => in_literal = !in_literal,
                    '?' => assert!(!in_literal, "a placeholder inside a literal: {sql}"),
                    _ => {}
                }
            }
            assert!(!in_literal, "an unclosed literal: {sql}");
        }
    }

    #[test]
    fn a_schema_name_is_never_read_as_a_placeholder_a_builtin_or_a_table() {
        let hostile = |table: &Table| format!("\"a?{{sum}}{{stock}}\".\"{}\"", table.name);
        let sql = tables_named(
            &placeholders(
                &builtins(
                    "SELECT {sum}(x) FROM {district} WHERE y = ?",
                    Dialect::PostgreSql,
                ),
                |n| format!("${n}"),
            ),
            &hostile,
        );
        assert_eq!(
            sql,
            "SELECT pg_catalog.sum(x) FROM \"a?{sum}{stock}\".\"district\" WHERE y = $1"
        );
        assert_eq!(tables_named("{unknown} {", &hostile), "{unknown} {");
    }
}
