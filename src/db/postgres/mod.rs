//! PostgreSQL, as pgio lays it out: one row per 8 KiB page (fillfactor 10 and a 1000-byte
//! filler), rows inserted in a random key order, a b-tree on the key. LIO is blks_hit plus
//! blks_read of pg_stat_database (every block the statements got), PIO blks_read.

pub(crate) mod libpq;
mod replication;
mod session;
pub(crate) mod wire;

use std::sync::{Mutex, MutexGuard};

use anyhow::{Context, Result, anyhow, bail};

use crate::db::catalog::{
    CATALOG_TABLE, IDENTITY_COLUMNS, Identity, ObjectKind, Owned, PG_LOCK_KEY, READY, SetupRecord,
    SetupStamp, Verdict, identity_select, verdict,
};
use crate::db::connect::target::Target;
use crate::db::connect::this_host;
use crate::db::driver::ServerCheck;
use crate::db::{
    Database, DbCounters, DbSession, Maintenance, PREFIX, loop_function, mean_of_samples,
    quote_double, sample_keys, sample_statement, table_name,
};
use crate::error::locked;
use crate::rng::permutation;
use session::{PostgresSession, publish_statistics};
use wire::{ServerError, WireSession};

const FILLER_BYTES: usize = 1000;
const INSERT_BATCH: usize = 2000;
/// SQLSTATEs with a hint of what to do.
const UNDEFINED_TABLE: &str = "42P01";
const UNDEFINED_FUNCTION: &str = "42883";
const INSUFFICIENT_PRIVILEGE: &str = "42501";

pub(crate) struct Postgres {
    target: Target,
    monitor: Mutex<WireSession>,
    /// Whether the server runs on this host, its processes' CPU time readable here.
    on_this_host: bool,
}

impl Postgres {
    pub(crate) fn new(target: Target) -> Result<Self> {
        let mut monitor = WireSession::connect(&target)?;
        // The port the server saw the monitor connect from (0: none, a socket).
        let on_this_host = this_host::serves_here(&target, || {
            monitor
                .query_value("SELECT coalesce(inet_client_port(), 0)", &[])
                .map(Some)
                .map_err(|error| explain(error, &target))
        })?;
        Ok(Self {
            target,
            monitor: Mutex::new(monitor),
            on_this_host,
        })
    }

    fn monitor(&self) -> Result<MutexGuard<'_, WireSession>> {
        locked(&self.monitor, "the monitor connection")
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
    match error
        .downcast_ref::<ServerError>()
        .map(|server| server.code.as_str())
    {
        Some(UNDEFINED_TABLE) => {
            anyhow!("{error:#} in {target}: run `corescale db setup --target {target}` first")
        }
        Some(INSUFFICIENT_PRIVILEGE) => anyhow!(
            "{error:#} in {target}: the user needs CREATE on the database and SELECT/UPDATE on corescale_* tables"
        ),
        Some(_) => anyhow!("{target}: {error:#}"),
        None => error,
    }
}

/// The schema setup creates in and teardown looks in: the first existing one of search_path.
fn current_schema(session: &mut WireSession) -> Result<String> {
    session
        .query("SELECT current_schema()::text", &[])?
        .into_iter()
        .next()
        .and_then(|row| row.into_iter().next().flatten())
        .ok_or_else(|| {
            anyhow!("no schema of search_path exists: corescale works in the current schema (create it, or set search_path)")
        })
}

/// The catalogue, qualified by its schema: unqualified, a name could resolve elsewhere (a
/// temporary table, another schema of search_path).
fn catalogue_in(schema: &str) -> String {
    format!("{}.{}", quote_double(schema), quote_double(CATALOG_TABLE))
}

/// The identity of the object of `kind` named $1 in the current schema (namespace, oid,
/// owner, comment); no row when it has none. The server quotes the name itself (format's %I).
fn identity_sql(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::Table => {
            "SELECT n.nspname::text AS namespace, c.oid::text AS id, pg_get_userbyid(c.relowner)::text AS owner, obj_description(c.oid, 'pg_class') AS mark
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.oid = to_regclass(format('%I.%I', current_schema(), $1::text)) AND c.relkind IN ('r', 'p')"
        }
        ObjectKind::Function => {
            "SELECT n.nspname::text AS namespace, p.oid::text AS id, pg_get_userbyid(p.proowner)::text AS owner, obj_description(p.oid, 'pg_proc') AS mark
             FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE p.oid = to_regprocedure(format('%I.%I(bigint, bigint, bigint)', current_schema(), $1::text))"
        }
    }
}

/// What the database says the object named `name` in the current schema is, if any.
fn current_identity(
    session: &mut WireSession,
    kind: ObjectKind,
    name: &str,
) -> Result<Option<Identity>> {
    let rows = session.query(identity_sql(kind), &[name])?;
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

/// A statement from a `format()` template with two %I and an optional %L: the server quotes
/// the schema and the name, and the literal, by its own rules.
fn formatted(
    session: &mut WireSession,
    template: &str,
    schema: &str,
    name: &str,
) -> Result<String> {
    session.query_value(
        "SELECT format($1::text, $2::text, $3::text)",
        &[template, schema, name],
    )
}

/// The statements that lock and drop an object of `kind` (format() templates).
fn lock_and_drop(kind: ObjectKind) -> (&'static str, &'static str) {
    match kind {
        ObjectKind::Table => (
            "LOCK TABLE %I.%I IN ACCESS EXCLUSIVE MODE",
            "DROP TABLE %I.%I",
        ),
        // COMMENT locks the function against a concurrent DROP or CREATE OR REPLACE; it is
        // rolled back unless the function is dropped.
        ObjectKind::Function => (
            "COMMENT ON FUNCTION %I.%I(bigint, bigint, bigint) IS NULL",
            "DROP FUNCTION %I.%I(bigint, bigint, bigint)",
        ),
    }
}

/// Why a teardown transaction was rolled back without an error of the server's.
#[derive(Debug, thiserror::Error)]
enum Undone {
    /// Objects of other people's depend on corescale's: named, with what they depend on.
    #[error("{}", .0.join("; "))]
    Blocked(Vec<String>),
    /// An object was dropped, recreated or changed between the first look and its lock.
    #[error("{0} changed while teardown checked it: nothing was dropped; run teardown again")]
    Changed(String),
}

/// Other people's objects that a drop of corescale's tables ($1) and functions ($2) would
/// break or take with it: what depends on them (views, foreign keys, SQL functions, ...),
/// and triggers and rules on the tables. corescale's own objects ($1, $2, their indexes) do
/// not count.
const DEPENDENTS_SQL: &str = "
WITH tables AS (SELECT unnest($1::text[])::oid AS oid),
     functions AS (SELECT unnest($2::text[])::oid AS oid),
     depending AS (
        SELECT d.classid, d.objid, d.objsubid, d.refclassid, d.refobjid FROM pg_depend d
        WHERE d.deptype = 'n'
          AND ((d.refclassid = 'pg_class'::regclass AND d.refobjid IN (SELECT oid FROM tables))
               OR (d.refclassid = 'pg_proc'::regclass AND d.refobjid IN (SELECT oid FROM functions)))
          AND NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT oid FROM tables))
          AND NOT (d.classid = 'pg_proc'::regclass AND d.objid IN (SELECT oid FROM functions)))
SELECT DISTINCT format('%s depends on %s',
    CASE WHEN d.classid = 'pg_rewrite'::regclass THEN
        (SELECT CASE c.relkind WHEN 'v' THEN 'view ' WHEN 'm' THEN 'materialized view ' ELSE 'relation ' END
                || format('%I.%I', n.nspname, c.relname)
         FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE r.oid = d.objid)
    ELSE pg_describe_object(d.classid, d.objid, d.objsubid) END,
    CASE WHEN d.refclassid = 'pg_class'::regclass
         THEN (SELECT relname::text FROM pg_class WHERE oid = d.refobjid)
         ELSE (SELECT proname::text || '()' FROM pg_proc WHERE oid = d.refobjid) END)
FROM depending d
UNION
SELECT format('trigger %I on %I would be dropped with it', t.tgname, c.relname)
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE t.tgrelid IN (SELECT oid FROM tables) AND NOT t.tgisinternal
UNION
SELECT format('rule %I on %I would be dropped with it', r.rulename, c.relname)
FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
WHERE r.ev_class IN (SELECT oid FROM tables) AND r.rulename <> '_RETURN'
ORDER BY 1";

/// Drops every object of `objects` that still is the recorded object, with its catalogue
/// row, all in one transaction: each is looked at, locked and checked again by oid, then
/// what depends on them is checked (`pg_depend`), then all are dropped. Anything in the way
/// rolls everything back: nothing is dropped. DROP without IF EXISTS: `Same` means it existed
/// and is gone.
fn drop_all_if_same(session: &mut WireSession, objects: &[Owned]) -> Result<Vec<Verdict>> {
    // A first look without locks: an object that is not corescale's is never locked.
    let mut verdicts = Vec::with_capacity(objects.len());
    let mut firsts = Vec::with_capacity(objects.len());
    for object in objects {
        let current = match object.kind {
            Some(kind) => current_identity(session, kind, &object.name)?,
            None => None,
        };
        let first = verdict(object.identity.as_ref(), current.as_ref());
        firsts.push(current.filter(|_| first == Verdict::Same));
        verdicts.push(first);
    }
    let chosen: Vec<(ObjectKind, &Owned, Identity)> = objects
        .iter()
        .zip(firsts)
        .filter_map(|(object, first)| Some((object.kind?, object, first?)))
        .collect();
    if chosen.is_empty() {
        return Ok(verdicts);
    }
    let schema = current_schema(session)?;
    let catalogue = catalogue_in(&schema);
    session
        .transaction(|session| {
            for (kind, object, first) in &chosen {
                let (lock, _) = lock_and_drop(*kind);
                let lock = formatted(session, lock, &schema, &object.name)?;
                let changed = || Undone::Changed(format!("{} {}", kind.as_str(), object.name));
                session.simple(&lock).map_err(|error| {
                    let gone = error.downcast_ref::<ServerError>().is_some_and(|server| {
                        [UNDEFINED_TABLE, UNDEFINED_FUNCTION].contains(&server.code.as_str())
                    });
                    if gone { changed().into() } else { error }
                })?;
                // Locked: the object under that name is the one first looked at (its mark was
                // checked then; COMMENT, the function's lock, has just cleared it).
                let now = current_identity(session, *kind, &object.name)?;
                if !now.is_some_and(|now| now.same_object(first)) {
                    return Err(changed().into());
                }
            }
            let oids = |wanted: ObjectKind| {
                let oids: Vec<&str> = chosen
                    .iter()
                    .filter(|(kind, _, _)| *kind == wanted)
                    .filter_map(|(_, _, first)| first.object_id.as_deref())
                    .collect();
                format!("{{{}}}", oids.join(","))
            };
            let blockers: Vec<String> = session
                .query(
                    DEPENDENTS_SQL,
                    &[&oids(ObjectKind::Table), &oids(ObjectKind::Function)],
                )?
                .into_iter()
                .filter_map(|row| row.into_iter().next().flatten())
                .collect();
            if !blockers.is_empty() {
                return Err(Undone::Blocked(blockers).into());
            }
            for (kind, object, _) in &chosen {
                let (_, drop) = lock_and_drop(*kind);
                let drop = formatted(session, drop, &schema, &object.name)?;
                session.simple(&drop)?;
                let deleted = session.query(
                &format!(
                    "DELETE FROM {catalogue} WHERE kind = $1::text AND name = $2::text RETURNING 1"
                ),
                &[kind.as_str(), &object.name],
            )?;
                if deleted.len() != 1 {
                    bail!(
                        "{CATALOG_TABLE} has {} rows for {} {}, not one",
                        deleted.len(),
                        kind.as_str(),
                        object.name
                    );
                }
            }
            Ok(())
        })
        .map_err(|error| match error.downcast::<Undone>() {
            Ok(Undone::Blocked(blockers)) => anyhow!(
                "{}: drop them first, or leave corescale's objects in place; nothing was dropped",
                blockers.join("; ")
            ),
            Ok(changed) => anyhow!(changed),
            Err(error) => error.context("teardown rolled back: nothing was dropped"),
        })?;
    Ok(verdicts)
}

impl Database for Postgres {
    fn target(&self) -> &Target {
        &self.target
    }

    fn load_table(
        &self,
        record: SetupRecord,
        stamp: &SetupStamp,
        loaded: &(dyn Fn(u64) + Sync),
    ) -> Result<()> {
        let mut session = WireSession::connect(&self.target)?;
        let rows = record.rows;
        let name = table_name(record.schema);
        load_table(&mut session, record, stamp, loaded)
            .and_then(|()| settle_statistics(&mut session, &name, rows))
            .map_err(|error| explain(error, &self.target))
    }

    fn buffer_cache(&self) -> Result<Option<(u64, &'static str)>> {
        let bytes: i64 = self.on_monitor(|monitor| {
            monitor.query_value(
                "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings WHERE name = 'shared_buffers'",
                &[],
            )
        })?;
        Ok(Some((bytes.max(0) as u64, "shared_buffers")))
    }

    fn lock_setup(&self) -> Result<bool> {
        self.setup_lock_call("SELECT pg_try_advisory_lock($1::bigint)")
    }

    fn engine(&self) -> Result<String> {
        let version: String =
            self.on_monitor(|monitor| monitor.query_value("SHOW server_version", &[]))?;
        Ok(format!(
            "PostgreSQL {}",
            crate::db::driver::major_version(&version, 1)
        ))
    }

    fn unlock_setup(&self) -> Result<bool> {
        self.setup_lock_call("SELECT pg_advisory_unlock($1::bigint)")
    }

    fn has_catalogue(&self) -> Result<bool> {
        let exists: String = self.on_monitor(|monitor| {
            monitor.query_value(
                "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1::text)",
                &[CATALOG_TABLE],
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
                let catalogue = catalogue_in(&current_schema(monitor)?);
                // An older corescale's catalogue has no identity columns: read as unrecorded.
                let with_identity: i64 = monitor.query_value(
                    "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1::text AND column_name = ANY (string_to_array($2::text, ','))",
                    &[CATALOG_TABLE, &IDENTITY_COLUMNS.join(",")],
                )?;
                let identity = identity_select(
                    with_identity == IDENTITY_COLUMNS.len() as i64,
                    "::text",
                );
                monitor.query(
                    &format!(
                        "SELECT kind::text, name::text, state::text, parameters::text, {identity} FROM {catalogue} ORDER BY name"
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
        self.on_monitor(|monitor| {
            let catalogue = catalogue_in(&current_schema(monitor)?);
            monitor.simple(&format!(
                "CREATE TABLE {catalogue} (kind text NOT NULL, name text NOT NULL, state text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), corescale_version text NOT NULL, parameters text NOT NULL, object_namespace text, object_id text, object_created text, object_owner text, object_mark text, object_engine text, setup_started text, setup_ended text, PRIMARY KEY (kind, name))"
            ))
        })
    }

    fn drop_owned(&self, object: &Owned) -> Result<Verdict> {
        let mut verdicts = self.drop_owned_all(std::slice::from_ref(object))?;
        Ok(verdicts.pop().unwrap_or(Verdict::Missing))
    }

    fn drop_owned_all(&self, objects: &[Owned]) -> Result<Vec<Verdict>> {
        self.on_monitor(|monitor| drop_all_if_same(monitor, objects))
    }

    fn drop_catalogue(&self) -> Result<bool> {
        self.on_monitor(|monitor| {
            let catalogue = catalogue_in(&current_schema(monitor)?);
            monitor.transaction(|monitor| {
                // Locked, so no row can be added between the count and the drop.
                monitor.simple(&format!("LOCK TABLE {catalogue} IN ACCESS EXCLUSIVE MODE"))?;
                let rows: i64 =
                    monitor.query_value(&format!("SELECT count(*) FROM {catalogue}"), &[])?;
                if rows > 0 {
                    return Ok(false);
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
                "SELECT r.rolname::text FROM pg_roles r
                 WHERE r.rolname <> current_user AND NOT r.rolsuper AND r.rolname NOT LIKE 'pg\\_%'
                   AND (has_table_privilege(r.oid, format('%I.%I', current_schema(), $1::text), 'INSERT')
                        OR has_table_privilege(r.oid, format('%I.%I', current_schema(), $1::text), 'UPDATE'))
                 ORDER BY 1",
                &[CATALOG_TABLE],
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
                "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() AND starts_with(lower(tablename), $1::text)
                 UNION ALL
                 SELECT proname::text || '()' FROM pg_proc WHERE pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND starts_with(lower(proname), $1::text)
                 ORDER BY 1",
                &[PREFIX],
            )
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|row| row.into_iter().next().flatten())
            .map(|name| name.trim_end_matches("()").to_string())
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

    fn on_this_host(&self) -> bool {
        self.on_this_host
    }

    fn server_main_pid(&self) -> Result<Option<u32>> {
        if !self.on_this_host {
            return Ok(None);
        }
        // The postmaster: the parent of the monitor's own backend.
        let backend: u32 =
            self.on_monitor(|monitor| monitor.query_value("SELECT pg_backend_pid()", &[]))?;
        // /proc/PID/stat: "pid (command) state ppid ...", the command may hold ')'.
        Ok(std::fs::read_to_string(format!("/proc/{backend}/stat"))
            .ok()
            .and_then(|stat| {
                let (_, fields) = stat.rsplit_once(')')?;
                fields.split_whitespace().nth(1)?.parse().ok()
            }))
    }

    fn read_only(&self) -> Result<bool> {
        let answer: String = self.on_monitor(|monitor| {
            monitor.query_value(
                "SELECT (pg_is_in_recovery() OR current_setting('default_transaction_read_only')::bool)::text",
                &[],
            )
        })?;
        Ok(answer == "true")
    }

    fn server_clock(&self) -> Result<Option<f64>> {
        replication::clock(self).map(Some)
    }

    fn is_replica(&self) -> Result<bool> {
        replication::is_replica(self)
    }

    fn replication_position(&self) -> Result<Option<String>> {
        replication::position(self)
    }

    fn wait_replayed(&self, position: &str, limit: std::time::Duration) -> Result<bool> {
        replication::wait_replayed(self, position, limit)
    }

    fn check(&self) -> Result<ServerCheck> {
        let rows = self.on_monitor(|monitor| {
            monitor.query(
                "SELECT version(), current_user::text, current_database()::text, current_schema()::text,
                        has_schema_privilege(current_schema(), 'CREATE')::text,
                        has_database_privilege(current_database(), 'CONNECT')::text,
                        (SELECT count(*) FROM pg_stat_database WHERE datname = current_database())::text,
                        (SELECT ssl::text || ' ' || coalesce(version, '') || ' ' || coalesce(cipher, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid())",
                &[],
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

    fn counters_grain(&self) -> std::time::Duration {
        // PGSTAT_MIN_INTERVAL: a backend publishes its counts at most once a second.
        std::time::Duration::from_secs(1)
    }

    fn counters(&self) -> Result<DbCounters> {
        let read = |monitor: &mut WireSession| {
            let rows = monitor.query(
                "SELECT blks_hit, blks_read,
                        (SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_user_tables),
                        (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = current_database())
                   FROM pg_stat_database WHERE datname = current_database()",
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
                let mut fresh = WireSession::connect(&self.target)
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
            maintenance: Some(Maintenance {
                finished: column(2)?,
                running: column(3)?,
            }),
        })
    }

    fn blocks_per_statement(
        &self,
        schema: u64,
        rows: u64,
        work_unit: u64,
        update: bool,
    ) -> Result<f64> {
        let mut session = WireSession::connect(&self.target)?;
        let mut samples = Vec::new();
        explain_samples(&mut session, schema, rows, work_unit, update, &mut samples)
            .map_err(|error| explain(error, &self.target))?;
        // The samples' blocks are published before the first level's baseline is read, not
        // as the session's backend exits, which may be after it.
        let _ = publish_statistics(&mut session);
        mean_of_samples(&samples, "EXPLAIN (ANALYZE, BUFFERS)")
    }
}

/// Blocks each sample statement visits, by EXPLAIN (ANALYZE, BUFFERS) in a transaction that
/// is rolled back: an update changes no row.
fn explain_samples(
    session: &mut WireSession,
    schema: u64,
    rows: u64,
    work_unit: u64,
    update: bool,
    samples: &mut Vec<f64>,
) -> Result<()> {
    session.simple("SET enable_bitmapscan = off; SET enable_seqscan = off")?;
    let table = quote_double(&table_name(schema));
    // An update's first touch of a page VACUUM marked all-visible also clears its bit in the
    // visibility map, one more block per page (263 blocks against 200 for 64 keys here), and
    // only once: the level's updates pay it once per page, then never again. So an update is
    // sampled twice and counted the second time (the first one's rollback keeps the bits
    // cleared), which is what a level's updates cost (a sample taken once made README's
    // `--update-pct 20%` example count 0.88x the client's blocks).
    let passes = if update { 2 } else { 1 };
    for first_key in sample_keys(rows, work_unit) {
        let last_key = first_key + work_unit;
        let statement = sample_statement(&table, "key", first_key, last_key, update);
        let mut blocks = 0.0;
        for _ in 0..passes {
            session.simple("BEGIN")?;
            let plan = session.query_value::<String>(
                &format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}"),
                &[],
            );
            // Rolled back whatever EXPLAIN said; its own error, if any, is the one to report.
            let rolled_back = session.simple("ROLLBACK");
            let plan = plan?;
            rolled_back?;
            let plan: serde_json::Value =
                serde_json::from_str(&plan).context("reading EXPLAIN's JSON plan")?;
            let top = &plan[0]["Plan"];
            blocks = top["Shared Hit Blocks"].as_f64().unwrap_or(0.0)
                + top["Shared Read Blocks"].as_f64().unwrap_or(0.0);
        }
        samples.push(blocks);
    }
    Ok(())
}

/// One transaction: the table, its rows, index and server-side loop, and their catalogue
/// rows. A failed or interrupted load leaves nothing behind.
fn load_table(
    session: &mut WireSession,
    record: SetupRecord,
    stamp: &SetupStamp,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let name = table_name(record.schema);
    let (table, index) = (quote_double(&name), quote_double(&format!("{name}_key")));
    let catalogue = catalogue_in(&current_schema(session)?);
    session.transaction(|session| {
        session.simple(&format!(
            "CREATE TABLE {table} (key bigint NOT NULL, scratch bigint NOT NULL, filler text NOT NULL) WITH (fillfactor = 10)"
        ))?;
        let insert = format!(
            "INSERT INTO {table} (key, scratch, filler)
             SELECT k, k % 1000, repeat('x', {FILLER_BYTES}) FROM unnest($1::bigint[]) WITH ORDINALITY AS u(k, position) ORDER BY position"
        );
        // Rows go in physically in a random key order, so a key range visits random blocks.
        let order = permutation(record.rows, record.schema + 1);
        for batch in order.chunks(INSERT_BATCH) {
            let keys: Vec<String> = batch.iter().map(u64::to_string).collect();
            session.query(&insert, &[&format!("{{{}}}", keys.join(","))])?;
            loaded(batch.len() as u64);
        }
        // Analysed once the load has committed (`settle_statistics`).
        session.simple(&format!("CREATE INDEX {index} ON {table} (key)"))?;
        session.simple(&loop_function_sql(record.schema))?;
        let parameters = record.to_json();
        let schema = current_schema(session)?;
        // Each object's identity is read in the transaction that creates it: no one else can
        // have replaced it yet. Its comment, the setup's mark, only its owner can write.
        for (kind, object) in [
            (ObjectKind::Table, name.clone()),
            (ObjectKind::Function, loop_function(record.schema)),
        ] {
            let comment = match kind {
                ObjectKind::Table => "COMMENT ON TABLE %I.%I IS %L",
                ObjectKind::Function => {
                    "COMMENT ON FUNCTION %I.%I(bigint, bigint, bigint) IS %L"
                }
            };
            let comment: String = session.query_value(
                "SELECT format($1::text, $2::text, $3::text, $4::text)",
                &[comment, &schema, &object, &stamp.mark],
            )?;
            session.simple(&comment)?;
            let recorded = session.query(
                &format!(
                    "INSERT INTO {catalogue} (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_owner, object_mark)
                     SELECT $2::text, $1::text, $3::text, $4::text, $5::text, o.namespace, o.id, o.owner, o.mark FROM ({}) AS o
                     RETURNING 1",
                    identity_sql(kind)
                ),
                &[
                    &object,
                    kind.as_str(),
                    READY,
                    env!("CARGO_PKG_VERSION"),
                    &parameters,
                ],
            )?;
            if recorded.len() != 1 {
                bail!("the {} {object} just created has no identity in the current schema", kind.as_str());
            }
        }
        Ok(())
    })
}

/// Analyses a new table and leaves nothing for autovacuum to do on it. Its inserts reach the
/// statistics a moment after the load commits (an ANALYZE in the load's own transaction would
/// be undone by them), and would have autovacuum analyse and vacuum the whole table a minute
/// later, in the middle of a run, its block reads counted with the statements'. So: wait for
/// them (at most 10 s), then VACUUM (ANALYZE), which also sets the hint bits the first
/// statements would write.
fn settle_statistics(session: &mut WireSession, name: &str, rows: u64) -> Result<()> {
    let counted = "SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relid = to_regclass(quote_ident($1))";
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(10) {
        let modified = session.query_value::<u64>(counted, &[name]).unwrap_or(0);
        if modified >= rows {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    session
        .simple(&format!("VACUUM (ANALYZE) {}", quote_double(name)))
        .with_context(|| format!("vacuuming the new table {name}"))
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
