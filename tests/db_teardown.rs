//! Teardown drops only what setup created, as the database itself knows it (issue 21, "A
//! teardown no one can steer"): a catalogue row naming a user's table or function, a table
//! that exists only in another schema, or one dropped and recreated under corescale's name is
//! left alone, and its data kept. Run against the servers named by CORESCALE_TEST_PG and
//! CORESCALE_TEST_MYSQL; each test works in a database of its own, dropped when the test ends,
//! failed or not, so nothing is left on the servers.

mod common;

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
             INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner)
               SELECT 'table', 'corescale_t7', state, corescale_version, parameters, object_namespace, object_id, object_owner
               FROM corescale_catalog WHERE name = 'corescale_t0';
             INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner)
               SELECT 'function', 'corescale_loop_t8', state, corescale_version, parameters, object_namespace, object_id, object_owner
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
             INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner)
               SELECT 'table', c.relname, 'ready', '0.1.0', '{}', namespace, c.oid::text, pg_get_userbyid(c.relowner)
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
    // The role is the server's, not the database's: dropped below and on failure alike.
    struct RoleGuard(String, String);
    impl Drop for RoleGuard {
        fn drop(&mut self) {
            if let Ok(mut admin) = postgres::Client::connect(&self.0, postgres::NoTls) {
                let _ = admin.batch_execute(&format!("DROP ROLE IF EXISTS \"{}\"", self.1));
            }
        }
    }
    client
        .batch_execute(&format!("CREATE ROLE \"{role}\""))
        .unwrap();
    let guard = RoleGuard(base.clone(), role.clone());
    client
        .batch_execute(&format!("GRANT INSERT ON corescale_catalog TO \"{role}\""))
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
    client
        .batch_execute(&format!(
            "REVOKE INSERT ON corescale_catalog FROM \"{role}\""
        ))
        .unwrap();
    drop(client);
    drop(guard);
    assert!(line(&teardown(&scratch.url), "dropped from").contains("corescale_t0"));
}

/// A catalogue written by an older corescale, without identity columns, proves nothing:
/// teardown drops none of what it lists, and says so.
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
            "ALTER TABLE corescale_catalog DROP COLUMN object_namespace, DROP COLUMN object_id, DROP COLUMN object_created, DROP COLUMN object_owner",
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
        "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner)
           SELECT 'table', 'corescale_t7', state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner
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
        "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner)
           SELECT 'table', t.table_name, 'ready', '0.1.0', '{{}}', t.table_schema, s.table_id, CAST(UNIX_TIMESTAMP(t.create_time) AS CHAR), CURRENT_USER()
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

/// A user without the PROCESS privilege cannot read TABLE_IDs: tables are then known by
/// CREATE_TIME. Setup and teardown still work, and a table recreated a second later is left
/// alone.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_without_table_ids_tables_are_known_by_creation_time() {
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
    std::thread::sleep(std::time::Duration::from_millis(1100));
    scratch.execute("DROP TABLE corescale_t1");
    scratch.execute("CREATE TABLE corescale_t1 (mine INT)");
    let printed = teardown(&url);
    let (dropped, left) = (line(&printed, "dropped from"), line(&printed, LEFT_ALONE));
    assert!(names(dropped, "corescale_t0"), "{printed}");
    assert!(names(left, "corescale_t1"), "{printed}");
    assert!(left.contains("creation time"), "{printed}");
    scratch.execute("DROP TABLE corescale_t1");
    scratch.execute("DELETE FROM corescale_catalog");
    let printed = teardown(&url);
    assert!(
        names(line(&printed, "dropped from"), "corescale_catalog"),
        "{printed}"
    );
    assert_eq!(scratch.objects(), 0);
}
