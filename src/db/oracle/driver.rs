//! Oracle, as SLOB lays it out: one row per block (PCTFREE 99), rows inserted in a random key
//! order, a b-tree on the key. LIO is v$sysstat 'session logical reads', PIO 'physical reads',
//! DB CPU from v$sys_time_model. Built with the `oracle` cargo feature; needs Oracle Instant
//! Client at run time. Not integration-tested here: no Oracle database is reachable in CI.

use std::sync::Mutex;

use anyhow::{Result, anyhow, bail};
use oracle::sql_type::OracleType;
use oracle::{Connection, Statement};

use crate::db::catalog::{
    CATALOG_TABLE, IDENTITY_COLUMNS, Identity, LOADING, LOCK_NAME, ObjectKind, Owned, READY,
    SetupStamp, Verdict, identity_select, verdict,
};
use crate::db::connect::target::{Target, within};
use crate::db::driver::ServerCheck;
use crate::db::session_error::{OraCode, ServerCode, SessionError};
use crate::db::{
    Answer, AtTarget, BoundValue, Catalogue, Database, DbCounters, DbSession, Field, Replication,
    Rows, SampledStatement, ServerCounters, ServerProcesses, SetupWindow, mean_of_samples,
    quote_double,
};
use crate::error::locked;

const INSERT_BATCH: usize = 1000;

pub struct Oracle {
    target: Target,
    monitor: Mutex<Connection>,
}

impl Oracle {
    /// Runs a DBMS_LOCK function on the setup lock's handle (named per schema) and answers
    /// its status.
    fn setup_lock_call(&self, call: &str) -> Result<i64> {
        let connection = locked(&self.monitor, "the monitor connection")?;
        let mut statement = connection
            .statement(&format!(
                "DECLARE handle VARCHAR2(128); BEGIN DBMS_LOCK.ALLOCATE_UNIQUE(:1 || ':' || USER, handle); :2 := {call}; END;"
            ))
            .build()
            .map_err(|error| describe(error, &self.target))?;
        statement
            .execute(&[&LOCK_NAME, &OracleType::Int64])
            .map_err(|error| describe(error, &self.target))?;
        statement
            .bind_value(2)
            .map_err(|error| describe(error, &self.target))
    }

    pub fn new(target: Target) -> Result<Self> {
        let monitor = Mutex::new(connect(&target)?);
        Ok(Self { target, monitor })
    }
}

/// The target as the client library takes it: user, password and connect string (EZConnect,
/// a TNS alias or a descriptor; see `oracle_connect`), or external authentication.
fn connect(target: &Target) -> Result<Connection> {
    let connect_string = target.database();
    let external = target.settings().external_auth;
    let (user, password) = (target.user(), target.password().unwrap_or_default());
    let shown = target.clone();
    within(target, move || {
        let mut connector = if external {
            oracle::Connector::new("", "", connect_string)
        } else {
            oracle::Connector::new(user, password, connect_string)
        };
        connector.external_auth(external);
        connector.connect().map_err(|error| {
            anyhow!("cannot connect to {shown}: {error} (is the listener up, the service or alias right (TNS_ADMIN), and Oracle Instant Client installed?)")
        })
    })
}

fn describe(error: oracle::Error, target: &Target) -> anyhow::Error {
    let text = error.to_string();
    if text.contains("ORA-00942") {
        return anyhow!("{text} in {target}: run `corescale db setup --target {target}` first");
    }
    if text.contains("ORA-01031") {
        return anyhow!(
            "{text} in {target}: the user needs CREATE TABLE, and SELECT on v$sysstat, v$mystat and v$sys_time_model"
        );
    }
    anyhow!("{target}: {text}")
}

/// Oracle keeps unquoted names in upper case; corescale creates them so, quoted.
fn catalogue_table() -> String {
    CATALOG_TABLE.to_uppercase()
}

/// The schema setup creates in and teardown looks in: the session's current schema.
fn current_schema(connection: &Connection, target: &Target) -> Result<String> {
    connection
        .query_row_as::<String>(
            "SELECT SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') FROM dual",
            &[],
        )
        .map_err(|error| describe(error, target))
}

/// `"SCHEMA"."NAME"`, each quoted.
fn qualified(schema: &str, name: &str) -> String {
    format!("{}.{}", quote_double(schema), quote_double(name))
}

/// What the database says table `name` of the current schema is, if it exists: its schema
/// (which is its owner) and object_id, which changes whenever a table is recreated.
fn current_identity(connection: &Connection, name: &str) -> oracle::Result<Option<Identity>> {
    let first = connection
        .query_as::<(String, String, Option<String>)>(
            "SELECT o.owner, TO_CHAR(o.object_id), c.comments FROM all_objects o LEFT JOIN all_tab_comments c ON c.owner = o.owner AND c.table_name = o.object_name WHERE o.owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND o.object_name = :1 AND o.object_type = 'TABLE'",
            &[&name],
        )?
        .next()
        .transpose()?;
    Ok(first.map(|(owner, object_id, comment)| Identity {
        namespace: owner.clone(),
        object_id: Some(object_id),
        owner: Some(owner),
        mark: comment,
        ..Identity::default()
    }))
}

impl Database for Oracle {
    fn open_session(&self) -> Result<Box<dyn DbSession>> {
        let mut connection = connect(&self.target)?;
        connection.set_autocommit(true);
        Ok(Box::new(OracleSession {
            connection,
            target: self.target.clone(),
            statements: Vec::new(),
        }))
    }

    fn check(&self) -> Result<ServerCheck> {
        let connection = locked(&self.monitor, "the monitor connection")?;
        let (server, user, database, protocol) = connection
            .query_row_as::<(String, String, String, Option<String>)>(
                "SELECT (SELECT banner FROM v$version WHERE ROWNUM = 1), USER, SYS_CONTEXT('USERENV', 'DB_NAME'), SYS_CONTEXT('USERENV', 'NETWORK_PROTOCOL') FROM dual",
                &[],
            )
            .map_err(|error| describe(error, &self.target))?;
        let create_table = connection
            .query_row_as::<i64>(
                "SELECT COUNT(*) FROM session_privs WHERE privilege IN ('CREATE TABLE', 'CREATE ANY TABLE')",
                &[],
            )
            .map_err(|error| describe(error, &self.target))?;
        let statistics = connection
            .query_row_as::<f64>("SELECT COUNT(*) FROM v$sysstat WHERE ROWNUM = 1", &[])
            .is_ok();
        let tcps = protocol
            .as_deref()
            .is_some_and(|protocol| protocol.eq_ignore_ascii_case("tcps"));
        // Which client library this host loaded: Instant Client versions differ in what they
        // can reach (a 23ai server from an 11.2 client, for one).
        let client = super::client::version().unwrap_or_else(|why| why);
        Ok(ServerCheck {
            server: format!("{server} (through Oracle client library {client})"),
            user,
            database,
            tls: tcps.then(|| crate::db::connect::tls::TlsFacts {
                protocol: "TCPS".to_string(),
                cipher: String::new(),
            }),
            privileges: vec![
                (
                    "CREATE TABLE (db setup creates its tables)".to_string(),
                    create_table > 0,
                ),
                (
                    "SELECT on v$sysstat, v$mystat, v$sys_time_model (the run's counters)"
                        .to_string(),
                    statistics,
                ),
            ],
        })
    }
}

impl AtTarget for Oracle {
    fn target(&self) -> &Target {
        &self.target
    }
}

impl Catalogue for Oracle {
    fn upper_case_names(&self) -> bool {
        true
    }

    fn own_name(&self, name: &str) -> String {
        quote_double(&name.to_uppercase())
    }

    fn has_catalogue(&self) -> Result<bool> {
        let connection = locked(&self.monitor, "the monitor connection")?;
        let count = connection
            .query_row_as::<i64>(
                "SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND table_name = :1",
                &[&catalogue_table()],
            )
            .map_err(|error| describe(error, &self.target))?;
        Ok(count > 0)
    }

    fn catalogue(&self) -> Result<Vec<Owned>> {
        if !self.has_catalogue()? {
            return Ok(Vec::new());
        }
        let connection = locked(&self.monitor, "the monitor connection")?;
        let schema = current_schema(&connection, &self.target)?;
        let columns = IDENTITY_COLUMNS.map(str::to_uppercase).join(",");
        // An older corescale's catalogue has fewer identity columns: read as unrecorded.
        let with_identity = connection
            .query_row_as::<i64>(
                "SELECT COUNT(*) FROM all_tab_columns WHERE owner = :1 AND table_name = :2 AND INSTR(',' || :3 || ',', ',' || column_name || ',') > 0",
                &[&schema, &catalogue_table(), &columns],
            )
            .map_err(|error| describe(error, &self.target))?;
        let identity = identity_select(with_identity == IDENTITY_COLUMNS.len() as i64, "");
        let rows = connection
            .query(
                &format!(
                    "SELECT kind, name, state, parameters, {identity} FROM {} ORDER BY name",
                    qualified(&schema, &catalogue_table())
                ),
                &[],
            )
            .map_err(|error| describe(error, &self.target))?;
        let mut owned = Vec::new();
        for row in rows {
            let row = row.map_err(|error| describe(error, &self.target))?;
            let column = |index: usize| -> Result<Option<String>> {
                row.get::<usize, Option<String>>(index)
                    .map_err(|error| describe(error, &self.target))
            };
            owned.push(Owned::from_columns(column)?);
        }
        Ok(owned)
    }

    fn create_catalogue(&self) -> Result<()> {
        let connection = locked(&self.monitor, "the monitor connection")?;
        connection
            .execute(
                &format!(
                    "CREATE TABLE {} (kind VARCHAR2(16) NOT NULL, name VARCHAR2(128) NOT NULL, state VARCHAR2(16) NOT NULL, created_at TIMESTAMP DEFAULT SYSTIMESTAMP NOT NULL, corescale_version VARCHAR2(32) NOT NULL, parameters VARCHAR2(4000) NOT NULL, object_namespace VARCHAR2(128), object_id VARCHAR2(40), object_created VARCHAR2(40), object_owner VARCHAR2(128), object_mark VARCHAR2(2048), object_engine VARCHAR2(64), setup_started VARCHAR2(40), setup_ended VARCHAR2(40), PRIMARY KEY (kind, name))",
                    quote_double(&catalogue_table())
                ),
                &[],
            )
            .map_err(|error| describe(error, &self.target))?;
        Ok(())
    }

    /// Locked, then checked again by object_id. Oracle commits before any DDL, so the lock
    /// ends just before DROP TABLE runs: a window Oracle gives no way to close.
    fn drop_owned(&self, object: &Owned) -> Result<Verdict> {
        let recorded = object.identity.as_ref();
        if object.kind != Some(ObjectKind::Table) {
            // Setup creates tables only here: any other row names nothing of corescale's.
            return Ok(verdict(recorded, None));
        }
        let connection = locked(&self.monitor, "the monitor connection")?;
        let fail = |error: oracle::Error| describe(error, &self.target);
        let current = current_identity(&connection, &object.name).map_err(fail)?;
        // A first look without a lock: a table that is not corescale's is never locked.
        let first = verdict(recorded, current.as_ref());
        let Some(current) = current.filter(|_| first == Verdict::Same) else {
            return Ok(first);
        };
        let table = qualified(&current.namespace, &object.name);
        if let Err(error) =
            connection.execute(&format!("LOCK TABLE {table} IN EXCLUSIVE MODE NOWAIT"), &[])
        {
            if error.to_string().contains("ORA-00942") {
                return Ok(Verdict::Missing);
            }
            return Err(fail(error));
        }
        let now = verdict(
            recorded,
            current_identity(&connection, &object.name)
                .map_err(fail)?
                .as_ref(),
        );
        if now != Verdict::Same {
            connection.rollback().map_err(fail)?;
            return Ok(now);
        }
        connection
            .execute(&format!("DROP TABLE {table} PURGE"), &[])
            .map_err(fail)?;
        connection
            .execute(
                &format!(
                    "DELETE FROM {} WHERE kind = :1 AND name = :2",
                    qualified(&current.namespace, &catalogue_table())
                ),
                &[&ObjectKind::Table.as_str(), &object.name],
            )
            .map_err(fail)?;
        connection.commit().map_err(fail)?;
        Ok(Verdict::Same)
    }

    fn drop_catalogue(&self) -> Result<bool> {
        let connection = locked(&self.monitor, "the monitor connection")?;
        let fail = |error: oracle::Error| describe(error, &self.target);
        let catalogue = qualified(
            &current_schema(&connection, &self.target)?,
            &catalogue_table(),
        );
        // Locked, so no row can be added between the count and the drop.
        connection
            .execute(&format!("LOCK TABLE {catalogue} IN EXCLUSIVE MODE"), &[])
            .map_err(fail)?;
        let rows = connection
            .query_row_as::<i64>(&format!("SELECT COUNT(*) FROM {catalogue}"), &[])
            .map_err(fail)?;
        if rows > 0 {
            connection.rollback().map_err(fail)?;
            return Ok(false);
        }
        connection
            .execute(&format!("DROP TABLE {catalogue} PURGE"), &[])
            .map_err(fail)?;
        Ok(true)
    }

    fn lookalikes(&self) -> Result<Vec<String>> {
        let connection = locked(&self.monitor, "the monitor connection")?;
        let rows = connection
            .query_as::<String>(
                "SELECT object_name FROM user_objects WHERE object_type IN ('TABLE', 'FUNCTION', 'PROCEDURE') AND UPPER(object_name) LIKE 'CORESCALE\\_%' ESCAPE '\\' ORDER BY 1",
                &[],
            )
            .map_err(|error| describe(error, &self.target))?;
        rows.map(|row| row.map_err(|error| describe(error, &self.target)))
            .collect()
    }

    /// Setup creates tables only here: any other kind names nothing of corescale's.
    fn identity_now(&self, kind: ObjectKind, name: &str) -> Result<Option<Identity>> {
        if kind != ObjectKind::Table {
            return Ok(None);
        }
        let connection = locked(&self.monitor, "the monitor connection")?;
        current_identity(&connection, name).map_err(|error| describe(error, &self.target))
    }
}

impl SetupWindow for Oracle {
    /// DBMS_LOCK, held for the session (not released at commit: DDL commits), one per schema
    /// (user). Needs EXECUTE on DBMS_LOCK.
    fn lock_setup(&self) -> Result<bool> {
        // 0: granted; 4: this session holds it already; 1: another holds it (no wait).
        match self.setup_lock_call("DBMS_LOCK.REQUEST(handle, DBMS_LOCK.X_MODE, 0, FALSE)")? {
            0 | 4 => Ok(true),
            1 => Ok(false),
            status => bail!(
                "DBMS_LOCK.REQUEST on the setup lock of {} answered status {status}",
                self.target
            ),
        }
    }

    fn unlock_setup(&self) -> Result<bool> {
        // 0: released; 4: not this session's.
        match self.setup_lock_call("DBMS_LOCK.RELEASE(handle)")? {
            0 => Ok(true),
            4 => Ok(false),
            status => bail!(
                "DBMS_LOCK.RELEASE on the setup lock of {} answered status {status}",
                self.target
            ),
        }
    }

    /// Oracle commits DDL at once: the table is created (never over an existing one), marked
    /// and recorded as `loading`; an interrupted load stays recorded for teardown.
    fn create_owned(
        &self,
        kind: ObjectKind,
        name: &str,
        create: &str,
        stamp: &SetupStamp,
        parameters: &str,
    ) -> Result<()> {
        if kind != ObjectKind::Table {
            bail!(
                "{}: corescale creates only tables on Oracle, not a {}",
                self.target,
                kind.as_str()
            );
        }
        let target = &self.target;
        let name = name.to_uppercase();
        let connection = connect(target)?;
        let catalogue = qualified(&current_schema(&connection, target)?, &catalogue_table());
        connection
            .execute(create, &[])
            .map_err(|error| describe(error, target))?;
        // The setup's mark: only the table's owner (or COMMENT ANY TABLE) can write a comment.
        connection
            .execute(
                &format!(
                    "COMMENT ON TABLE {} IS '{}'",
                    quote_double(&name),
                    stamp.mark.replace('\'', "''")
                ),
                &[],
            )
            .map_err(|error| describe(error, target))?;
        let created = current_identity(&connection, &name)
            .map_err(|error| describe(error, target))?
            .filter(|created| created.mark.as_deref() == Some(stamp.mark.as_str()))
            .ok_or_else(|| {
                anyhow!(
                    "{target}: {name}, just created, is not in all_objects with this setup's mark"
                )
            })?;
        connection
            .execute(
                &format!("INSERT INTO {catalogue} (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark) VALUES (:1, :2, :3, :4, :5, :6, :7, :8, :9)"),
                &[
                    &ObjectKind::Table.as_str(),
                    &name,
                    &LOADING,
                    &env!("CARGO_PKG_VERSION"),
                    &parameters,
                    &created.namespace,
                    &created.object_id,
                    &created.owner,
                    &created.mark,
                ],
            )
            .map_err(|error| describe(error, target))?;
        connection.commit().map_err(|error| describe(error, target))
    }

    /// Gathers the table's statistics, then marks it ready while its object_id is the one
    /// recorded.
    fn owned_table_ready(&self, name: &str, _rows: u64) -> Result<()> {
        let target = &self.target;
        let name = name.to_uppercase();
        let connection = connect(target)?;
        let catalogue = qualified(&current_schema(&connection, target)?, &catalogue_table());
        connection
            .execute(
                "BEGIN DBMS_STATS.GATHER_TABLE_STATS(USER, :1); END;",
                &[&name],
            )
            .map_err(|error| describe(error, target))?;
        let now = current_identity(&connection, &name)
            .map_err(|error| describe(error, target))?
            .and_then(|identity| identity.object_id)
            .ok_or_else(|| anyhow!("{target}: {name} is gone"))?;
        let marked = connection
            .execute(
                &format!("UPDATE {catalogue} SET state = :1 WHERE kind = :2 AND name = :3 AND object_id = :4"),
                &[&READY, &ObjectKind::Table.as_str(), &name, &now],
            )
            .map_err(|error| describe(error, target))?
            .row_count()
            .map_err(|error| describe(error, target))?;
        if marked != 1 {
            bail!("{target}: {name} was replaced by someone else while it was loaded");
        }
        connection.commit().map_err(|error| describe(error, target))
    }
}

impl ServerCounters for Oracle {
    /// Session logical reads of this session around each sample; changes are rolled back.
    fn blocks_per_statement(&self, sampled: &SampledStatement) -> Result<f64> {
        let connection = connect(&self.target)?;
        if let Some(settings) = sampled.settings {
            connection
                .execute(settings, &[])
                .map_err(|error| describe(error, &self.target))?;
        }
        let my_reads = "SELECT m.value FROM v$mystat m JOIN v$statname n ON n.statistic# = m.statistic# WHERE n.name = 'session logical reads'";
        let run = |values: &[BoundValue]| -> Result<()> {
            connection
                .execute(sampled.sql, &bound(values, &mut [&0i64; BOUND_ON_STACK]))
                .map_err(|error| describe(error, &self.target))?;
            connection
                .rollback()
                .map_err(|error| describe(error, &self.target))
        };
        // One untimed execution parses the statement, so samples count only its visits.
        if let Some(first) = sampled.samples.first() {
            run(first)?;
        }
        let mut samples = Vec::new();
        for values in sampled.samples {
            let before = connection
                .query_row_as::<f64>(my_reads, &[])
                .map_err(|error| describe(error, &self.target))?;
            run(values)?;
            let after = connection
                .query_row_as::<f64>(my_reads, &[])
                .map_err(|error| describe(error, &self.target))?;
            samples.push(after - before);
        }
        mean_of_samples(&samples, "v$mystat session logical reads")
    }

    fn counters(&self) -> Result<DbCounters> {
        let connection = locked(&self.monitor, "the monitor connection")?;
        let (lio, pio) = connection
            .query_row_as::<(f64, f64)>(
                "SELECT SUM(DECODE(name, 'session logical reads', value)), SUM(DECODE(name, 'physical reads', value))
                 FROM v$sysstat WHERE name IN ('session logical reads', 'physical reads')",
                &[],
            )
            .map_err(|error| describe(error, &self.target))?;
        let db_cpu_us = connection
            .query_row_as::<f64>(
                "SELECT value FROM v$sys_time_model WHERE stat_name = 'DB CPU'",
                &[],
            )
            .map_err(|error| describe(error, &self.target))?;
        Ok(DbCounters {
            lio,
            pio,
            db_cpu_s: Some(db_cpu_us / 1e6),
            transactions: None,
            maintenance: None,
        })
    }
}

/// The server is not read on this host: Oracle's sessions are served by its own processes,
/// which corescale does not look for.
impl ServerProcesses for Oracle {}

impl Replication for Oracle {
    /// A physical or logical standby (Data Guard) replays the primary's redo; every RAC
    /// instance of a primary takes writes.
    fn is_replica(&self) -> Result<bool> {
        let connection = locked(&self.monitor, "the monitor connection")?;
        let role = connection
            .query_row_as::<String>("SELECT database_role FROM v$database", &[])
            .map_err(|error| describe(error, &self.target))?;
        Ok(role != "PRIMARY")
    }
}

/// Most values a statement binds from the stack (every workload's statements so far).
const BOUND_ON_STACK: usize = 8;

/// A captured NULL, bound as a text the server casts.
static NULL_TEXT: Option<&str> = None;

/// A statement's values as the oracle crate binds them, in `slots` (on the caller's stack):
/// no allocation per execution for up to [`BOUND_ON_STACK`] values.
fn bound<'a>(
    values: &'a [BoundValue],
    slots: &'a mut [&'a dyn oracle::sql_type::ToSql; BOUND_ON_STACK],
) -> std::borrow::Cow<'a, [&'a dyn oracle::sql_type::ToSql]> {
    let as_sql = |value: &'a BoundValue| match value {
        BoundValue::Int(value) => value as &dyn oracle::sql_type::ToSql,
        BoundValue::Double(value) => value as &dyn oracle::sql_type::ToSql,
        BoundValue::Text(std::borrow::Cow::Borrowed(text)) => text as &dyn oracle::sql_type::ToSql,
        BoundValue::Text(std::borrow::Cow::Owned(text)) => text as &dyn oracle::sql_type::ToSql,
        BoundValue::Null => &NULL_TEXT as &dyn oracle::sql_type::ToSql,
    };
    if values.len() > BOUND_ON_STACK {
        return std::borrow::Cow::Owned(values.iter().map(as_sql).collect());
    }
    for (slot, value) in slots.iter_mut().zip(values) {
        *slot = as_sql(value);
    }
    std::borrow::Cow::Borrowed(&slots[..values.len()])
}

struct OracleSession {
    connection: Connection,
    target: Target,
    /// A workload's statements by its index for them, prepared on first use.
    statements: Vec<Option<Statement>>,
}

/// The server's refusal as a workload counts it (by its ORA- code: Oracle sends no
/// SQLSTATE to its clients); other errors as they are.
fn statement_failure(error: oracle::Error, target: &Target) -> SessionError {
    match error.oci_code().and_then(|code| u32::try_from(code).ok()) {
        Some(code) => SessionError::refused(
            ServerCode::Oracle(OraCode(code)),
            error
                .db_error()
                .map_or_else(|| error.to_string(), |db| db.message().to_string()),
        ),
        None => SessionError::Other(describe(error, target)),
    }
}

impl DbSession for OracleSession {
    fn execute(
        &mut self,
        index: usize,
        sql: &str,
        values: &[BoundValue],
    ) -> Result<Answer, SessionError> {
        if self.statements.len() <= index {
            self.statements.resize_with(index + 1, || None);
        }
        let statement = match &mut self.statements[index] {
            Some(statement) => statement,
            unprepared => unprepared.insert(
                self.connection
                    .statement(sql)
                    .build()
                    .map_err(|error| statement_failure(error, &self.target))?,
            ),
        };
        let mut slots = [&0i64 as &dyn oracle::sql_type::ToSql; BOUND_ON_STACK];
        let parameters = bound(values, &mut slots);
        let fail = |error| statement_failure(error, &self.target);
        let mut answer = Answer::default();
        if statement.is_query() {
            for row in statement.query(&parameters).map_err(fail)? {
                let row = row.map_err(fail)?;
                answer.returned += 1;
                answer.value = row
                    .sql_values()
                    .len()
                    .checked_sub(1)
                    .and_then(|last| row.get::<usize, Option<i64>>(last).ok().flatten());
            }
        } else {
            // The session autocommits, as the other products' sessions do.
            statement.execute(&parameters).map_err(fail)?;
            answer.changed = statement.row_count().map_err(fail)?;
        }
        Ok(answer)
    }

    fn run_plain(&mut self, sql: &str) -> Result<Answer, SessionError> {
        let statement = self
            .connection
            .execute(sql, &[])
            .map_err(|error| statement_failure(error, &self.target))?;
        // The rows a query returns are not fetched here: only a command's count is known.
        let changed = statement
            .row_count()
            .map_err(|error| statement_failure(error, &self.target))?;
        Ok(Answer {
            changed,
            ..Answer::default()
        })
    }

    /// Array DML: the rows bound in batches of up to 1,000, committed once at the end.
    fn load_rows(&mut self, table: &str, columns: &[&str], rows: &Rows) -> Result<()> {
        let names: Vec<String> = columns
            .iter()
            .map(|name| quote_double(&name.to_uppercase()))
            .collect();
        let places: Vec<String> = (1..=columns.len())
            .map(|place| format!(":{place}"))
            .collect();
        let insert = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            names.join(", "),
            places.join(", ")
        );
        let target = &self.target;
        self.connection.set_autocommit(false);
        let loaded = (|| -> Result<()> {
            let mut batch = self
                .connection
                .batch(&insert, INSERT_BATCH)
                .build()
                .map_err(|error| describe(error, target))?;
            for row in rows.rows() {
                let values: Vec<&dyn oracle::sql_type::ToSql> = row.iter().map(field_sql).collect();
                batch
                    .append_row(&values)
                    .map_err(|error| describe(error, target))?;
            }
            batch.execute().map_err(|error| describe(error, target))?;
            self.connection
                .commit()
                .map_err(|error| describe(error, target))
        })();
        if loaded.is_err() {
            let _ = self.connection.rollback();
        }
        self.connection.set_autocommit(true);
        loaded
    }
}

/// A loaded field as the oracle crate binds it; NULL as a null string.
fn field_sql(field: &Field) -> &dyn oracle::sql_type::ToSql {
    const NULL: Option<&str> = None;
    match field {
        Field::Int(value) => value,
        Field::Text(text) => text,
        Field::Null => &NULL,
    }
}
