//! The five transactions of clause 2 as one terminal runs them: each one's input drawn as
//! the specification says (home warehouse, remote ones, customers by last name, the 1% of
//! New-Orders rolled back by an unused item), then its statements in one explicit
//! transaction at the database's default isolation.

use std::sync::OnceLock;

use anyhow::anyhow;

use super::random::{NurandConstants, Random, last_name};
use super::statements::{self as sql, Sql, Statements};
use crate::db::{Answer, BoundValue, DbSession, SessionError};

/// What a transaction's statements meet: the server's refusals typed, so the terminal retries
/// or counts them; anything else (tables not as the setup left them) as
/// [`SessionError::Other`].
type Result<T> = std::result::Result<T, SessionError>;

/// A transaction type, in the order of `--mix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::NewOrder,
        Kind::Payment,
        Kind::OrderStatus,
        Kind::Delivery,
        Kind::StockLevel,
    ];

    /// Whether it only reads (Order-Status, Stock-Level): a replica can run it.
    pub fn reads_only(self) -> bool {
        matches!(self, Kind::OrderStatus | Kind::StockLevel)
    }

    /// Its name in figures and messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "new_order",
            Kind::Payment => "payment",
            Kind::OrderStatus => "order_status",
            Kind::Delivery => "delivery",
            Kind::StockLevel => "stock_level",
        }
    }

    /// The specification's limit on its 90th-percentile response time (clause 5.2.5.4).
    pub fn p90_limit_s(self) -> f64 {
        match self {
            Kind::StockLevel => 20.0,
            _ => 5.0,
        }
    }

    /// Clause 5.2.5.7's keying time and mean think time, in seconds.
    pub fn keying_and_think_s(self) -> (f64, f64) {
        match self {
            Kind::NewOrder => (18.0, 12.0),
            Kind::Payment => (3.0, 12.0),
            Kind::OrderStatus => (2.0, 10.0),
            Kind::Delivery | Kind::StockLevel => (2.0, 5.0),
        }
    }
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Committed,
    /// A New-Order with an unused item, rolled back as clause 2.4.2.3 asks.
    RolledBack,
    /// A Delivery, committed, with the districts it skipped for want of an undelivered
    /// order (clause 2.7.4.2 has them counted).
    Delivered {
        skipped: u64,
    },
}

/// One order line of a New-Order.
#[derive(Debug, Clone, Copy, Default)]
struct Line {
    item: i64,
    supply_w: i64,
    quantity: i64,
}

/// A customer, by number or by last name (clause 2.5.1.2).
#[derive(Debug, Clone, Copy)]
enum CustomerKey {
    Id(i64),
    LastName(&'static str),
}

/// What one transaction was drawn as: kept so a retry sends the same one.
#[derive(Debug, Clone, Copy)]
enum Input {
    NewOrder {
        d: i64,
        c: i64,
        rolled_back: bool,
    },
    Payment {
        d: i64,
        c_w: i64,
        c_d: i64,
        customer: CustomerKey,
        cents: i64,
    },
    OrderStatus {
        d: i64,
        customer: CustomerKey,
    },
    Delivery {
        carrier: i64,
    },
    StockLevel {
        threshold: i64,
    },
}

/// The thousand last names, made once for the process (bound by reference, never copied):
/// a fixed table, the same for every run, so it is made once and never grows.
fn last_names() -> &'static [String] {
    static NAMES: OnceLock<Box<[String]>> = OnceLock::new();
    NAMES.get_or_init(|| (0..1000).map(last_name).collect())
}

/// The run's C for last names: it differs from the load's by 65 to 119, but not 96 or 112
/// (clause 2.1.6.1).
pub fn run_c_last(load: u64, random: &mut Random) -> u64 {
    loop {
        let delta = random.uniform(65, 119);
        if delta == 96 || delta == 112 {
            continue;
        }
        if load + delta <= 255 {
            return load + delta;
        }
        if load >= delta {
            return load - delta;
        }
    }
}

/// One session's terminal: its home warehouse, its Stock-Level district, its generator, the
/// input being run and the order lines it reuses.
pub struct Terminal {
    w: i64,
    warehouses: i64,
    stock_level_d: i64,
    nurand: NurandConstants,
    random: Random,
    input: Option<Input>,
    lines: Vec<Line>,
}

/// The warehouses a campaign's part owns: those whose number less one leaves `part` (from 0)
/// divided by `parts`, so each part's districts count its own orders only. One part owns all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnWarehouses {
    pub part: u64,
    pub parts: u64,
}

impl OwnWarehouses {
    pub const ALL: Self = Self { part: 0, parts: 1 };

    /// How many of `warehouses` are the part's.
    pub fn count(self, warehouses: u64) -> u64 {
        warehouses.saturating_sub(self.part).div_ceil(self.parts)
    }

    /// Session `session`'s home warehouse and Stock-Level district: sessions (numbered among
    /// all the parts', `part` first and every `parts`-th after) are dealt round-robin over the
    /// part's warehouses, then districts.
    fn home(self, session: usize, warehouses: u64) -> (i64, i64) {
        let own = self.count(warehouses).max(1);
        let index = session as u64 / self.parts;
        let w = self.part + 1 + self.parts * (index % own);
        (w as i64, (index / own % 10) as i64 + 1)
    }
}

impl Terminal {
    /// Session `session`'s terminal, at home in one of `own`'s warehouses.
    pub fn new(
        session: usize,
        (warehouses, own): (u64, OwnWarehouses),
        nurand: NurandConstants,
        salt: u64,
    ) -> Self {
        let warehouses = warehouses.max(1);
        let (w, stock_level_d) = own.home(session, warehouses);
        Terminal {
            w,
            warehouses: warehouses as i64,
            stock_level_d,
            nurand,
            random: Random::new(session, salt),
            input: None,
            lines: Vec::with_capacity(15),
        }
    }

    pub fn random(&mut self) -> &mut Random {
        &mut self.random
    }

    /// Draws the next transaction of `kind`; `run` sends it (again after a retry).
    pub fn draw(&mut self, kind: Kind) {
        let random = &mut self.random;
        let district = |random: &mut Random| random.uniform(1, 10) as i64;
        self.input = Some(match kind {
            Kind::NewOrder => {
                let d = district(random);
                let c = random.nurand(1023, (1, 3000), self.nurand.c_id) as i64;
                let count = random.uniform(5, 15) as usize;
                let rolled_back = random.uniform(1, 100) == 1;
                self.lines.clear();
                for number in 0..count {
                    let item = if rolled_back && number == count - 1 {
                        100_001
                    } else {
                        random.nurand(8191, (1, 100_000), self.nurand.ol_i_id) as i64
                    };
                    let supply_w = if self.warehouses > 1 && random.uniform(1, 100) == 1 {
                        other_warehouse(random, self.w, self.warehouses)
                    } else {
                        self.w
                    };
                    let quantity = random.uniform(1, 10) as i64;
                    self.lines.push(Line {
                        item,
                        supply_w,
                        quantity,
                    });
                }
                // Stock rows locked in one order by every terminal: no deadlock between two
                // New-Orders (the unused item stays last, where its read fails).
                let keep = usize::from(rolled_back);
                let sorted = count - keep;
                self.lines[..sorted].sort_by_key(|line| (line.supply_w, line.item));
                Input::NewOrder { d, c, rolled_back }
            }
            Kind::Payment => {
                let d = district(random);
                let (c_w, c_d) = if self.warehouses > 1 && random.uniform(1, 100) <= 15 {
                    (
                        other_warehouse(random, self.w, self.warehouses),
                        district(random),
                    )
                } else {
                    (self.w, d)
                };
                Input::Payment {
                    d,
                    c_w,
                    c_d,
                    customer: customer_key(random, self.nurand),
                    cents: random.uniform(100, 500_000) as i64,
                }
            }
            Kind::OrderStatus => Input::OrderStatus {
                d: district(random),
                customer: customer_key(random, self.nurand),
            },
            Kind::Delivery => Input::Delivery {
                carrier: random.uniform(1, 10) as i64,
            },
            Kind::StockLevel => Input::StockLevel {
                threshold: random.uniform(10, 20) as i64,
            },
        });
    }

    /// Runs the drawn transaction from BEGIN to COMMIT (or the intended ROLLBACK). A
    /// statement's refusal is returned as it came ([`SessionError::Refused`]), the
    /// transaction left for the caller to roll back.
    pub fn run(&self, session: &mut dyn DbSession, statements: &Statements) -> Result<Ended> {
        let input = self
            .input
            .ok_or_else(|| anyhow!("no transaction was drawn"))?;
        let mut run = Run {
            session,
            statements,
        };
        run.session.run_plain("BEGIN")?;
        let ended = match input {
            Input::NewOrder { d, c, rolled_back } => {
                run.new_order(self.w, d, c, &self.lines, rolled_back)?
            }
            Input::Payment {
                d,
                c_w,
                c_d,
                customer,
                cents,
            } => run.payment(self.w, d, (c_w, c_d), customer, cents)?,
            Input::OrderStatus { d, customer } => run.order_status(self.w, d, customer)?,
            Input::Delivery { carrier } => run.delivery(self.w, carrier)?,
            Input::StockLevel { threshold } => {
                run.stock_level(self.w, self.stock_level_d, threshold)?
            }
        };
        match ended {
            Ended::Committed | Ended::Delivered { .. } => run.session.run_plain("COMMIT")?,
            Ended::RolledBack => run.session.run_plain("ROLLBACK")?,
        };
        Ok(ended)
    }
}

/// A warehouse other than `home`, uniform among the others.
fn other_warehouse(random: &mut Random, home: i64, warehouses: i64) -> i64 {
    let other = random.uniform(1, warehouses as u64 - 1) as i64;
    if other >= home { other + 1 } else { other }
}

/// 60% by last name (NURand(255, 0, 999) with the run's C), else by number.
fn customer_key(random: &mut Random, nurand: NurandConstants) -> CustomerKey {
    if random.uniform(1, 100) <= 60 {
        let number = random.nurand(255, (0, 999), nurand.c_last);
        CustomerKey::LastName(&last_names()[number as usize])
    } else {
        CustomerKey::Id(random.nurand(1023, (1, 3000), nurand.c_id) as i64)
    }
}

use BoundValue::{Double, Int, Text};

/// One transaction's statements on one session.
struct Run<'a> {
    session: &'a mut dyn DbSession,
    statements: &'a Statements,
}

impl Run<'_> {
    fn execute(&mut self, statement: Sql, values: &[BoundValue]) -> Result<Answer> {
        self.session
            .execute(statement, self.statements.get(statement), values)
    }

    /// The integer a statement's last column answered: what the transaction reads back.
    fn value(&mut self, statement: Sql, values: &[BoundValue], what: &str) -> Result<i64> {
        self.execute(statement, values)?.value.ok_or_else(|| {
            anyhow!(
                "{what} was not found ({}): the order-entry tables are not as the setup left them; run `corescale db check --workload tpcc`",
                self.statements.get(statement)
            )
            .into()
        })
    }

    /// The customer's number: by number, or the middle one of those with the last name
    /// ordered by first name (position n/2 rounded up, clause 2.5.2.2).
    fn customer(&mut self, w: i64, d: i64, customer: CustomerKey) -> Result<i64> {
        match customer {
            CustomerKey::Id(id) => Ok(id),
            CustomerKey::LastName(name) => {
                let named = [Int(w), Int(d), Text(name.into())];
                let count = self.value(sql::BY_NAME_COUNT, &named, "a customer count")?;
                if count == 0 {
                    return Err(anyhow!(
                        "no customer of warehouse {w} district {d} is named {name}: the order-entry tables are not as the setup left them"
                    )
                    .into());
                }
                let offset = (count + 1) / 2 - 1;
                self.value(
                    sql::BY_NAME_PICK,
                    &[Int(w), Int(d), Text(name.into()), Int(offset)],
                    "a customer by last name",
                )
            }
        }
    }

    fn new_order(
        &mut self,
        w: i64,
        d: i64,
        c: i64,
        lines: &[Line],
        rolled_back: bool,
    ) -> Result<Ended> {
        self.execute(sql::NO_WAREHOUSE, &[Int(w)])?;
        self.execute(sql::NO_CUSTOMER, &[Int(w), Int(d), Int(c)])?;
        let o_id = self.value(sql::NO_DISTRICT, &[Int(w), Int(d)], "the district")?;
        self.execute(sql::NO_DISTRICT_NEXT, &[Int(o_id + 1), Int(w), Int(d)])?;
        let all_local = i64::from(lines.iter().all(|line| line.supply_w == w));
        let count = lines.len() as i64;
        self.execute(
            sql::NO_ORDER,
            &[
                Int(o_id),
                Int(d),
                Int(w),
                Int(c),
                Int(count),
                Int(all_local),
            ],
        )?;
        self.execute(sql::NO_NEW_ORDER, &[Int(o_id), Int(d), Int(w)])?;
        let district = (d - 1) as usize;
        for (number, line) in lines.iter().enumerate() {
            if self.execute(sql::NO_ITEM, &[Int(line.item)])?.returned == 0 {
                // The unused item: the whole order is rolled back.
                return if rolled_back {
                    Ok(Ended::RolledBack)
                } else {
                    Err(anyhow!(
                        "item {} is missing: the order-entry tables are not as the setup left them",
                        line.item
                    )
                    .into())
                };
            }
            let stock = [Int(line.item), Int(line.supply_w)];
            self.execute(sql::STOCK_READ + district, &stock)?;
            let q = line.quantity;
            let remote = Int(i64::from(line.supply_w != w));
            self.execute(
                sql::NO_STOCK_UPDATE,
                &[
                    Int(q),
                    Int(q),
                    Int(q),
                    Int(q),
                    remote,
                    Int(line.item),
                    Int(line.supply_w),
                ],
            )?;
            self.execute(
                sql::LINE_INSERT + district,
                &[
                    Int(o_id),
                    Int(d),
                    Int(w),
                    Int(number as i64 + 1),
                    Int(line.item),
                    Int(line.supply_w),
                    Int(q),
                    Int(q),
                    Int(line.item),
                    Int(line.item),
                    Int(line.supply_w),
                ],
            )?;
        }
        Ok(Ended::Committed)
    }

    fn payment(
        &mut self,
        w: i64,
        d: i64,
        (c_w, c_d): (i64, i64),
        customer: CustomerKey,
        cents: i64,
    ) -> Result<Ended> {
        let amount = cents as f64 / 100.0;
        self.execute(sql::P_WAREHOUSE, &[Double(amount), Int(w)])?;
        self.execute(sql::P_WAREHOUSE_READ, &[Int(w)])?;
        self.execute(sql::P_DISTRICT, &[Double(amount), Int(w), Int(d)])?;
        self.execute(sql::P_DISTRICT_READ, &[Int(w), Int(d)])?;
        let c = self.customer(c_w, c_d, customer)?;
        let customer = [Int(c_w), Int(c_d), Int(c)];
        let bad_credit = self.value(sql::P_CUSTOMER, &customer, "the customer")? == 1;
        if bad_credit {
            self.execute(
                sql::P_CUSTOMER_PAY_BC,
                &[
                    Double(amount),
                    Double(amount),
                    Int(d),
                    Int(w),
                    Double(amount),
                    Int(c_w),
                    Int(c_d),
                    Int(c),
                ],
            )?;
        } else {
            self.execute(
                sql::P_CUSTOMER_PAY,
                &[Double(amount), Double(amount), Int(c_w), Int(c_d), Int(c)],
            )?;
        }
        self.execute(
            sql::P_HISTORY,
            &[
                Int(c),
                Int(c_d),
                Int(c_w),
                Int(d),
                Int(w),
                Double(amount),
                Int(w),
                Int(w),
                Int(d),
            ],
        )?;
        Ok(Ended::Committed)
    }

    fn order_status(&mut self, w: i64, d: i64, customer: CustomerKey) -> Result<Ended> {
        let c = self.customer(w, d, customer)?;
        self.execute(sql::OS_CUSTOMER, &[Int(w), Int(d), Int(c)])?;
        let o_id = self.value(
            sql::OS_ORDER,
            &[Int(w), Int(d), Int(c)],
            "the customer's order",
        )?;
        self.execute(sql::OS_LINES, &[Int(w), Int(d), Int(o_id)])?;
        Ok(Ended::Committed)
    }

    /// All ten districts in one transaction; a district without an undelivered order is
    /// skipped, as clause 2.7.4.2 allows.
    fn delivery(&mut self, w: i64, carrier: i64) -> Result<Ended> {
        let mut skipped = 0;
        for d in 1..=10 {
            let Some(o_id) = self.execute(sql::D_OLDEST, &[Int(w), Int(d)])?.value else {
                skipped += 1;
                continue;
            };
            let order = [Int(w), Int(d), Int(o_id)];
            if self.execute(sql::D_DELETE, &order)?.changed == 0 {
                skipped += 1;
                continue;
            }
            let c = self.value(sql::D_ORDER, &order, "the delivered order")?;
            self.execute(sql::D_CARRIER, &[Int(carrier), Int(w), Int(d), Int(o_id)])?;
            self.execute(sql::D_LINES, &order)?;
            self.execute(
                sql::D_CUSTOMER,
                &[Int(w), Int(d), Int(o_id), Int(w), Int(d), Int(c)],
            )?;
        }
        Ok(Ended::Delivered { skipped })
    }

    fn stock_level(&mut self, w: i64, d: i64, threshold: i64) -> Result<Ended> {
        let next = self.value(sql::SL_DISTRICT, &[Int(w), Int(d)], "the district")?;
        self.execute(
            sql::SL_COUNT,
            &[
                Int(w),
                Int(d),
                Int(next),
                Int(next - 20),
                Int(w),
                Int(threshold),
            ],
        )?;
        Ok(Ended::Committed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a campaign, sessions are dealt over every warehouse, then districts. A
    /// campaign's parts (sessions numbered among all the parts', part I first and every N-th
    /// after) are at home only in their own warehouses, which no other part shares, and use
    /// every one of them once they have sessions enough.
    #[test]
    fn each_part_of_a_campaign_is_at_home_in_its_own_warehouses() {
        let homes = |own: OwnWarehouses, sessions: std::ops::Range<usize>, warehouses: u64| {
            sessions
                .map(|session| own.home(session, warehouses))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            homes(OwnWarehouses::ALL, 0..7, 3),
            [(1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (3, 2), (1, 3)]
        );
        for (warehouses, parts) in [(3, 2), (4, 2), (5, 3), (10, 4), (3, 3)] {
            let mut owner = vec![None; warehouses as usize + 1];
            for part in 0..parts {
                let own = OwnWarehouses { part, parts };
                let count = own.count(warehouses);
                // Sessions part, part + parts, ...: enough for each warehouse and district.
                let sessions = (0..count as usize * 10).map(|k| part as usize + k * parts as usize);
                let mut used = std::collections::BTreeSet::new();
                for session in sessions {
                    let (w, d) = own.home(session, warehouses);
                    assert!((1..=warehouses as i64).contains(&w), "{w} of {warehouses}");
                    assert!((1..=10).contains(&d));
                    assert_eq!((w as u64 - 1) % parts, part, "warehouse {w} of part {part}");
                    let first = *owner[w as usize].get_or_insert(part);
                    assert_eq!(
                        first, part,
                        "warehouse {w} shared by parts {first} and {part}"
                    );
                    used.insert((w, d));
                }
                assert_eq!(used.len() as u64, count * 10, "part {part} of {parts}");
            }
            assert!(
                owner[1..].iter().all(Option::is_some),
                "every warehouse is a part's"
            );
        }
    }

    #[test]
    fn the_runs_c_for_last_names_keeps_the_specifications_distance_from_the_loads() {
        let mut random = Random::new(0, 11);
        for load in 0..=255 {
            for _ in 0..20 {
                let run = run_c_last(load, &mut random);
                let delta = run.abs_diff(load);
                assert!(run <= 255, "{run}");
                assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
            }
        }
    }

    #[test]
    fn new_orders_lock_stock_in_one_order_and_a_hundredth_roll_back() {
        let nurand = NurandConstants {
            c_last: 1,
            c_id: 2,
            ol_i_id: 3,
        };
        let mut terminal = Terminal::new(3, (4, OwnWarehouses::ALL), nurand, 9);
        assert_eq!((terminal.w, terminal.stock_level_d), (4, 1));
        let (mut rolled_back, mut remote, mut lines) = (0, 0, 0);
        for _ in 0..20_000 {
            terminal.draw(Kind::NewOrder);
            let Some(Input::NewOrder {
                rolled_back: rolls, ..
            }) = terminal.input
            else {
                panic!("a New-Order was drawn");
            };
            let ordered = &terminal.lines[..terminal.lines.len() - usize::from(rolls)];
            assert!(
                ordered.windows(2).all(
                    |pair| (pair[0].supply_w, pair[0].item) <= (pair[1].supply_w, pair[1].item)
                )
            );
            assert!((5..=15).contains(&terminal.lines.len()));
            rolled_back += u32::from(rolls);
            if rolls {
                assert_eq!(terminal.lines.last().map(|line| line.item), Some(100_001));
            }
            remote += terminal
                .lines
                .iter()
                .filter(|line| line.supply_w != 4)
                .count();
            lines += terminal.lines.len();
        }
        // 1% of 20,000 is 200; 1% of about 200,000 lines are remote.
        assert!((140..=260).contains(&rolled_back), "{rolled_back}");
        let remote_share = remote as f64 / lines as f64;
        assert!((0.008..0.012).contains(&remote_share), "{remote_share}");
    }
}
