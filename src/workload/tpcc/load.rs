//! The initial population of clause 4.3.3.1: 100,000 items; per warehouse 100,000 stock
//! rows and 10 districts; per district 3,000 customers with one history row each, 3,000
//! orders (the customers in a random permutation) with 5 to 15 order lines each, and a
//! new order for each of the last 900.

use crate::db::{Field, Rows};

use super::random::{NurandConstants, Random, fixed, last_name};
use super::schema::{self, Table};

pub const ITEMS: u64 = 100_000;
pub const DISTRICTS: u64 = 10;
pub const CUSTOMERS: u64 = 3_000;
/// Orders from this id on are undelivered: no carrier, no delivery date, a new order each.
pub const FIRST_NEW_ORDER: u64 = 2_101;

/// Rows one warehouse adds, with the order lines at their mean of 10 an order: what the
/// progress counts on (the real count is random).
pub const ROWS_PER_WAREHOUSE: u64 = 1
    + ITEMS // stock

    + DISTRICTS * (1 + 3 * CUSTOMERS + (CUSTOMERS - FIRST_NEW_ORDER + 1) + 10 * CUSTOMERS);

/// One table's rows in a batch, for the loader to send.
pub struct Batch {
    pub table: &'static Table,
    pub rows: Rows,
}

impl Batch {
    fn new(table: &'static Table) -> Self {
        Batch {
            table,
            rows: Rows::new(table.columns.len()),
        }
    }
}

fn int(value: u64) -> Field {
    Field::Int(value as i64)
}

fn text(value: impl Into<String>) -> Field {
    Field::Text(value.into())
}

/// The item table, in batches of 10,000 rows.
pub fn items(
    random: &mut Random,
    mut send: impl FnMut(Batch) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for first in (1..=ITEMS).step_by(10_000) {
        let mut batch = Batch::new(&schema::ITEM);
        for id in first..first + 10_000 {
            batch.rows.push([
                int(id),
                int(random.uniform(1, 10_000)),
                text(random.a_string(14, 24)),
                text(random.decimal((100, 10_000), 2)),
                text(random.data_maybe_original()),
            ]);
        }
        send(batch)?;
    }
    Ok(())
}

/// A street, city, state and zip: clause 4.3.3.1's address.
fn address(random: &mut Random) -> [Field; 5] {
    [
        text(random.a_string(10, 20)),
        text(random.a_string(10, 20)),
        text(random.a_string(10, 20)),
        text(random.a_string(2, 2).to_ascii_uppercase()),
        text(random.zip()),
    ]
}

/// Warehouse `w`'s rows: itself, its stock, its districts and each district's customers,
/// history, orders, order lines and new orders, in batches sent as they fill. `now` is the
/// load's time, for the dates the specification sets to it.
pub fn warehouse(
    random: &mut Random,
    w: u64,
    constants: NurandConstants,
    now: &str,
    mut send: impl FnMut(Batch) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut batch = Batch::new(&schema::WAREHOUSE);
    let mut row = vec![int(w), text(random.a_string(6, 10))];
    row.extend(address(random));
    row.extend([text(random.decimal((0, 2000), 4)), text("300000.00")]);
    batch.rows.push(row);
    send(batch)?;
    stock(random, w, &mut send)?;
    for d in 1..=DISTRICTS {
        let mut batch = Batch::new(&schema::DISTRICT);
        let mut row = vec![int(d), int(w), text(random.a_string(6, 10))];
        row.extend(address(random));
        row.extend([
            text(random.decimal((0, 2000), 4)),
            text("30000.00"),
            int(CUSTOMERS + 1),
        ]);
        batch.rows.push(row);
        send(batch)?;
        customers(random, (w, d), constants, now, &mut send)?;
        orders(random, (w, d), now, &mut send)?;
    }
    Ok(())
}

fn stock(
    random: &mut Random,
    w: u64,
    send: &mut impl FnMut(Batch) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for first in (1..=ITEMS).step_by(10_000) {
        let mut batch = Batch::new(&schema::STOCK);
        for id in first..first + 10_000 {
            let mut row = Vec::with_capacity(17);
            row.extend([int(id), int(w), int(random.uniform(10, 100))]);
            row.extend((0..10).map(|_| text(random.a_string(24, 24))));
            row.extend([int(0), int(0), int(0), text(random.data_maybe_original())]);
            batch.rows.push(row);
        }
        send(batch)?;
    }
    Ok(())
}

/// A district's 3,000 customers and their history rows. The first 1,000 customers' last
/// names are those of their numbers, the rest NURand(255, 0, 999)'s (clause 4.3.3.1).
fn customers(
    random: &mut Random,
    (w, d): (u64, u64),
    constants: NurandConstants,
    now: &str,
    send: &mut impl FnMut(Batch) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut customers = Batch::new(&schema::CUSTOMER);
    let mut history = Batch::new(&schema::HISTORY);
    for c in 1..=CUSTOMERS {
        let last = if c <= 1000 {
            last_name(c - 1)
        } else {
            last_name(random.nurand(255, (0, 999), constants.c_last))
        };
        let mut row = Vec::with_capacity(21);
        row.extend([
            int(c),
            int(d),
            int(w),
            text(random.a_string(8, 16)),
            text("OE"),
            text(last),
        ]);
        row.extend(address(random));
        row.extend([
            text(random.n_string(16, 16)),
            text(now),
            text(if random.uniform(1, 10) == 1 {
                "BC"
            } else {
                "GC"
            }),
            text("50000.00"),
            text(random.decimal((0, 5000), 4)),
            text("-10.00"),
            text("10.00"),
            int(1),
            int(0),
            text(random.a_string(300, 500)),
        ]);
        customers.rows.push(row);
        history.rows.push([
            int(c),
            int(d),
            int(w),
            int(d),
            int(w),
            text(now),
            text("10.00"),
            text(random.a_string(12, 24)),
        ]);
    }
    send(customers)?;
    send(history)
}

/// A district's 3,000 orders, their order lines, and the new orders of the last 900.
fn orders(
    random: &mut Random,
    (w, d): (u64, u64),
    now: &str,
    send: &mut impl FnMut(Batch) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut customers: Vec<u64> = (1..=CUSTOMERS).collect();
    for at in (1..customers.len()).rev() {
        customers.swap(at, random.uniform(0, at as u64) as usize);
    }
    let mut orders = Batch::new(&schema::ORDERS);
    let mut lines = Batch::new(&schema::ORDER_LINE);
    let mut new_orders = Batch::new(&schema::NEW_ORDER);
    for (o, customer) in (1..=CUSTOMERS).zip(customers) {
        let delivered = o < FIRST_NEW_ORDER;
        let line_count = random.uniform(5, 15);
        orders.rows.push([
            int(o),
            int(d),
            int(w),
            int(customer),
            text(now),
            if delivered {
                int(random.uniform(1, 10))
            } else {
                Field::Null
            },
            int(line_count),
            int(1),
        ]);
        for number in 1..=line_count {
            lines.rows.push([
                int(o),
                int(d),
                int(w),
                int(number),
                int(random.uniform(1, ITEMS)),
                int(w),
                if delivered { text(now) } else { Field::Null },
                int(5),
                text(if delivered {
                    "0.00".to_string()
                } else {
                    fixed(random.uniform(1, 999_999), 2)
                }),
                text(random.a_string(24, 24)),
            ]);
        }
        if !delivered {
            new_orders.rows.push([int(o), int(d), int(w)]);
        }
    }
    send(orders)?;
    send(lines)?;
    send(new_orders)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(w: u64) -> std::collections::BTreeMap<&'static str, Vec<Vec<Field>>> {
        let mut tables: std::collections::BTreeMap<&'static str, Vec<Vec<Field>>> =
            Default::default();
        let mut random = Random::new(0, 1);
        let constants = NurandConstants::draw(&mut random);
        warehouse(&mut random, w, constants, "2026-11-28 03:00:00", |batch| {
            let rows = tables.entry(batch.table.name).or_default();
            rows.extend(batch.rows.rows().map(<[Field]>::to_vec));
            Ok(())
        })
        .unwrap();
        tables
    }

    #[test]
    fn a_warehouse_has_the_row_counts_of_clause_4_3() {
        let tables = loaded(3);
        let count = |name| tables.get(name).map_or(0, Vec::len);
        assert_eq!(count("warehouse"), 1);
        assert_eq!(count("stock"), 100_000);
        assert_eq!(count("district"), 10);
        assert_eq!(count("customer"), 30_000);
        assert_eq!(count("history"), 30_000);
        assert_eq!(count("orders"), 30_000);
        assert_eq!(count("new_order"), 9_000);
        // Order lines: the sum of the orders' o_ol_cnt, each 5 to 15.
        let line_counts: Vec<i64> = tables["orders"]
            .iter()
            .map(|row| match row[6] {
                Field::Int(count) => count,
                _ => panic!("o_ol_cnt is an integer"),
            })
            .collect();
        assert!(line_counts.iter().all(|count| (5..=15).contains(count)));
        assert_eq!(count("order_line") as i64, line_counts.iter().sum::<i64>());
        // Every row is of warehouse 3, and every district's orders name each customer once.
        assert!(tables["stock"].iter().all(|row| row[1] == Field::Int(3)));
        let mut customers: Vec<&Field> = tables["orders"]
            .iter()
            .filter(|row| row[1] == Field::Int(1))
            .map(|row| &row[3])
            .collect();
        customers.sort_by_key(|field| match field {
            Field::Int(c) => *c,
            _ => 0,
        });
        customers.dedup();
        assert_eq!(customers.len(), 3000);
    }

    #[test]
    fn the_first_thousand_customers_of_a_district_are_named_by_their_number() {
        let tables = loaded(1);
        let first = &tables["customer"][0];
        assert_eq!(first[5], Field::Text("BARBARBAR".into()));
        let thousandth = &tables["customer"][999];
        assert_eq!(thousandth[5], Field::Text(last_name(999)));
        // Undelivered orders have no carrier; delivered ones one from 1 to 10.
        for row in &tables["orders"] {
            let Field::Int(o) = row[0] else { panic!() };
            assert_eq!(row[5] == Field::Null, o as u64 >= FIRST_NEW_ORDER);
        }
    }

    #[test]
    fn the_progress_estimate_is_the_mean_of_a_warehouse() {
        let tables = loaded(1);
        let rows: usize = tables.values().map(Vec::len).sum();
        let expected = ROWS_PER_WAREHOUSE as f64;
        assert!(
            (rows as f64 - expected).abs() / expected < 0.01,
            "{rows} against {expected}"
        );
    }
}
