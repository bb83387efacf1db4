//! Every Oracle-facing command on a host without Oracle's client library (this one: no
//! Instant Client, no Oracle database can run here): exit 1 and one line naming what is
//! missing and how to provide it, before anything else is done. Oracle itself is not tested.

use crate::common;

use common::{corescale, read_json};

const TARGET: &str = "oracle://scott@db.example:1521/orclpdb1";

/// Whether this host has the client library (then these errors cannot be seen here).
fn client_found() -> bool {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("version.json");
    let output = corescale().args(["version", "--json"]).output().unwrap();
    std::fs::write(&json, &output.stdout).unwrap();
    let version = read_json(&json);
    assert_eq!(version["features"], serde_json::json!(["oracle"]));
    !version["oracle_client"].is_null()
}

#[test]
fn every_oracle_command_names_the_missing_client_library() {
    if client_found() {
        eprintln!(
            "SKIPPED: this host has Oracle's client library; the error for its absence cannot be seen here"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("one.sql");
    std::fs::write(&script, "SELECT 1 FROM dual;\n").unwrap();
    let script = script.display().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "run",
            "db",
            "--target",
            TARGET,
            "-w",
            "1",
            "--duration",
            "1s",
        ],
        vec![
            "run",
            "script",
            "--target",
            TARGET,
            "--file",
            &script,
            "-w",
            "1",
            "--duration",
            "1s",
        ],
        vec!["db", "setup", "--target", TARGET],
        vec!["db", "teardown", "--target", TARGET],
        vec!["db", "check", "--target", TARGET],
        // A cluster of two instances.
        vec![
            "run",
            "db",
            "--target",
            TARGET,
            "--target",
            "oracle://scott@db2.example:1521/orclpdb1",
            "-w",
            "2",
            "--duration",
            "1s",
        ],
    ];
    for command in commands {
        let output = corescale()
            .args(&command)
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("ORACLE_HOME")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{command:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{command:?}: one line: {stderr}");
        for part in [
            "Oracle's client library could not be loaded",
            "libclntsh",
            "oracle-instantclient-basic",
            "LD_LIBRARY_PATH",
            "ORACLE_HOME",
        ] {
            assert!(lines[0].contains(part), "{command:?}: {part}: {stderr}");
        }
        assert!(
            output.stdout.is_empty(),
            "{command:?}: nothing done before: {}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
    // --version says so; the rest of the binary runs without it.
    corescale()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Oracle client library not found (needed only for oracle:// targets)",
        ));
}
