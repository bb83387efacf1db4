use super::*;
use crate::analysis::latency::tests::replay;
use crate::analysis::statements::change;
use crate::analysis::statements::tests::{answers, rows};

/// new against old at 1x: an UPDATE three times slower on 2,000 answers, a SELECT a third
/// faster on 2,000, both answering the same rows unless `diverged`.
fn compared(diverged: bool) -> StatementComparison {
    let statements = [
        (
            "fingerprint-1",
            "UPDATE stock SET s_quantity = ? WHERE s_i_id = ?",
            1.0,
            3.0,
        ),
        (
            "fingerprint-2",
            "SELECT c_balance FROM customer WHERE c_id = ?",
            3.0,
            2.0,
        ),
    ]
    .into_iter()
    .map(|(class, text, before, after)| {
        let mut one = change(
            class,
            text.to_string(),
            &answers(before, 2000),
            &answers(after, 2000),
        )
        .unwrap();
        let matched = !(diverged && class == "fingerprint-2");
        one.rows = Some(rows(2000, if matched { 2000 } else { 1999 }));
        one
    })
    .collect();
    StatementComparison::of(("old", "new"), 1.0, statements, false).unwrap()
}

#[test]
fn the_answer_says_speeds_kept_the_change_the_worst_regression_and_the_rows() {
    // new keeps its schedule up to 4x (it serves 5x), old up to 2x (it serves 3x).
    let open_loop = [
        replay("old", 3.0, &[1.0, 2.0, 4.0]),
        replay("new", 5.0, &[1.0, 2.0, 4.0, 8.0]),
    ];
    let comparison = compared(false);
    let answered = answer(&[], &open_loop, &comparison);
    let migration = answered.migration.as_ref().unwrap();
    assert_eq!(
        (migration.kept_speed, migration.baseline_kept_speed),
        (Some(4.0), Some(2.0))
    );
    assert_eq!(answered.equivalent, Some(2.0));
    assert_eq!(
        (answered.server.as_str(), answered.against.as_str()),
        ("new", "old")
    );
    // The UPDATE's 1 ms was a quarter of old's time and is three times slower; the SELECT's
    // 3 ms three quarters, and 1.5 times faster: 0.25 x 3 + 0.75 x 2/3 = 1.25.
    let change = migration.change.unwrap();
    assert!((change - 0.25).abs() < 0.01, "{change}");
    let said = &answered.sentence;
    assert!(
        said.starts_with("new keeps the captured workload up to 4x (old: 2x); at 1x its statements are 25% slower ["),
        "{said}"
    );
    assert!(
        said.contains("against old's (each weighted by its share of the time); 1 of 2 statements regressed beyond the noise, the worst fingerprint-1 (UPDATE stock SET s_quantity = ? WHERE s_i_id = ?) p99 2.99x ["),
        "{said}"
    );
    assert!(
        said.ends_with("; rows matched for every statement compared."),
        "{said}"
    );
    let diverged = answer(&[], &open_loop, &compared(true));
    assert!(
        diverged
            .sentence
            .ends_with("; rows differ for fingerprint-2 (50% of the statements sent are its)."),
        "{}",
        diverged.sentence
    );
}

#[test]
fn a_replay_that_fell_behind_at_once_is_said_so_and_no_pair_gives_no_answer() {
    let open_loop = [
        replay("old", 0.5, &[1.0, 2.0]),
        replay("new", 3.0, &[1.0, 2.0, 4.0]),
    ];
    let said = answer(&[], &open_loop, &compared(false)).sentence;
    assert!(
        said.starts_with(
            "new keeps the captured workload up to 2x (old fell behind at its first speed)"
        ),
        "{said}"
    );
    assert_eq!(first_answer(&[], &open_loop, &[]), None);
}

#[test]
fn where_both_searched_the_answer_quotes_the_largest_speed_each_kept() {
    use crate::analysis::searched::tests::{probe, searched};
    let replay_search = |name: &str, kept: f64| {
        let mut series = searched(name, vec![probe(kept, 4.0), probe(kept * 1.1, 6.0)], None);
        let search = series.search.as_mut().unwrap();
        search.unit = "x the captured pace".into();
        search.kept_rate = Some(kept);
        series
    };
    let analysed =
        crate::analysis::study::analyse(vec![replay_search("old", 2.5), replay_search("new", 5.5)])
            .series;
    // Their levels at set speeds reach only 1x: the searches went further.
    let open_loop = [replay("old", 3.0, &[1.0]), replay("new", 6.0, &[1.0])];
    let answered = answer(&analysed, &open_loop, &compared(false));
    let migration = answered.migration.as_ref().unwrap();
    assert_eq!(
        (migration.kept_speed, migration.baseline_kept_speed),
        (Some(5.5), Some(2.5))
    );
    assert!(
        (answered.sentence).starts_with("new keeps the captured workload up to 5.5x (old: 2.5x)"),
        "{}",
        answered.sentence
    );
}
