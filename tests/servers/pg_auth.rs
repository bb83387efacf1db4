//! corescale's own PostgreSQL session client authenticates with each password method the
//! server can ask for, and a user without privileges is told what is missing. The shared test
//! server trusts everyone and its test user is a superuser, so this test starts a private
//! cluster from the binaries in CORESCALE_TEST_PG_BINDIR (`.ci/run` sets it) whose pg_hba.conf
//! asks for `password`, `md5` and `scram-sha-256`, one role each, plus a role that may log in
//! but not create tables.

use crate::common;

use common::pg_cluster::PrivateCluster;

use common::{corescale, required};
use predicates::prelude::*;
use predicates::str::contains;

/// Roles, their authentication method and password. The last password holds every
/// character that means something in a URL, and a literal `%2F`.
const ROLES: [(&str, &str, &str); 4] = [
    ("corescale_plain", "password", "plain-Secret-1"),
    ("corescale_md5", "md5", "md5-Secret-2"),
    ("corescale_scram", "scram-sha-256", "scram-Secret-3"),
    (
        "corescale_special",
        "scram-sha-256",
        "Pl+us%2F/sl?q#h&a:c@t 5",
    ),
];

/// A role that may log in but owns no schema and, as PostgreSQL 15 has it, may not create
/// tables in `public`.
const UNPRIVILEGED: (&str, &str) = ("corescale_visitor", "visitor-Secret-4");

/// The private cluster of this file: one role per password method, and one without
/// privileges.
fn start_cluster(bindir: &str) -> PrivateCluster {
    let mut hba = String::new();
    for (role, method, _) in ROLES {
        hba.push_str(&format!("host all {role} 127.0.0.1/32 {method}\n"));
    }
    hba.push_str(&format!(
        "host all {} 127.0.0.1/32 scram-sha-256\n",
        UNPRIVILEGED.0
    ));
    let mut sql = format!(
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC; CREATE ROLE {} LOGIN PASSWORD '{}';",
        UNPRIVILEGED.0, UNPRIVILEGED.1
    );
    for (role, method, password) in ROLES {
        let encryption = if method == "md5" {
            "md5"
        } else {
            "scram-sha-256"
        };
        sql.push_str(&format!(
            "SET password_encryption = '{encryption}'; CREATE ROLE {role} LOGIN PASSWORD '{password}'; CREATE SCHEMA AUTHORIZATION {role};"
        ));
    }
    PrivateCluster::start(bindir, &hba, &[], "", &sql)
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn sessions_authenticate_with_password_md5_and_scram() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let cluster = start_cluster(&bindir);
    let dir = tempfile::tempdir().unwrap();
    for (role, method, password) in ROLES {
        let url = cluster.url(role, password);
        corescale()
            .args(["db", "setup", "--target", &url])
            .args(["--schemas", "1", "--scale", "256"])
            .assert()
            .success();
        let json = dir.path().join(format!("{role}.json"));
        // The workers' sessions are corescale's own protocol client: each one authenticates.
        corescale()
            .args(["run", "db", "--target", &url, "--sweep", "1,2"])
            .args(["--duration", "200ms", "--repeat", "1", "-q", "-o"])
            .arg(&json)
            .assert()
            .success()
            .stderr(contains(password).not());
        let text = std::fs::read_to_string(&json).unwrap();
        assert!(!text.contains(password), "{method}: password stored");
        let document: serde_json::Value = serde_json::from_str(&text).unwrap();
        for level in document["levels"].as_array().unwrap() {
            let statements = level["workload_figures"]["statements"].as_f64().unwrap();
            assert!(statements > 0.0, "{method}: no statements ran");
        }
    }
    // A wrong password is refused with the server's reason and never shown.
    let (role, _, _) = ROLES[2];
    corescale()
        .args(["run", "db", "-w", "1", "--target"])
        .arg(cluster.url(role, "Wrong-Guess-9"))
        .assert()
        .code(1)
        .stderr(contains("password authentication failed"))
        .stderr(contains("Wrong-Guess-9").not());
    // Without a password the user is told where to give one.
    corescale()
        .args(["run", "db", "-w", "1", "--target"])
        .arg(format!(
            "postgres://{role}@127.0.0.1:{}/postgres",
            cluster.port
        ))
        .env_remove("CORESCALE_DB_PASSWORD")
        .assert()
        .code(1)
        .stderr(contains("password"));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn a_user_without_privileges_is_told_what_is_missing() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let cluster = start_cluster(&bindir);
    let (role, password) = UNPRIVILEGED;
    corescale()
        .args(["db", "setup", "--target", &cluster.url(role, password)])
        .args(["--schemas", "1", "--scale", "256"])
        .assert()
        .code(1)
        .stderr(contains("permission denied"))
        .stderr(contains("needs CREATE"))
        .stderr(contains(password).not());
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn passwords_with_url_characters_work_and_never_show() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let cluster = start_cluster(&bindir);
    let (role, _, password) = ROLES[3];
    let bare = format!("postgres://{role}@127.0.0.1:{}/postgres", cluster.port);
    // From the environment, as it is.
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            &bare,
            "--schemas",
            "1",
            "--scale",
            "256",
        ])
        .env("CORESCALE_DB_PASSWORD", password)
        .assert()
        .success();
    // Percent-encoded in the URL: `+` stays `+`, `%2B`-style escapes decode once.
    corescale()
        .args([
            "run",
            "db",
            "-w",
            "1",
            "--duration",
            "200ms",
            "--repeat",
            "1",
            "-q",
        ])
        .arg("--target")
        .arg(cluster.url(role, password))
        .env_remove("CORESCALE_DB_PASSWORD")
        .assert()
        .success()
        .stderr(contains("warning: a password on the command line"))
        .stderr(contains("Pl+us").not());
    // Written raw, the URL does not parse: the error hides everything before the last @.
    let raw = format!(
        "postgres://{role}:{password}@127.0.0.1:{}/postgres",
        cluster.port
    );
    corescale()
        .args(["run", "db", "-w", "1", "--target", &raw])
        .assert()
        .code(2)
        .stderr(contains("Pl+us").not())
        .stderr(contains("sl?q").not())
        .stderr(contains("CORESCALE_DB_PASSWORD"));
    // libpq's ?password= is refused, naming the safe ways.
    corescale()
        .args(["run", "db", "-w", "1", "--target"])
        .arg(format!("{bare}?password=visible-Secret"))
        .assert()
        .code(2)
        .stderr(contains("--password-prompt"))
        .stderr(contains("visible-Secret").not());
    // While a run is under way, `ps` (the process's cmdline) shows no password.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ps.json");
    let url = cluster.url(role, password);
    let args = [
        "run",
        "db",
        "--target",
        &url,
        "--sweep",
        "1,2",
        "--duration",
        "500ms",
        "--repeat",
        "2",
        "-q",
    ];
    let child = common::spawn_until_first_level(&args, &json);
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap();
    let shown = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        shown.contains(&format!("{role}:***@127.0.0.1")),
        "ps shows {shown}"
    );
    assert!(!shown.contains("Pl%2Bus"), "ps shows {shown}");
    let stored = std::fs::read_to_string(&json).unwrap();
    assert!(
        !stored.contains("Pl%2Bus") && !stored.contains("Pl+us"),
        "{stored}"
    );
}
