//! PostgreSQL, as pgio lays it out: one row per 8 KiB page (fillfactor 10 and a 1000-byte
//! filler), rows inserted in a random key order, a b-tree on the key. LIO is blks_hit and PIO
//! blks_read of pg_stat_database.

use std::sync::Mutex;

use anyhow::{Context, Result, anyhow, bail};
use postgres::error::SqlState;
use postgres::{Client, NoTls};

use super::catalog::{CATALOG_TABLE, ObjectKind, Owned, PG_LOCK_KEY, READY, SetupRecord};
use super::pg_wire::{ServerError, WireSession};
use super::target::{Target, within};
use super::{
    Answered, Database, DbCounters, DbSession, PREFIX, PlannedStatement, loop_function,
    mean_of_samples, quote_double, sample_keys, table_name,
};
use crate::workload::lio::layout::permutation;

const FILLER_BYTES: usize = 1000;
const INSERT_BATCH: usize = 2000;

pub struct Postgres {
    target: Target,
    monitor: Mutex<Client>,
}

impl Postgres {
    pub fn new(target: Target) -> Result<Self> {
        let monitor = Mutex::new(connect(&target)?);
        Ok(Self { target, monitor })
    }
}

fn connect(target: &Target) -> Result<Client> {
    let mut config = postgres::Config::new();
    // libpq's `?host=/dir` names a Unix-socket directory and wins over the URL's host, as in
    // psql and in corescale's own session client.
    match target.socket_directory() {
        Some(directory) => config.host_path(directory),
        None => config.host(target.host()),
    };
    config
        .user(&target.user())
        .dbname(&target.database())
        .connect_timeout(target.connect_timeout);
    config.application_name("corescale");
    if let Some(port) = target.port() {
        config.port(port);
    }
    if let Some(password) = target.password() {
        config.password(password);
    }
    let shown = target.clone();
    // The driver's own timeout covers the TCP connect only, not the handshake.
    within(target, move || {
        config.connect(NoTls).map_err(|error| {
            let target = shown;
            let reason = match std::error::Error::source(&error) {
                Some(source) if error.as_db_error().is_none() => format!("{error}: {source}"),
                _ => server_message(&error),
            };
            let hint = if error.as_db_error().is_some() {
                ""
            } else if target.password().is_none() && reason.contains("password") {
                " (give the password in CORESCALE_DB_PASSWORD or with --password-prompt)"
            } else {
                " (is the server running and the URL right?)"
            };
            anyhow!("cannot connect to {target}: {reason}{hint}")
        })
    })
}

fn describe(error: postgres::Error, target: &Target) -> anyhow::Error {
    let code = error.code().map(|code| code.code().to_string());
    explain(code.as_deref(), server_message(&error), target)
}

/// The server's own words when it sent an error (the driver's Display says only "db error").
fn server_message(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => error.to_string(),
    }
}

/// An error from a session's own connection, with the same hints as the driver's.
fn describe_wire(error: anyhow::Error, target: &Target) -> anyhow::Error {
    match error.downcast_ref::<ServerError>() {
        Some(server) => explain(Some(&server.code.clone()), error, target),
        None => error,
    }
}

/// The server's error with what to do about it, by SQLSTATE.
fn explain(code: Option<&str>, error: impl std::fmt::Display, target: &Target) -> anyhow::Error {
    match code {
        Some(code) if code == SqlState::UNDEFINED_TABLE.code() => {
            anyhow!("{error} in {target}: run `corescale db setup --target {target}` first")
        }
        Some(code) if code == SqlState::INSUFFICIENT_PRIVILEGE.code() => anyhow!(
            "{error} in {target}: the user needs CREATE on the database and SELECT/UPDATE on corescale_* tables"
        ),
        _ => anyhow!("{target}: {error}"),
    }
}

impl Database for Postgres {
    fn target(&self) -> &Target {
        &self.target
    }

    fn load_table(&self, record: SetupRecord, loaded: &(dyn Fn(u64) + Sync)) -> Result<()> {
        load_table(&self.target, record, loaded)
    }

    fn buffer_cache(&self) -> Result<Option<(u64, &'static str)>> {
        let mut client = self.monitor.lock().expect("monitor connection");
        let bytes: i64 = client
            .query_one(
                "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings WHERE name = 'shared_buffers'",
                &[],
            )
            .map_err(|error| describe(error, &self.target))?
            .get(0);
        Ok(Some((bytes.max(0) as u64, "shared_buffers")))
    }

    fn lock_setup(&self) -> Result<()> {
        let mut client = self.monitor.lock().expect("monitor connection");
        let locked: bool = client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&PG_LOCK_KEY])
            .map_err(|error| describe(error, &self.target))?
            .get(0);
        if !locked {
            bail!(
                "another `corescale db setup` or `db teardown` is working on {}: wait until it ends, then run this again",
                self.target
            );
        }
        Ok(())
    }

    fn has_catalogue(&self) -> Result<bool> {
        let mut client = self.monitor.lock().expect("monitor connection");
        Ok(client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1)",
                &[&CATALOG_TABLE],
            )
            .map_err(|error| describe(error, &self.target))?
            .get(0))
    }

    fn catalogue(&self) -> Result<Vec<Owned>> {
        if !self.has_catalogue()? {
            return Ok(Vec::new());
        }
        let mut client = self.monitor.lock().expect("monitor connection");
        let rows = client
            .query(
                &format!(
                    "SELECT kind::text, name::text, state::text, parameters::text FROM {} ORDER BY name",
                    quote_double(CATALOG_TABLE)
                ),
                &[],
            )
            .map_err(|error| describe(error, &self.target))
            .with_context(|| format!("reading corescale's catalogue {CATALOG_TABLE}"))?;
        Ok(rows
            .iter()
            .map(|row| Owned {
                kind: ObjectKind::parse(row.get(0)),
                name: row.get(1),
                state: row.get(2),
                parameters: row.get(3),
            })
            .collect())
    }

    fn create_catalogue(&self) -> Result<()> {
        let mut client = self.monitor.lock().expect("monitor connection");
        client
            .batch_execute(&format!(
                "CREATE TABLE {} (kind text NOT NULL, name text NOT NULL, state text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), corescale_version text NOT NULL, parameters text NOT NULL, PRIMARY KEY (kind, name))",
                quote_double(CATALOG_TABLE)
            ))
            .map_err(|error| describe(error, &self.target))
    }

    fn drop_owned(&self, object: &Owned) -> Result<()> {
        // The server quotes the name itself (format's %I), as the issue of hostile names asks.
        // Schema-qualified, so a name gone from this schema never resolves to another one.
        let template = match object.kind {
            Some(ObjectKind::Function) => "DROP FUNCTION IF EXISTS %I.%I(bigint, bigint, bigint)",
            _ => "DROP TABLE IF EXISTS %I.%I",
        };
        let mut client = self.monitor.lock().expect("monitor connection");
        let mut transaction = client
            .transaction()
            .map_err(|error| describe(error, &self.target))?;
        let statement: String = transaction
            .query_one(
                "SELECT format($1, current_schema(), $2::text)",
                &[&template, &object.name],
            )
            .map_err(|error| describe(error, &self.target))?
            .get(0);
        transaction
            .batch_execute(&statement)
            .map_err(|error| describe(error, &self.target))?;
        transaction
            .execute(
                &format!(
                    "DELETE FROM {} WHERE kind = $1 AND name = $2",
                    quote_double(CATALOG_TABLE)
                ),
                &[&object.kind.map_or("", ObjectKind::as_str), &object.name],
            )
            .map_err(|error| describe(error, &self.target))?;
        transaction
            .commit()
            .map_err(|error| describe(error, &self.target))
    }

    fn drop_catalogue(&self) -> Result<()> {
        let mut client = self.monitor.lock().expect("monitor connection");
        client
            .batch_execute(&format!("DROP TABLE {}", quote_double(CATALOG_TABLE)))
            .map_err(|error| describe(error, &self.target))
    }

    fn lookalikes(&self) -> Result<Vec<String>> {
        let mut client = self.monitor.lock().expect("monitor connection");
        let rows = client
            .query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() AND starts_with(lower(tablename), $1)
                 UNION ALL
                 SELECT proname::text || '()' FROM pg_proc WHERE pronamespace = current_schema()::regnamespace AND starts_with(lower(proname), $1)
                 ORDER BY 1",
                &[&PREFIX],
            )
            .map_err(|error| describe(error, &self.target))?;
        Ok(rows
            .iter()
            .map(|row| row.get::<_, String>(0).trim_end_matches("()").to_string())
            .collect())
    }

    fn open_session(&self) -> Result<Box<dyn DbSession>> {
        let mut wire = WireSession::connect(&self.target)?;
        // An index range scan visiting one heap block per row, planned once: the SLOB method.
        let statement_timeout = self
            .target
            .answer_timeout
            .map_or(0, |limit| limit.as_millis());
        wire.simple(&format!(
            "SET enable_bitmapscan = off; SET enable_seqscan = off; SET plan_cache_mode = force_generic_plan; SET statement_timeout = {statement_timeout}"
        ))
        .map_err(|error| describe_wire(error, &self.target))?;
        Ok(Box::new(PostgresSession {
            wire,
            target: self.target.clone(),
        }))
    }

    fn counters(&self) -> Result<DbCounters> {
        let mut client = self.monitor.lock().expect("monitor connection");
        let row = client
            .query_one(
                "SELECT blks_hit::float8, blks_read::float8 FROM pg_stat_database WHERE datname = current_database()",
                &[],
            )
            .map_err(|error| describe(error, &self.target))?;
        Ok(DbCounters {
            lio: row.get(0),
            pio: row.get(1),
            db_cpu_s: None,
        })
    }

    fn blocks_per_statement(
        &self,
        schema: u64,
        rows: u64,
        work_unit: u64,
        update: bool,
    ) -> Result<f64> {
        let mut client = connect(&self.target)?;
        client
            .batch_execute("SET enable_bitmapscan = off; SET enable_seqscan = off")
            .map_err(|error| describe(error, &self.target))?;
        let table = quote_double(&table_name(schema));
        let mut samples = Vec::new();
        for first_key in sample_keys(rows, work_unit) {
            let last_key = first_key + work_unit;
            let statement = if update {
                format!(
                    "UPDATE {table} SET scratch = scratch + 1 WHERE key BETWEEN {first_key} AND {last_key}"
                )
            } else {
                format!(
                    "SELECT sum(scratch), count(*) FROM {table} WHERE key BETWEEN {first_key} AND {last_key}"
                )
            };
            // An update is measured inside a transaction that is rolled back: no row changes.
            let mut transaction = client
                .transaction()
                .map_err(|error| describe(error, &self.target))?;
            let plan: serde_json::Value = transaction
                .query_one(
                    &format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}"),
                    &[],
                )
                .map_err(|error| describe(error, &self.target))?
                .get(0);
            transaction
                .rollback()
                .map_err(|error| describe(error, &self.target))?;
            let top = &plan[0]["Plan"];
            samples.push(
                top["Shared Hit Blocks"].as_f64().unwrap_or(0.0)
                    + top["Shared Read Blocks"].as_f64().unwrap_or(0.0),
            );
        }
        mean_of_samples(&samples, "EXPLAIN (ANALYZE, BUFFERS)")
    }
}

/// One transaction: the table, its rows, index and server-side loop, and their catalogue
/// rows. A failed or interrupted load leaves nothing behind.
fn load_table(target: &Target, record: SetupRecord, loaded: &(dyn Fn(u64) + Sync)) -> Result<()> {
    let mut client = connect(target)?;
    let name = table_name(record.schema);
    let (table, index) = (quote_double(&name), quote_double(&format!("{name}_key")));
    let mut transaction = client
        .transaction()
        .map_err(|error| describe(error, target))?;
    transaction
        .batch_execute(&format!(
            "CREATE TABLE {table} (key bigint NOT NULL, scratch bigint NOT NULL, filler text NOT NULL) WITH (fillfactor = 10)"
        ))
        .map_err(|error| describe(error, target))?;
    let insert = transaction
        .prepare(&format!(
            "INSERT INTO {table} (key, scratch, filler)
             SELECT k, k % 1000, repeat('x', {FILLER_BYTES}) FROM unnest($1::bigint[]) WITH ORDINALITY AS u(k, position) ORDER BY position"
        ))
        .map_err(|error| describe(error, target))?;
    // Rows go in physically in a random key order, so a key range visits random blocks.
    let order: Vec<i64> = permutation(record.rows, record.schema + 1)
        .into_iter()
        .map(|key| key as i64)
        .collect();
    for batch in order.chunks(INSERT_BATCH) {
        transaction
            .execute(&insert, &[&batch])
            .map_err(|error| describe(error, target))?;
        loaded(batch.len() as u64);
    }
    transaction
        .batch_execute(&format!(
            "CREATE INDEX {index} ON {table} (key); ANALYZE {table}"
        ))
        .map_err(|error| describe(error, target))?;
    transaction
        .batch_execute(&loop_function_sql(record.schema))
        .map_err(|error| describe(error, target))?;
    let record_row = format!(
        "INSERT INTO {} (kind, name, state, corescale_version, parameters) VALUES ($1, $2, $3, $4, $5)",
        quote_double(CATALOG_TABLE)
    );
    let parameters = record.to_json();
    for (kind, object) in [
        (ObjectKind::Table, name.clone()),
        (ObjectKind::Function, loop_function(record.schema)),
    ] {
        transaction
            .execute(
                &record_row,
                &[
                    &kind.as_str(),
                    &object,
                    &READY,
                    &env!("CARGO_PKG_VERSION"),
                    &parameters,
                ],
            )
            .map_err(|error| describe(error, target))?;
    }
    transaction
        .commit()
        .map_err(|error| describe(error, target))
}

/// pgio's approach: the statements loop inside the server, with no client round trip. Static
/// SQL, so PL/pgSQL plans it once, as the client's prepared statement is.
fn loop_function_sql(schema: u64) -> String {
    let function = quote_double(&loop_function(schema));
    let table = quote_double(&table_name(schema));
    format!(
        "CREATE FUNCTION {function}(row_count bigint, work_unit bigint, statements bigint)
         RETURNS bigint LANGUAGE plpgsql AS $$
         DECLARE
             first_key bigint;
             visited bigint := 0;
             total bigint;
             found_rows bigint;
         BEGIN
             FOR i IN 1..statements LOOP
                 first_key := floor(random() * (row_count - work_unit))::bigint;
                 SELECT sum(scratch), count(*) INTO total, found_rows
                   FROM {table} WHERE key BETWEEN first_key AND first_key + work_unit;
                 visited := visited + found_rows;
             END LOOP;
             RETURN visited;
         END $$"
    )
}

/// A session on corescale's own protocol client, which can pipeline (see `pg_wire`).
struct PostgresSession {
    wire: WireSession,
    target: Target,
}

impl PostgresSession {
    fn one(&mut self, schema: u64, update: bool, first_key: u64, last_key: u64) -> Result<u64> {
        let statement = PlannedStatement {
            schema,
            update,
            first_key,
            last_key,
        };
        Ok(self.submit(statement, 1)?.rows)
    }
}

impl DbSession for PostgresSession {
    fn select(&mut self, schema: u64, first_key: u64, last_key: u64) -> Result<u64> {
        self.one(schema, false, first_key, last_key)
    }

    fn update(&mut self, schema: u64, first_key: u64, last_key: u64) -> Result<u64> {
        self.one(schema, true, first_key, last_key)
    }

    fn submit(&mut self, statement: PlannedStatement, batch: usize) -> Result<Answered> {
        self.wire
            .submit(statement, batch)
            .map_err(|error| describe_wire(error, &self.target))
    }

    fn drain(&mut self) -> Result<Answered> {
        self.wire
            .drain()
            .map_err(|error| describe_wire(error, &self.target))
    }

    fn server_loop(
        &mut self,
        schema: u64,
        rows: u64,
        work_unit: u64,
        statements: u64,
    ) -> Result<u64> {
        let visited = self
            .wire
            .call(
                "corescale_server_loop",
                &format!(
                    "SELECT {}($1, $2, $3)",
                    quote_double(&loop_function(schema))
                ),
                &[rows as i64, work_unit as i64, statements as i64],
            )
            .map_err(|error| describe_wire(error, &self.target))
            .context("calling the server-side loop (was it created by `corescale db setup`?)")?;
        Ok(visited.unwrap_or(0) as u64)
    }

    fn backend_pid(&self) -> Option<u32> {
        Some(self.wire.backend_pid())
    }

    fn publish_statistics(&mut self) -> Result<()> {
        self.wire
            .simple("SELECT pg_stat_force_next_flush()")
            .map_err(|error| describe_wire(error, &self.target))
    }
}
