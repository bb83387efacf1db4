//! Any bytes, as a file `report` might be given: an error, or an analysis whose capacities
//! are finite and positive and whose text outputs render. `.ci/run` builds it and runs it for
//! 60 s from the inputs in `fuzz/inputs/importers` and `tests/fixtures/import`; by hand: `cargo +nightly fuzz run importers`.
#![no_main]

use std::path::Path;

use corescale::analysis::input::parse_all;
use corescale::analysis::study::analyse;
use corescale::report::{analysis_text, html, markdown};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    // A number in the name gives a level to the files that state none (AWR, Statspack).
    for name in ["input.csv", "input.json", "awr.4.txt"] {
        let Ok(read) = parse_all(Path::new(name), bytes) else {
            continue;
        };
        // As `report` does by default: a series of disturbed levels only (or of levels run
        // to a schedule) is not analysed.
        let series: Vec<_> = read
            .into_iter()
            .filter_map(|mut one| one.leave_out_disturbed().then_some(one))
            .collect();
        if series.is_empty() {
            continue;
        }
        let analysis = analyse(series);
        // A series measured at set rates only has no capacity curve, only its open loop.
        for level in analysis.series.iter().flat_map(|series| &series.levels) {
            assert!(level.capacity.is_finite() && level.capacity > 0.0);
            assert!(level.speedup.is_finite() && level.speedup > 0.0);
        }
        for level in analysis.open_loop.iter().flat_map(|open| &open.levels) {
            assert!(level.asked_per_s.is_finite() && level.asked_per_s > 0.0);
            assert!(level.sent_per_s.is_finite() && level.sent_per_s >= 0.0);
        }
        let text = analysis_text::render(&analysis, false, false)
            + &analysis_text::render(&analysis, true, true)
            + &markdown::render(&analysis, None);
        assert!(!text.contains("NaN"));
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
        // The page draws every figure: no value may make an axis loop.
        let page = html::render(&analysis).expect("the page renders");
        assert!(!page.contains("NaN"));
    }
});
