//! A run's tables stay its own for the whole run (issue 74, item 5). On a private server, a
//! role that owns the schema corescale works in (PostgreSQL: the database's owner, through
//! `public`'s pg_database_owner), or an account that may drop tables there (MariaDB), drops
//! corescale's table and puts a view of its own under that name, calling a function that
//! records who ran it. `db setup` and `run db` refuse such a place, naming the fix; a run
//! already under way holds its tables, so the drop waits for its end; a table changed
//! meanwhile ends the run at the next level. The harm is read at the server: the function's
//! table of who ran it stays empty.

use std::process::Output;

use crate::common;

use common::mariadb::PrivateMariaDb;
use common::pg_cluster::PrivateCluster;
use common::{corescale, required, spawn_until_first_level};
use mysql::prelude::Queryable;

fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `corescale` with `args`, run to its end.
fn run(args: &[&str]) -> Output {
    corescale().args(args).output().unwrap()
}

fn setup_args(url: &str) -> Vec<&str> {
    vec![
        "db",
        "setup",
        "--target",
        url,
        "--schemas",
        "1",
        "--scale",
        "256",
    ]
}

fn run_db_args(url: &str) -> Vec<&str> {
    vec![
        "run",
        "db",
        "--target",
        url,
        "--sweep",
        "1",
        "--duration",
        "300ms",
        "--repeat",
        "1",
    ]
}

/// A private PostgreSQL with database `shop` (owned by postgres, a superuser) and role
/// mallory, whose schema `mallory` holds `harm` (who ran her function) and `evil()`, which
/// records `current_user` there.
fn start_postgresql() -> PrivateCluster {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let cluster = PrivateCluster::start(
        &bindir,
        "host all all 127.0.0.1/32 trust\n",
        &[],
        "",
        "CREATE ROLE mallory LOGIN",
    );
    cluster.psql("CREATE DATABASE shop");
    pg_client(&cluster, "postgres")
        .batch_execute("CREATE SCHEMA mallory AUTHORIZATION mallory")
        .unwrap();
    pg_client(&cluster, "mallory")
        .batch_execute(
            "CREATE TABLE mallory.harm (who text);
             GRANT USAGE ON SCHEMA mallory TO PUBLIC; GRANT INSERT ON mallory.harm TO PUBLIC;
             CREATE FUNCTION mallory.evil() RETURNS bigint LANGUAGE sql
                 AS $$ INSERT INTO mallory.harm VALUES (current_user); SELECT 1::bigint $$",
        )
        .unwrap();
    cluster
}

fn pg_client(cluster: &PrivateCluster, role: &str) -> postgres::Client {
    postgres::Client::connect(
        &format!(
            "host=127.0.0.1 port={} user={role} dbname=shop",
            cluster.port
        ),
        postgres::NoTls,
    )
    .unwrap()
}

fn pg_url(cluster: &PrivateCluster) -> String {
    format!("postgres://postgres@127.0.0.1:{}/shop", cluster.port)
}

/// Who ran mallory's function, as her table recorded it.
fn pg_harm(cluster: &PrivateCluster) -> Vec<String> {
    pg_client(cluster, "postgres")
        .query("SELECT who FROM mallory.harm", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// mallory's swap: corescale's table dropped, a view of hers calling evil() in its place.
const PG_SWAP: &str = "BEGIN; DROP TABLE public.corescale_t0;
    CREATE VIEW public.corescale_t0 AS SELECT g::bigint AS key, mallory.evil() AS scratch, 'x'::text AS filler FROM generate_series(1, 256) g;
    COMMIT";

/// The database's owner, and so `public`'s (pg_database_owner), swaps corescale's table for
/// a view calling her function: run db, run db --server-loop and db setup refuse there with
/// exit 2, naming her and --in-schema; setup drops nothing of hers; her function never ran.
/// In a schema of corescale's own everything works.
#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn postgresql_the_schema_owner_cannot_put_a_view_under_a_run() {
    let cluster = start_postgresql();
    let url = pg_url(&cluster);
    let made = run(&setup_args(&url));
    assert!(made.status.success(), "{}", printed(&made));
    cluster.psql("ALTER DATABASE shop OWNER TO mallory");
    pg_client(&cluster, "mallory")
        .batch_execute(PG_SWAP)
        .unwrap();
    for extra in [&[][..], &["--server-loop"][..]] {
        let mut args = run_db_args(&url);
        args.extend(extra);
        let refused = run(&args);
        let said = printed(&refused);
        assert_eq!(refused.status.code(), Some(2), "{said}");
        assert!(
            said.contains("mallory (owns the database, and so the schema (pg_database_owner))")
                && said.contains("--in-schema corescale"),
            "{said}"
        );
        assert_eq!(said.trim().lines().count(), 1, "{said}");
    }
    let refused = run(&setup_args(&url));
    assert_eq!(refused.status.code(), Some(2), "{}", printed(&refused));
    let kind: String = pg_client(&cluster, "postgres")
        .query_one(
            "SELECT c.relkind::text FROM pg_class c WHERE c.oid = 'public.corescale_t0'::regclass",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(kind, "v", "setup dropped mallory's view");
    assert!(pg_harm(&cluster).is_empty(), "{:?}", pg_harm(&cluster));
    // A schema of corescale's own: set up and run as always.
    let own = ["--in-schema", "corescale"];
    let made = run(&[setup_args(&url), own.to_vec()].concat());
    assert!(made.status.success(), "{}", printed(&made));
    let ran = run(&[run_db_args(&url), own.to_vec()].concat());
    assert!(ran.status.success(), "{}", printed(&ran));
    assert!(pg_harm(&cluster).is_empty(), "{:?}", pg_harm(&cluster));
}

/// Order entry likewise: the schema's owner swaps a table of `run tpcc`'s for one of hers
/// with a trigger calling her function on every new order line; `run tpcc` refuses with exit
/// 2, naming her and --in-schema, and her function never ran.
#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn postgresql_the_schema_owner_cannot_put_a_trigger_under_order_entry() {
    let cluster = start_postgresql();
    let url = pg_url(&cluster);
    let made = run(&["db", "setup", "tpcc", "--warehouses", "1", "--target", &url]);
    assert!(made.status.success(), "{}", printed(&made));
    cluster.psql("ALTER DATABASE shop OWNER TO mallory");
    // Her table has the columns the catalogue shows anyone.
    let columns: String = pg_client(&cluster, "mallory")
        .query_one(
            "SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
             FROM pg_attribute WHERE attrelid = 'public.corescale_tpcc_order_line'::regclass
             AND attnum > 0 AND NOT attisdropped",
            &[],
        )
        .unwrap()
        .get(0);
    pg_client(&cluster, "mallory")
        .batch_execute(&format!(
            "BEGIN;
             CREATE FUNCTION mallory.noted() RETURNS trigger LANGUAGE plpgsql AS
                 $$ BEGIN PERFORM mallory.evil(); RETURN NEW; END $$;
             DROP TABLE public.corescale_tpcc_order_line;
             CREATE TABLE public.corescale_tpcc_order_line ({columns});
             CREATE TRIGGER noted BEFORE INSERT ON public.corescale_tpcc_order_line
                 FOR EACH ROW EXECUTE FUNCTION mallory.noted();
             COMMIT"
        ))
        .unwrap();
    let refused = run(&[
        "run",
        "tpcc",
        "--target",
        &url,
        "--sweep",
        "1",
        "--duration",
        "1s",
        "--repeat",
        "1",
    ]);
    let said = printed(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("mallory") && said.contains("--in-schema"),
        "{said}"
    );
    assert!(pg_harm(&cluster).is_empty(), "{:?}", pg_harm(&cluster));
}

/// A role that may only create objects in the schema keeps the warning: setup and run work.
#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn postgresql_a_role_that_may_only_create_is_a_warning() {
    let cluster = start_postgresql();
    let url = pg_url(&cluster);
    pg_client(&cluster, "postgres")
        .batch_execute("GRANT CREATE ON SCHEMA public TO mallory")
        .unwrap();
    let made = run(&setup_args(&url));
    let said = printed(&made);
    assert!(made.status.success(), "{said}");
    assert!(
        said.contains("other roles may create objects in schema public"),
        "{said}"
    );
    let ran = run(&run_db_args(&url));
    assert!(ran.status.success(), "{}", printed(&ran));
    // A member of corescale's role could act as it: refused.
    cluster.psql("CREATE ROLE helper LOGIN; GRANT postgres TO helper");
    let refused = run(&run_db_args(&url));
    let said = printed(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("helper (is a member of postgres)"), "{said}");
}

/// A run under way holds its tables: the schema's new owner's DROP waits (here, until her
/// lock_timeout), the run ends well, and the lock holds back no vacuum. Once it ended, her
/// swap goes through, and the next run refuses; her function never ran as corescale's user.
#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn postgresql_a_run_holds_its_tables_until_it_ends() {
    let cluster = start_postgresql();
    let url = pg_url(&cluster);
    let made = run(&setup_args(&url));
    assert!(made.status.success(), "{}", printed(&made));
    let json = tempfile::tempdir().unwrap();
    let json = json.path().join("run.json");
    let child = spawn_until_first_level(
        &[
            "run",
            "db",
            "--target",
            &url,
            "--sweep",
            "1,2,3,4",
            "--duration",
            "1s",
        ],
        &json,
    );
    cluster.psql("ALTER DATABASE shop OWNER TO mallory");
    let mut mallory = pg_client(&cluster, "mallory");
    mallory.batch_execute("SET lock_timeout = '1s'").unwrap();
    let waited = mallory.batch_execute(PG_SWAP).unwrap_err();
    assert_eq!(
        waited.code(),
        Some(&postgres::error::SqlState::LOCK_NOT_AVAILABLE),
        "{waited}"
    );
    mallory.batch_execute("ROLLBACK").unwrap();
    let mut admin = pg_client(&cluster, "postgres");
    let holders: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
              WHERE a.datname = 'shop' AND a.state = 'idle in transaction' AND a.backend_xmin IS NULL
                AND l.relation = 'public.corescale_t0'::regclass AND l.mode = 'AccessShareLock' AND l.granted",
            &[],
        )
        .unwrap()
        .get(0);
    let sessions: Vec<String> = admin
        .query(
            "SELECT a.pid || ' ' || a.state || ' xmin ' || coalesce(a.backend_xmin::text, '-') FROM pg_stat_activity a WHERE a.datname = 'shop'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(
        holders, 1,
        "no idle lock holder without a snapshot: {sessions:?}"
    );
    let ended = child.wait_with_output().unwrap();
    assert!(ended.status.success(), "{}", printed(&ended));
    mallory.batch_execute("SET lock_timeout = 0").unwrap();
    mallory.batch_execute(PG_SWAP).unwrap();
    let refused = run(&run_db_args(&url));
    assert_eq!(refused.status.code(), Some(2), "{}", printed(&refused));
    assert!(pg_harm(&cluster).is_empty(), "{:?}", pg_harm(&cluster));
}

/// Each level checks the tables again: a table whose mark changed during the run (a
/// superuser's COMMENT, which the lock does not stop) ends it at the next level, named.
#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn postgresql_a_table_changed_during_a_run_ends_it() {
    let cluster = start_postgresql();
    let url = pg_url(&cluster);
    let made = run(&setup_args(&url));
    assert!(made.status.success(), "{}", printed(&made));
    let json = tempfile::tempdir().unwrap();
    let json = json.path().join("run.json");
    let child = spawn_until_first_level(
        &[
            "run",
            "db",
            "--target",
            &url,
            "--sweep",
            "1,2,3,4",
            "--duration",
            "1s",
        ],
        &json,
    );
    pg_client(&cluster, "postgres")
        .batch_execute("COMMENT ON TABLE public.corescale_t0 IS 'changed'")
        .unwrap();
    let ended = child.wait_with_output().unwrap();
    let said = printed(&ended);
    assert_eq!(ended.status.code(), Some(1), "{said}");
    assert!(
        said.contains("corescale_t0") && said.contains("changed during the run"),
        "{said}"
    );
}

/// A private MariaDB with database shop, root over TCP, and mallory@127.0.0.1, who may
/// create tables there (SELECT, INSERT, UPDATE, CREATE) and keeps `harm` (who ran her
/// function) and `evil()`, an SQL SECURITY INVOKER function recording CURRENT_USER().
fn start_mariadb() -> (PrivateMariaDb, mysql::Conn) {
    let mut server = PrivateMariaDb::start("corescale-own", |_| Vec::new());
    let mut admin = server.admin();
    for sql in [
        "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'",
        "GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
        "CREATE DATABASE shop",
        "CREATE USER 'mallory'@'127.0.0.1'",
        "GRANT SELECT, INSERT, UPDATE, CREATE, CREATE ROUTINE, EXECUTE ON shop.* TO 'mallory'@'127.0.0.1'",
        "CREATE TABLE shop.harm (who VARCHAR(200))",
        "CREATE DEFINER = 'mallory'@'127.0.0.1' FUNCTION shop.evil() RETURNS BIGINT SQL SECURITY INVOKER MODIFIES SQL DATA BEGIN INSERT INTO shop.harm VALUES (CURRENT_USER()); RETURN 1; END",
    ] {
        admin.query_drop(sql).unwrap();
    }
    (server, admin)
}

fn mariadb_url(server: &PrivateMariaDb) -> String {
    format!("mysql://root@127.0.0.1:{}/shop", server.port)
}

fn mallory(server: &PrivateMariaDb) -> mysql::Conn {
    mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(server.port)
            .user(Some("mallory"))
            .db_name(Some("shop")),
    )
    .unwrap()
}

/// On MariaDB: an account that may only create tables is no refusal; a run holds its tables
/// (mallory, granted DROP meanwhile, waits on its metadata lock until her lock_wait_timeout);
/// once the run ended her swap goes through, and run db and db setup refuse with exit 2,
/// naming her and the REVOKE; so does a TRIGGER grant on one table. Her function never ran.
#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd and mariadb-install-db (see README)"
)]
fn mariadb_an_account_that_may_drop_cannot_swap_a_table_under_a_run() {
    let (server, mut admin) = start_mariadb();
    let url = mariadb_url(&server);
    let made = run(&setup_args(&url));
    assert!(made.status.success(), "{}", printed(&made));
    let json = tempfile::tempdir().unwrap();
    let json = json.path().join("run.json");
    let child = spawn_until_first_level(
        &[
            "run",
            "db",
            "--target",
            &url,
            "--sweep",
            "1,2,3,4",
            "--duration",
            "1s",
        ],
        &json,
    );
    admin
        .query_drop("GRANT DROP, CREATE VIEW ON shop.* TO 'mallory'@'127.0.0.1'")
        .unwrap();
    let mut attacker = mallory(&server);
    attacker
        .query_drop("SET SESSION lock_wait_timeout = 1")
        .unwrap();
    match attacker.query_drop("DROP TABLE corescale_t0") {
        Err(mysql::Error::MySqlError(error)) => assert_eq!(error.code, 1205, "{error}"),
        other => panic!("the drop did not wait for the run: {other:?}"),
    }
    let ended = child.wait_with_output().unwrap();
    assert!(ended.status.success(), "{}", printed(&ended));
    // A TRIGGER grant on one of corescale's tables alone is refused as well.
    admin
        .query_drop("REVOKE DROP, CREATE VIEW ON shop.* FROM 'mallory'@'127.0.0.1'")
        .unwrap();
    admin
        .query_drop("GRANT TRIGGER ON shop.corescale_t0 TO 'mallory'@'127.0.0.1'")
        .unwrap();
    let refused = run(&run_db_args(&url));
    let said = printed(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("mallory@127.0.0.1"), "{said}");
    admin
        .query_drop("GRANT DROP, CREATE VIEW ON shop.* TO 'mallory'@'127.0.0.1'")
        .unwrap();
    attacker.query_drop("DROP TABLE corescale_t0").unwrap();
    attacker
        .query_drop(
            "CREATE SQL SECURITY INVOKER VIEW corescale_t0 AS SELECT seq AS `key`, evil() AS scratch, 'x' AS filler FROM seq_1_to_256",
        )
        .unwrap();
    for args in [run_db_args(&url), setup_args(&url)] {
        let refused = run(&args);
        let said = printed(&refused);
        assert_eq!(refused.status.code(), Some(2), "{said}");
        assert!(
            said.contains("mallory@127.0.0.1") && said.contains("REVOKE DROP, ALTER"),
            "{said}"
        );
    }
    let kind: Option<String> = admin
        .query_first("SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'corescale_t0'")
        .unwrap();
    assert_eq!(
        kind.as_deref(),
        Some("VIEW"),
        "setup dropped mallory's view"
    );
    let harm: Vec<String> = admin.query("SELECT who FROM shop.harm").unwrap();
    assert!(harm.is_empty(), "{harm:?}");
}
