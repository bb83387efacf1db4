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

/// The harm, looked for at the server: app is no superuser, the other session lives, no
/// program ran as the server.
fn unharmed(
    cluster: &PrivateCluster,
    victim: &mut postgres::Client,
    victim_pid: i32,
    planted_file: &std::path::Path,
) {
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
    assert!(victim.query_one("SELECT 1", &[]).is_ok());
    assert!(
        !planted_file.exists(),
        "the replay ran a program as the server"
    );
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
    std::thread::sleep(std::time::Duration::from_millis(500));
    let capture = dir.path().join("shop.capture");
    let captured = corescale()
        .args(["capture", &format!("{logs}/pg.csv"), "-o"])
        .arg(&capture)
        .output()
        .unwrap();
    assert!(
        captured.status.success(),
        "{}",
        String::from_utf8_lossy(&captured.stderr)
    );

    let clone_url = format!("postgres://postgres@127.0.0.1:{}/clone", cluster.port);
    let json = dir.path().join("replay.json");
    let replayed = corescale()
        .env("CORESCALE_TEST_PREFLIGHT", "100ms")
        .args(["run", "replay", "--target", &clone_url, "--capture"])
        .arg(&capture)
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
    unharmed(&cluster, &mut victim, victim_pid, &planted_file);
    // The application's statements were sent: as app, which the functions answer.
    let document = common::read_json(&json);
    let level = &document["levels"][0];
    let sent = level["workload_figures"]["statements_sent"]
        .as_f64()
        .unwrap();
    assert_eq!(sent, 4.0, "{}", level["workload_figures"]);

    // A role the replay cannot connect as: refused before the first level, naming --map.
    cluster.psql("ALTER ROLE app NOLOGIN");
    corescale()
        .args(["run", "replay", "--target", &clone_url, "--capture"])
        .arg(&capture)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "the captured user 'app' cannot be replayed as 'postgres', which holds every privilege (a superuser) that 'app' does not",
        ))
        .stderr(predicates::str::contains("--map app=USER"));
    assert!(!planted_file.exists());
}
