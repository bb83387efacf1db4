//! Two replays of one MariaDB slow log compared for their rows: sysbench's oltp_read_only
//! run is captured, then replayed at 1x on its own data twice and on a copy missing one
//! row a point select read. The comparison must name exactly the fingerprints whose logged
//! statements touch that row (the point select, and the ranges over it that return rows;
//! not the range's SUM, one row whatever it sums), and match every statement of the pair on
//! the same data.

use std::collections::BTreeSet;

use mysql::prelude::Queryable;

use crate::common;
use crate::replay::{run_replay, sysbench_in_the_slow_log};

/// sysbench's five statements, told apart as the log and corescale's fingerprints both
/// write them.
fn kind(statement: &str) -> &'static str {
    if statement.contains("SUM(") {
        "sum"
    } else if statement.contains("DISTINCT") {
        "distinct"
    } else if statement.contains("ORDER BY") {
        "order"
    } else if statement.contains("BETWEEN") {
        "range"
    } else {
        "point"
    }
}

/// The row a point select (`SELECT c FROM sbtest1 WHERE id=N;`) read, if the line is one.
fn point_select(line: &str) -> Option<u64> {
    let id = line.strip_prefix("SELECT c FROM sbtest1 WHERE id=")?;
    id.trim_end_matches(';').parse().ok()
}

/// The first row a point select read in the log: the row to delete.
fn a_row_read_by_a_point_select(slow: &str) -> u64 {
    (slow.lines())
        .find_map(point_select)
        .expect("a point select in the slow log")
}

/// The kinds of statement whose answers lose a row without `id`: a point select of it, or
/// a range over it that returns rows (not SUM's one).
fn kinds_that_read(slow: &str, id: u64) -> BTreeSet<&'static str> {
    let touches = |line: &str| {
        if let Some(read) = point_select(line) {
            return read == id;
        }
        let bounds: Vec<u64> = (line.split("BETWEEN ").nth(1).unwrap_or_default())
            .split([' ', ';'])
            .filter_map(|word| word.parse().ok())
            .collect();
        matches!(bounds[..], [low, high, ..] if (low..=high).contains(&id))
    };
    (slow.lines())
        .filter(|line| line.starts_with("SELECT ") && touches(line))
        .map(kind)
        .filter(|kind| *kind != "sum")
        .collect()
}

/// The kinds of statement the comparison of `candidate` found rows differing for, and how
/// many it compared.
fn diverged(analysis: &serde_json::Value, candidate: &str) -> (BTreeSet<&'static str>, usize) {
    let comparison = common::comparison_of(analysis, candidate);
    let sysbench: Vec<&serde_json::Value> = (comparison["statements"].as_array().unwrap())
        .iter()
        .filter(|one| one["text"].as_str().unwrap().contains("sbtest1"))
        .collect();
    for one in &sysbench {
        assert!(one["rows"].is_object(), "rows not compared: {one:#}");
    }
    let kinds = (sysbench.iter())
        .filter(|one| one["rows"]["matched"] == false)
        .map(|one| kind(one["text"].as_str().unwrap()))
        .collect();
    (kinds, sysbench.len())
}

#[test]
#[cfg_attr(
    not(all(corescale_test_mariadbd, corescale_test_sysbench)),
    ignore = "needs mariadbd, mariadb-install-db and sysbench (Debian's packages; see README)"
)]
fn mariadb_a_deleted_row_is_named_for_the_statements_that_read_it() {
    let mut server = sysbench_in_the_slow_log();
    let slow = std::fs::read_to_string(server.path("slow.log")).unwrap();
    let id = a_row_read_by_a_point_select(&slow);
    let mut admin = server.admin();
    for sql in [
        "CREATE DATABASE sbcopy".to_string(),
        "CREATE TABLE sbcopy.sbtest1 LIKE sbtest.sbtest1".into(),
        "INSERT INTO sbcopy.sbtest1 SELECT * FROM sbtest.sbtest1".into(),
        format!("DELETE FROM sbcopy.sbtest1 WHERE id = {id}"),
    ] {
        admin.query_drop(sql).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("slow.capture");
    crate::replay::capture(&server.path("slow.log"), &capture);
    let replays = [
        ("before", "sbtest"),
        ("again", "sbtest"),
        ("deleted", "sbcopy"),
    ]
    .map(|(label, database)| {
        let json = dir.path().join(format!("{label}.json"));
        let target = format!("mysql://root@127.0.0.1:{}/{database}", server.port);
        run_replay(
            &target,
            &capture,
            &["--speed", "1", "--label", label],
            &json,
        );
        json
    });
    let (text, analysis) = common::reported(&replays.each_ref().map(|json| json.as_path()));

    let (kinds, compared) = diverged(&analysis, "again");
    assert!(
        kinds.is_empty() && compared == 5,
        "{kinds:?} of {compared}\n{text}"
    );
    assert!(
        text.contains("again against before, replaying one capture at 1x: ")
            && text.contains("; rows and outcome matched for every statement compared"),
        "{text}"
    );
    // The finding, for the docs (--nocapture).
    if let Some(finding) = text
        .lines()
        .find(|line| line.starts_with("- deleted against before"))
    {
        eprintln!("{finding}");
    }
    let (kinds, compared) = diverged(&analysis, "deleted");
    assert_eq!(compared, 5, "{text}");
    assert_eq!(kinds, kinds_that_read(&slow, id), "row {id}\n{text}");
    assert!(kinds.contains("point"), "{kinds:?}");
    assert!(
        text.contains(&format!(
            "; rows or outcome differ for {} of the ",
            kinds.len()
        )),
        "{text}"
    );
}
