//! Teardown drops only what setup created, as the database itself knows it (issue 21, "A
//! teardown no one can steer"): a catalogue row naming a user's table or function, a table
//! that exists only in another schema, or one dropped and recreated under corescale's name is
//! left alone, and its data kept. Run against the servers named by CORESCALE_TEST_PG and
//! CORESCALE_TEST_MYSQL; each test works in a database of its own, dropped when the test ends,
//! failed or not, so nothing is left on the servers.

use crate::common;

use common::scratch::{MyScratch, PgScratch, scratch_name};
use common::{corescale, hold_server, required as server};
use mysql::prelude::Queryable;

const LEFT_ALONE: &str = "left alone: not the object corescale created";

fn setup(url: &str, schemas: &str) {
    corescale()
        .args(["db", "setup", "--target", url, "--schemas", schemas])
        .args(["--scale", "256"])
        .assert()
        .success();
}

/// Runs a teardown, which must succeed; returns what it printed.
fn teardown(url: &str) -> String {
    let output = corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success();
    String::from_utf8_lossy(&output.get_output().stdout).into_owned()
}

/// The line of teardown's output that starts with `start`, or "" (piped, teardown prints
/// each message on one line).
fn line<'a>(printed: &'a str, start: &str) -> &'a str {
    printed
        .lines()
        .find(|line| line.starts_with(start))
        .unwrap_or("")
}

/// Whether a line of teardown's output lists `name`: "dropped from URL: a, b" or
/// "left alone: ...: a (why, ...); b (why)".
fn names(line: &str, name: &str) -> bool {
    let mut entries: Vec<&str> = match line.strip_prefix(LEFT_ALONE) {
        Some(rest) => rest.trim_start_matches(": ").split("; ").collect(),
        None => line
            .split_once(": ")
            .map_or("", |(_, list)| list)
            .split(", ")
            .collect(),
    };
    entries.retain(|entry| entry.split(" (").next() == Some(name));
    !entries.is_empty()
}

/// A second setup stops at a catalogue that lists objects left alone, and says why.
fn setup_refuses_while_rows_remain(url: &str, named: &str) {
    let output = corescale()
        .args(["db", "setup", "--target", url, "--schemas", "1"])
        .args(["--scale", "256"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&output.get_output().stderr);
    assert!(
        stderr.contains("not the ones corescale created") && stderr.contains(named),
        "{stderr}"
    );
}

/// (a) and (b): after a real setup, rows added to corescale_catalog name a user's table
/// (with data) and a user's function, one copying the identity of corescale's own table, one
/// with none. Teardown drops corescale's objects and leaves the user's, saying so; the
/// catalogue keeps their rows and is not dropped.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_forged_catalogue_rows_steer_no_drop() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "forged");
    setup(&scratch.url, "1");
    scratch
        .client()
        .batch_execute(
            "CREATE TABLE corescale_t7 AS SELECT generate_series(1, 3) AS mine;
             CREATE TABLE corescale_t6 AS SELECT 1 AS mine;
             CREATE FUNCTION corescale_loop_t8(bigint, bigint, bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 7::bigint';
             CREATE FUNCTION corescale_loop_t8() RETURNS bigint LANGUAGE sql AS 'SELECT 8::bigint';
             INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark)
               SELECT 'table', 'corescale_t7', state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark
               FROM corescale_catalog WHERE name = 'corescale_t0';
             INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark)
               SELECT 'function', 'corescale_loop_t8', state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark
               FROM corescale_catalog WHERE name = 'corescale_loop_t0';
             INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters)
               VALUES ('table', 'corescale_t6', 'ready', '0.1.0', '{}')",
        )
        .unwrap();
    let printed = teardown(&scratch.url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    for own in ["corescale_t0", "corescale_loop_t0()"] {
        assert!(names(dropped, own), "{own} not dropped:\n{printed}");
    }
    for users in ["corescale_t7", "corescale_t6", "corescale_loop_t8()"] {
        assert!(names(left, users), "{users} not left alone:\n{printed}");
        assert!(
            !names(dropped, users),
            "{users} reported dropped:\n{printed}"
        );
    }
    assert!(left.contains("records no identity"), "{printed}");
    assert!(printed.contains("kept corescale_catalog"), "{printed}");
    assert!(!names(dropped, "corescale_catalog"), "{printed}");
    assert_eq!(
        scratch.count("SELECT sum(mine)::bigint FROM corescale_t7"),
        6
    );
    assert_eq!(scratch.count("SELECT count(*) FROM corescale_t6"), 1);
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_proc WHERE proname = 'corescale_loop_t8'"),
        2,
        "teardown dropped a user's function"
    );
    assert_eq!(
        scratch.count("SELECT corescale_loop_t8(0, 0, 0)"),
        7,
        "the user's function is intact"
    );
    assert_eq!(
        scratch.count(
            "SELECT count(*) FROM pg_class WHERE relname IN ('corescale_t0', 'corescale_t0_key')"
        ),
        0
    );
    assert_eq!(
        scratch.count("SELECT count(*) FROM corescale_catalog"),
        3,
        "the rows teardown left alone are kept"
    );
    setup_refuses_while_rows_remain(&scratch.url, "corescale_t7");
    assert_eq!(
        scratch.count("SELECT sum(mine)::bigint FROM corescale_t7"),
        6
    );
}

/// (c): a corescale-shaped table that exists only in another schema, catalogued in this
/// one (with its true identity, or claiming this schema) is not reported dropped, and stays.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_table_in_another_schema_is_not_reported_dropped() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "elsewhere");
    setup(&scratch.url, "1");
    scratch
        .client()
        .batch_execute(
            "CREATE SCHEMA other;
             CREATE TABLE other.corescale_t9 AS SELECT 9 AS mine;
             CREATE TABLE other.corescale_t8 AS SELECT 8 AS mine;
             INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark)
               SELECT 'table', c.relname, 'ready', '0.1.0', '{}', namespace, c.oid::text, pg_get_userbyid(c.relowner),
                      (SELECT object_mark FROM corescale_catalog WHERE name = 'corescale_t0')
               FROM pg_class c, (VALUES ('corescale_t9', 'other'), ('corescale_t8', 'public')) AS claimed(name, namespace)
               WHERE c.oid = ('other.' || claimed.name)::regclass",
        )
        .unwrap();
    let printed = teardown(&scratch.url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    assert!(names(dropped, "corescale_t0"), "{printed}");
    for elsewhere in ["corescale_t9", "corescale_t8"] {
        assert!(
            !names(dropped, elsewhere),
            "{elsewhere} reported dropped:\n{printed}"
        );
        assert!(names(left, elsewhere), "{elsewhere} not listed:\n{printed}");
    }
    assert!(
        left.contains("no such object in the current schema"),
        "{printed}"
    );
    assert_eq!(
        scratch.count("SELECT (SELECT sum(mine) FROM other.corescale_t9) + (SELECT sum(mine) FROM other.corescale_t8)"),
        17
    );
}

/// (d): a table corescale created, dropped by the user and recreated under the same name,
/// is the user's now: left alone with its data; the loop function setup created still goes.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_recreated_table_is_left_alone() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "recreated");
    setup(&scratch.url, "1");
    scratch
        .client()
        .batch_execute(
            "DROP TABLE corescale_t0; CREATE TABLE corescale_t0 AS SELECT generate_series(1, 4) AS mine",
        )
        .unwrap();
    let printed = teardown(&scratch.url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    assert!(names(dropped, "corescale_loop_t0()"), "{printed}");
    assert!(!names(dropped, "corescale_t0"), "{printed}");
    assert!(names(left, "corescale_t0"), "{printed}");
    assert!(left.contains("recreated"), "{printed}");
    assert_eq!(
        scratch.count("SELECT sum(mine)::bigint FROM corescale_t0"),
        10
    );
}

/// (e): setup then teardown drops every object, the catalogue last, and leaves nothing in
/// the database: no table, index, sequence, function or type in its schema.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_setup_and_teardown_leave_nothing() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "clean");
    let in_public = "SELECT (SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace) + (SELECT count(*) FROM pg_proc WHERE pronamespace = 'public'::regnamespace)";
    assert_eq!(scratch.count(in_public), 0);
    setup(&scratch.url, "2");
    let printed = teardown(&scratch.url);
    let dropped = line(&printed, "dropped from");
    for own in [
        "corescale_t0",
        "corescale_t1",
        "corescale_loop_t0()",
        "corescale_loop_t1()",
        "corescale_catalog",
    ] {
        assert!(names(dropped, own), "{own} not dropped:\n{printed}");
    }
    assert!(!printed.contains("left alone"), "{printed}");
    assert_eq!(scratch.count(in_public), 0, "teardown left objects behind");
    assert!(teardown(&scratch.url).contains("no objects of corescale's catalogue"));
}

/// The identities setup records are public: a role that may also write the catalogue could
/// copy them into a row naming its own table. While any such role exists, teardown drops
/// nothing and names it; once the grant is revoked, it drops everything.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_catalogue_others_may_write_steers_no_drop() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "writers");
    let role = format!("cs_writer_{}", std::process::id());
    setup(&scratch.url, "1");
    let mut client = scratch.client();
    // The role is the server's, not the database's: dropped below and on failure alike
    // (its grants in the scratch database first).
    struct RoleGuard(String, String);
    impl Drop for RoleGuard {
        fn drop(&mut self) {
            if let Ok(mut admin) = postgres::Client::connect(&self.0, postgres::NoTls) {
                let _ = admin.batch_execute(&format!(
                    "DROP OWNED BY \"{0}\"; DROP ROLE IF EXISTS \"{0}\"",
                    self.1
                ));
            }
        }
    }
    client
        .batch_execute(&format!(
            "CREATE ROLE \"{role}\" LOGIN; CREATE TABLE corescale_t5 AS SELECT generate_series(1, 5) AS mine"
        ))
        .unwrap();
    let guard = RoleGuard(scratch.url.clone(), role.clone());
    client
        .batch_execute(&format!(
            "GRANT INSERT ON corescale_catalog TO \"{role}\"; GRANT SELECT ON corescale_catalog TO \"{role}\""
        ))
        .unwrap();
    // Role B writes a row with every readable fact of the setup role's own table corescale_t5
    // (its oid, owner and schema) and the mark of corescale's table, copied.
    let mut as_writer = url::Url::parse(&scratch.url).unwrap();
    as_writer.set_username(&role).unwrap();
    postgres::Client::connect(as_writer.as_str(), postgres::NoTls)
        .unwrap()
        .batch_execute(
            "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark)
               SELECT 'table', 'corescale_t5', 'ready', corescale_version, parameters, n.nspname, c.oid::text, pg_get_userbyid(c.relowner), k.object_mark
               FROM corescale_catalog k, pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE k.name = 'corescale_t0' AND c.relname = 'corescale_t5'",
        )
        .unwrap();
    corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(role.as_str()))
        .stderr(predicates::str::contains("REVOKE INSERT, UPDATE"));
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class WHERE relname = 'corescale_t0'"),
        1,
        "a table was dropped while others could write the catalogue"
    );
    // The DBA follows the advice: the forged row stays, and still steers no drop.
    client
        .batch_execute(&format!("REVOKE ALL ON corescale_catalog FROM \"{role}\""))
        .unwrap();
    drop(guard);
    let printed = teardown(&scratch.url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    assert!(names(dropped, "corescale_t0"), "{printed}");
    assert!(names(left, "corescale_t5"), "{printed}");
    assert!(left.contains("no corescale setup comment"), "{printed}");
    assert_eq!(
        scratch.count("SELECT sum(mine)::bigint FROM corescale_t5"),
        15,
        "the setup role's own table is intact"
    );
}

/// A user's view on corescale_t1 stops the teardown before anything is dropped: the view is
/// named with what to do, and every object and catalogue row is still there; once the view
/// is gone, teardown drops everything.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_dependent_view_stops_teardown_before_any_drop() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "dependent");
    setup(&scratch.url, "2");
    scratch
        .client()
        .batch_execute(
            "CREATE SCHEMA app; CREATE VIEW app.v1 AS SELECT key FROM corescale_t1;
             CREATE TABLE app.orders (id int); CREATE TRIGGER mine AFTER INSERT ON corescale_t0 FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()",
        )
        .unwrap();
    let output = corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(
        stderr.contains("view app.v1 depends on corescale_t1"),
        "{stderr}"
    );
    assert!(stderr.contains("trigger mine on corescale_t0"), "{stderr}");
    assert!(stderr.contains("nothing was dropped"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class WHERE relname IN ('corescale_t0', 'corescale_t1', 'corescale_t0_key', 'corescale_t1_key')"),
        4
    );
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_proc WHERE proname LIKE 'corescale\\_loop\\_t_'"),
        2
    );
    assert_eq!(scratch.count("SELECT count(*) FROM corescale_catalog"), 4);
    scratch
        .client()
        .batch_execute("DROP VIEW app.v1; DROP TRIGGER mine ON corescale_t0")
        .unwrap();
    let printed = teardown(&scratch.url);
    assert!(
        names(line(&printed, "dropped from"), "corescale_catalog"),
        "{printed}"
    );
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class WHERE relname LIKE 'corescale%'"),
        0
    );
}

/// A setup killed while it loads leaves nothing a teardown cannot remove.
fn a_killed_setup_is_torn_down(url: &str, objects: impl Fn() -> i64) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
        .args([
            "db",
            "setup",
            "--target",
            url,
            "--schemas",
            "2",
            "--scale",
            "256M",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    // Killed once the load has begun: the catalogue exists (on MariaDB, and a table).
    while objects() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    common::teardown_after_a_killed_setup(url);
    assert_eq!(objects(), 0, "teardown left what the killed setup made");
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_setup_killed_halfway_is_torn_down() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "killed");
    a_killed_setup_is_torn_down(&scratch.url, || {
        scratch.count("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'")
            + scratch.count("SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'")
    });
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_a_setup_killed_halfway_is_torn_down() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("killed"));
    a_killed_setup_is_torn_down(&scratch.url, || scratch.objects());
}

/// A catalogue written by an older corescale, without the setup mark and window columns,
/// proves nothing: teardown drops none of what it lists, and says so.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_an_older_catalogue_drops_nothing() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "older");
    setup(&scratch.url, "1");
    scratch
        .client()
        .batch_execute(
            "ALTER TABLE corescale_catalog DROP COLUMN object_mark, DROP COLUMN object_engine, DROP COLUMN setup_started, DROP COLUMN setup_ended",
        )
        .unwrap();
    let printed = teardown(&scratch.url);
    let left = line(&printed, LEFT_ALONE);
    for object in ["corescale_t0", "corescale_loop_t0()"] {
        assert!(names(left, object), "{object} not left alone:\n{printed}");
    }
    assert!(!printed.contains("dropped from"), "{printed}");
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_tables WHERE tablename IN ('corescale_t0', 'corescale_catalog')"),
        2
    );
}

/// (a) on MariaDB: rows naming a user's table, one with the identity of corescale's own
/// table (its TABLE_ID and CREATE_TIME), one with none.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_forged_catalogue_rows_steer_no_drop() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("forged"));
    setup(&scratch.url, "1");
    for sql in [
        "CREATE TABLE corescale_t7 (mine INT)",
        "INSERT INTO corescale_t7 VALUES (1), (2), (3)",
        "CREATE TABLE corescale_t6 (mine INT)",
        "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine, setup_started, setup_ended)
           SELECT 'table', 'corescale_t7', state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine, setup_started, setup_ended
           FROM corescale_catalog WHERE name = 'corescale_t0'",
        "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters) VALUES ('table', 'corescale_t6', 'ready', '0.1.0', '{}')",
    ] {
        scratch.execute(sql);
    }
    let printed = teardown(&scratch.url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    assert!(names(dropped, "corescale_t0"), "{printed}");
    for users in ["corescale_t7", "corescale_t6"] {
        assert!(names(left, users), "{users} not left alone:\n{printed}");
        assert!(
            !names(dropped, users),
            "{users} reported dropped:\n{printed}"
        );
    }
    assert!(printed.contains("kept corescale_catalog"), "{printed}");
    assert_eq!(
        scratch.count("SELECT CAST(SUM(mine) AS SIGNED) FROM corescale_t7"),
        6
    );
    assert_eq!(scratch.count("SELECT COUNT(*) FROM corescale_catalog"), 2);
    setup_refuses_while_rows_remain(&scratch.url, "corescale_t7");
    assert_eq!(
        scratch.count("SELECT CAST(SUM(mine) AS SIGNED) FROM corescale_t7"),
        6
    );
}

/// (c) on MariaDB: a corescale-shaped table in another database, catalogued in this one with
/// its true identity, is not reported dropped and stays.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_a_table_in_another_database_is_not_reported_dropped() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("here"));
    let other = MyScratch::new(&base, scratch_name("other"));
    setup(&scratch.url, "1");
    other.execute("CREATE TABLE corescale_t9 (mine INT)");
    other.execute("INSERT INTO corescale_t9 VALUES (9)");
    scratch.execute(&format!(
        "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine)
           SELECT 'table', t.table_name, 'ready', '0.1.0', '{{}}', t.table_schema, s.table_id, CAST(UNIX_TIMESTAMP(t.create_time) AS CHAR), CURRENT_USER(),
                  (SELECT object_mark FROM corescale_catalog WHERE name = 'corescale_t0'), 'InnoDB'
           FROM information_schema.tables t JOIN information_schema.innodb_sys_tables s ON s.name = CONCAT(t.table_schema, '/', t.table_name)
           WHERE t.table_schema = '{}' AND t.table_name = 'corescale_t9'",
        other.name
    ));
    let printed = teardown(&scratch.url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    assert!(names(dropped, "corescale_t0"), "{printed}");
    assert!(!names(dropped, "corescale_t9"), "{printed}");
    assert!(names(left, "corescale_t9"), "{printed}");
    assert_eq!(
        other.count("SELECT CAST(SUM(mine) AS SIGNED) FROM corescale_t9"),
        9
    );
}

/// (d) on MariaDB: dropped and recreated at once, within the same second as like as not, so
/// CREATE_TIME may match: the TABLE_ID tells them apart.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_a_recreated_table_is_left_alone() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("recreated"));
    setup(&scratch.url, "2");
    let mut connection = scratch.connection();
    connection.query_drop("DROP TABLE corescale_t0").unwrap();
    connection
        .query_drop("CREATE TABLE corescale_t0 (mine INT)")
        .unwrap();
    connection
        .query_drop("INSERT INTO corescale_t0 VALUES (4), (6)")
        .unwrap();
    let printed = teardown(&scratch.url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    assert!(names(dropped, "corescale_t1"), "{printed}");
    assert!(!names(dropped, "corescale_t0"), "{printed}");
    assert!(names(left, "corescale_t0"), "{printed}");
    assert_eq!(
        scratch.count("SELECT CAST(SUM(mine) AS SIGNED) FROM corescale_t0"),
        10
    );
}

/// (e) on MariaDB: setup then teardown drops both tables and the catalogue and leaves an
/// empty database.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_setup_and_teardown_leave_nothing() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("clean"));
    setup(&scratch.url, "2");
    let printed = teardown(&scratch.url);
    let dropped = line(&printed, "dropped from");
    for own in ["corescale_t0", "corescale_t1", "corescale_catalog"] {
        assert!(names(dropped, own), "{own} not dropped:\n{printed}");
    }
    assert!(!printed.contains("left alone"), "{printed}");
    assert_eq!(scratch.objects(), 0, "teardown left objects behind");
}

/// A user without the PROCESS privilege cannot read TABLE_IDs: setup records tables by
/// CREATE_TIME, inside a setup window a whole second wide at each end. Another account that
/// may create tables there could drop and recreate one within a second (done here, at once
/// and a second later), so teardown drops nothing and names the grants that would let it
/// prove ownership (SELECT on the grant tables, then PROCESS); with them, setup and teardown
/// work.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_without_table_ids_teardown_proves_nothing_and_says_why() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("noprocess"));
    let user = format!("cs_td_{}", std::process::id());
    struct DropUser<'a>(&'a MyScratch, String);
    impl Drop for DropUser<'_> {
        fn drop(&mut self) {
            if let Ok(mut admin) = mysql::Conn::new(self.0.base.as_str()) {
                let _ = admin.query_drop(format!("DROP USER IF EXISTS '{}'@'127.0.0.1'", self.1));
            }
        }
    }
    let _user = DropUser(&scratch, user.clone());
    let mut admin = mysql::Conn::new(base.as_str()).unwrap();
    admin
        .query_drop(format!("CREATE USER '{user}'@'127.0.0.1'"))
        .unwrap();
    admin
        .query_drop(format!(
            "GRANT ALL ON `{}`.* TO '{user}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    let mut url = url::Url::parse(&scratch.url).unwrap();
    url.set_username(&user).unwrap();
    url.set_host(Some("127.0.0.1")).unwrap();
    let url = url.to_string();
    setup(&url, "2");
    assert_eq!(
        scratch.count("SELECT COUNT(*) FROM corescale_catalog WHERE object_id IS NULL AND object_created IS NOT NULL"),
        2,
        "recorded by CREATE_TIME alone"
    );
    assert_eq!(
        scratch.count("SELECT COUNT(*) FROM corescale_catalog WHERE CAST(setup_started AS UNSIGNED) < CAST(object_created AS UNSIGNED) AND CAST(object_created AS UNSIGNED) < CAST(setup_ended AS UNSIGNED)"),
        2,
        "created strictly inside the recorded setup window"
    );
    // Dropped and recreated at once, as like as not within the second setup ended in (the
    // attack on creation times); and one recreated a second later.
    scratch.execute("DROP TABLE corescale_t1");
    scratch.execute("CREATE TABLE corescale_t1 (mine INT)");
    scratch.execute("INSERT INTO corescale_t1 VALUES (4)");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    scratch.execute("DROP TABLE corescale_t0");
    scratch.execute("CREATE TABLE corescale_t0 (mine INT)");
    scratch.execute("INSERT INTO corescale_t0 VALUES (6)");
    // Without PROCESS, and with other accounts that may create tables here (root's), the
    // creation second proves nothing: teardown says so, and what grant would let it prove.
    let refused = corescale()
        .args(["db", "teardown", "--target", &url])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(stderr.contains("GRANT SELECT ON mysql.*"), "{stderr}");
    admin
        .query_drop(format!("GRANT SELECT ON mysql.* TO '{user}'@'127.0.0.1'"))
        .unwrap();
    let refused = corescale()
        .args(["db", "teardown", "--target", &url])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains("creation second alone") && stderr.contains("GRANT PROCESS ON *.*"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was dropped"), "{stderr}");
    assert_eq!(
        scratch.count(
            "SELECT (SELECT SUM(mine) FROM corescale_t0) + (SELECT SUM(mine) FROM corescale_t1)"
        ),
        10,
        "the user's tables are intact"
    );
    scratch.execute("DROP TABLE corescale_t0");
    scratch.execute("DROP TABLE corescale_t1");
    scratch.execute("DROP TABLE corescale_catalog");
    // With PROCESS, a new setup and teardown by the same user: everything goes.
    admin
        .query_drop(format!("GRANT PROCESS ON *.* TO '{user}'@'127.0.0.1'"))
        .unwrap();
    setup(&url, "1");
    let printed = teardown(&url);
    for own in ["corescale_t0", "corescale_catalog"] {
        assert!(names(line(&printed, "dropped from"), own), "{printed}");
    }
    assert_eq!(scratch.objects(), 0);
}

/// MariaDB's thin identities: a MyISAM table under a row with no table id, and an InnoDB
/// table under a row with its own real TABLE_ID, each with the setup's mark and window
/// copied, are left alone; a view on corescale_t1 stops the teardown before anything is
/// dropped, and names the view.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_thin_identities_and_dependent_views_steer_no_drop() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("thin"));
    setup(&scratch.url, "2");
    for sql in [
        "CREATE TABLE corescale_t4 (mine INT) ENGINE=MyISAM",
        "INSERT INTO corescale_t4 VALUES (4)",
        "CREATE TABLE corescale_t5 (mine INT) ENGINE=InnoDB",
        "INSERT INTO corescale_t5 VALUES (5)",
        "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine, setup_started, setup_ended)
           SELECT 'table', t.table_name, 'ready', k.corescale_version, k.parameters, t.table_schema, NULL, CAST(UNIX_TIMESTAMP(t.create_time) AS CHAR), CURRENT_USER(), k.object_mark, NULL,
                  CAST(UNIX_TIMESTAMP(t.create_time) - 1 AS CHAR), CAST(UNIX_TIMESTAMP(t.create_time) + 1 AS CHAR)
           FROM information_schema.tables t, corescale_catalog k
           WHERE t.table_schema = DATABASE() AND t.table_name = 'corescale_t4' AND k.name = 'corescale_t0'",
        "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine)
           SELECT 'table', t.table_name, 'ready', k.corescale_version, k.parameters, t.table_schema, s.table_id, CAST(UNIX_TIMESTAMP(t.create_time) AS CHAR), CURRENT_USER(), k.object_mark, 'InnoDB'
           FROM information_schema.tables t JOIN information_schema.innodb_sys_tables s ON s.name = CONCAT(t.table_schema, '/', t.table_name), corescale_catalog k
           WHERE t.table_schema = DATABASE() AND t.table_name = 'corescale_t5' AND k.name = 'corescale_t0'",
        "CREATE VIEW v1 AS SELECT `key` FROM corescale_t1",
    ] {
        scratch.execute(sql);
    }
    let output = corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!("view {}.v1 depends on corescale_t1", scratch.name)),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was dropped"), "{stderr}");
    assert_eq!(
        scratch.count("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('corescale_t0', 'corescale_t1')"),
        2
    );
    scratch.execute("DROP VIEW v1");
    let printed = teardown(&scratch.url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    for own in ["corescale_t0", "corescale_t1"] {
        assert!(names(dropped, own), "{own} not dropped:\n{printed}");
    }
    for users in ["corescale_t4", "corescale_t5"] {
        assert!(names(left, users), "{users} not left alone:\n{printed}");
    }
    assert!(left.contains("no corescale setup comment"), "{printed}");
    assert_eq!(
        scratch.count(
            "SELECT (SELECT SUM(mine) FROM corescale_t4) + (SELECT SUM(mine) FROM corescale_t5)"
        ),
        9,
        "the user's tables are intact"
    );
}

/// A drop that fails half way on MariaDB (whose DDL commits at once) says exactly what was
/// dropped before it: here the user may drop corescale_t0 but not corescale_t1.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_a_failed_drop_lists_what_was_dropped_before_it() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("halfway"));
    let user = format!("cs_half_{}", std::process::id());
    struct DropUser(String, String);
    impl Drop for DropUser {
        fn drop(&mut self) {
            if let Ok(mut admin) = mysql::Conn::new(self.0.as_str()) {
                let _ = admin.query_drop(format!("DROP USER IF EXISTS '{}'@'127.0.0.1'", self.1));
            }
        }
    }
    let _user = DropUser(base.clone(), user.clone());
    let mut admin = mysql::Conn::new(base.as_str()).unwrap();
    admin
        .query_drop(format!("CREATE USER '{user}'@'127.0.0.1'"))
        .unwrap();
    admin
        .query_drop(format!(
            "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, INDEX, ALTER, LOCK TABLES, PROCESS ON *.* TO '{user}'@'127.0.0.1'"
        ))
        .unwrap();
    let mut url = url::Url::parse(&scratch.url).unwrap();
    url.set_username(&user).unwrap();
    let url = url.to_string();
    setup(&url, "2");
    admin
        .query_drop(format!(
            "GRANT DROP ON `{}`.`corescale_t0` TO '{user}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    let output = corescale()
        .args(["db", "teardown", "--target", &url])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(
        stderr.contains("teardown stopped at corescale_t1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("dropped before it, with their catalogue rows: corescale_t0"),
        "{stderr}"
    );
    assert_eq!(
        scratch.count("SELECT COUNT(*) FROM corescale_catalog WHERE name = 'corescale_t1'"),
        1
    );
    admin
        .query_drop(format!(
            "GRANT DROP ON `{}`.* TO '{user}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    assert!(names(line(&teardown(&url), "dropped from"), "corescale_t1"));
    assert_eq!(scratch.objects(), 0);
}
