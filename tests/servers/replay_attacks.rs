//! A replay runs other people's code: each attack an application role could plant in its
//! own captured workload, done as the attacker does it (the role, its function, the log,
//! the capture, a replay by a superuser with no flags), with the harm looked for at the
//! server afterwards: role flags, other sessions, files, another database's rows.

use std::process::Command;

use crate::common;

use common::pg_cluster::PrivateCluster;
use common::{corescale, required};

/// The application's functions: each does harm only where its session's role is a
/// superuser and its transaction may write, so production logged no error, only reads;
/// `lift()` makes the session's next transactions writable.
const PLANTED: &str = r#"
CREATE FUNCTION public.lift() RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM pg_catalog.set_config('default_transaction_read_only', 'off', false);
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)
        AND pg_catalog.current_setting('transaction_read_only') = 'off' THEN
        EXECUTE 'ALTER ROLE app SUPERUSER';
    END IF;
    RETURN current_user;
END $f$;
CREATE FUNCTION public.shell(path text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)
        AND pg_catalog.current_setting('transaction_read_only') = 'off' THEN
        EXECUTE pg_catalog.format('COPY (SELECT 1) TO PROGRAM %L', 'touch ' || path);
    END IF;
    RETURN current_user;
END $f$;
CREATE TABLE public.orders (id int PRIMARY KEY, note text);
INSERT INTO public.orders VALUES (1, 'kept');
"#;

fn psql_as(
    bindir: &str,
    cluster: &PrivateCluster,
    user: &str,
    database: &str,
    sql: &str,
) -> std::process::Output {
    Command::new(format!("{bindir}/psql"))
        .args(["-X", "-h", "127.0.0.1", "-p", &cluster.port.to_string()])
        .args(["-U", user, "-d", database, "-c", sql])
        .output()
        .unwrap()
}

fn client(cluster: &PrivateCluster, database: &str) -> postgres::Client {
    let url = format!("postgres://postgres@127.0.0.1:{}/{database}", cluster.port);
    postgres::Client::connect(&url, postgres::NoTls).unwrap()
}

/// Role `app` owns database `shop` and its functions; its workload (three calls of
/// `lift()`, one of `shell()`, a `pg_terminate_backend` of another session that failed for
/// it) is logged in csvlog and captured. A superuser replays it on a clone with no flags:
/// every session connects as `app`, so `app` stays an ordinary role, the other session
/// lives, no file is written, and the statement production refused is not sent. Where
/// `app` cannot connect, the replay refuses, naming `--map`.
#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn a_replay_by_a_superuser_gives_the_application_no_more_power() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let cluster = PrivateCluster::start(
        &bindir,
        "host all postgres,app 127.0.0.1/32 trust\n",
        &[],
        "",
        "CREATE ROLE app LOGIN",
    );
    cluster.psql("CREATE DATABASE shop OWNER app");
    let logs = format!("{}/pglog", cluster.dir.path().display());
    cluster.restart(&format!(
        "-c logging_collector=on -c log_directory={logs} -c log_filename=pg \
         -c log_destination=csvlog -c log_connections=on -c log_disconnections=on"
    ));
    let planted = psql_as(&bindir, &cluster, "app", "shop", PLANTED);
    assert!(
        planted.status.success(),
        "{}",
        String::from_utf8_lossy(&planted.stderr)
    );
    cluster.psql("CREATE DATABASE clone TEMPLATE shop OWNER app");
    cluster.psql("ALTER DATABASE shop SET log_statement = 'all'");
    // Another session, which the application could not terminate.
    let mut victim = client(&cluster, "postgres");
    let victim_pid: i32 = victim
        .query_one("SELECT pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    let dir = tempfile::tempdir().unwrap();
    let planted_file = dir.path().join("ran-as-the-server");
    let capture = app_s_workload_captured(&bindir, &cluster, &planted_file, victim_pid);
    replayed_with_no_more_power(&cluster, &capture, &planted_file, victim_pid);
    assert!(victim.query_one("SELECT 1", &[]).is_ok());
}

/// `app`'s session, logged and captured: its functions' calls, and a termination of
/// another session that production refused.
fn app_s_workload_captured(
    bindir: &str,
    cluster: &PrivateCluster,
    planted_file: &std::path::Path,
    victim_pid: i32,
) -> std::path::PathBuf {
    let logs = format!("{}/pglog", cluster.dir.path().display());
    // One session, each statement its own transaction: the setting lift() changes holds
    // for the next.
    let session = Command::new(format!("{bindir}/psql"))
        .args(["-X", "-h", "127.0.0.1", "-p", &cluster.port.to_string()])
        .args(["-U", "app", "-d", "shop"])
        .args(["-c", "SELECT lift()", "-c", "SELECT lift()"])
        .args(["-c", &format!("SELECT shell('{}')", planted_file.display())])
        .args(["-c", "SELECT lift()"])
        .args(["-c", &format!("SELECT pg_terminate_backend({victim_pid})")])
        .output()
        .unwrap();
    let refused = String::from_utf8_lossy(&session.stderr);
    assert!(
        refused.contains("ERROR") && refused.matches("ERROR").count() == 1,
        "app may not terminate others' sessions, and nothing else failed: {refused}"
    );
    // A later session of app's, so the statements above are not the capture's last (a lane
    // late on a busy host may leave the last instant's unsent).
    std::thread::sleep(std::time::Duration::from_secs(1));
    let later = psql_as(bindir, cluster, "app", "shop", "SELECT 1");
    assert!(later.status.success());
    std::thread::sleep(std::time::Duration::from_millis(500));
    let capture = planted_file.with_file_name("shop.capture");
    common::capture_log(&format!("{logs}/pg.csv"), &capture);

    capture
}

/// The replay by a superuser, with no flags, and the harm looked for at the server.
fn replayed_with_no_more_power(
    cluster: &PrivateCluster,
    capture: &std::path::Path,
    planted_file: &std::path::Path,
    victim_pid: i32,
) {
    let dir = tempfile::tempdir().unwrap();
    let clone_url = format!("postgres://postgres@127.0.0.1:{}/clone", cluster.port);
    let json = dir.path().join("replay.json");
    let replayed = corescale()
        .env("CORESCALE_TEST_PREFLIGHT", "100ms")
        .args(["run", "replay", "--target", &clone_url, "--capture"])
        .arg(capture)
        .arg("-o")
        .arg(&json)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&replayed.stderr);
    assert!(replayed.status.success(), "{said}");
    assert!(
        said.contains("1 refused in production for want of a privilege"),
        "{said}"
    );
    // The harm, looked for at the server.
    let mut admin = client(cluster, "postgres");
    let superuser: bool = admin
        .query_one("SELECT rolsuper FROM pg_roles WHERE rolname = 'app'", &[])
        .unwrap()
        .get(0);
    assert!(!superuser, "the replay made app a superuser");
    let alive: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
            &[&victim_pid],
        )
        .unwrap()
        .get(0);
    assert_eq!(alive, 1, "the replay terminated another session");
    assert!(
        !planted_file.exists(),
        "the replay ran a program as the server"
    );
    // The application's statements were sent: as app, which the functions answer.
    let document = common::read_json(&json);
    let level = &document["levels"][0];
    let sent = level["workload_figures"]["statements_sent"]
        .as_f64()
        .unwrap();
    assert!((4.0..=5.0).contains(&sent), "{}", level["workload_figures"]);

    // A role the replay cannot connect as: refused before the first level, naming --map.
    cluster.psql("ALTER ROLE app NOLOGIN");
    corescale()
        .args(["run", "replay", "--target", &clone_url, "--capture"])
        .arg(capture)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "the captured user 'app' cannot be replayed as 'postgres', which holds every privilege (a superuser) that 'app' does not",
        ))
        .stderr(predicates::str::contains("--map app=USER"));
    assert!(!planted_file.exists());
}

/// A private cluster that only its superuser reaches over TCP.
fn superuser_only_cluster() -> PrivateCluster {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    PrivateCluster::start(
        &bindir,
        "host all postgres 127.0.0.1/32 trust\n",
        &[],
        "",
        "",
    )
}

/// A capture file written by hand, as an attacker may: `(session user, database)`, then
/// each statement's offset in seconds, text and the class the file claims for it.
fn forged_capture(path: &std::path::Path, user: &str, statements: &[(f64, &str, &str)]) {
    use std::io::Write;
    let mut lines = vec![
        serde_json::json!({"record": "header", "format": "corescale-capture", "version": 1,
            "product": "postgresql", "logs": ["forged.csv"]}),
        serde_json::json!({"record": "session", "id": 0, "at_us": 0, "user": user,
            "database": "postgres"}),
    ];
    for (at_s, sql, class) in statements {
        lines.push(serde_json::json!({"record": "statement", "session": 0,
            "at_us": (at_s * 1e6) as i64, "sql": sql, "class": class}));
    }
    lines.push(
        serde_json::json!({"record": "summary", "origin": "2026-12-07 10:00:00 UTC",
        "sessions": 1, "statements": statements.len(), "passwords_left_out": 0,
        "errors": {}, "with_duration": 0}),
    );
    let file = std::fs::File::create(path).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    for line in lines {
        writeln!(encoder, "{line}").unwrap();
    }
    encoder.finish().unwrap();
}

/// A capture file is input: the class it claims for `COPY ... TO PROGRAM` (a read) is read
/// anew from the text, so the program never runs, even for a superuser's own sessions; a
/// gap of years is shortened to --max-idle and said, so the replay ends at once; a FIFO
/// given as the capture is refused, not waited on.
#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn a_forged_capture_runs_no_program_and_waits_no_years() {
    let cluster = superuser_only_cluster();
    let dir = tempfile::tempdir().unwrap();
    let planted_file = dir.path().join("ran-as-the-server");
    let copy = format!(
        "COPY (SELECT 1) TO PROGRAM 'touch {}'",
        planted_file.display()
    );
    let capture = dir.path().join("forged.capture");
    forged_capture(
        &capture,
        "postgres",
        &[
            (0.0, "SELECT 1", "read"),
            (0.1, &copy, "read"),
            (0.2, "SELECT 1; ALTER SYSTEM SET work_mem = '1TB'", "read"),
            (73.0 * 365.0 * 86_400.0, "SELECT 2", "read"),
        ],
    );
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port);
    let began = std::time::Instant::now();
    let done = corescale()
        .env("CORESCALE_TEST_PREFLIGHT", "100ms")
        .args([
            "run",
            "replay",
            "--target",
            &url,
            "--max-idle",
            "1s",
            "--capture",
        ])
        .arg(&capture)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{said}");
    assert!(
        began.elapsed() < std::time::Duration::from_secs(60),
        "{said}"
    );
    assert!(
        said.contains("1 idle gap longer than --max-idle 1s shortened to it"),
        "{said}"
    );
    assert!(
        said.contains("2 reaching beyond the data (--include-server-wide sends them)"),
        "{said}"
    );
    assert!(
        !planted_file.exists(),
        "a forged class ran a program as the server"
    );
    let work_mem: String = client(&cluster, "postgres")
        .query_one(
            "SELECT setting FROM pg_settings WHERE name = 'work_mem'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(work_mem, "4096");

    let fifo = dir.path().join("fifo.capture");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let began = std::time::Instant::now();
    corescale()
        .args(["run", "replay", "--target", &url, "--capture"])
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a regular file"));
    assert!(began.elapsed() < std::time::Duration::from_secs(30));
}

/// SIGTERM ends a replay's long wait within a second or so, keeping what it measured: a
/// level of ten minutes (two statements that far apart, within --max-idle) stops at once.
#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn sigterm_ends_a_replay_s_wait_and_keeps_what_it_measured() {
    let cluster = superuser_only_cluster();
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("slow.capture");
    forged_capture(
        &capture,
        "postgres",
        &[(0.0, "SELECT 1", "read"), (600.0, "SELECT 2", "read")],
    );
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port);
    let json = dir.path().join("stopped.json");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
        .env("CORESCALE_TEST_PREFLIGHT", "100ms")
        .args([
            "run",
            "replay",
            "--target",
            &url,
            "--max-idle",
            "20m",
            "--capture",
        ])
        .arg(&capture)
        .arg("-o")
        .arg(&json)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Into the level's wait: its first statement sent, the second due in ten minutes.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let signalled = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let deadline = signalled + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the replay still waited 20 s after SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut said = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut said).unwrap();
    assert_eq!(status.code(), Some(143), "{said}");
    assert!(
        signalled.elapsed() < std::time::Duration::from_secs(5),
        "{said}"
    );
    let document = common::read_json(&json);
    assert_eq!(document["complete"], false, "{said}");
    let level = &document["levels"][0];
    assert_eq!(level["workload_figures"]["statements_sent"], 1.0, "{said}");
}
