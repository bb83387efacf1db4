//! The answer from searches (`run --find`): each run's largest rate at its objective, and for
//! two runs searched at one objective, how much of one's rate the other holds. A search ends
//! with a bracket (the largest rate kept, the smallest broken), so the ratio of two is an
//! interval: from the one's kept over the other's broken rate to its broken over the other's
//! kept. It is finer than any sweep at the objective, and replaces that answer.

use super::model::{Answer, SeriesAnalysis};
use crate::format::significant;
use crate::result::search::SearchRecord;

/// Each searched series' sentence: "server: holds p99 <= 5 ms up to 12.3 K transactions/s
/// (...)".
pub(crate) fn findings(series: &[SeriesAnalysis]) -> Vec<String> {
    series
        .iter()
        .filter_map(|one| {
            let search = one.series.search.as_ref()?;
            let mut sentence = format!("{}: {}", one.name(), search.sentence());
            let disturbed = disturbed(one, true);
            if !disturbed.is_empty() {
                sentence.push_str(&format!("; {disturbed}"));
            }
            Some(sentence + ".")
        })
        .collect()
}

/// "3 of its 7 probes were disturbed ..." where the run judged some so; with `ends_said`,
/// only when more than the bracket's ends were, which the search's own sentence says.
fn disturbed(series: &SeriesAnalysis, ends_said: bool) -> String {
    let Some(search) = series.series.search.as_ref() else {
        return String::new();
    };
    let (kept, broken) = search.bracket();
    let said = [kept, broken]
        .into_iter()
        .flatten()
        .filter(|probe| ends_said && probe.disturbed)
        .count();
    match series.series.search_disturbed {
        count if count <= said => String::new(),
        count => format!(
            "{count} of its {} probes were disturbed (other processes took the CPUs): measure again on an idle host",
            search.probes.len()
        ),
    }
}

/// A bracket's two ends and its middle (their geometric mean), when the search found both.
fn bracket(search: &SearchRecord) -> Option<(f64, f64, f64)> {
    let (kept, broken) = search.bracket();
    let (kept, broken) = (kept?.rate_per_s, broken?.rate_per_s);
    (kept > 0.0 && broken >= kept).then(|| (kept, broken, (kept * broken).sqrt()))
}

/// The answer when exactly two series were searched at the same objectives in the same unit:
/// the one counted against is a cluster (the series with nodes) or else the first given.
pub(crate) fn answer(series: &[SeriesAnalysis]) -> Option<Answer> {
    let searched: Vec<&SeriesAnalysis> = (series.iter())
        .filter(|one| one.series.search.is_some())
        .collect();
    let [first, second] = searched[..] else {
        return None;
    };
    let (server, against) = match (first.series.nodes, second.series.nodes) {
        (None, Some(_)) => (first, second),
        _ => (second, first),
    };
    let (ours, theirs) = (
        server.series.search.as_ref()?,
        against.series.search.as_ref()?,
    );
    if ours.objectives != theirs.objectives || ours.unit != theirs.unit {
        return None;
    }
    let objective = ours.objectives.join(" and ");
    let nodes = against
        .series
        .nodes
        .filter(|_| server.series.nodes.is_none());
    let mut answer = Answer {
        sentence: String::new(),
        server: server.name().to_string(),
        against: against.name().to_string(),
        nodes,
        equivalent: None,
        uncertainty: None,
        bound: None,
        objective: Some(objective.clone()),
        server_workers: None,
        against_workers: None,
        why_not: None,
        migration: None,
    };
    let (Some(ours_bracket), Some(theirs_bracket)) = (bracket(ours), bracket(theirs)) else {
        let why = "a search that kept or broke every rate it tried has no bracket to compare";
        answer.sentence = format!(
            "{} against {} at {objective} cannot be said: {why} (widen the search: a lower or higher first rate, or more --max-time)",
            answer.server, answer.against
        );
        answer.why_not = Some(why.to_string());
        return Some(answer);
    };
    let ratio = ours_bracket.2 / theirs_bracket.2;
    let (low, high) = (
        ours_bracket.0 / theirs_bracket.1,
        ours_bracket.1 / theirs_bracket.0,
    );
    let scale = nodes.map_or(1.0, |nodes| nodes as f64);
    answer.equivalent = Some(ratio * scale);
    let interval = |scale: f64, times: &str| {
        format!(
            "{}{times} [{}, {}]",
            significant(ratio * scale),
            significant(low * scale),
            significant(high * scale)
        )
    };
    answer.sentence = format!(
        "{} holds {} {}'s rate at {objective}, from the two searches' brackets ({} kept {} and broke it at {} {}; {} {} and {})",
        answer.server,
        interval(1.0, "x"),
        answer.against,
        answer.server,
        significant(ours_bracket.0),
        significant(ours_bracket.1),
        ours.unit,
        answer.against,
        significant(theirs_bracket.0),
        significant(theirs_bracket.1),
    );
    if let Some(nodes) = nodes {
        answer.sentence.push_str(&format!(
            ": it replaces {} of {}'s {nodes} nodes",
            interval(scale, ""),
            answer.against
        ));
    }
    for side in [server, against] {
        let disturbed = disturbed(side, false);
        if !disturbed.is_empty() {
            answer
                .sentence
                .push_str(&format!("; {}: {disturbed}", side.name()));
        }
    }
    answer.sentence.push('.');
    Some(answer)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::latency::{PercentileInterval, Verdict};
    use crate::result::search::{ObjectiveCheck, ProbeRecord, SearchStop};

    /// A probe at `rate` whose p99 was `p99_ms` (a narrow interval around it), judged
    /// against 5 ms.
    pub(crate) fn probe(rate: f64, p99_ms: f64) -> ProbeRecord {
        let verdict = if p99_ms <= 5.0 {
            Verdict::Kept
        } else {
            Verdict::Broken
        };
        ProbeRecord {
            rate_per_s: rate,
            achieved_per_s: rate,
            kept_up: true,
            sessions: 8,
            sessions_busy: false,
            disturbed: false,
            objectives: vec![ObjectiveCheck {
                objective: "p99 <= 5 ms".into(),
                limit_ms: 5.0,
                interval: Some(PercentileInterval {
                    responses: 10_000,
                    estimate_ms: p99_ms,
                    lower_ms: p99_ms * 0.95,
                    upper_ms: Some(p99_ms * 1.05),
                }),
                verdict,
            }],
            verdict,
            spent_s: 20.0,
            level: None,
        }
    }

    pub(crate) fn searched(
        name: &str,
        probes: Vec<ProbeRecord>,
        nodes: Option<usize>,
    ) -> crate::analysis::series::Series {
        let mut series =
            crate::analysis::synthetic::rate_series(|n| 1000.0 * n, &[8], 0.0, 1, None);
        series.name = name.into();
        series.nodes = nodes;
        series.search = Some(SearchRecord {
            objectives: vec!["p99 <= 5 ms".into()],
            unit: "transactions/s".into(),
            capacity_per_s: Some(8000.0),
            probes,
            kept_rate: None,
            broken_rate: None,
            precision: 0.05,
            precision_reached: true,
            spent_s: 100.0,
            max_time_s: 600.0,
            stopped: SearchStop::Precision,
            answer: String::new(),
        });
        series
    }

    #[test]
    fn two_searches_give_the_ratio_of_their_brackets_in_the_cluster_s_nodes() {
        // The cluster of 2 nodes kept 1000/s and broke at 1050/s; the server 1600 and 1680.
        let cluster = searched(
            "cluster",
            vec![probe(800.0, 2.0), probe(1000.0, 4.0), probe(1050.0, 6.0)],
            Some(2),
        );
        let server = searched("server", vec![probe(1600.0, 4.5), probe(1680.0, 5.5)], None);
        let analysis = crate::analysis::study::analyse(vec![cluster, server]);
        let answer = analysis.answer.unwrap();
        assert_eq!(
            (answer.server.as_str(), answer.against.as_str()),
            ("server", "cluster")
        );
        // Middle: sqrt(1600 * 1680) / sqrt(1000 * 1050); ends: 1600 / 1050 and 1680 / 1000.
        let ratio = (1600.0f64 * 1680.0).sqrt() / (1000.0f64 * 1050.0).sqrt();
        assert!((answer.equivalent.unwrap() - 2.0 * ratio).abs() < 1e-9);
        let expected = format!(
            "server holds {}x [{}, {}] cluster's rate at p99 <= 5 ms",
            significant(ratio),
            significant(1600.0 / 1050.0),
            significant(1680.0 / 1000.0)
        );
        assert!(
            answer.sentence.starts_with(&expected),
            "{}",
            answer.sentence
        );
        assert!(
            answer.sentence.ends_with(&format!(
                "it replaces {} [{}, {}] of cluster's 2 nodes.",
                significant(2.0 * ratio),
                significant(2.0 * 1600.0 / 1050.0),
                significant(2.0 * 1680.0 / 1000.0)
            )),
            "{}",
            answer.sentence
        );
        // Each search is said on its own too.
        assert!(
            (analysis.findings.iter())
                .any(|finding| finding.starts_with("cluster: holds p99 <= 5 ms up to")),
            "{:?}",
            analysis.findings
        );
    }

    #[test]
    fn a_search_without_a_bracket_cannot_be_compared_and_says_why() {
        let kept_all = searched("a", vec![probe(100.0, 1.0), probe(200.0, 2.0)], None);
        let bracketed = searched("b", vec![probe(100.0, 1.0), probe(110.0, 9.0)], None);
        let answer = crate::analysis::study::analyse(vec![kept_all, bracketed])
            .answer
            .unwrap();
        assert_eq!(answer.equivalent, None);
        assert!(
            answer.sentence.contains("cannot be said"),
            "{}",
            answer.sentence
        );
        // Different objectives are not compared by their searches.
        let mut other = searched("c", vec![probe(100.0, 1.0), probe(110.0, 9.0)], None);
        other.search.as_mut().unwrap().objectives = vec!["p90 <= 5 ms".into()];
        let mine = searched("d", vec![probe(100.0, 1.0), probe(110.0, 9.0)], None);
        let analysis = crate::analysis::study::analyse(vec![other, mine]);
        assert!(
            analysis
                .answer
                .as_ref()
                .is_none_or(|answer| !answer.sentence.contains("searches")),
            "{:?}",
            analysis.answer
        );
    }

    /// Disturbed ends are said once, by the search's sentence, in the plural for both; a
    /// disturbed probe inside the bracket is counted by the report.
    #[test]
    fn disturbed_probes_are_said_once() {
        let disturbed = |mut probe: ProbeRecord| {
            probe.disturbed = true;
            probe
        };
        let mut ends = searched(
            "ends",
            vec![disturbed(probe(1000.0, 4.0)), disturbed(probe(1050.0, 6.0))],
            None,
        );
        ends.search_disturbed = 2;
        let said = findings(&crate::analysis::study::analyse(vec![ends]).series).join(" ");
        assert!(
            said.contains("; the probes at 1.00 K and at 1.05 K were disturbed twice"),
            "{said}"
        );
        assert!(!said.contains("probes were disturbed"), "{said}");
        let mut inside = searched(
            "inside",
            vec![
                disturbed(probe(500.0, 1.0)),
                probe(1000.0, 4.0),
                probe(1050.0, 6.0),
            ],
            None,
        );
        inside.search_disturbed = 1;
        let said = findings(&crate::analysis::study::analyse(vec![inside]).series).join(" ");
        assert!(!said.contains("disturbed twice"), "{said}");
        assert!(said.contains("1 of its 3 probes were disturbed"), "{said}");
    }
}
