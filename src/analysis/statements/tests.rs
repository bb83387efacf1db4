use super::*;
use std::time::Duration;

/// `count` answers spread evenly over [0.9, 1.1] × `ms`, encoded as a level's class.
pub(crate) fn answers(ms: f64, count: u32) -> String {
    let mut times = ResponseTimes::per_statement();
    for k in 0..count {
        let spread = 0.9 + 0.2 * f64::from(k) / f64::from(count);
        times.record(Duration::from_secs_f64(ms * spread / 1e3));
    }
    times.encode()
}

#[test]
fn a_change_is_called_only_beyond_the_band_and_the_grain() {
    let judged = |before: f64, after: f64, count: u32| {
        change(
            "fingerprint-1",
            String::new(),
            &answers(before, count),
            &answers(after, count),
        )
        .unwrap()
        .verdict
    };
    assert_eq!(judged(1.0, 3.0, 2000), StatementVerdict::Regressed);
    assert_eq!(judged(3.0, 1.0, 2000), StatementVerdict::Improved);
    // 10% slower: inside the band of 1.2.
    assert_eq!(judged(1.0, 1.1, 2000), StatementVerdict::Unchanged);
    // Twice as slow, but 0.05 ms: under a timer's grain.
    assert_eq!(judged(0.05, 0.1, 2000), StatementVerdict::Unchanged);
    // Three answers bound neither percentile.
    assert_eq!(judged(1.0, 3.0, 3), StatementVerdict::TooFew);
}

#[test]
fn the_workload_s_change_weighs_each_statement_by_its_time() {
    // A statement of 3/4 of the time twice as slow, the other unchanged: 1.75x.
    let mut statements = vec![
        change(
            "fingerprint-1",
            String::new(),
            &answers(3.0, 1000),
            &answers(6.0, 1000),
        )
        .unwrap(),
        change(
            "fingerprint-2",
            String::new(),
            &answers(1.0, 1000),
            &answers(1.0, 1000),
        )
        .unwrap(),
    ];
    let change = weigh(&mut statements).unwrap();
    assert!((change - 0.75).abs() < 0.02, "{change}");
    assert!((statements[0].share_of_time - 0.75).abs() < 0.01);
}

#[test]
fn the_change_s_interval_narrows_with_answers_and_says_the_noise() {
    let interval = |count: u32| {
        let mut statements = vec![
            change(
                "fingerprint-1",
                String::new(),
                &answers(3.0, count),
                &answers(6.0, count),
            )
            .unwrap(),
            change(
                "fingerprint-2",
                String::new(),
                &answers(1.0, count),
                &answers(1.0, count),
            )
            .unwrap(),
        ];
        let change = weigh(&mut statements).unwrap();
        (change, weighted_interval(&statements, change).unwrap())
    };
    let (change, [low, high]) = interval(1000);
    assert!(
        low < change && change < high && high - low < 0.03,
        "{low} {change} {high}"
    );
    let (_, [few_low, few_high]) = interval(100);
    let widened = (few_high - few_low) / (high - low);
    assert!((widened - 10_f64.sqrt()).abs() < 0.5, "{widened}");
    let said = |change: f64, interval: [f64; 2]| {
        StatementComparison {
            baseline: "old".into(),
            candidate: "new".into(),
            speed: 1.0,
            statements: Vec::new(),
            weighted_change: Some(change),
            weighted_interval: Some(interval),
            disturbed: false,
            against_log: false,
            errors: Vec::new(),
            sessions_with_errors: None,
            rows_matched: None,
        }
        .change_said()
        .unwrap()
    };
    assert_eq!(said(-0.31, [-0.36, -0.26]), "31% faster [26, 36]");
    assert_eq!(
        said(0.02, [-0.01, 0.05]),
        "within the noise: 2% slower [-1, 5]"
    );
}

#[test]
fn a_replay_alone_is_compared_at_1x_with_its_capture_s_logged_durations() {
    let class = |name: &str, ms: f64| crate::latency::ClassTimes {
        class: name.to_string(),
        measured_from: Some(crate::latency::MeasuredFrom::Send),
        histogram: answers(ms, 2000),
    };
    let mut alone = crate::analysis::latency::tests::replay("new", 5.0, &[1.0, 2.0]);
    for level in &mut alone.levels {
        level.classes = vec![class("fingerprint-1", 3.0), class("fingerprint-2", 1.0)];
        level.logged = vec![class("fingerprint-1", 1.0), class("fingerprint-2", 1.0)];
    }
    let compared = compare(std::slice::from_ref(&alone));
    assert_eq!(compared.len(), 1, "at 1x only");
    assert!(compared[0].against_log);
    assert_eq!(compared[0].speed, 1.0);
    let verdicts: Vec<StatementVerdict> = compared[0]
        .statements
        .iter()
        .map(|one| one.verdict)
        .collect();
    assert_eq!(
        verdicts,
        [StatementVerdict::Regressed, StatementVerdict::Unchanged]
    );
    let said = compared[0].sentence();
    assert!(
        said.starts_with("new against the captured log's durations (the server's alone; a replay's answers add the round trip), at 1x: 1 of 2 statements regressed"),
        "{said}"
    );
    // A second replay of the capture: the two are compared, not each with the log.
    let mut again = alone.clone();
    again.series = "again".into();
    let pair = compare(&[alone, again]);
    assert!(pair.iter().all(|one| !one.against_log), "{pair:?}");
}

#[test]
fn errors_are_compared_by_sqlstate_with_the_sessions_that_had_them() {
    let level = |pairs: &[(&str, f64)]| -> Figures {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), *value))
            .collect()
    };
    let before = level(&[
        ("failures SQLSTATE 40001", 2.0),
        ("sessions_with_errors", 1.0),
    ]);
    let after = level(&[
        ("failures SQLSTATE 40001", 2.0),
        ("failures SQLSTATE 23505", 3.0),
        ("sessions_with_errors", 2.0),
    ]);
    let mut comparison = StatementComparison::of(
        ("old", "new"),
        1.0,
        vec![
            change(
                "fingerprint-1",
                String::new(),
                &answers(1.0, 100),
                &answers(1.0, 100),
            )
            .unwrap(),
        ],
        false,
    )
    .unwrap();
    comparison.errors = errors_compared(&before, &after);
    comparison.sessions_with_errors = sessions_with_errors(&before, &after);
    assert_eq!(
        comparison.errors_said(),
        "; errors differ: SQLSTATE 23505 3 against 0 (in 2 sessions against 1)"
    );
    comparison.errors = errors_compared(&before, &before);
    assert_eq!(
        comparison.errors_said(),
        "; the same errors in both (SQLSTATE 40001: 2)"
    );
    comparison.errors = errors_compared(&Figures::new(), &Figures::new());
    assert_eq!(comparison.errors_said(), "");
}

fn figures(class: u32, rows: f64, failed: f64, checksum: f64, count: f64) -> Figures {
    [
        ("rows", rows),
        ("failed", failed),
        ("rows_checksum", checksum),
        ("count", count),
    ]
    .into_iter()
    .map(|(name, value)| (format!("fingerprint {class} {name}"), value))
    .collect()
}

#[test]
fn rows_match_only_when_sums_refusals_and_order_all_agree() {
    let of = |after: &Figures| {
        RowsCompared::of("fingerprint-2", &figures(2, 40.0, 1.0, 7.0, 19.0), after)
    };
    assert!(of(&figures(2, 40.0, 1.0, 7.0, 19.0)).unwrap().matched);
    // The same sum in another order: the checksum tells.
    assert!(!of(&figures(2, 40.0, 1.0, 8.0, 19.0)).unwrap().matched);
    // One row fewer; one more refusal (and one fewer answered).
    assert!(!of(&figures(2, 39.0, 1.0, 7.0, 19.0)).unwrap().matched);
    assert!(!of(&figures(2, 40.0, 2.0, 7.0, 18.0)).unwrap().matched);
    // A level that answered fewer statements is not compared, nor one without rows.
    assert_eq!(of(&figures(2, 38.0, 1.0, 7.0, 18.0)), None);
    assert_eq!(of(&figures(3, 40.0, 1.0, 7.0, 19.0)), None);
}

#[test]
fn the_sentence_names_the_statements_whose_rows_differ_and_the_share_that_matched() {
    let mut statements: Vec<StatementChange> = [(1, 300, true), (2, 100, false)]
        .into_iter()
        .map(|(class, answers, matched)| {
            let mut one = change(
                &format!("fingerprint-{class}"),
                format!("SELECT {class}"),
                &answers_n(answers),
                &answers_n(answers),
            )
            .unwrap();
            one.rows = Some(rows(10, if matched { 10 } else { 9 }));
            one
        })
        .collect();
    let weighted_change = weigh(&mut statements);
    let comparison = StatementComparison {
        baseline: "old".into(),
        candidate: "new".into(),
        speed: 1.0,
        weighted_change,
        weighted_interval: None,
        disturbed: false,
        against_log: false,
        errors: Vec::new(),
        sessions_with_errors: None,
        rows_matched: rows_matched(&statements),
        statements,
    };
    assert_eq!(comparison.rows_matched, Some(0.75));
    let said = comparison.sentence();
    assert!(
        said.contains("; rows or outcome differ for 1 of the 2 statements compared (25% of the statements sent are theirs), the first fingerprint-2 (SELECT 2): 9 rows and 0 refused against 10 and 0"),
        "{said}"
    );
}

fn answers_n(count: u32) -> String {
    answers(1.0, count)
}

/// Rows compared without refusals: matched when the counts are equal.
pub(crate) fn rows(baseline: u64, candidate: u64) -> RowsCompared {
    RowsCompared {
        baseline_rows: baseline,
        candidate_rows: candidate,
        baseline_failed: 0,
        candidate_failed: 0,
        matched: baseline == candidate,
    }
}

/// `count` answers as `answers` gives them, the last 3% of them `tail_ms` long.
fn with_a_tail(ms: f64, tail_ms: f64, count: u32) -> String {
    let mut times = ResponseTimes::per_statement();
    for k in 0..count {
        let spread = 0.9 + 0.2 * f64::from(k) / f64::from(count);
        let tail = f64::from(k) >= 0.97 * f64::from(count);
        let ms = if tail { tail_ms } else { ms * spread };
        times.record(Duration::from_secs_f64(ms / 1e3));
    }
    times.encode()
}

#[test]
fn a_disturbed_pair_is_judged_by_p50_alone() {
    let tail_only = || {
        change(
            "fingerprint-1",
            "SELECT 1".into(),
            &answers(1.0, 3000),
            &with_a_tail(1.0, 8.0, 3000),
        )
        .unwrap()
    };
    let judged = |disturbed| {
        StatementComparison::of(("old", "new"), 1.0, vec![tail_only()], disturbed).unwrap()
    };
    let quiet = judged(false);
    assert_eq!(quiet.statements[0].verdict, StatementVerdict::Regressed);
    assert_eq!(quiet.worst_regression().unwrap().1, "p99");
    // The same answers, a level disturbed: the tail a stall made is not the server's.
    let disturbed = judged(true);
    assert_eq!(disturbed.statements[0].verdict, StatementVerdict::Unchanged);
    assert_eq!(
        disturbed.statements[0].p99.unwrap().verdict,
        StatementVerdict::Regressed,
        "p99's own figure is kept for the table"
    );
    assert!(disturbed.worst_regression().is_none());
    let said = disturbed.sentence();
    assert!(
        said.contains("0 of 1 statements regressed")
            && said.contains("the verdicts are p50's alone"),
        "{said}"
    );
}
