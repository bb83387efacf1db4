//! What a merged campaign must be, checked from its parts' own documents: per level, the
//! merged statements are the sum of the parts', the merged p99 is the p99 of one histogram
//! holding every part's recorded times, and where the parts' levels started more than twice
//! their recorded clock bound apart (by the database server's clock), `report` says so.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use serde_json::Value;

/// `db setup` of `schemas` tables of `rows` rows in the campaign's database.
pub fn set_up_tables(url: &str, schemas: u32, rows: u32) {
    super::corescale()
        .args(["db", "setup", "--target", url])
        .args([
            "--schemas",
            &schemas.to_string(),
            "--scale",
            &rows.to_string(),
        ])
        .assert()
        .success();
}

/// `report`'s analysis of these files or folders, written in `dir`. Disturbed levels are kept:
/// the parts of a campaign on one host no longer disturb each other, but the other tests of
/// the suite run beside them.
pub fn merged_analysis(inputs: &[std::path::PathBuf], dir: &std::path::Path) -> Value {
    let analysis = dir.join("analysis.json");
    super::corescale()
        .arg("report")
        .args(inputs)
        .args(["-q", "--include-disturbed", "--json"])
        .arg(&analysis)
        .assert()
        .success();
    super::read_json(&analysis)
}

/// A level's response histogram, decoded from its document.
pub fn histogram(level: &Value) -> Histogram<u64> {
    let text = level["latency"]["histogram"]
        .as_str()
        .unwrap_or_else(|| panic!("no histogram in {}", level["latency"]));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap();
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .unwrap()
}

/// Each part's level of `sessions` campaign sessions, closed or open loop.
fn levels_at(parts: &[Value], sessions: u64, open_loop: bool) -> Vec<&Value> {
    parts
        .iter()
        .map(|part| {
            part["levels"]
                .as_array()
                .unwrap()
                .iter()
                .find(|level| {
                    level["campaign"]["workers"].as_u64() == Some(sessions)
                        && level["latency"]["rate"].is_null() != open_loop
                })
                .unwrap_or_else(|| {
                    panic!("a part has no level of {sessions} sessions (open loop: {open_loop})")
                })
        })
        .collect()
}

/// One histogram holding every part's recorded times at a level.
fn all_times(at_level: &[&Value]) -> Histogram<u64> {
    let mut all = histogram(at_level[0]);
    for level in &at_level[1..] {
        all.add(histogram(level)).unwrap();
    }
    all
}

/// Checks the merged series `name` of `analysis` against the parts' documents, for every
/// level all the parts have; returns the campaign sessions of the levels checked.
pub fn check_merged(parts: &[Value], analysis: &Value, name: &str) -> Vec<u64> {
    let series = analysis["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|series| series["series"]["name"] == name)
        .unwrap_or_else(|| panic!("no series {name} in {}", analysis["series"]));
    let mut checked = Vec::new();
    for merged in series["levels"].as_array().unwrap() {
        let sessions = merged["workers"].as_u64().unwrap();
        let at_level = levels_at(parts, sessions, false);
        let statements: f64 = at_level
            .iter()
            .map(|level| level["workload_figures"]["statements"].as_f64().unwrap())
            .sum();
        assert_eq!(merged["figures"]["statements"].as_f64(), Some(statements));
        // The per-client view: each part's own sessions and statements/s, as it recorded them.
        let point = series["series"]["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|point| point["workers"].as_u64() == Some(sessions))
            .unwrap();
        let own: Vec<(u64, f64)> = point["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|part| {
                (
                    part["sessions"].as_u64().unwrap(),
                    part["statements_per_s"].as_f64().unwrap(),
                )
            })
            .collect();
        let recorded: Vec<(u64, f64)> = at_level
            .iter()
            .map(|level| {
                (
                    level["workers"].as_u64().unwrap(),
                    level["workload_figures"]["statements"].as_f64().unwrap()
                        / level["elapsed_s"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(own.len(), recorded.len());
        for ((sessions, rate), (recorded_sessions, recorded_rate)) in own.iter().zip(&recorded) {
            assert_eq!(
                sessions, recorded_sessions,
                "each part's sessions, in part order"
            );
            assert!(
                (rate - recorded_rate).abs() <= 1e-9 * recorded_rate,
                "{own:?} against the parts' own {recorded:?}"
            );
        }
        let all = all_times(&at_level);
        let p99 = all.value_at_quantile(0.99) as f64 / 1e6;
        assert_eq!(
            merged["latency"]["p99_ms"].as_f64(),
            Some(p99),
            "the merged p99 is the p99 of all the parts' times"
        );
        // Each part's start by the server's clock: its own start plus the server's lead.
        let starts: Vec<f64> = at_level
            .iter()
            .map(|level| {
                let started =
                    chrono::DateTime::parse_from_rfc3339(level["started_at"].as_str().unwrap())
                        .unwrap();
                started.timestamp_micros() as f64 / 1e3
                    + level["campaign"]["clock_offset_ms"].as_f64().unwrap()
            })
            .collect();
        let spread = starts.iter().copied().fold(f64::MIN, f64::max)
            - starts.iter().copied().fold(f64::MAX, f64::min);
        let bound = parts[0]["campaign"]["max_clock_offset_ms"]
            .as_f64()
            .unwrap();
        // A busy client host may start its part late; `report` says so where the parts
        // started more than twice the clock bound apart, and only there.
        let noted = analysis["warnings"]
            .to_string()
            .contains(&format!("at {sessions} sessions: the parts started"));
        assert_eq!(
            spread > 2.0 * bound,
            noted,
            "the parts started {spread} ms apart at {sessions} sessions (clock bound {bound} ms): {}",
            analysis["warnings"]
        );
        checked.push(sessions);
    }
    checked
}

/// Checks the merged open-loop levels of series `name` against the parts' documents: each
/// merged level sent the sum of the parts' rates and its p99 is that of all their responses;
/// returns the campaign sessions of the levels checked.
pub fn check_merged_open_loop(parts: &[Value], analysis: &Value, name: &str) -> Vec<u64> {
    let open = analysis["open_loop"]
        .as_array()
        .unwrap()
        .iter()
        .find(|open| open["series"] == name)
        .unwrap_or_else(|| panic!("no open-loop levels of {name} in {}", analysis["open_loop"]));
    let mut checked = Vec::new();
    for merged in open["levels"].as_array().unwrap() {
        let sessions = merged["workers"].as_u64().unwrap();
        let at_level = levels_at(parts, sessions, true);
        let sent: f64 = at_level
            .iter()
            .map(|level| level["latency"]["rate"]["achieved_per_s"].as_f64().unwrap())
            .sum();
        let merged_sent = merged["sent_per_s"].as_f64().unwrap();
        assert!(
            (merged_sent - sent).abs() <= 1e-9 * sent,
            "{merged_sent} against {sent}"
        );
        let all = all_times(&at_level);
        assert_eq!(merged["latency"]["count"].as_u64(), Some(all.len()));
        assert_eq!(
            merged["latency"]["p99_ms"].as_f64(),
            Some(all.value_at_quantile(0.99) as f64 / 1e6),
            "the merged p99 is the p99 of all the parts' times"
        );
        checked.push(sessions);
    }
    checked
}
