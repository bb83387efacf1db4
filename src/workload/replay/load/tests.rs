use super::*;

fn read_at(origin: &str, product: &str, digest: &str) -> Read {
    Read {
        sessions: BTreeMap::new(),
        summary: file::Summary {
            origin: origin.to_string(),
            ..file::Summary::default()
        },
        product: product.to_string(),
        digest: digest.to_string(),
    }
}

/// Each capture moves onto the earliest one's clock; captures of two products, of one
/// log twice, or of clocks that cannot be placed on one are refused, naming both.
#[test]
fn captures_go_on_the_earliest_one_s_clock_or_are_refused() {
    let names = ["a.capture".to_string(), "b.capture".to_string()];
    let utc = |origin: &str, digest: &str| read_at(origin, "postgresql", digest);
    let shifted = shifts(
        &[
            utc("2026-12-04 10:00:00.5 UTC", "sha256 a"),
            utc("2026-12-04 09:59:59 UTC", "sha256 b"),
        ],
        &names,
    )
    .unwrap();
    assert_eq!(shifted, ([1_500_000, 0].to_vec(), Zone::Utc));
    // One wall clock, unplaced but the same, is one clock.
    let wall = |origin: &str, digest: &str| read_at(origin, "mysql", digest);
    let shifted = shifts(
        &[
            wall("2026-12-04 10:00:00", "sha256 a"),
            wall("2026-12-04 10:00:02", "sha256 b"),
        ],
        &names,
    )
    .unwrap();
    assert_eq!(shifted, ([0, 2_000_000].to_vec(), Zone::Wall("".into())));
    let refused = |reads: &[Read]| shifts(reads, &names).unwrap_err().to_string();
    let said = refused(&[
        utc("2026-12-04 10:00:00 UTC", "sha256 a"),
        wall("2026-12-04 10:00:00 UTC", "sha256 b"),
    ]);
    assert!(
        said.contains("b.capture is a capture of mysql, a.capture of postgresql"),
        "{said}"
    );
    let said = refused(&[
        utc("2026-12-04 10:00:00 UTC", "sha256 a"),
        utc("2026-12-04 10:00:00", "sha256 b"),
    ]);
    assert!(
        said.contains(
            "a.capture was logged on an offset from UTC and b.capture on local time without a zone"
        ),
        "{said}"
    );
    let said = refused(&[
        utc("2026-12-04 10:00:00 UTC", "sha256 a"),
        utc("2026-12-04 10:00:00 UTC", "sha256 a"),
    ]);
    assert!(
        said.contains("b.capture holds the same capture as a.capture"),
        "{said}"
    );
    let said = refused(&[
        utc("2026-12-04 10:00:00 UTC", "sha256 a"),
        utc("yesterday", "sha256 b"),
    ]);
    assert!(
        said.contains("b.capture: its first entry's time 'yesterday'"),
        "{said}"
    );
    // One capture needs no clock but its own.
    assert_eq!(
        shifts(&[utc("yesterday", "sha256 a")], &names[..1]).unwrap(),
        ([0].to_vec(), Zone::Utc)
    );
}

/// Captures that begin at one instant to a fraction of a second are said to be one log
/// twice, maybe; in whole seconds, or a moment apart, they are not.
#[test]
fn one_log_captured_twice_is_said() {
    let names = ["a".to_string(), "b".to_string()];
    let placed = |origins: [&str; 2], shifts: [i64; 2]| -> Vec<Placed> {
        origins
            .iter()
            .zip(shifts)
            .enumerate()
            .map(|(given, (origin, shift))| Placed {
                read: read_at(origin, "postgresql", "sha256 a"),
                shift,
                given,
            })
            .collect()
    };
    let at = "2026-12-04 10:00:00.123 UTC";
    let said = one_log_twice(&placed([at, at], [0, 0]), &names).unwrap();
    assert!(
        said.contains("a and b begin at the same instant (2026-12-04 10:00:00.123 UTC)"),
        "{said}"
    );
    let whole = "2026-12-04 10:00:00 UTC";
    assert_eq!(one_log_twice(&placed([whole, whole], [0, 0]), &names), None);
    let later = "2026-12-04 10:00:00.124 UTC";
    assert_eq!(one_log_twice(&placed([at, later], [0, 1000]), &names), None);
}

/// A capture whose statements run from `first_s` to `last_s` after its origin.
fn spanning(first_s: i64, last_s: i64) -> Read {
    let statement = |at_s: i64| file::Statement {
        session: 1,
        at_us: at_s * 1_000_000,
        sql: "SELECT 1".into(),
        parameters: None,
        took_us: None,
        class: Class::Read,
        failed: None,
        database: None,
        rows: None,
        ends_within_us: None,
    };
    let mut read = read_at("2026-12-04 10:00:00 UTC", "postgresql", "sha256 a");
    read.sessions.insert(
        1,
        Captured {
            database: "shop".into(),
            user: "app".into(),
            statements: vec![statement(first_s), statement(last_s)],
            ended_us: None,
            copy: false,
        },
    );
    read
}

/// Captures replay together when their instances were logged over one time: a later
/// capture that begins after every earlier one has ended is refused, naming the gap and
/// the capture that ended last.
#[test]
fn captures_of_different_times_are_refused() {
    let names = ["a", "b", "c"].map(String::from);
    let reads = [spanning(0, 60), spanning(0, 10), spanning(0, 30)];
    // On one clock: a from 0 to 60 s, b from 50 to 60 s, c from 55 to 85 s.
    let second = 1_000_000;
    overlapping(&reads, &[0, 50 * second, 55 * second], &names).unwrap();
    // c from 65 s, after a and b have ended.
    let said = overlapping(&reads, &[0, 50 * second, 65 * second], &names)
        .unwrap_err()
        .to_string();
    assert!(said.contains("c begins 5.0 s after a ends"), "{said}");
    let said = overlapping(&reads[..2], &[0, 7_200 * second], &names[..2])
        .unwrap_err()
        .to_string();
    assert!(said.contains("b begins 7140.0 s after a ends"), "{said}");
    // A file's offsets are not checked: one at the end of time is refused, not an
    // overflow.
    let mut hostile = spanning(0, 0);
    for session in hostile.sessions.values_mut() {
        for statement in &mut session.statements {
            statement.at_us = i64::MIN;
        }
    }
    let said = overlapping(&[hostile, spanning(0, 10)], &[0, second], &names[..2])
        .unwrap_err()
        .to_string();
    assert!(said.contains("b begins 9223372036855"), "{said}");
}

fn session_at(times_s: &[(i64, u64)]) -> Captured {
    Captured {
        database: "shop".into(),
        user: "app".into(),
        statements: times_s
            .iter()
            .map(|(at_s, took_s)| file::Statement {
                session: 1,
                at_us: at_s * 1_000_000,
                sql: "SELECT 1".into(),
                parameters: None,
                took_us: Some(took_s * 1_000_000),
                class: Class::Read,
                failed: None,
                database: None,
                rows: None,
                ends_within_us: None,
            })
            .collect(),
        ended_us: None,
        copy: false,
    }
}

#[test]
fn idle_longer_than_the_most_is_shortened_to_it() {
    const DAY: i64 = 86_400;
    let mut sessions = vec![
        session_at(&[(0, 0), (1, 0), (10 * DAY, 0)]),
        session_at(&[(10 * DAY + 2, 0), (73 * 365 * DAY, 0)]),
    ];
    let (gaps, taken) = shorten_idle(&mut sessions, Duration::from_secs(300));
    assert_eq!(gaps, 2);
    let at = |session: usize| -> Vec<i64> {
        sessions[session]
            .statements
            .iter()
            .map(|statement| statement.at_us / 1_000_000)
            .collect()
    };
    assert_eq!(at(0), [0, 1, 301]);
    assert_eq!(at(1), [303, 603]);
    assert_eq!(
        taken.as_secs() as i64,
        73 * 365 * DAY - 603,
        "every second but the kept ones"
    );
    // A statement running through the gap keeps it busy: nothing is shortened.
    let mut running = vec![session_at(&[(0, 1200), (900, 0)])];
    assert_eq!(
        shorten_idle(&mut running, Duration::from_secs(300)),
        (0, Duration::ZERO)
    );
    assert_eq!(running[0].statements[1].at_us, 900_000_000);
}

#[test]
fn a_replay_stays_in_the_url_s_database() {
    let mut session = session_at(&[
        (0, 0),
        (1, 0),
        (2, 0),
        (3, 0),
        (4, 0),
        (5, 0),
        (6, 0),
        (7, 0),
    ]);
    let texts = [
        "SELECT 1",
        "USE shop",
        "INSERT INTO orders VALUES (1)",
        "use `other`",
        "DELETE FROM orders",
        "USE shop",
        "INSERT INTO shop.orders VALUES (2)",
        "UPDATE orders SET a = 1",
    ];
    for (statement, text) in session.statements.iter_mut().zip(texts) {
        statement.sql = text.to_string();
    }
    // The log says the last statement ran after its session moved elsewhere.
    session.statements[7].database = Some("archive".into());
    let choice = Choice {
        target_database: Some("shopclone".into()),
        ..Choice::default()
    };
    let mut left_out = LeftOut::default();
    in_one_database(&mut session, "shop", &choice, Quoting::Mysql, &mut left_out);
    let kept: Vec<&str> = session.statements.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(kept, ["SELECT 1", "INSERT INTO orders VALUES (1)"]);
    assert_eq!(left_out.database_changes, 3);
    assert_eq!(left_out.other_databases, 3);
    // Replayed on the captured database's own name, its qualified names stay.
    let mut same = session_at(&[(0, 0)]);
    same.statements[0].sql = "INSERT INTO shop.orders VALUES (2)".into();
    let choice = Choice {
        target_database: Some("shop".into()),
        ..Choice::default()
    };
    in_one_database(&mut same, "shop", &choice, Quoting::Mysql, &mut left_out);
    assert_eq!(same.statements.len(), 1);
}

#[test]
fn a_class_is_read_anew_and_refused_privileges_are_not_sent() {
    let mut left_out = LeftOut::default();
    let choice = Choice::default();
    let mut statement = session_at(&[(0, 0)]).statements.remove(0);
    statement.sql = "COPY (SELECT 1) TO PROGRAM 'id'".into();
    statement.class = Class::Read;
    assert!(!kept_by_class(
        &mut statement,
        &choice,
        Quoting::Postgres,
        &mut left_out
    ));
    assert_eq!(left_out.server_wide, 1);
    statement.sql = "SELECT pg_catalog.now()".into();
    statement.failed = Some("42501".into());
    assert!(!kept_by_class(
        &mut statement,
        &choice,
        Quoting::Postgres,
        &mut left_out
    ));
    assert_eq!(left_out.denied, 1);
    statement.failed = None;
    statement.sql = "SELECT dblink_connect($1)".into();
    statement.parameters = Some(vec![Some("host=h password=x".into())]);
    assert!(!kept_by_class(
        &mut statement,
        &choice,
        Quoting::Postgres,
        &mut left_out
    ));
    assert_eq!(left_out.passwords, 1);
}
