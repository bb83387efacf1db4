//! The consistency conditions of clause 3.3.2 a loaded or run database must meet, 1 to 4:
//! each one a query counting the districts or warehouses that break it.

use anyhow::{Context, Result, bail};

use super::schema::{self, Table};
use crate::db::{Database, DbSession};

/// One condition: what it says, and the query counting what breaks it (tables named by
/// `{warehouse}`-style placeholders the database's names fill in).
struct Condition {
    number: u8,
    says: &'static str,
    query: &'static str,
}

const CONDITIONS: [Condition; 4] = [
    Condition {
        number: 1,
        says: "each warehouse's W_YTD is the sum of its districts' D_YTD",
        query: "SELECT COUNT(*) FROM {warehouse} w WHERE w.w_ytd <> (SELECT SUM(d.d_ytd) FROM {district} d WHERE d.d_w_id = w.w_id)",
    },
    Condition {
        number: 2,
        says: "each district's D_NEXT_O_ID - 1 is its largest O_ID and its largest NO_O_ID",
        query: "SELECT COUNT(*) FROM {district} d WHERE d.d_next_o_id - 1 <> (SELECT MAX(o.o_id) FROM {orders} o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id) OR d.d_next_o_id - 1 <> (SELECT MAX(n.no_o_id) FROM {new_order} n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id)",
    },
    Condition {
        number: 3,
        says: "each district's new orders run without gaps from its smallest NO_O_ID to its largest",
        query: "SELECT COUNT(*) FROM (SELECT MAX(n.no_o_id) - MIN(n.no_o_id) + 1 AS order_span, COUNT(*) AS new_orders FROM {new_order} n GROUP BY n.no_w_id, n.no_d_id) AS g WHERE g.order_span <> g.new_orders",
    },
    Condition {
        number: 4,
        says: "each district's sum of O_OL_CNT is its number of order lines",
        query: "SELECT COUNT(*) FROM (SELECT o.o_w_id, o.o_d_id, SUM(o.o_ol_cnt) AS line_total FROM {orders} o GROUP BY o.o_w_id, o.o_d_id) AS s WHERE s.line_total <> (SELECT COUNT(*) FROM {order_line} l WHERE l.ol_w_id = s.o_w_id AND l.ol_d_id = s.o_d_id)",
    },
];

/// The condition's query with the tables named as `database` names corescale's.
fn query(database: &dyn Database, condition: &Condition) -> String {
    let tables: [&Table; 5] = [
        &schema::WAREHOUSE,
        &schema::DISTRICT,
        &schema::ORDERS,
        &schema::NEW_ORDER,
        &schema::ORDER_LINE,
    ];
    tables
        .iter()
        .fold(condition.query.to_string(), |sql, table| {
            sql.replace(
                &format!("{{{}}}", table.name),
                &database.own_name(&table.stored_name()),
            )
        })
}

/// Checks conditions 1 to 4; an error names each one broken and how many districts or
/// warehouses break it. Answers the conditions checked.
pub fn check(database: &dyn Database, session: &mut dyn DbSession) -> Result<Vec<u8>> {
    let mut broken = Vec::new();
    for (index, condition) in CONDITIONS.iter().enumerate() {
        let answer = session
            .execute(index, &query(database, condition), &[])
            .with_context(|| format!("checking consistency condition {}", condition.number))?;
        match answer.value {
            Some(0) => {}
            Some(count) => broken.push(format!(
                "condition {} ({}) fails in {count} place(s)",
                condition.number, condition.says
            )),
            None => bail!("consistency condition {} gave no count", condition.number),
        }
    }
    if !broken.is_empty() {
        bail!(
            "{}: the order-entry tables are not consistent: {}",
            database.target(),
            broken.join("; ")
        );
    }
    Ok(CONDITIONS
        .iter()
        .map(|condition| condition.number)
        .collect())
}
