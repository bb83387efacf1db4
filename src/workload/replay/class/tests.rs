use super::*;

fn pg(sql: &str) -> Class {
    classify(sql, Quoting::Postgres)
}

fn my(sql: &str) -> Class {
    classify(sql, Quoting::Mysql)
}

#[test]
fn classes_follow_the_statements_words() {
    let cases = [
        ("SELECT 1", Class::Read),
        ("BEGIN", Class::Read),
        ("begin isolation level repeatable read", Class::Read),
        ("SET search_path = x", Class::Read),
        ("SHOW work_mem", Class::Read),
        ("EXPLAIN SELECT 1", Class::Read),
        ("SELECT * FROM t FOR UPDATE", Class::Write),
        (
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
            Class::Write,
        ),
        ("update t set a = 1", Class::Write),
        ("/* app */ INSERT INTO t VALUES (1)", Class::Write),
        ("COPY t FROM STDIN", Class::Write),
        ("COPY t TO STDOUT", Class::Read),
        ("EXPLAIN ANALYZE DELETE FROM t", Class::Write),
        ("PREPARE p AS SELECT 1", Class::Read),
        ("PREPARE p AS UPDATE t SET a = 1", Class::Write),
        ("CREATE INDEX i ON t (a)", Class::Ddl),
        ("drop table t", Class::Ddl),
        ("ALTER SYSTEM SET work_mem = '1GB'", Class::ServerWide),
        ("SET ROLE admin", Class::ServerWide),
        ("set session authorization bob", Class::ServerWide),
        ("CREATE DATABASE x", Class::ServerWide),
        ("CREATE ROLE reader", Class::ServerWide),
        ("GRANT reader TO app", Class::ServerWide),
        ("alter role postgres password 'sekret'", Class::Password),
        (
            "ALTER USER bob WITH ENCRYPTED PASSWORD 'md5abc'",
            Class::Password,
        ),
        // Kinds not known here are writes.
        ("FROBNICATE t", Class::Write),
        ("EXECUTE writer(1)", Class::Write),
        // A column named password is read, not set; an application's own rows too.
        (
            "SELECT user, password FROM logins WHERE id = 1",
            Class::Read,
        ),
        ("UPDATE users SET password = $1 WHERE id = $2", Class::Write),
        // Words in strings and comments are not code.
        ("SELECT 'ALTER SYSTEM' /* grant */", Class::Read),
    ];
    for (sql, class) in cases {
        assert_eq!(pg(sql), class, "{sql}");
    }
}

#[test]
fn what_reaches_beyond_the_data_is_server_wide_wherever_it_stands() {
    for sql in [
        // Quoted names, and SET lists.
        "SET \"role\" = admin",
        "SET \"session_authorization\" = 'postgres'",
        "SET LOCAL ROLE admin",
        "RESET ROLE",
        "RESET ALL",
        // COPY with the server's files and programs, also inside a query.
        "COPY (SELECT 1) TO PROGRAM 'id'",
        "copy t to '/tmp/x'",
        "COPY t FROM '/etc/passwd'",
        "WITH x AS (SELECT 1) SELECT 1; COPY t TO PROGRAM 'sh'",
        // Functions that signal, read files, reload or reach another server.
        "SELECT pg_terminate_backend(1234)",
        "SELECT pg_catalog.pg_read_file('/etc/passwd')",
        "select lo_export(1, '/tmp/x')",
        "SELECT * FROM dblink('dbname=x', 'SELECT 1') AS t(a int)",
        "SELECT pg_reload_conf()",
        // Every statement of a multi-statement string.
        "SELECT 1; ALTER SYSTEM SET fsync = off",
        // The body of a DO block, and EXECUTE's string inside it.
        "DO $$BEGIN ALTER ROLE app SUPERUSER; END$$",
        "DO $$ BEGIN EXECUTE 'ALTER ROLE app SUPERUSER'; END $$",
        "DO 'BEGIN PERFORM pg_terminate_backend(1); END'",
        "DO $f$ DECLARE r int; BEGIN GRANT pg_execute_server_program TO app; END $f$",
        "REASSIGN OWNED BY a TO b",
        "ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO app",
        "CREATE EXTENSION dblink",
        "LOAD 'auto_explain'",
    ] {
        assert_eq!(pg(sql), Class::ServerWide, "{sql}");
    }
}

#[test]
fn mysql_statements_that_reach_the_server_are_server_wide() {
    for sql in [
        "SET GLOBAL max_connections = 17",
        "/*!SET GLOBAL wait_timeout = 7*/",
        "/*!40101 SET @@global.wait_timeout = 7 */",
        "SET @a = 1, @@GLOBAL.read_only = 0",
        "SET sql_mode = '', GLOBAL max_connections = 5",
        "SET PERSIST max_connections = 5",
        "CHANGE MASTER TO MASTER_HOST='evil.example', MASTER_PORT=3306",
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='evil.example'",
        "START SLAVE",
        "start replica",
        "STOP SLAVE",
        "BINLOG 'abc'",
        "RESET MASTER",
        "PURGE BINARY LOGS BEFORE NOW()",
        "FLUSH PRIVILEGES",
        "KILL 12",
        "KILL QUERY 12",
        "SHUTDOWN",
        "INSTALL PLUGIN x SONAME 'x.so'",
        "GRANT ALL ON *.* TO 'mallory'@'%'",
        "DROP USER 'bob'@'%'",
        "RENAME USER 'a'@'%' TO 'b'@'%'",
        "SET DEFAULT ROLE admin FOR 'a'@'%'",
        "LOAD DATA INFILE '/etc/passwd' INTO TABLE t",
        "SELECT * FROM t INTO OUTFILE '/tmp/x'",
        "SELECT 'x' INTO DUMPFILE '/tmp/x'",
        "SELECT load_file('/etc/passwd')",
        "/*M!100100 SET GLOBAL read_only = 0 */",
        "SELECT 1; /*!SET GLOBAL max_connections = 17*/",
    ] {
        assert_eq!(my(sql), Class::ServerWide, "{sql}");
    }
    // MySQL's double quotes hold a string.
    assert_eq!(my("SELECT \"SET GLOBAL x = 1\""), Class::Read);
}

#[test]
fn passwords_are_found_in_every_form_and_part() {
    for sql in [
        "CREATE OR REPLACE USER u IDENTIFIED BY 'pw'",
        "BEGIN; ALTER ROLE app PASSWORD 'x'; COMMIT",
        "CREATE SUBSCRIPTION s CONNECTION 'host=a password=pw' PUBLICATION p",
        "CREATE SUBSCRIPTION s CONNECTION 'host=a password = pw' PUBLICATION p",
        "ALTER SUBSCRIPTION s CONNECTION 'host=a dbname=b PassWord =pw'",
        "CHANGE MASTER TO MASTER_HOST='a', MASTER_PASSWORD='pw'",
        "CREATE USER MAPPING FOR app SERVER s OPTIONS (user 'a', password 'pw')",
        "DO $$BEGIN ALTER ROLE app PASSWORD 'x'; END$$",
        "DO $$BEGIN EXECUTE 'ALTER ROLE app PASSWORD ''x'''; END$$",
        "SELECT dblink_connect('host=h user=u password=secret')",
        "SELECT * FROM dblink('postgresql://u:secret@h/db', 'SELECT 1') AS t(a int)",
        "/*!CREATE USER 'a'@'%' IDENTIFIED BY 'pw'*/",
        "/*!SET PASSWORD FOR 'root'@'localhost' = PASSWORD('x')*/",
        "SET PASSWORD FOR 'a'@'%' = PASSWORD('x')",
        "GRANT ALL ON db.* TO 'a'@'%' IDENTIFIED BY 'pw'",
        "CREATE USER 'a'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('pw')",
        "UPDATE mysql.user SET authentication_string = PASSWORD('x') WHERE User = 'root'",
        "SELECT PASSWORD('x')",
    ] {
        assert_eq!(my(sql), Class::Password, "mysql: {sql}");
    }
    for sql in [
        "DO $$BEGIN ALTER ROLE app PASSWORD 'x'; END$$",
        "CREATE SUBSCRIPTION s CONNECTION 'host=a password = pw' PUBLICATION p",
        "DO $body$ DECLARE x int; BEGIN EXECUTE format('ALTER ROLE %I PASSWORD %L', 'a', 'b'); END $body$",
    ] {
        assert_eq!(pg(sql), Class::Password, "postgresql: {sql}");
    }
}

#[test]
fn statements_naming_another_database_are_found() {
    let named = |sql| databases_named(sql, Quoting::Mysql);
    assert_eq!(named("INSERT INTO shop.orders VALUES (1)"), ["shop"]);
    assert_eq!(named("insert shop.orders values (1)"), ["shop"]);
    assert_eq!(named("SELECT * FROM t, `shop`.`orders` o"), ["shop"]);
    assert_eq!(
        named("UPDATE a JOIN shop.b ON a.id = b.id SET a.x = b.x"),
        ["shop"]
    );
    assert_eq!(named("SELECT shop.refund(1)"), ["shop"]);
    assert_eq!(named("SELECT shop.orders.id FROM x"), ["shop"]);
    assert_eq!(named("/*!DELETE FROM shop.orders*/"), ["shop"]);
    // Columns of aliases, and numbers, name no database.
    assert!(named("SELECT a.id, b.x FROM t a JOIN u b ON a.id = b.id WHERE a.v > 1.5").is_empty());
    assert!(named("SELECT * FROM (SELECT o.id FROM o) AS s").is_empty());
    assert!(databases_named("SELECT * FROM shop.orders", Quoting::Postgres).is_empty());
    assert_eq!(
        used_database("USE `shop`", Quoting::Mysql).as_deref(),
        Some("shop")
    );
    assert_eq!(
        used_database("use shop", Quoting::Mysql).as_deref(),
        Some("shop")
    );
    assert_eq!(used_database("SELECT 1", Quoting::Mysql), None);
}

#[test]
fn no_input_breaks_the_classifier() {
    for text in [
        "'",
        "\"",
        "$$",
        "$a$",
        "/*",
        "/*!",
        "E'\\",
        "--",
        "x'",
        "$",
        "(((",
        ")",
        ";;;",
        "\u{0}\u{FFFD}",
        "DO",
        "BEGIN",
        "EXPLAIN ANALYZE",
        "PREPARE",
        ".",
        "a.",
        ".a",
    ] {
        let _ = pg(text);
        let _ = my(text);
        let _ = databases_named(text, Quoting::Mysql);
        let _ = used_database(text, Quoting::Mysql);
    }
}
