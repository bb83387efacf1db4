//! `report` of runs that searched the largest rate at an objective (`run --find`): the
//! answer from both searches' brackets first, then each search's probes. The fixtures are
//! real searches made here (tests/fixtures/run/README.md).

use std::path::Path;

use crate::common::{corescale, read_json};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/run")
        .join(name)
}

/// Three significant digits, as the report writes figures between 1 and 10.
fn three(value: f64) -> String {
    assert!((1.0..10.0).contains(&value), "{value}");
    format!("{value:.2}")
}

#[test]
fn two_searches_are_answered_from_their_brackets_and_their_probes_tabled() {
    let (slow, fast) = (
        fixture("search-one-at-a-time.json"),
        fixture("search-four-sessions.json"),
    );
    let bracket = |path: &Path| {
        let search = read_json(path)["search"].clone();
        let (kept, broken) = (
            search["kept_rate"].as_f64().unwrap(),
            search["broken_rate"].as_f64().unwrap(),
        );
        (kept, broken, search["probes"].as_array().unwrap().len())
    };
    let ((slow_kept, slow_broken, slow_probes), (fast_kept, fast_broken, fast_probes)) =
        (bracket(&slow), bracket(&fast));
    let output = corescale()
        .arg("report")
        .arg(&slow)
        .arg(&fast)
        .arg("--include-disturbed")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).replace("\n  ", " ");
    assert!(output.status.success(), "{text}");
    // The later run against the first, the middle of the brackets with both ends.
    let ratio = (fast_kept * fast_broken).sqrt() / (slow_kept * slow_broken).sqrt();
    let expected = format!(
        "Answer: vm (search-four-sessions) holds {}x [{}, {}] vm (search-one-at-a-time)'s rate at p99 <= 50 ms, from the two searches' brackets",
        three(ratio),
        three(fast_kept / slow_broken),
        three(fast_broken / slow_kept)
    );
    assert!(text.starts_with(&expected), "{expected}\n{text}");
    // Made on a busy host: every probe was disturbed, and the answer says so.
    assert!(
        text.contains(&format!(
            "{fast_probes} of its {fast_probes} probes were disturbed"
        )) && text.contains(&format!(
            "{slow_probes} of its {slow_probes} probes were disturbed"
        )),
        "{text}"
    );
    // Each search's probes, one row each, after the answer.
    for (name, probes) in [
        ("one-at-a-time", slow_probes),
        ("four-sessions", fast_probes),
    ] {
        let title = format!("vm (search-{name}): the search's probes, in order");
        let at = text
            .find(&title)
            .unwrap_or_else(|| panic!("{title}\n{text}"));
        let rows = text[at..]
            .lines()
            .skip(3)
            .take_while(|line| !line.trim().is_empty())
            .filter(|line| line.ends_with("kept") || line.ends_with("broken"))
            .count();
        assert_eq!(rows, probes, "{text}");
    }
    // Each search drawn: its probes' p99 against the rate offered, beside the objective.
    let figures = tempfile::tempdir().unwrap();
    corescale()
        .arg("report")
        .arg(&slow)
        .arg(&fast)
        .args(["--include-disturbed", "-q", "--png"])
        .arg(figures.path())
        .assert()
        .success();
    for number in [1, 2] {
        let png = figures.path().join(format!("fig_search_{number}.png"));
        assert!(
            std::fs::metadata(&png).is_ok_and(|meta| meta.len() > 10_000),
            "{png:?}"
        );
    }
}

/// One search is its own answer: the terminal says it first, as the page's headline does,
/// before the tables and again among the findings, rederived from the record's figures.
#[test]
fn a_single_search_is_the_terminal_s_answer() {
    let path = fixture("search-one-at-a-time.json");
    let search = read_json(&path)["search"].clone();
    let output = corescale()
        .arg("report")
        .arg(&path)
        .arg("--include-disturbed")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).replace("\n  ", " ");
    assert!(output.status.success(), "{text}");
    let kept = search["kept_rate"].as_f64().unwrap();
    let broken = search["broken_rate"].as_f64().unwrap();
    let expected = format!(
        "Answer: vm: holds p99 <= 50 ms up to {:.0} transactions/s (kept at {kept:.0}, ",
        (kept * broken).sqrt()
    );
    assert!(text.starts_with(&expected), "{expected}\n{text}");
    let findings = text
        .find("Findings\n- ")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        text[findings..].contains(&expected["Answer: ".len()..]),
        "{text}"
    );
    // The levels the run judged disturbed are still said before any table.
    let disturbed = text.find("Kept though disturbed").unwrap_or(usize::MAX);
    assert!(disturbed < text.find("Series\n").unwrap(), "{text}");
}

#[test]
fn a_search_with_a_forged_rate_is_refused_naming_the_field() {
    let mut document = read_json(&fixture("search-four-sessions.json"));
    document["search"]["probes"][2]["rate_per_s"] = serde_json::json!(-5.0);
    let dir = tempfile::tempdir().unwrap();
    let forged = dir.path().join("forged.json");
    std::fs::write(&forged, document.to_string()).unwrap();
    let output = corescale().arg("report").arg(&forged).output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("search.probes[2].rate_per_s"), "{said}");
}
