//! The document's types moved from the workloads into `result` (issue 76): documents written
//! before read back and write out field for field as they were.

use super::RunDocument;

#[test]
fn documents_written_before_read_and_write_the_same_fields() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut read = 0;
    for file in [
        "engines/pg.json",
        "engines/pg-again.json",
        "engines/mariadb.json",
        "import/corescale-tpcc-2w.json",
        "run/search-one-at-a-time.json",
        "run/search-four-sessions.json",
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let written: serde_json::Value = serde_json::from_str(&text).unwrap();
        let document: RunDocument = serde_json::from_str(&text).unwrap();
        let again = serde_json::to_value(&document).unwrap();
        assert_eq!(again["workload"], written["workload"], "{file}");
        let levels = written["levels"].as_array().unwrap();
        for (index, level) in levels.iter().enumerate() {
            for field in ["connections", "instances", "workload_figures"] {
                assert_eq!(
                    again["levels"][index][field], level[field],
                    "{file} levels[{index}].{field}"
                );
            }
        }
        read += 1;
    }
    assert_eq!(read, 6);
}
