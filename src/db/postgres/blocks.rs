//! The blocks a workload's statement visits, by EXPLAIN (ANALYZE, BUFFERS) of it with its
//! sessions' settings set and its values bound, in transactions rolled back.

use super::*;
use crate::db::{BoundValue, SampledStatement};

impl Postgres {
    pub(super) fn blocks_by_explain(&self, statement: &SampledStatement) -> Result<f64> {
        let mut session = self.connect_own()?;
        let mut samples = Vec::new();
        explain_samples(&mut session, statement, &mut samples)
            .map_err(|error| explain(error, &self.target))?;
        // The samples' blocks are published before the first level's baseline is read, not
        // as the session's backend exits, which may be after it.
        let _ = publish_statistics(&mut session);
        mean_of_samples(&samples, "EXPLAIN (ANALYZE, BUFFERS)")
    }
}

/// Bound values as the text the session sends.
fn as_texts(values: &[BoundValue]) -> Vec<String> {
    values.iter().map(ToString::to_string).collect()
}

/// Runs `run` in a transaction rolled back whatever it did; `run`'s own error, if any, is
/// the one to report.
fn rolled_back<T>(
    session: &mut WireSession,
    run: impl FnOnce(&mut WireSession) -> Result<T>,
) -> Result<T> {
    session.simple("BEGIN")?;
    let done = run(session);
    let rolled_back = session.simple("ROLLBACK");
    let done = done?;
    rolled_back?;
    Ok(done)
}

/// Blocks each sample visits, by EXPLAIN (ANALYZE, BUFFERS) in a transaction that is rolled
/// back: a change changes no row.
fn explain_samples(
    session: &mut WireSession,
    statement: &SampledStatement,
    samples: &mut Vec<f64>,
) -> Result<()> {
    if let Some(settings) = statement.settings {
        session.simple(settings)?;
    }
    if let Some(values) = statement.every_page {
        let texts = as_texts(values);
        let values: Vec<&str> = texts.iter().map(String::as_str).collect();
        rolled_back(session, |session| session.query(statement.sql, &values))?;
    }
    let explained = format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {}", statement.sql);
    // A change's first touch of a page VACUUM marked all-visible also clears its bit in the
    // visibility map, one more block per page (263 blocks against 200 for 64 keys here), and
    // only once: the level's updates pay it once per page, then never again. So a change is
    // sampled twice and counted the second time (the first one's rollback keeps the bits
    // cleared), which is what a level's changes cost (a sample taken once made README's
    // `--update-pct 20%` example count 0.88x the client's blocks).
    let passes = if statement.changes { 2 } else { 1 };
    for values in statement.samples {
        let texts = as_texts(values);
        let values: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut blocks = 0.0;
        for _ in 0..passes {
            let plan = rolled_back(session, |session| {
                session.query_value::<String>(&explained, &values)
            })?;
            let plan: serde_json::Value =
                serde_json::from_str(&plan).context("reading EXPLAIN's JSON plan")?;
            let top = &plan[0]["Plan"];
            blocks = top["Shared Hit Blocks"].as_f64().unwrap_or(0.0)
                + top["Shared Read Blocks"].as_f64().unwrap_or(0.0);
        }
        samples.push(blocks);
    }
    Ok(())
}
