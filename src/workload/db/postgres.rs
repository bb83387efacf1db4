//! PostgreSQL, as pgio lays it out: one row per 8 KiB page (fillfactor 10 and a 1000-byte
//! filler), rows inserted in a random key order, a b-tree on the key. LIO is blks_hit and PIO
//! blks_read of pg_stat_database.

use std::sync::Mutex;

use anyhow::{Context, Result, anyhow};
use postgres::error::SqlState;
use postgres::{Client, NoTls};

use super::pg_wire::{ServerError, WireSession};
use super::target::Target;
use super::{
    Answered, Database, DbCounters, DbSession, PREFIX, PlannedStatement, mean_of_samples,
    sample_keys, table_name,
};
use crate::workload::lio::layout::permutation;

const FILLER_BYTES: usize = 1000;
const INSERT_BATCH: usize = 2000;
/// The server-side loop over table corescale_tN is the function corescale_loop_tN.
fn loop_function(schema: u64) -> String {
    format!("{PREFIX}loop_t{schema}")
}

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
    config
        .host(target.host())
        .user(target.user())
        .dbname(target.database());
    config.application_name("corescale");
    if let Some(port) = target.port() {
        config.port(port);
    }
    if let Some(password) = target.password() {
        config.password(password);
    }
    config.connect(NoTls).map_err(|error| {
        let reason = match std::error::Error::source(&error) {
            Some(source) if error.as_db_error().is_none() => format!("{error}: {source}"),
            _ => server_message(&error),
        };
        let hint = if error.as_db_error().is_some() {
            ""
        } else if target.password().is_none() && reason.contains("password") {
            " (give the password in the URL, in CORESCALE_DB_PASSWORD or with --password-prompt)"
        } else {
            " (is the server running and the URL right?)"
        };
        anyhow!("cannot connect to {target}: {reason}{hint}")
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
            anyhow!("{error} in {target}: run `corescale db setup --target <URL>` first")
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

    fn load_table(&self, schema: u64, rows: u64, loaded: &(dyn Fn(u64) + Sync)) -> Result<()> {
        load_table(&self.target, schema, rows, loaded)
    }

    fn teardown(&self) -> Result<Vec<String>> {
        let mut client = self.monitor.lock().expect("monitor connection");
        let tables: Vec<String> = client
            .query(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND starts_with(tablename, $1)",
                &[&PREFIX],
            )
            .map_err(|error| describe(error, &self.target))?
            .iter()
            .map(|row| row.get(0))
            .collect();
        let mut dropped = Vec::new();
        for table in tables {
            // Names come from the catalogue and carry the prefix; quote them anyway.
            client
                .batch_execute(&format!("DROP TABLE IF EXISTS \"{table}\""))
                .map_err(|error| describe(error, &self.target))?;
            dropped.push(table);
        }
        let functions: Vec<String> = client
            .query(
                "SELECT proname FROM pg_proc WHERE pronamespace = current_schema()::regnamespace AND starts_with(proname, $1)",
                &[&PREFIX],
            )
            .map_err(|error| describe(error, &self.target))?
            .iter()
            .map(|row| row.get(0))
            .collect();
        for function in functions {
            client
                .batch_execute(&format!("DROP FUNCTION IF EXISTS \"{function}\""))
                .map_err(|error| describe(error, &self.target))?;
            dropped.push(format!("{function}()"));
        }
        Ok(dropped)
    }

    fn inventory(&self) -> Result<(u64, u64)> {
        let mut client = self.monitor.lock().expect("monitor connection");
        let schemas: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename ~ '^corescale_t[0-9]+$'",
                &[],
            )
            .map_err(|error| describe(error, &self.target))?
            .get(0);
        if schemas == 0 {
            return Ok((0, 0));
        }
        let rows: i64 = client
            .query_one(&format!("SELECT count(*) FROM {}", table_name(0)), &[])
            .map_err(|error| describe(error, &self.target))?
            .get(0);
        Ok((schemas as u64, rows as u64))
    }

    fn open_session(&self) -> Result<Box<dyn DbSession>> {
        let mut wire = WireSession::connect(&self.target)?;
        // An index range scan visiting one heap block per row, planned once: the SLOB method.
        wire.simple(
            "SET enable_bitmapscan = off; SET enable_seqscan = off; SET plan_cache_mode = force_generic_plan",
        )
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

    fn blocks_per_statement(&self, schema: u64, work_unit: u64) -> Result<f64> {
        let mut client = connect(&self.target)?;
        client
            .batch_execute("SET enable_bitmapscan = off; SET enable_seqscan = off")
            .map_err(|error| describe(error, &self.target))?;
        let (_, rows) = self.inventory()?;
        let mut samples = Vec::new();
        for first_key in sample_keys(rows, work_unit) {
            let plan: serde_json::Value = client
                .query_one(
                    &format!(
                        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT sum(scratch), count(*) FROM {} WHERE key BETWEEN {first_key} AND {}",
                        table_name(schema),
                        first_key + work_unit
                    ),
                    &[],
                )
                .map_err(|error| describe(error, &self.target))?
                .get(0);
            let top = &plan[0]["Plan"];
            samples.push(
                top["Shared Hit Blocks"].as_f64().unwrap_or(0.0)
                    + top["Shared Read Blocks"].as_f64().unwrap_or(0.0),
            );
        }
        mean_of_samples(&samples, "EXPLAIN (ANALYZE, BUFFERS)")
    }
}

fn load_table(
    target: &Target,
    schema: u64,
    rows: u64,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let mut client = connect(target)?;
    let table = table_name(schema);
    client
        .batch_execute(&format!(
            "DROP TABLE IF EXISTS {table};
             CREATE TABLE {table} (key bigint NOT NULL, scratch bigint NOT NULL, filler text NOT NULL) WITH (fillfactor = 10)"
        ))
        .map_err(|error| describe(error, target))?;
    let insert = client
        .prepare(&format!(
            "INSERT INTO {table} (key, scratch, filler)
             SELECT k, k % 1000, repeat('x', {FILLER_BYTES}) FROM unnest($1::bigint[]) WITH ORDINALITY AS u(k, position) ORDER BY position"
        ))
        .map_err(|error| describe(error, target))?;
    // Rows go in physically in a random key order, so a key range visits random blocks.
    let order: Vec<i64> = permutation(rows, schema + 1)
        .into_iter()
        .map(|key| key as i64)
        .collect();
    for batch in order.chunks(INSERT_BATCH) {
        client
            .execute(&insert, &[&batch])
            .map_err(|error| describe(error, target))?;
        loaded(batch.len() as u64);
    }
    client
        .batch_execute(&format!(
            "CREATE INDEX {table}_key ON {table} (key); ANALYZE {table}"
        ))
        .map_err(|error| describe(error, target))?;
    client
        .batch_execute(&loop_function_sql(schema))
        .map_err(|error| describe(error, target))
}

/// pgio's approach: the statements loop inside the server, with no client round trip. Static
/// SQL, so PL/pgSQL plans it once, as the client's prepared statement is.
fn loop_function_sql(schema: u64) -> String {
    let (function, table) = (loop_function(schema), table_name(schema));
    format!(
        "CREATE OR REPLACE FUNCTION {function}(row_count bigint, work_unit bigint, statements bigint)
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
                &format!("SELECT {}($1, $2, $3)", loop_function(schema)),
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
