//! Other roles' objects are hostile input (issue 48): a role with only CREATE on the
//! database, or on a writable `public`, plants functions, operators and views under the
//! names corescale's statements use; corescale's own statements never run them, a run reads
//! only the tables setup created, and teardown stops, naming them, at anything of another's
//! it would drop or change. Each test works in a database of its own and drops the roles it
//! made, failed or not.

use crate::common;

use common::scratch::PgScratch;
use common::{corescale, hold_server, required as server};
use mysql::prelude::Queryable;

/// A login role of the server's, dropped (with what it owns in the scratch database) when the
/// guard goes: declared after the scratch database, so it goes first.
struct Role {
    url: String,
    name: String,
}

impl Role {
    fn new(scratch: &PgScratch, stem: &str) -> Self {
        let name = format!("cs_{stem}_{}", std::process::id());
        let role = Role {
            url: scratch.url.clone(),
            name,
        };
        scratch
            .client()
            .batch_execute(&format!(
                "DROP ROLE IF EXISTS \"{0}\"; CREATE ROLE \"{0}\" LOGIN; GRANT CREATE ON DATABASE \"{1}\" TO \"{0}\"",
                role.name, scratch.name
            ))
            .unwrap();
        role
    }

    /// A client connected as this role.
    fn client(&self) -> postgres::Client {
        let mut url = url::Url::parse(&self.url).unwrap();
        url.set_username(&self.name).unwrap();
        postgres::Client::connect(url.as_str(), postgres::NoTls).unwrap()
    }
}

impl Drop for Role {
    fn drop(&mut self) {
        if let Ok(mut admin) = postgres::Client::connect(&self.url, postgres::NoTls) {
            let _ = admin.batch_execute(&format!(
                "DROP OWNED BY \"{0}\" CASCADE; REVOKE ALL ON DATABASE \"{1}\" FROM \"{0}\"; DROP ROLE IF EXISTS \"{0}\"",
                self.name,
                self.url.rsplit('/').next().unwrap_or_default()
            ));
        }
    }
}

/// Functions that shadow the built-ins corescale's statements call (an exact match of the
/// argument types beats pg_catalog's), each of which drops `public.app_data` and, where it
/// can, makes `role` a superuser, created in `schema` by the client given.
fn plant_shadows(client: &mut postgres::Client, schema: &str, role: &str) {
    let body = format!(
        "BEGIN DROP TABLE IF EXISTS public.app_data; BEGIN EXECUTE 'ALTER ROLE \"{role}\" SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;"
    );
    client
        .batch_execute(&format!(
            "CREATE FUNCTION {schema}.lower(name) RETURNS text LANGUAGE plpgsql AS $$ {body} RETURN pg_catalog.lower($1::text); END $$;
             CREATE FUNCTION {schema}.format(text, text, text) RETURNS text LANGUAGE plpgsql AS $$ {body} RETURN 'SELECT 1'; END $$;
             CREATE FUNCTION {schema}.format(text, text, text, text) RETURNS text LANGUAGE plpgsql AS $$ {body} RETURN 'SELECT 1'; END $$;
             CREATE FUNCTION {schema}.obj_description(oid, name) RETURNS text LANGUAGE plpgsql AS $$ {body} RETURN NULL; END $$;
             CREATE FUNCTION {schema}.starts_with(name, text) RETURNS boolean LANGUAGE plpgsql AS $$ {body} RETURN false; END $$;
             CREATE FUNCTION {schema}.name_eq_text(name, text) RETURNS boolean LANGUAGE plpgsql AS $$ {body} RETURN $1::text = $2; END $$;
             CREATE OPERATOR {schema}.= (LEFTARG = name, RIGHTARG = text, FUNCTION = {schema}.name_eq_text);
             CREATE FUNCTION {schema}.count_rows(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$ {body} RETURN $1 >= $2; END $$;
             CREATE OPERATOR {schema}.>= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = {schema}.count_rows);"
        ))
        .unwrap();
}

fn is_superuser(scratch: &PgScratch, role: &str) -> bool {
    scratch
        .client()
        .query_one("SELECT rolsuper FROM pg_roles WHERE rolname = $1", &[&role])
        .unwrap()
        .get(0)
}

/// Whether `public.app_data`, the user's own table, is still there with its rows.
fn app_data_rows(scratch: &PgScratch) -> i64 {
    scratch.count(
        "SELECT CASE WHEN to_regclass('public.app_data') IS NULL THEN -1 ELSE (SELECT count(*) FROM public.app_data) END",
    )
}

/// `db setup` of `schemas` tables of 256 rows, with `extra` options.
fn setup(url: &str, schemas: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            url,
            "--schemas",
            schemas,
            "--scale",
            "256",
        ])
        .args(extra)
        .assert()
}

fn run_db(url: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
    corescale()
        .args([
            "run",
            "db",
            "--target",
            url,
            "--sweep",
            "1",
            "--duration",
            "300ms",
        ])
        .args(["--repeat", "1"])
        .args(extra)
        .assert()
}

/// (1) A role with only CREATE on the database makes a schema named after corescale's user
/// (first in the default search_path) full of shadowing functions and operators, a forged
/// catalogue and a view named corescale_t0 over one of them. Setup, check, run and teardown
/// run none of them: the user's table survives, the role gains nothing, the run refuses the
/// view, and every command warns that another role owns the schema it would work in.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_schema_named_after_the_user_runs_none_of_its_code() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "user_schema");
    let user = url::Url::parse(&base).unwrap().username().to_string();
    let attacker = Role::new(&scratch, "creator");
    scratch
        .client()
        .batch_execute("CREATE TABLE public.app_data AS SELECT generate_series(1, 7) AS id")
        .unwrap();
    setup(&scratch.url, "1", &[]).success();
    let mut planted = attacker.client();
    planted
        .batch_execute(&format!("CREATE SCHEMA \"{user}\""))
        .unwrap();
    plant_shadows(&mut planted, &format!("\"{user}\""), &attacker.name);
    // A catalogue of its own naming a view corescale_t0 over a function that drops the
    // user's table, as `run db` would read it from the current schema.
    planted
        .batch_execute(&format!(
            "CREATE FUNCTION \"{user}\".evil() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN DROP TABLE IF EXISTS public.app_data; RETURN 1; END $$;
             CREATE VIEW \"{user}\".corescale_t0 AS SELECT g::bigint AS key, \"{user}\".evil() AS scratch, 'x'::text AS filler FROM generate_series(1, 256) g;
             CREATE TABLE \"{user}\".corescale_catalog (kind text, name text, state text, created_at timestamptz DEFAULT now(), corescale_version text, parameters text,
                 object_namespace text, object_id text, object_created text, object_owner text, object_mark text, object_engine text, setup_started text, setup_ended text);
             INSERT INTO \"{user}\".corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark)
                 SELECT 'table', 'corescale_t0', 'ready', '0', '{{\"schema\":0,\"schemas\":1,\"rows\":256}}', '{user}', c.oid::text, '{user}', 'corescale setup 1-1'
                 FROM pg_class c WHERE c.relname = 'corescale_t0' AND c.relkind = 'v'"
        ))
        .unwrap();
    let warned = |stderr: &str| stderr.contains(&format!("belongs to {}", attacker.name));
    let check = corescale()
        .args(["db", "check", "--target", &scratch.url])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&check.get_output().stderr).into_owned();
    assert!(warned(&stderr), "{stderr}");
    // The schema is the role's: the run refuses it before reading anything there.
    let run = run_db(&scratch.url, &[]).code(2);
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!("{} (owns the schema", attacker.name))
            && stderr.contains("--in-schema"),
        "{stderr}"
    );
    // corescale's own tables, in public, are named there and run.
    run_db(&scratch.url, &["--in-schema", "public"]).success();
    run_db(&scratch.url, &["--in-schema", "public", "--server-loop"]).success();
    let teardown = corescale()
        .args([
            "db",
            "teardown",
            "--target",
            &scratch.url,
            "--in-schema",
            "public",
        ])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&teardown.get_output().stdout).into_owned();
    assert!(stdout.contains("corescale_t0"), "{stdout}");
    assert_eq!(app_data_rows(&scratch), 7, "the user's table was dropped");
    assert!(
        !is_superuser(&scratch, &attacker.name),
        "the role became a superuser"
    );
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class WHERE relname LIKE 'corescale%' AND relnamespace = 'public'::regnamespace"),
        0
    );
    // The planted objects are the role's own: none was dropped.
    assert_eq!(
        scratch.count(&format!(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '{user}' AND c.relname LIKE 'corescale%'"
        )),
        2
    );
}

/// (2) `public` writable by everyone (PostgreSQL 14 and older, kept by pg_upgrade): the
/// shadows live there. check and setup name the role that may create beside corescale's
/// objects and recommend --in-schema; setup, a run with the server-side loop, and teardown
/// run none of the shadows. Then --in-schema: setup creates a schema of the user's own,
/// warns of nothing, and run and teardown work there.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_writable_public_schema_runs_none_of_its_code() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "public_shadow");
    let attacker = Role::new(&scratch, "public");
    scratch
        .client()
        .batch_execute(
            "GRANT CREATE ON SCHEMA public TO PUBLIC; CREATE TABLE public.app_data AS SELECT generate_series(1, 7) AS id",
        )
        .unwrap();
    plant_shadows(&mut attacker.client(), "public", &attacker.name);
    let made = setup(&scratch.url, "2", &[]).success();
    let stderr = String::from_utf8_lossy(&made.get_output().stderr).into_owned();
    assert!(
        stderr.contains("other roles may create objects in schema public")
            && stderr.contains(&attacker.name)
            && stderr.contains("--in-schema"),
        "{stderr}"
    );
    run_db(&scratch.url, &["--server-loop"]).success();
    run_db(&scratch.url, &[]).success();
    corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .success()
        .stdout(predicates::str::contains("corescale_catalog"));
    assert_eq!(app_data_rows(&scratch), 7, "the user's table was dropped");
    assert!(
        !is_superuser(&scratch, &attacker.name),
        "the role became a superuser"
    );

    // A schema of corescale's own: no warning, and every command works there.
    let url = &scratch.url;
    let made = setup(url, "1", &["--in-schema", "cs own"]).success();
    let stderr = String::from_utf8_lossy(&made.get_output().stderr).into_owned();
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'cs own' AND c.relname IN ('corescale_t0', 'corescale_catalog')"),
        2
    );
    run_db(url, &["--in-schema", "cs own", "--server-loop"]).success();
    // Without it, the tables are not where the run looks.
    run_db(url, &[])
        .code(1)
        .stderr(predicates::str::contains("db setup"));
    corescale()
        .args(["db", "teardown", "--target", url, "--in-schema", "cs own"])
        .assert()
        .success()
        .stdout(predicates::str::contains("corescale_t0"));
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class WHERE relname LIKE 'corescale%'"),
        0
    );
    assert_eq!(app_data_rows(&scratch), 7);
    assert!(!is_superuser(&scratch, &attacker.name));
    // A schema another role owns is not taken for corescale's own.
    attacker
        .client()
        .batch_execute("CREATE SCHEMA theirs")
        .unwrap();
    // Refused as any schema another role owns is (issue 74): a usage error.
    setup(url, "1", &["--in-schema", "theirs"])
        .code(2)
        .stderr(predicates::str::contains(format!(
            "schema theirs of {url}, where corescale works, is not its own: {} (owns the schema",
            attacker.name
        )));
}

/// (3) Dependencies of every kind stop teardown, all or nothing: a sequence OWNED BY a
/// column of corescale's, a statistics object on its table, a publication of it, and a
/// sequence owned by the catalogue. Each is named; nothing is dropped or emptied; once they
/// are gone teardown drops everything.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_every_kind_of_dependency_stops_teardown() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "dependency_kinds");
    setup(&scratch.url, "2", &[]).success();
    scratch
        .client()
        .batch_execute(
            "CREATE SEQUENCE app_seq OWNED BY corescale_t0.key;
             CREATE STATISTICS app_stats ON key, scratch FROM corescale_t1;
             CREATE PUBLICATION app_pub FOR TABLE corescale_t1",
        )
        .unwrap();
    let output = corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    for named in [
        "sequence public.app_seq",
        "statistics object public.app_stats",
        "publication app_pub publishes corescale_t1",
    ] {
        assert!(stderr.contains(named), "{named}: {stderr}");
    }
    assert!(stderr.contains("nothing was dropped"), "{stderr}");
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class WHERE relname IN ('corescale_t0', 'corescale_t1', 'app_seq')"),
        3
    );
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_statistic_ext WHERE stxname = 'app_stats'"),
        1
    );
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_publication_tables WHERE pubname = 'app_pub'"),
        1
    );
    scratch
        .client()
        .batch_execute("DROP SEQUENCE app_seq; DROP STATISTICS app_stats; DROP PUBLICATION app_pub; CREATE SEQUENCE cat_seq OWNED BY corescale_catalog.name")
        .unwrap();
    // The catalogue is kept while a sequence of another's hangs on it; its tables go.
    let output = corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(stderr.contains("sequence public.cat_seq"), "{stderr}");
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class WHERE relname = 'cat_seq'"),
        1
    );
    scratch
        .client()
        .batch_execute("DROP SEQUENCE cat_seq")
        .unwrap();
    corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .success();
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_class WHERE relname LIKE 'corescale%'"),
        0
    );
}

/// MariaDB accounts `user@127.0.0.1` of a test, dropped when the guard goes, failed or not.
struct DropUsers(String, Vec<String>);

impl Drop for DropUsers {
    fn drop(&mut self) {
        if let Ok(mut admin) = mysql::Conn::new(self.0.as_str()) {
            for user in &self.1 {
                let _ = admin.query_drop(format!("DROP USER IF EXISTS '{user}'@'127.0.0.1'"));
            }
        }
    }
}

/// (4) A private MariaDB with read_only=1, which does not bind root (READ ONLY ADMIN): scripts that
/// hide a write in an executable comment, behind a `--` or `#` comment line, or lift the
/// session's read-only mode are refused before they start; a write the check cannot see (in
/// a stored function) is refused by the server, because each session is held read-only; no
/// row is deleted.
#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd installed, to start a private server"
)]
fn mariadb_a_read_only_target_takes_no_write_from_a_super_account() {
    // A private server of its own, read-only from the start, as a replica is.
    let mut server = common::mariadb::PrivateMariaDb::start("corescale-readonly", |_| {
        vec![
            "--bind-address=127.0.0.1".to_string(),
            "--read-only=1".to_string(),
        ]
    });
    let mut admin = server.admin();
    for sql in [
        "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'",
        "GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
        "CREATE DATABASE test",
        "CREATE TABLE test.victim (id INT PRIMARY KEY) ENGINE=InnoDB",
        "INSERT INTO test.victim VALUES (1), (2), (3)",
        "CREATE FUNCTION test.writer() RETURNS INT MODIFIES SQL DATA BEGIN DELETE FROM test.victim WHERE id = 2; RETURN 1; END",
    ] {
        admin.query_drop(sql).unwrap();
    }
    let url = format!("mysql://root@127.0.0.1:{}/test", server.port);
    let rows = |admin: &mut mysql::Conn| -> i64 {
        admin
            .query_first("SELECT COUNT(*) FROM test.victim")
            .unwrap()
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let run = |path: &std::path::Path| {
        corescale()
            .args(["run", "script", "--target", &url, "--file"])
            .arg(path)
            .args(["-w", "1", "--repeat", "1", "--job-size", "5", "-q"])
            .assert()
    };
    for (name, text) in [
        ("bang.sql", "/*!DELETE FROM victim WHERE id = 2*/;\n"),
        (
            "versioned.sql",
            "/*!50000 DELETE */ FROM victim WHERE id = 2;\n",
        ),
        (
            "dashes.sql",
            "-- just a comment\nDELETE FROM victim WHERE id = 2;\n",
        ),
        (
            "hash.sql",
            "# a comment\nDELETE FROM victim WHERE id = 2;\n",
        ),
        (
            "mode.sql",
            "SET SESSION TRANSACTION READ WRITE;\nSELECT 1;\n",
        ),
        (
            "statement.sql",
            "SET STATEMENT tx_read_only=0 FOR DELETE FROM victim WHERE id = 2;\n",
        ),
    ] {
        let refused = run(&script(name, text)).code(2);
        let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
        assert!(
            stderr.contains("is read-only") && stderr.contains("writes"),
            "{name}: {stderr}"
        );
    }
    // The check sees a SELECT; the server refuses the function's DELETE.
    let hidden = run(&script("hidden.sql", "SELECT writer();\n")).code(1);
    let stderr = String::from_utf8_lossy(&hidden.get_output().stderr).into_owned();
    assert!(stderr.contains("READ ONLY"), "{stderr}");
    assert_eq!(rows(&mut admin), 3, "a row was deleted");
}

/// (6) A `\sleep` far longer than the level ends with it: a 1 s level of a script sleeping
/// 20 s lasts about a second (the whole run well under the sleep), SIGTERM ends a batch
/// that sleeps at once, and a failing statement
/// of 300,000 characters is quoted by its first 200 and its length.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_script_is_bounded_by_its_level() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let dir = tempfile::tempdir().unwrap();
    let sleepy = dir.path().join("sleepy.sql");
    std::fs::write(&sleepy, "SELECT 1;\n\\sleep 20 s\n").unwrap();
    let started = std::time::Instant::now();
    corescale()
        .args(["run", "script", "--target", &base, "--file"])
        .arg(&sleepy)
        .args(["-w", "1", "--repeat", "1", "--duration", "1s", "-q"])
        .assert()
        .success();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "a 1 s level took {:?}",
        started.elapsed()
    );
    // A stop signal ends the sleep too: SIGTERM stops a run after its current batch, here
    // one transaction that sleeps 20 s (fixed work: no level end to wake it).
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
        .args(["run", "script", "--target", &base, "--file"])
        .arg(&sleepy)
        .args(["-w", "1", "--repeat", "1", "--job-size", "1", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let signalled = std::time::Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &run.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    run.wait().unwrap();
    assert!(
        signalled.elapsed() < std::time::Duration::from_secs(10),
        "SIGTERM took {:?} to end a sleeping script",
        signalled.elapsed()
    );
    let long = dir.path().join("long.sql");
    std::fs::write(
        &long,
        format!(
            "SELECT no_such_column_{} FROM pg_class;\n",
            "x".repeat(300_000)
        ),
    )
    .unwrap();
    let failed = corescale()
        .args(["run", "script", "--target", &base, "--file"])
        .arg(&long)
        .args(["-w", "1", "--repeat", "1", "--job-size", "1", "-q"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&failed.get_output().stderr).into_owned();
    assert!(
        stderr.contains("characters)"),
        "{}",
        &stderr[..stderr.len().min(2000)]
    );
    assert!(stderr.len() < 5_000, "{} bytes of error", stderr.len());
}

/// (5) A result is checked before `report` uses it: a negative count, or responses that
/// disagree with the histogram or with the statements counted, are refused naming the file
/// and the field.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_tampered_result_is_refused_naming_its_field() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "tampered");
    setup(&scratch.url, "1", &[]).success();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_db(&scratch.url, &["-q", "-o", json.to_str().unwrap()]).success();
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    corescale().arg("report").arg(&json).assert().success();
    let tampered = |name: &str, change: &dyn Fn(&mut serde_json::Value)| {
        let mut copy = document.clone();
        change(&mut copy["levels"][0]);
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_string(&copy).unwrap()).unwrap();
        let refused = corescale().arg("report").arg(&path).assert().code(1);
        String::from_utf8_lossy(&refused.get_output().stderr).into_owned()
    };
    let stderr = tampered("negative.json", &|level| {
        level["workload_figures"]["statements"] = serde_json::json!(-78016.0)
    });
    assert!(
        stderr.contains("negative.json' levels[0].workload_figures.statements")
            && stderr.contains("-78016"),
        "{stderr}"
    );
    let stderr = tampered("count.json", &|level| {
        let count = level["latency"]["count"].as_u64().unwrap();
        level["latency"]["count"] = serde_json::json!(count * 2);
    });
    assert!(
        stderr.contains("count.json' levels[0].latency: histogram holds"),
        "{stderr}"
    );
    let stderr = tampered("statements.json", &|level| {
        let statements = level["workload_figures"]["statements"].as_f64().unwrap();
        level["workload_figures"]["statements"] = serde_json::json!(statements + 1.0);
    });
    assert!(
        stderr.contains("statements.json' levels[0].latency: count says"),
        "{stderr}"
    );
    corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .success();
}

/// (3) MariaDB: an account with only SELECT, INSERT, UPDATE and CREATE copies a marked
/// table (`CREATE TABLE ... LIKE`, which copies the comment) and writes its catalogue row.
/// Teardown drops nothing while that account may write the catalogue without holding DROP,
/// naming it; once its grant is revoked, the forged row still steers no drop (its table id
/// is not the recorded one). An account that cannot read the grant tables is told which
/// grant lets teardown prove ownership.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MySQL/MariaDB URL (see README)"
)]
fn mariadb_a_create_only_account_cannot_have_its_table_dropped() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = common::scratch::MyScratch::new(&base, common::scratch::scratch_name("forger"));
    let forger = format!("cs_forger_{}", std::process::id());
    let reader = format!("cs_blind_{}", std::process::id());
    let _users = DropUsers(base.clone(), vec![forger.clone(), reader.clone()]);
    let mut admin = mysql::Conn::new(base.as_str()).unwrap();
    for user in [&forger, &reader] {
        admin
            .query_drop(format!("CREATE USER '{user}'@'127.0.0.1'"))
            .unwrap();
    }
    admin
        .query_drop(format!(
            "GRANT SELECT, INSERT, UPDATE, CREATE ON `{}`.* TO '{forger}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    setup(&scratch.url, "1", &[]).success();
    forge_a_marked_table(&scratch.url, &forger);
    let refused = corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!("{forger}@127.0.0.1")) && stderr.contains("REVOKE INSERT, UPDATE"),
        "{stderr}"
    );
    assert_eq!(
        scratch.count("SELECT COUNT(*) FROM corescale_t7"),
        1,
        "the forger's table is intact"
    );
    admin
        .query_drop(format!(
            "REVOKE INSERT, UPDATE ON `{}`.* FROM '{forger}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    // A grant on some of the catalogue's columns lets it write rows as well.
    admin
        .query_drop(format!(
            "GRANT INSERT (name, kind) ON `{}`.corescale_catalog TO '{forger}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!("{forger}@127.0.0.1")));
    admin
        .query_drop(format!(
            "REVOKE INSERT (name, kind) ON `{}`.corescale_catalog FROM '{forger}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    let torn = corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&torn.get_output().stdout).into_owned();
    assert!(stdout.contains("corescale_t0"), "{stdout}");
    assert!(
        stdout.contains("left alone") && stdout.contains("corescale_t7"),
        "{stdout}"
    );
    assert_eq!(
        scratch.count("SELECT COUNT(*) FROM corescale_t7"),
        1,
        "the forger's table is intact"
    );
    // A catalogue whose writers cannot be read: nothing dropped, the grant named.
    scratch.execute("DROP TABLE corescale_t7");
    scratch.execute("DROP TABLE corescale_catalog");
    assert_an_account_blind_to_grants_is_told_the_grant(&scratch, &mut admin, &reader);
}

/// As `forger`, a copy of corescale's first table (`CREATE TABLE ... LIKE` copies its
/// comment, the mark) with one row, and a catalogue row for it copied from the original's.
fn forge_a_marked_table(url: &str, forger: &str) {
    let mut as_forger = {
        let mut url = url::Url::parse(url).unwrap();
        url.set_username(forger).unwrap();
        mysql::Conn::new(url.as_str()).unwrap()
    };
    as_forger
        .query_drop("CREATE TABLE corescale_t7 LIKE corescale_t0")
        .unwrap();
    as_forger
        .query_drop("INSERT INTO corescale_t7 SELECT * FROM corescale_t0 LIMIT 1")
        .unwrap();
    as_forger
        .query_drop(
            "INSERT INTO corescale_catalog (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine, setup_started, setup_ended)
             SELECT kind, 'corescale_t7', state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine, setup_started, setup_ended
             FROM corescale_catalog WHERE name = 'corescale_t0'",
        )
        .unwrap();
}

/// An account that may set up but cannot read the grant tables: teardown drops nothing and
/// names the grant that lets it prove ownership; the owner's teardown then leaves nothing.
fn assert_an_account_blind_to_grants_is_told_the_grant(
    scratch: &common::scratch::MyScratch,
    admin: &mut mysql::Conn,
    reader: &str,
) {
    admin
        .query_drop(format!(
            "GRANT ALL ON `{}`.* TO '{reader}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    admin
        .query_drop(format!("GRANT PROCESS ON *.* TO '{reader}'@'127.0.0.1'"))
        .unwrap();
    let blind = {
        let mut url = url::Url::parse(&scratch.url).unwrap();
        url.set_username(reader).unwrap();
        url.to_string()
    };
    setup(&blind, "1", &[]).success();
    corescale()
        .args(["db", "teardown", "--target", &blind])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("GRANT SELECT ON mysql.*"));
    assert_eq!(scratch.count("SELECT COUNT(*) FROM corescale_t0"), 256);
    corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .success();
    assert_eq!(scratch.objects(), 0);
}

/// (4) A role without the privileges a script needs is refused before the run, with the
/// statement and the server's words; one that has them runs it. PostgreSQL checks them by
/// EXPLAIN of the prepared statement, MariaDB as it prepares.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_a_role_lacking_a_scripts_privileges_is_refused_first() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "script_privileges");
    let reader = Role::new(&scratch, "reader");
    scratch
        .client()
        .batch_execute(&format!(
            "CREATE TABLE app (id int); INSERT INTO app VALUES (1); GRANT SELECT ON app TO \"{}\"",
            reader.name
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let mut url = url::Url::parse(&scratch.url).unwrap();
    url.set_username(&reader.name).unwrap();
    let run = |path: &std::path::Path| {
        corescale()
            .args(["run", "script", "--target", url.as_str(), "--file"])
            .arg(path)
            .args(["-w", "1", "--repeat", "1", "--job-size", "5", "-q"])
            .assert()
    };
    let writes = script(
        "writes.sql",
        "\\set x 1\nSELECT id FROM app;\nUPDATE app SET id = id + 1 WHERE id = :x;\n",
    );
    let refused = run(&writes).code(1);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains("lacks privileges the script needs")
            && stderr.contains("UPDATE app SET id = id + 1")
            && stderr.contains("permission denied for table app")
            && !stderr.contains("SELECT id FROM app ("),
        "{stderr}"
    );
    assert_eq!(scratch.count("SELECT sum(id)::bigint FROM app"), 1);
    run(&script(
        "reads.sql",
        "\\set x 1\nSELECT id FROM app WHERE id = :x;\n",
    ))
    .success();
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MySQL/MariaDB URL (see README)"
)]
fn mariadb_a_role_lacking_a_scripts_privileges_is_refused_first() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch =
        common::scratch::MyScratch::new(&base, common::scratch::scratch_name("script_grants"));
    let user = format!("cs_reader_{}", std::process::id());
    let _user = DropUsers(base.clone(), vec![user.clone()]);
    scratch.execute("CREATE TABLE app (id INT)");
    scratch.execute("INSERT INTO app VALUES (1)");
    let mut admin = mysql::Conn::new(base.as_str()).unwrap();
    admin
        .query_drop(format!("CREATE USER '{user}'@'127.0.0.1'"))
        .unwrap();
    admin
        .query_drop(format!(
            "GRANT SELECT ON `{}`.* TO '{user}'@'127.0.0.1'",
            scratch.name
        ))
        .unwrap();
    let mut url = url::Url::parse(&scratch.url).unwrap();
    url.set_username(&user).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("delete.sql");
    std::fs::write(&path, "DELETE FROM app WHERE id = 1;\n").unwrap();
    let refused = corescale()
        .args(["run", "script", "--target", url.as_str(), "--file"])
        .arg(&path)
        .args(["-w", "1", "--repeat", "1", "--job-size", "5", "-q"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains("lacks privileges the script needs")
            && stderr.contains("DELETE command denied"),
        "{stderr}"
    );
    assert_eq!(scratch.count("SELECT COUNT(*) FROM app"), 1);
}
