//! PostgreSQL, as pgio lays it out: one row per 8 KiB page (fillfactor 10 and a 1000-byte
//! filler), rows inserted in a random key order, a b-tree on the key. LIO is blks_hit plus
//! blks_read of pg_stat_database (every block the statements got), PIO blks_read.

mod blocks;
mod hold;
pub(crate) mod libpq;
mod replication;
mod session;
mod teardown;
pub(crate) mod wire;

use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::{Context, Result, anyhow, bail};

use crate::db::catalog::{
    CATALOG_TABLE, IDENTITY_COLUMNS, Identity, LOADING, ObjectKind, Owned, PG_LOCK_KEY, READY,
    SetupStamp, Verdict, identity_select,
};
use crate::db::connect::target::Target;
use crate::db::connect::this_host;
use crate::db::driver::ServerCheck;
use crate::db::product::{Dialect, Product};
use crate::db::session_error::SessionError;
use crate::db::{
    AtTarget, Catalogue, Database, DbCounters, DbSession, Maintenance, PREFIX, ServerCounters,
    ServerProcesses, SetupWindow, mean_of_samples, quote_double,
};
use crate::error::locked;
use session::{PostgresSession, publish_statistics};
use teardown::{dependents, drop_all_if_same};
use wire::{ServerError, WireSession};

/// SQLSTATEs with a hint of what to do.
const UNDEFINED_TABLE: &str = "42P01";
const UNDEFINED_FUNCTION: &str = "42883";
const INSUFFICIENT_PRIVILEGE: &str = "42501";

/// PostgreSQL's row of the registry.
pub(crate) static PRODUCT: Product = Product {
    name: "PostgreSQL",
    schemes: &["postgres", "postgresql"],
    resolve: libpq::resolve,
    // Enough that the backend's flush and the client's wake-up are paid once per batch
    // (see docs/db.md).
    max_pipeline: 64,
    default_pipeline: 32,
    dialect: Dialect::PostgreSql,
    placeholder: |n| format!("${n}"),
};

/// Opens a PostgreSQL target's database.
pub(crate) fn open(target: &Target) -> Result<Arc<dyn Database>> {
    Ok(Arc::new(Postgres::new(target.clone())?))
}

pub(crate) struct Postgres {
    target: Target,
    /// The schema corescale's objects live in (`--in-schema`, else the role's current schema
    /// when it connected): every statement of corescale's names them there.
    schema: String,
    /// Pinned (`WireSession::pin`), as every session of corescale's own statements is.
    monitor: Mutex<WireSession>,
    /// Whether the server runs on this host, its processes' CPU time readable here.
    on_this_host: bool,
}

impl Postgres {
    pub(crate) fn new(target: Target) -> Result<Self> {
        let mut monitor = WireSession::connect(&target)?;
        let schema = match &target.in_schema {
            Some(schema) => schema.clone(),
            None => current_schema(&mut monitor)?,
        };
        monitor.pin().map_err(|error| explain(error, &target))?;
        // The port the server saw the monitor connect from (0: none, a socket).
        let on_this_host = this_host::serves_here(&target, || {
            monitor
                .query_value("SELECT coalesce(pg_catalog.inet_client_port(), 0)", &[])
                .map(Some)
                .map_err(|error| explain(error, &target))
        })?;
        Ok(Self {
            target,
            schema,
            monitor: Mutex::new(monitor),
            on_this_host,
        })
    }

    /// A new session for corescale's own statements, pinned to its schema.
    fn connect_own(&self) -> Result<WireSession> {
        let mut session = WireSession::connect(&self.target)?;
        session
            .pin()
            .map_err(|error| explain(error, &self.target))?;
        Ok(session)
    }

    /// The catalogue, qualified by corescale's schema.
    fn catalogue(&self) -> String {
        catalogue_in(&self.schema)
    }

    fn monitor(&self) -> Result<MutexGuard<'_, WireSession>> {
        locked(&self.monitor, "the monitor connection")
    }

    /// Replaces the monitor connection with a new one (pinned, as the first was).
    fn reconnect_monitor(&self) -> Result<()> {
        let fresh = self.connect_own()?;
        *self.monitor()? = fresh;
        Ok(())
    }

    /// Runs `work` on the monitor connection, its errors explained.
    fn on_monitor<T>(&self, work: impl FnOnce(&mut WireSession) -> Result<T>) -> Result<T> {
        work(&mut *self.monitor()?).map_err(|error| explain(error, &self.target))
    }

    /// Takes or releases the setup lock (an advisory lock, per database) and answers whether
    /// the server did.
    fn setup_lock_call(&self, sql: &str) -> Result<bool> {
        let answer: String =
            self.on_monitor(|monitor| monitor.query_value(sql, &[&PG_LOCK_KEY.to_string()]))?;
        Ok(answer == "t")
    }
}

/// The server's error with what to do about it, by SQLSTATE; the target named once.
fn explain(error: anyhow::Error, target: &Target) -> anyhow::Error {
    if format!("{error:#}").contains(&target.to_string()) {
        return error;
    }
    // The advice is about corescale's own tables and their set-up: a DBA's or a captured
    // statement's missing table or privilege on one is a refusal like any other, counted by
    // SQLSTATE.
    let ours = error.downcast_ref::<ServerError>().is_some_and(|server| {
        server.message.contains("corescale_")
            || server.message.contains("for schema")
            || server.message.contains("for database")
    });
    match error
        .downcast_ref::<ServerError>()
        .map(|server| server.code.as_str())
    {
        Some(UNDEFINED_TABLE) if ours => {
            anyhow!("{error:#} in {target}: run `corescale db setup --target {target}` first")
        }
        Some(INSUFFICIENT_PRIVILEGE) if ours => anyhow!(
            "{error:#} in {target}: the user needs CREATE on the database and SELECT/UPDATE on corescale_* tables"
        ),
        // A refusal the session outlives stays one (a workload retries or counts it by its
        // code), named with its target.
        Some(_) if error.chain().count() == 1 => match wire::session_error(error) {
            refused @ SessionError::Refused { .. } => refused.at(target).into(),
            SessionError::ConnectionLost(error)
            | SessionError::TimedOut(error)
            | SessionError::Other(error) => error,
        },
        Some(_) => anyhow!("{target}: {error:#}"),
        None => error,
    }
}

/// The role's current schema, the first existing one of its own search_path, read before
/// the session is pinned: where setup creates and teardown looks when `--in-schema` is not
/// given.
fn current_schema(session: &mut WireSession) -> Result<String> {
    session
        .query("SELECT pg_catalog.current_schema()::pg_catalog.text", &[])?
        .into_iter()
        .next()
        .and_then(|row| row.into_iter().next().flatten())
        .ok_or_else(|| {
            anyhow!("no schema of search_path exists: corescale works in the current schema (create it, or set search_path)")
        })
}

/// Creates `--in-schema`'s schema for corescale's objects, owned by the user, unless it
/// exists and the user owns it already; one another role owns is refused: its owner could
/// drop or replace what corescale keeps there.
fn create_own_schema(session: &mut WireSession, schema: &str) -> Result<()> {
    let owner = session.query(
        "SELECT pg_catalog.pg_get_userbyid(n.nspowner)::pg_catalog.text,
                (pg_catalog.pg_get_userbyid(n.nspowner) OPERATOR(pg_catalog.=) CURRENT_USER)::pg_catalog.text
         FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::pg_catalog.text",
        &[schema],
    )?;
    match owner.first().map(|row| {
        (
            row.first().cloned().flatten(),
            row.get(1).cloned().flatten(),
        )
    }) {
        None => session.simple(&format!("CREATE SCHEMA {}", quote_double(schema))),
        Some((_, Some(mine))) if mine == "true" => Ok(()),
        Some((owner, _)) => bail!(
            "schema {} exists and belongs to {}: corescale keeps its objects in a schema its user owns; give another --in-schema name",
            crate::format::printable(schema),
            crate::format::printable(owner.as_deref().unwrap_or("another role"))
        ),
    }
}

/// The catalogue, qualified by its schema: unqualified, a name could resolve elsewhere (a
/// temporary table, another schema of search_path).
fn catalogue_in(schema: &str) -> String {
    format!("{}.{}", quote_double(schema), quote_double(CATALOG_TABLE))
}

/// The identity of the object of `kind` named $1 in schema $2 (namespace, oid, owner,
/// comment); no row when it has none. A table is an ordinary or partitioned table (a view
/// or another kind under its name is not), a function the loop's (bigint, bigint, bigint).
fn identity_sql(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::Table => {
            "SELECT n.nspname::pg_catalog.text AS namespace, c.oid::pg_catalog.text AS id, pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text AS owner, (SELECT d.description FROM pg_catalog.pg_description d WHERE d.objoid = c.oid AND d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = 0) AS mark
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relname = $1::pg_catalog.text AND n.nspname = $2::pg_catalog.text AND c.relkind IN ('r', 'p')"
        }
        ObjectKind::Function => {
            "SELECT n.nspname::pg_catalog.text AS namespace, p.oid::pg_catalog.text AS id, pg_catalog.pg_get_userbyid(p.proowner)::pg_catalog.text AS owner, (SELECT d.description FROM pg_catalog.pg_description d WHERE d.objoid = p.oid AND d.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objsubid = 0) AS mark
             FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
             WHERE p.proname = $1::pg_catalog.text AND n.nspname = $2::pg_catalog.text
               AND p.proargtypes = '20 20 20'::pg_catalog.oidvector"
        }
    }
}

/// What the database says the object named `name` in `schema` is, if any.
fn current_identity(
    session: &mut WireSession,
    schema: &str,
    kind: ObjectKind,
    name: &str,
) -> Result<Option<Identity>> {
    let rows = session.query(identity_sql(kind), &[name, schema])?;
    Ok(rows.into_iter().next().and_then(|row| {
        let mut columns = row.into_iter();
        Some(Identity {
            namespace: columns.next()??,
            object_id: Some(columns.next()??),
            owner: Some(columns.next()??),
            mark: columns.next()?,
            ..Identity::default()
        })
    }))
}

/// An object of corescale's as its statements name it: schema and name quoted here, by
/// PostgreSQL's rules, never by a function of the server's whose answer would be run.
fn qualified(schema: &str, name: &str) -> String {
    format!("{}.{}", quote_double(schema), quote_double(name))
}

/// A string literal for DDL, which takes no bound values: quotes doubled; a backslash is
/// refused, as it means different things with standard_conforming_strings on and off.
fn literal(text: &str) -> Result<String> {
    if text.contains(['\\', '\0']) {
        bail!("a literal for the server holds a backslash or NUL: {text:?}");
    }
    Ok(format!("'{}'", text.replace('\'', "''")))
}

/// How DDL names an object of `kind`: a function with its argument types.
fn ddl_name(kind: ObjectKind, schema: &str, name: &str) -> String {
    match kind {
        ObjectKind::Table => format!("TABLE {}", qualified(schema, name)),
        ObjectKind::Function => format!(
            "FUNCTION {}(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8)",
            qualified(schema, name)
        ),
    }
}

impl Database for Postgres {
    fn engine(&self) -> Result<String> {
        let version: String = self.on_monitor(|monitor| {
            monitor.query_value("SELECT pg_catalog.current_setting('server_version')", &[])
        })?;
        Ok(format!(
            "PostgreSQL {}",
            crate::db::driver::major_version(&version, 1)
        ))
    }

    fn open_session(&self) -> Result<Box<dyn DbSession>> {
        let mut wire = self.connect_own()?;
        let statement_timeout = self
            .target
            .answer_timeout
            .map_or(0, |limit| limit.as_millis());
        wire.simple(&format!("SET statement_timeout = {statement_timeout}"))
            .map_err(|error| explain(error, &self.target))?;
        Ok(Box::new(PostgresSession {
            wire,
            target: self.target.clone(),
            on_this_host: self.on_this_host,
        }))
    }

    fn open_script_session(&self) -> Result<Box<dyn DbSession>> {
        let mut wire = WireSession::connect(&self.target)?;
        let statement_timeout = self
            .target
            .answer_timeout
            .map_or(0, |limit| limit.as_millis());
        wire.simple(&format!("SET statement_timeout = {statement_timeout}"))
            .map_err(|error| explain(error, &self.target))?;
        Ok(Box::new(PostgresSession {
            wire,
            target: self.target.clone(),
            on_this_host: self.on_this_host,
        }))
    }

    fn check(&self) -> Result<ServerCheck> {
        let rows = self.on_monitor(|monitor| {
            monitor.query(
                "SELECT pg_catalog.version(), CURRENT_USER::pg_catalog.text, pg_catalog.current_database()::pg_catalog.text, $1::pg_catalog.text,
                        coalesce(pg_catalog.has_schema_privilege((SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::pg_catalog.text), 'CREATE'),
                                 pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE'))::pg_catalog.text,
                        pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CONNECT')::pg_catalog.text,
                        (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_database d WHERE d.datname = pg_catalog.current_database())::pg_catalog.text,
                        (SELECT s.ssl::pg_catalog.text || ' ' || coalesce(s.version, '') || ' ' || coalesce(s.cipher, '') FROM pg_catalog.pg_stat_ssl s WHERE s.pid = pg_catalog.pg_backend_pid())",
                &[&self.schema],
            )
        })?;
        let row = rows.into_iter().next().unwrap_or_default();
        let column = |index: usize| row.get(index).cloned().flatten().unwrap_or_default();
        let schema = column(3);
        let tls = self.monitor()?.tls().cloned();
        // The server's own view of the monitor session must agree with the client's.
        let server_view = column(7);
        if tls.is_some() != server_view.starts_with("true") {
            bail!(
                "{}: the client and pg_stat_ssl disagree on whether this session is encrypted ({server_view})",
                self.target
            );
        }
        Ok(ServerCheck {
            server: column(0),
            user: column(1),
            database: column(2),
            tls,
            privileges: vec![
                (
                    format!("CREATE in schema {schema} (db setup creates its tables there)"),
                    column(4) == "true",
                ),
                (
                    "reads pg_stat_database (the run's LIO and PIO counters)".to_string(),
                    column(6) == "1",
                ),
            ],
        })
    }
}

impl AtTarget for Postgres {
    fn target(&self) -> &Target {
        &self.target
    }
}

impl Catalogue for Postgres {
    fn own_name(&self, name: &str) -> String {
        qualified(&self.schema, name)
    }

    fn has_catalogue(&self) -> Result<bool> {
        let exists: String = self.on_monitor(|monitor| {
            monitor.query_value(
                "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                                WHERE n.nspname = $2::pg_catalog.text AND c.relname = $1::pg_catalog.text AND c.relkind = 'r')",
                &[CATALOG_TABLE, &self.schema],
            )
        })?;
        Ok(exists == "t")
    }

    fn catalogue(&self) -> Result<Vec<Owned>> {
        if !self.has_catalogue()? {
            return Ok(Vec::new());
        }
        let rows = self
            .on_monitor(|monitor| {
                let catalogue = self.catalogue();
                // An older corescale's catalogue has no identity columns: read as unrecorded.
                let with_identity: i64 = monitor.query_value(
                    "SELECT pg_catalog.count(*) FROM pg_catalog.pg_attribute a
                     JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = $3::pg_catalog.text AND c.relname = $1::pg_catalog.text AND NOT a.attisdropped
                       AND a.attname::pg_catalog.text = ANY (pg_catalog.string_to_array($2::pg_catalog.text, ','))",
                    &[CATALOG_TABLE, &IDENTITY_COLUMNS.join(","), &self.schema],
                )?;
                let identity = identity_select(
                    with_identity == IDENTITY_COLUMNS.len() as i64,
                    "::pg_catalog.text",
                );
                monitor.query(
                    &format!(
                        "SELECT kind::pg_catalog.text, name::pg_catalog.text, state::pg_catalog.text, parameters::pg_catalog.text, {identity} FROM {catalogue} ORDER BY name"
                    ),
                    &[],
                )
            })
            .with_context(|| format!("reading corescale's catalogue {CATALOG_TABLE}"))?;
        rows.into_iter()
            .map(|row| Owned::from_columns(|index| Ok(row.get(index).cloned().flatten())))
            .collect()
    }

    fn create_catalogue(&self) -> Result<()> {
        let catalogue = self.catalogue();
        self.on_monitor(|monitor| {
            if self.target.in_schema.is_some() {
                create_own_schema(monitor, &self.schema)?;
            }
            monitor.simple(&format!(
                "CREATE TABLE {catalogue} (kind pg_catalog.text NOT NULL, name pg_catalog.text NOT NULL, state pg_catalog.text NOT NULL, created_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(), corescale_version pg_catalog.text NOT NULL, parameters pg_catalog.text NOT NULL, object_namespace pg_catalog.text, object_id pg_catalog.text, object_created pg_catalog.text, object_owner pg_catalog.text, object_mark pg_catalog.text, object_engine pg_catalog.text, setup_started pg_catalog.text, setup_ended pg_catalog.text, PRIMARY KEY (kind, name))"
            ))
        })
    }

    fn drop_owned(&self, object: &Owned) -> Result<Verdict> {
        let mut verdicts = self.drop_owned_all(std::slice::from_ref(object))?;
        Ok(verdicts.pop().unwrap_or(Verdict::Missing))
    }

    fn drop_owned_all(&self, objects: &[Owned]) -> Result<Vec<Verdict>> {
        self.on_monitor(|monitor| drop_all_if_same(monitor, &self.schema, objects))
    }

    fn drop_catalogue(&self) -> Result<bool> {
        let catalogue = self.catalogue();
        self.on_monitor(|monitor| {
            monitor.transaction(|monitor| {
                // Locked, so no row can be added between the count and the drop.
                monitor.simple(&format!("LOCK TABLE {catalogue} IN ACCESS EXCLUSIVE MODE"))?;
                let rows: i64 = monitor
                    .query_value(&format!("SELECT pg_catalog.count(*) FROM {catalogue}"), &[])?;
                if rows > 0 {
                    return Ok(false);
                }
                // What others made on it (a sequence owned by a column, a publication, ...)
                // stops the drop as it stops the tables'.
                let oid: String = monitor.query_value(
                    "SELECT c.oid::pg_catalog.text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = $2::pg_catalog.text AND c.relname = $1::pg_catalog.text",
                    &[CATALOG_TABLE, &self.schema],
                )?;
                let blockers = dependents(monitor, &[&oid], &[])?;
                if !blockers.is_empty() {
                    bail!(
                        "{}: drop them first, or leave {CATALOG_TABLE} in place; it was kept",
                        blockers.join("; ")
                    );
                }
                monitor.simple(&format!("DROP TABLE {catalogue}"))?;
                Ok(true)
            })
        })
    }

    fn catalogue_writers(&self) -> Result<Vec<String>> {
        if !self.has_catalogue()? {
            return Ok(Vec::new());
        }
        let rows = self.on_monitor(|monitor| {
            monitor.query(
                "SELECT r.rolname::pg_catalog.text FROM pg_catalog.pg_roles r,
                        (SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname = $2::pg_catalog.text AND c.relname = $1::pg_catalog.text) AS k
                 WHERE r.rolname OPERATOR(pg_catalog.<>) CURRENT_USER AND NOT r.rolsuper AND NOT pg_catalog.starts_with(r.rolname::pg_catalog.text, 'pg_')
                   AND (pg_catalog.has_any_column_privilege(r.oid, k.oid, 'INSERT') OR pg_catalog.has_any_column_privilege(r.oid, k.oid, 'UPDATE'))
                 ORDER BY 1",
                &[CATALOG_TABLE, &self.schema],
            )
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|row| row.into_iter().next().flatten())
            .collect())
    }

    fn lookalikes(&self) -> Result<Vec<String>> {
        let rows = self.on_monitor(|monitor| {
            monitor.query(
                "SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $2::pg_catalog.text AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
                   AND pg_catalog.starts_with(pg_catalog.lower(c.relname::pg_catalog.text), $1::pg_catalog.text)
                 UNION ALL
                 SELECT p.proname::pg_catalog.text || '()' FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                 WHERE n.nspname = $2::pg_catalog.text AND pg_catalog.starts_with(pg_catalog.lower(p.proname::pg_catalog.text), $1::pg_catalog.text)
                 ORDER BY 1",
                &[PREFIX, &self.schema],
            )
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|row| row.into_iter().next().flatten())
            .map(|name| name.trim_end_matches("()").to_string())
            .collect())
    }

    /// The schema's owner (`public`'s pg_database_owner is the database's owner) is taken as
    /// corescale's own when it is the user or a superuser, who could touch its objects
    /// anyway; others who may create there are roles other than the user and superusers.
    fn schema_warning(&self) -> Result<Option<String>> {
        let rows = self.on_monitor(|monitor| {
            monitor.query(
                "WITH me AS (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER),
                      others AS (
                        SELECT r.rolname::pg_catalog.text AS rolname FROM pg_catalog.pg_roles r, pg_catalog.pg_namespace n
                        WHERE n.nspname = $1::pg_catalog.text AND NOT r.rolsuper AND r.oid NOT IN (SELECT oid FROM me)
                          AND NOT pg_catalog.starts_with(r.rolname::pg_catalog.text, 'pg_')
                          AND pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE')),
                      holder AS (
                        SELECT CASE WHEN pg_catalog.pg_get_userbyid(n.nspowner) OPERATOR(pg_catalog.=) 'pg_database_owner'
                                    THEN (SELECT d.datdba FROM pg_catalog.pg_database d WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
                                    ELSE n.nspowner END AS oid
                        FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::pg_catalog.text)
                 SELECT pg_catalog.pg_get_userbyid(o.oid)::pg_catalog.text,
                        (o.oid IN (SELECT oid FROM me) OR r.rolsuper)::pg_catalog.text,
                        (SELECT pg_catalog.count(*) FROM others)::pg_catalog.text,
                        (SELECT pg_catalog.string_agg(q.rolname, ', ') FROM (SELECT rolname FROM others ORDER BY 1 LIMIT 5) AS q)
                 FROM holder o JOIN pg_catalog.pg_roles r ON r.oid = o.oid",
                &[&self.schema],
            )
        })?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let column = |index: usize| row.get(index).cloned().flatten().unwrap_or_default();
        let schema = crate::format::printable(&self.schema);
        let advice = "corescale names every object it uses, but a schema of its own keeps others' objects away from its tables: `corescale db setup --in-schema corescale ...` (and the same --in-schema to run db, db check and db teardown)";
        if column(1) != "true" {
            return Ok(Some(format!(
                "schema {schema}, where corescale works, belongs to {}, who can drop, rename or replace what corescale keeps there; {advice}",
                crate::format::printable(&column(0))
            )));
        }
        let others: u64 = column(2).parse().unwrap_or(0);
        if others == 0 {
            return Ok(None);
        }
        let more = if others > 5 {
            format!(" and {} more", others - 5)
        } else {
            String::new()
        };
        Ok(Some(format!(
            "other roles may create objects in schema {schema}, where corescale works ({}{more}); {advice}",
            crate::format::printable(&column(3))
        )))
    }

    fn identity_now(&self, kind: ObjectKind, name: &str) -> Result<Option<Identity>> {
        self.on_monitor(|monitor| current_identity(monitor, &self.schema, kind, name))
    }

    /// As every driver checks them, then the monitor's statistics published: a run checks
    /// its tables just before each level reads the counters, and the checks' transactions
    /// and blocks, published a moment later, would be counted in that level.
    fn verify_owned(&self, objects: &[Owned]) -> Result<Vec<Verdict>> {
        let verdicts = objects
            .iter()
            .map(|object| {
                let current = match object.kind {
                    Some(kind) => self.identity_now(kind, &object.name)?,
                    None => None,
                };
                Ok(crate::db::catalog::verdict(
                    object.identity.as_ref(),
                    current.as_ref(),
                ))
            })
            .collect::<Result<Vec<Verdict>>>()?;
        // Older servers cannot be asked; their backends publish within half a second.
        let _ = self.on_monitor(publish_statistics);
        Ok(verdicts)
    }

    /// Roles (other than the user, superusers and the predefined `pg_` roles) that own the
    /// schema (`pg_database_owner`: the database's owner) or one of `tables`, are members of
    /// their owners or of the user (and so may act as them: drop, rename, alter, replace),
    /// may make triggers on one of `tables`, or before PostgreSQL 16 have CREATEROLE while
    /// an owner is no superuser (they may grant themselves membership in it).
    fn others_in_control(&self, tables: &[String]) -> Result<Option<String>> {
        let rows = self.on_monitor(|monitor| {
            monitor.query(hold::OTHERS_IN_CONTROL, &[&self.schema, &tables.join("\n")])
        })?;
        let mut roles: Vec<(String, Vec<String>)> = Vec::new();
        for row in rows {
            let column = |index: usize| row.get(index).cloned().flatten().unwrap_or_default();
            let (role, what, object) = (column(0), column(1), column(2));
            let object = crate::format::printable(&object);
            let reason = match what.as_str() {
                "schema" if object == "true" => {
                    "owns the database, and so the schema (pg_database_owner)".to_string()
                }
                "schema" => "owns the schema".to_string(),
                "table" => format!("owns {object}"),
                "member" => format!("is a member of {object}"),
                "trigger" => format!("may create triggers on {object}"),
                _ => "has CREATEROLE (before PostgreSQL 16: may make itself a member of any role but a superuser)".to_string(),
            };
            match roles.iter_mut().find(|(name, _)| *name == role) {
                Some((_, reasons)) => reasons.push(reason),
                None => roles.push((role, vec![reason])),
            }
        }
        if roles.is_empty() {
            return Ok(None);
        }
        let count = roles.len();
        let mut named: Vec<String> = roles
            .into_iter()
            .take(5)
            .map(|(role, reasons)| {
                format!(
                    "{} ({})",
                    crate::format::printable(&role),
                    reasons.join(", ")
                )
            })
            .collect();
        if count > 5 {
            named.push(format!("and {} more", count - 5));
        }
        Ok(Some(format!(
            "schema {} of {}, where corescale works, is not its own: {} could drop, replace or put triggers on corescale's tables while a run reads them, running their code as this user; give corescale a schema of its own: `--in-schema corescale` (db setup creates it, owned by the user; give the same --in-schema to every run, db check and db teardown)",
            crate::format::printable(&self.schema),
            self.target,
            named.join("; ")
        )))
    }

    /// ACCESS SHARE, in a transaction left open: it conflicts only with what takes ACCESS
    /// EXCLUSIVE (DROP, ALTER, TRUNCATE, a rename, VACUUM FULL), and holds no snapshot
    /// between statements, so vacuum is not held back.
    fn hold_tables(&self, tables: &[String]) -> Result<Option<Box<dyn crate::db::TablesHeld>>> {
        let mut session = self.connect_own()?;
        let list: Vec<String> = tables
            .iter()
            .map(|name| qualified(&self.schema, name))
            .collect();
        session
            .simple(&format!(
                "SET idle_in_transaction_session_timeout = 0; SET statement_timeout = 0; SET lock_timeout = '60s'; BEGIN; LOCK TABLE {} IN ACCESS SHARE MODE",
                list.join(", ")
            ))
            .map_err(|error| explain(error, &self.target))?;
        let mut held = hold::PostgresHold {
            session,
            schema: self.schema.clone(),
            tables: tables.to_vec(),
            target: self.target.clone(),
        };
        crate::db::TablesHeld::still_held(&mut held)?;
        Ok(Some(Box::new(held)))
    }
}

impl SetupWindow for Postgres {
    fn lock_setup(&self) -> Result<bool> {
        self.setup_lock_call("SELECT pg_catalog.pg_try_advisory_lock($1::pg_catalog.int8)")
    }

    fn unlock_setup(&self) -> Result<bool> {
        self.setup_lock_call("SELECT pg_catalog.pg_advisory_unlock($1::pg_catalog.int8)")
    }

    fn create_owned(
        &self,
        kind: ObjectKind,
        name: &str,
        create: &str,
        stamp: &SetupStamp,
        parameters: &str,
    ) -> Result<()> {
        let state = match kind {
            ObjectKind::Table => LOADING,
            ObjectKind::Function => READY,
        };
        let mut session = self.connect_own()?;
        session
            .transaction(|session| {
                session.simple(create)?;
                record_created(
                    session,
                    &self.schema,
                    (kind, name),
                    stamp,
                    state,
                    parameters,
                )
            })
            .map_err(|error| explain(error, &self.target))
            .with_context(|| format!("creating {name}"))
    }

    fn owned_table_ready(&self, name: &str, rows: u64) -> Result<()> {
        let mut session = self.connect_own()?;
        settle_statistics(&mut session, &self.schema, name, rows)
            .map_err(|error| explain(error, &self.target))?;
        let catalogue = self.catalogue();
        // Ready only while the table under the name still is the one recorded.
        let marked = session
            .query(
                &format!(
                    "UPDATE {catalogue} SET state = $3::pg_catalog.text WHERE kind = 'table' AND name = $1::pg_catalog.text AND object_id = (SELECT o.id FROM ({}) AS o) RETURNING 1",
                    identity_sql(ObjectKind::Table)
                ),
                &[name, &self.schema, READY],
            )
            .map_err(|error| explain(error, &self.target))?;
        if marked.len() != 1 {
            bail!(
                "{}: {name} is not the table setup created (replaced while it was loaded?)",
                self.target
            );
        }
        Ok(())
    }
}

/// Analyses a new table and leaves nothing for autovacuum to do on it. Its inserts reach the
/// statistics a moment after the load commits (an ANALYZE in the load's own transaction would
/// be undone by them), and would have autovacuum analyse and vacuum the whole table a minute
/// later, in the middle of a run, its block reads counted with the statements'. So: wait for
/// them (at most 10 s), then VACUUM (ANALYZE), which also sets the hint bits the first
/// statements would write.
fn settle_statistics(session: &mut WireSession, schema: &str, name: &str, rows: u64) -> Result<()> {
    let counted = "SELECT t.n_mod_since_analyze FROM pg_catalog.pg_stat_user_tables t WHERE t.schemaname = $2::pg_catalog.text AND t.relname = $1::pg_catalog.text";
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(10) {
        let modified = session
            .query_value::<u64>(counted, &[name, schema])
            .unwrap_or(0);
        if modified >= rows {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    session
        .simple(&format!("VACUUM (ANALYZE) {}", qualified(schema, name)))
        .with_context(|| format!("vacuuming the new table {name}"))
}

/// Marks the object `kind` `name` just created in `schema` with `stamp`'s comment and records
/// it in the catalogue, its identity read in the transaction that created it: no one else can
/// have replaced it yet. Its comment, the setup's mark, only its owner can write.
fn record_created(
    session: &mut WireSession,
    schema: &str,
    (kind, name): (ObjectKind, &str),
    stamp: &SetupStamp,
    state: &str,
    parameters: &str,
) -> Result<()> {
    session.simple(&format!(
        "COMMENT ON {} IS {}",
        ddl_name(kind, schema, name),
        literal(&stamp.mark)?
    ))?;
    let recorded = session.query(
        &format!(
            "INSERT INTO {} (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark)
             SELECT $3::pg_catalog.text, $1::pg_catalog.text, $4::pg_catalog.text, $5::pg_catalog.text, $6::pg_catalog.text, o.namespace, o.id, o.owner, o.mark FROM ({}) AS o
             RETURNING 1",
            catalogue_in(schema),
            identity_sql(kind)
        ),
        &[name, schema, kind.as_str(), state, env!("CARGO_PKG_VERSION"), parameters],
    )?;
    if recorded.len() != 1 {
        bail!(
            "the {} {name} just created has no identity in schema {schema}",
            kind.as_str()
        );
    }
    Ok(())
}

impl ServerCounters for Postgres {
    fn blocks_per_statement(&self, statement: &crate::db::SampledStatement) -> Result<f64> {
        self.blocks_by_explain(statement)
    }

    fn buffer_cache(&self) -> Result<Option<(u64, &'static str)>> {
        let bytes: i64 = self.on_monitor(|monitor| {
            monitor.query_value(
                "SELECT s.setting::pg_catalog.int8 * pg_catalog.current_setting('block_size')::pg_catalog.int8 FROM pg_catalog.pg_settings s WHERE s.name = 'shared_buffers'",
                &[],
            )
        })?;
        Ok(Some((bytes.max(0) as u64, "shared_buffers")))
    }

    fn counters_grain(&self) -> std::time::Duration {
        // PGSTAT_MIN_INTERVAL: a backend publishes its counts at most once a second.
        std::time::Duration::from_secs(1)
    }

    fn counters(&self) -> Result<DbCounters> {
        let read = |monitor: &mut WireSession| {
            let rows = monitor.query(
                "SELECT d.blks_hit, d.blks_read, d.xact_commit + d.xact_rollback,
                        (SELECT coalesce(pg_catalog.sum(t.autovacuum_count + t.autoanalyze_count), 0) FROM pg_catalog.pg_stat_user_tables t),
                        (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity a WHERE a.backend_type = 'autovacuum worker' AND a.datname = pg_catalog.current_database())
                   FROM pg_catalog.pg_stat_database d WHERE d.datname = pg_catalog.current_database()",
                &[],
            )?;
            // The blocks this reading got (a few dozen once planned) are published now, in
            // the level it opens, not a second later in whichever level is running then.
            let _ = publish_statistics(monitor);
            Ok(rows)
        };
        // A reading is harmless to repeat: once on a new connection when the monitor's
        // failed (a replica restarted between two levels ended it).
        let rows = match self.on_monitor(read) {
            Ok(rows) => rows,
            Err(_) => {
                let mut fresh = self
                    .connect_own()
                    .map_err(|error| explain(error, &self.target))?;
                let rows = read(&mut fresh).map_err(|error| explain(error, &self.target))?;
                *self.monitor()? = fresh;
                rows
            }
        };
        let column = |index: usize| -> Result<f64> {
            rows.first()
                .and_then(|row| row.get(index).cloned().flatten())
                .and_then(|text| text.parse().ok())
                .ok_or_else(|| {
                    anyhow!(
                        "{}: pg_stat_database has no row for this database",
                        self.target
                    )
                })
        };
        // A block read from storage is a logical read too, as in InnoDB's read requests and
        // Oracle's session logical reads: LIO is hits plus reads.
        let (hits, reads) = (column(0)?, column(1)?);
        Ok(DbCounters {
            lio: hits + reads,
            pio: reads,
            db_cpu_s: None,
            transactions: Some(column(2)?),
            maintenance: Some(Maintenance {
                finished: column(3)?,
                running: column(4)?,
            }),
        })
    }
}

impl ServerProcesses for Postgres {
    fn on_this_host(&self) -> bool {
        self.on_this_host
    }

    fn server_main_pid(&self) -> Result<Option<u32>> {
        if !self.on_this_host {
            return Ok(None);
        }
        // The postmaster: the parent of the monitor's own backend.
        let backend: u32 = self
            .on_monitor(|monitor| monitor.query_value("SELECT pg_catalog.pg_backend_pid()", &[]))?;
        // /proc/PID/stat: "pid (command) state ppid ...", the command may hold ')'.
        Ok(std::fs::read_to_string(format!("/proc/{backend}/stat"))
            .ok()
            .and_then(|stat| {
                let (_, fields) = stat.rsplit_once(')')?;
                fields.split_whitespace().nth(1)?.parse().ok()
            }))
    }

    fn server_clock(&self) -> Result<Option<f64>> {
        replication::clock(self).map(Some)
    }
}
