//! Any bytes, as a file `report` might be given: an error, or an analysis whose capacities
//! are finite and positive and whose text outputs render. Run with
//! `cargo +nightly fuzz run importers` (README, "Fuzzing").
#![no_main]

use std::path::Path;

use corescale::analysis::study::analyse;
use corescale::report::{analysis_text, markdown};
use corescale::analysis::input::parse_series;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    for name in ["input.csv", "input.json"] {
        let Ok(series) = parse_series(Path::new(name), bytes) else {
            continue;
        };
        let analysis = analyse(vec![series]);
        for level in &analysis.series[0].levels {
            assert!(level.capacity.is_finite() && level.capacity > 0.0);
            assert!(level.speedup.is_finite() && level.speedup > 0.0);
        }
        let text = analysis_text::render(&analysis) + &markdown::render(&analysis);
        assert!(!text.contains("NaN"));
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
    }
});
