//! What a database driver is: the [`Database`] and [`DbSession`] traits every driver
//! implements, and the names and quoting of corescale's objects. Which driver serves a
//! target, and what each can do, is the registry's (`registry.rs`).

use std::time::Instant;

use anyhow::{Result, anyhow, bail};

use super::catalog::{Identity, ObjectKind, Owned, SetupStamp, Verdict, verdict};
use super::connect::target::Target;
use super::session_error::SessionError;

/// An identifier in double quotes, embedded quotes doubled (PostgreSQL, Oracle, SQL standard).
pub fn quote_double(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// An identifier in backticks, embedded backticks doubled (MySQL, MariaDB).
pub fn quote_backtick(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Server-wide block counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DbCounters {
    /// Logical reads, every block got whether cached or not: PostgreSQL blks_hit + blks_read,
    /// InnoDB buffer pool read requests, Oracle session logical reads.
    pub lio: f64,
    /// Physical reads: blks_read, Innodb_buffer_pool_reads, physical reads.
    pub pio: f64,
    /// Oracle's DB CPU, in seconds, where the database reports it.
    pub db_cpu_s: Option<f64>,
    /// Transactions the server committed and rolled back, as HammerDB reads them for its TPM
    /// (PostgreSQL xact_commit + xact_rollback of this database, MySQL Com_commit +
    /// Com_rollback); None where not read.
    pub transactions: Option<f64>,
    /// The server's own background maintenance in this database (PostgreSQL's autovacuum),
    /// whose block reads the counters above include; None where it is not read.
    pub maintenance: Option<Maintenance>,
}

/// Background maintenance seen at one reading of the counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Maintenance {
    /// Runs finished so far (autovacuum_count + autoanalyze_count over the database's tables).
    pub finished: f64,
    /// Workers running in this database now.
    pub running: f64,
}

impl Maintenance {
    /// Whether maintenance ran at some point between two readings.
    pub fn ran_between(before: Self, after: Self) -> bool {
        after.finished > before.finished || before.running > 0.0 || after.running > 0.0
    }
}

/// One database behind a URL: what a workload opens sessions on, and every concern of the
/// server a run reads (each a trait of its own, so a caller names what it needs).
pub trait Database:
    AtTarget + Catalogue + SetupWindow + ServerCounters + ServerProcesses + Replication
{
    fn open_session(&self) -> Result<Box<dyn DbSession>>;
    /// The product and its major version, as a job's shape names the engine: "PostgreSQL
    /// 15", "MariaDB 10.11".
    fn engine(&self) -> Result<String> {
        Ok(self.target().product.name.to_string())
    }
    /// What `db check` reports: the server, who corescale is there, its TLS, and whether the
    /// privileges `db setup` and `run db` need are held.
    fn check(&self) -> Result<ServerCheck>;
    /// A session as the DBA's own clients have it (no planner settings of corescale's), for
    /// a script's statements.
    fn open_script_session(&self) -> Result<Box<dyn DbSession>> {
        bail!("this database's driver does not run scripts (PostgreSQL and MySQL/MariaDB do)")
    }
}

/// The target a driver was opened on.
pub trait AtTarget: Send + Sync {
    fn target(&self) -> &Target;
}

/// corescale's catalogue of what it created, and the ownership checks that let teardown drop
/// only that.
pub trait Catalogue: AtTarget {
    fn has_catalogue(&self) -> Result<bool>;
    /// The catalogue's rows; none when there is no catalogue.
    fn catalogue(&self) -> Result<Vec<Owned>>;
    /// Creates the catalogue in the current schema, with the identity columns.
    fn create_catalogue(&self) -> Result<()>;
    /// Drops one catalogued object, its name quoted by the database's rules, and its row, if
    /// the object in the current schema still is the one the row records (checked under a
    /// lock on the object, so it cannot be swapped in between); answers [`Verdict::Same`]
    /// only when the object was really dropped. Otherwise changes nothing and says why.
    fn drop_owned(&self, object: &Owned) -> Result<Verdict>;
    /// Drops every object of `objects` that still is what setup created, and their rows;
    /// answers each one's verdict, in order. A failure names what stopped it and what (if
    /// anything) was dropped before it: PostgreSQL checks all, dependencies included, then
    /// drops all in one transaction; the others check dependencies first, then drop one by
    /// one, as their DDL commits at once.
    fn drop_owned_all(&self, objects: &[Owned]) -> Result<Vec<Verdict>> {
        drop_one_by_one(self, objects)
    }
    /// Drops the catalogue of the current schema if it lists nothing any more (checked under
    /// a lock on it); false, and kept, when it still has rows.
    fn drop_catalogue(&self) -> Result<bool>;
    /// Whether the database keeps corescale's unquoted names in upper case (Oracle).
    fn upper_case_names(&self) -> bool {
        false
    }
    /// How a workload's statements name corescale's object `name`: quoted, and qualified by
    /// corescale's schema where it has one, so no other role's object of that name can be
    /// reached instead.
    fn own_name(&self, name: &str) -> String;
    /// Tables (and functions) whose names start with corescale's prefix, listed or not.
    fn lookalikes(&self) -> Result<Vec<String>>;
    /// Roles other than this one (and superusers) that may write corescale's catalogue. The
    /// identities it records are public, so whoever may write it could forge a row naming
    /// their own object: teardown then drops nothing. Empty where the database cannot tell.
    fn catalogue_writers(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// Why the schema corescale works in may hold others' objects beside its own (others may
    /// create there, or another role owns it), with what to do; None when it cannot.
    fn schema_warning(&self) -> Result<Option<String>> {
        Ok(None)
    }
    /// Why roles other than corescale's user (and superusers, or on MySQL/MariaDB accounts
    /// with global privileges) could alter, drop or replace corescale's tables where it works,
    /// or put code on them: they own the schema, may act as the tables' owner, or may make
    /// triggers on them. `tables` are the names of corescale's tables there, made or to be
    /// made (the catalogue among them). One sentence naming them, without the advice; None
    /// when no one else can, or where the database cannot tell.
    fn others_in_control(&self, _tables: &[String]) -> Result<Option<String>> {
        Ok(None)
    }
    /// Holds a lock on `tables` (existing tables of corescale's) from a connection of its
    /// own until the answer is dropped, so no one can drop, rename or replace them
    /// meanwhile: PostgreSQL ACCESS SHARE, MySQL/MariaDB a metadata lock through an open
    /// transaction. None where the database's driver holds none.
    fn hold_tables(&self, _tables: &[String]) -> Result<Option<Box<dyn TablesHeld>>> {
        Ok(None)
    }
    /// What the object of `kind` named `name` in corescale's schema is now (its id, owner,
    /// mark, ...); None when there is none of that kind (a view is no table).
    fn identity_now(&self, kind: ObjectKind, name: &str) -> Result<Option<Identity>>;
    /// What each of `objects` is now, against what setup recorded (`catalog::verdict`): a run
    /// reads only tables that still are the ones setup created, not a view or another's table
    /// put under their names.
    fn verify_owned(&self, objects: &[Owned]) -> Result<Vec<Verdict>> {
        objects
            .iter()
            .map(|object| {
                let current = match object.kind {
                    Some(kind) => self.identity_now(kind, &object.name)?,
                    None => None,
                };
                Ok(verdict(object.identity.as_ref(), current.as_ref()))
            })
            .collect()
    }
}

/// A lock on corescale's tables, held by a connection of its own for as long as this lives
/// (closing the connection ends its transaction, and frees the lock).
pub trait TablesHeld: Send {
    /// Fails when the lock may be gone: its connection no longer answers.
    fn still_held(&mut self) -> Result<()>;
}

/// The setup lock, and the window a setup's objects are marked with.
pub trait SetupWindow: AtTarget {
    /// Begins a setup once the catalogue exists: the mark its objects carry, and where the
    /// database cannot name a table by id, the clock its setup window starts at.
    fn begin_setup(&self) -> Result<SetupStamp> {
        Ok(SetupStamp::new(None))
    }
    /// Ends a setup whose tables are all loaded (MariaDB: records its window's end).
    fn end_setup(&self, _stamp: &SetupStamp) -> Result<()> {
        Ok(())
    }
    /// Takes the setup lock on the monitor connection without waiting: false when another
    /// session holds it.
    fn lock_setup(&self) -> Result<bool>;
    /// Releases the setup lock: false when this session did not hold it. Closing the
    /// connection frees it too, but only once the server notices: a setup followed at once by
    /// a teardown would find it still held.
    fn unlock_setup(&self) -> Result<bool>;
    /// Creates object `name` of `kind` by a workload's `create` statement (which names it as
    /// [`Catalogue::own_name`] does, and must not replace an existing object), puts `stamp`'s
    /// mark on it and records it in the catalogue with `parameters` (JSON): a table as
    /// loading, a function as ready.
    fn create_owned(
        &self,
        _kind: ObjectKind,
        _name: &str,
        _create: &str,
        _stamp: &SetupStamp,
        _parameters: &str,
    ) -> Result<()> {
        bail!(
            "this database's driver does not yet create a workload's own objects (PostgreSQL and MySQL/MariaDB do)"
        )
    }
    /// Records that table `name`, created by [`SetupWindow::create_owned`] and loaded with
    /// `rows` rows (its indexes built), is ready, once it is checked to be the table created.
    /// First its statistics are gathered, and on PostgreSQL the table vacuumed once the
    /// server's statistics count the load, so autovacuum does not read it in a later run.
    fn owned_table_ready(&self, _name: &str, _rows: u64) -> Result<()> {
        bail!(
            "this database's driver does not yet create a workload's own objects (PostgreSQL and MySQL/MariaDB do)"
        )
    }
}

/// One value of a row a workload's setup loads: numbers and times the database reads from
/// their text ("12.50", "2026-11-28 10:00:00").
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    Int(i64),
    Text(String),
    Null,
}

/// Rows for one bulk load into one table, in column order: what a workload's setup
/// generates, and a driver sends by its database's bulk path (COPY on PostgreSQL, multi-row
/// INSERTs with bound values on MySQL/MariaDB).
#[derive(Debug, Clone, Default)]
pub struct Rows {
    width: usize,
    fields: Vec<Field>,
}

impl Rows {
    /// No rows yet, of `width` columns each.
    pub fn new(width: usize) -> Self {
        Rows {
            width,
            fields: Vec::new(),
        }
    }

    /// Adds one row; it must have the width's number of fields.
    pub fn push(&mut self, row: impl IntoIterator<Item = Field>) {
        let before = self.fields.len();
        self.fields.extend(row);
        assert_eq!(
            self.fields.len() - before,
            self.width,
            "a row of a bulk load has one field per column"
        );
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn len(&self) -> usize {
        self.fields.len().checked_div(self.width).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Each row's fields, in order.
    pub fn rows(&self) -> impl Iterator<Item = &[Field]> {
        self.fields.chunks(self.width.max(1))
    }

    pub fn clear(&mut self) {
        self.fields.clear();
    }
}

/// The server's block counters, as the level figures read them.
pub trait ServerCounters: AtTarget {
    fn counters(&self) -> Result<DbCounters>;
    /// How far behind the sessions' work `counters` may be: the period at which the server
    /// publishes what its sessions did (PostgreSQL's backends, at most once a second).
    fn counters_grain(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// The buffer cache's size in bytes and the setting that sets it, where readable.
    fn buffer_cache(&self) -> Result<Option<(u64, &'static str)>> {
        Ok(None)
    }
    /// The blocks one execution of a workload's statement visits, the mean over its samples,
    /// by the database's own per-statement count (EXPLAIN (ANALYZE, BUFFERS), the buffer
    /// pool's counter around it, v$mystat). What a sample changes is undone.
    fn blocks_per_statement(&self, statement: &SampledStatement) -> Result<f64>;
}

/// A workload's statement whose blocks per execution are sampled, as its sessions run it.
#[derive(Debug, Clone, Copy)]
pub struct SampledStatement<'a> {
    /// What the workload's sessions set before their statements (planner settings).
    pub settings: Option<&'a str>,
    pub sql: &'a str,
    /// Whether it changes rows: then each sample is undone (rolled back, or `undo` run after
    /// it, unmeasured, where the change must commit to be counted as the sessions' are).
    pub changes: bool,
    /// Restores what one execution changed, with the same values.
    pub undo: Option<&'a str>,
    /// Each sample's bound values.
    pub samples: &'a [Vec<BoundValue>],
    /// A change's values that reach every page of its table, run once and rolled back
    /// before the samples where a page's first change costs more than its later ones
    /// (PostgreSQL clears the page's visibility-map bit once): the sessions then pay what
    /// the samples counted from their first level on. Only PostgreSQL's driver runs it;
    /// the others' samples count no such first change.
    pub every_page: Option<&'a [BoundValue]>,
}

/// The server's processes on this host, whose CPU time a run reads, and its clock.
pub trait ServerProcesses: AtTarget {
    /// The server's process, when one process serves every session (MariaDB).
    fn server_pid(&self) -> Result<Option<u32>> {
        Ok(None)
    }
    /// Whether the server runs on this host: its processes' CPU time is read here. A target
    /// at this host's address may be a tunnel or a proxy to a server elsewhere; drivers that
    /// can tell (`connect::this_host`) say so.
    fn on_this_host(&self) -> bool {
        self.target().is_local()
    }
    /// Why the server's CPU time is not read here though the target names this host, for a
    /// run to say: a tunnel or a proxy listening here forwards to a server elsewhere.
    fn forwarded(&self) -> Option<String> {
        (self.target().is_local() && !self.on_this_host()).then(|| {
            format!(
                "{} is this host's address, but the server sees the connection come from a port no socket of corescale's has: a tunnel or a proxy forwards it to a server elsewhere, whose CPU time is not read from this host",
                self.target()
            )
        })
    }
    /// A server on this host: its main process, whose CPU time and whose children's serve
    /// the sessions (PostgreSQL's postmaster and its backends, MariaDB's one process).
    fn server_main_pid(&self) -> Result<Option<u32>> {
        if !self.on_this_host() {
            return Ok(None);
        }
        self.server_pid()
    }
    /// The server's clock, in seconds since the epoch, where it can be read.
    fn server_clock(&self) -> Result<Option<f64>> {
        Ok(None)
    }
}

/// Replicas: whether this instance is one, and waiting for it to replay its primary's changes.
pub trait Replication: AtTarget {
    /// Whether the target takes no writes: a replica, or read-only by its settings. A
    /// script that writes is refused there before the run.
    fn read_only(&self) -> Result<bool> {
        Ok(false)
    }
    /// Whether this instance replays another's changes (a streaming or binlog replica), as
    /// `db check` and a cluster's routing name it; by default, whether it takes no writes.
    fn is_replica(&self) -> Result<bool> {
        self.read_only()
    }
    /// Where this instance's stream of changes stands now (PostgreSQL's WAL position,
    /// MariaDB's GTID position), for its replicas to wait on; None where it cannot tell.
    fn replication_position(&self) -> Result<Option<String>> {
        Ok(None)
    }
    /// Waits until this replica has replayed its primary's changes up to `position`; false
    /// when `limit` passed first.
    fn wait_replayed(&self, _position: &str, _limit: std::time::Duration) -> Result<bool> {
        Ok(true)
    }
}

/// What a connection reached, for `corescale db check`.
#[derive(Debug, Clone, Default)]
pub struct ServerCheck {
    pub server: String,
    pub user: String,
    pub database: String,
    pub tls: Option<super::connect::tls::TlsFacts>,
    /// Each privilege `db setup` and `run db` need, and whether it is held.
    pub privileges: Vec<(String, bool)>,
}

/// What the database answered for one statement, as a workload reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Answer {
    /// Rows it returned.
    pub returned: u64,
    /// Rows its command changed, by the server's own count (0 for a query).
    pub changed: u64,
    /// The last column of the last row it returned, where that is an integer: an
    /// aggregate's count, a function's result.
    pub value: Option<i64>,
}

impl Answer {
    /// The rows it returned, else the rows it changed: what a script's statement counts.
    pub fn rows(&self) -> u64 {
        if self.returned > 0 {
            self.returned
        } else {
            self.changed
        }
    }
}

/// A value bound to a statement: pgbench's integers and doubles, text, and a captured NULL.
/// Text is borrowed where it is a constant of the run (order entry's customer last names)
/// and owned where a workload loaded it (a capture's parameters, held by the statement
/// for as long as the replay keeps it and freed with it); either way a statement binds it
/// by reference, nothing copied per statement.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundValue {
    Int(i64),
    Double(f64),
    Text(std::borrow::Cow<'static, str>),
    Null,
}

impl std::fmt::Display for BoundValue {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoundValue::Int(value) => write!(formatter, "{value}"),
            BoundValue::Double(value) => write!(formatter, "{value:?}"),
            BoundValue::Text(text) => write!(formatter, "'{}'", text.replace('\'', "''")),
            BoundValue::Null => write!(formatter, "NULL"),
        }
    }
}

/// One session: a client that prepares, binds, executes and pipelines the statements a
/// workload gives it, as sysbench's drivers do, and knows no workload's SQL. Statements are
/// named by the workload's index for them and prepared on first use. PostgreSQL sessions
/// have their own backend process.
pub trait DbSession: Send {
    /// Whether the session runs over TLS, and with what protocol and cipher.
    fn tls(&self) -> Option<super::connect::tls::TlsFacts> {
        None
    }
    /// Runs statement `index`: prepared from `sql` (the product's placeholders) on first
    /// use, `values` bound, never pasted into the text; answered before it returns. A
    /// refusal the session outlives is [`SessionError::Refused`] (a server that refuses and
    /// hangs up is a lost connection).
    fn execute(
        &mut self,
        index: usize,
        sql: &str,
        values: &[BoundValue],
    ) -> Result<Answer, SessionError>;
    /// Queues statement `index` for the next batch, encoded as [`DbSession::execute`] sends
    /// it (drivers that pipeline: [`Product::max_pipeline`] over 1).
    ///
    /// [`Product::max_pipeline`]: super::product::Product
    fn queue(
        &mut self,
        _index: usize,
        _sql: &str,
        _values: &[BoundValue],
    ) -> Result<(), SessionError> {
        Err(anyhow!(
            "this database's driver answers each statement before the next is sent: pipelines need PostgreSQL"
        )
        .into())
    }
    /// Sends the queued statements as one batch (one Sync: one implicit transaction)
    /// without waiting for their answers.
    fn send_batch(&mut self) -> Result<(), SessionError> {
        Err(anyhow!(
            "this database's driver answers each statement before the next is sent: pipelines need PostgreSQL"
        )
        .into())
    }
    /// Statements queued for the next batch, not yet sent.
    fn queued(&self) -> usize {
        0
    }
    /// Batches sent and not yet answered.
    fn batches_in_flight(&self) -> usize {
        0
    }
    /// Reads the oldest batch's answers in order, each with when it was read, into
    /// `answered` (answers read early, before a statement outside the pipeline, are handed
    /// out first, together). A refusal is [`SessionError::Refused`], after the statements
    /// before it were answered (the server skipped the rest of its batch).
    fn answer_batch(&mut self, _answered: &mut Vec<(Answer, Instant)>) -> Result<(), SessionError> {
        Ok(())
    }
    /// The session's server process, where it is one of this host's processes (PostgreSQL's
    /// backend): its CPU time is the session's on the server.
    fn backend_pid(&self) -> Option<u32> {
        None
    }
    /// Makes the session's statistics visible to other sessions (PostgreSQL flushes lazily).
    fn publish_statistics(&mut self) -> Result<()> {
        Ok(())
    }
    /// Runs SQL as written, with no values (a session setting, a transaction's BEGIN and
    /// COMMIT). A refusal the session outlives is [`SessionError::Refused`], as `execute`'s.
    fn run_plain(&mut self, sql: &str) -> Result<Answer, SessionError>;
    /// Runs one statement, `values` bound as text, and answers its rows as text (NULL as
    /// None): for reading the server's settings and a workload's own checks, never in a
    /// timed path.
    fn fetch_text(&mut self, _sql: &str, _values: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
        bail!(
            "this database's driver does not answer rows as text yet (PostgreSQL and MySQL/MariaDB do)"
        )
    }
    /// Loads `rows` into `table` (named as [`Catalogue::own_name`] gives it), `columns` in
    /// order, by the database's bulk path; all of them or, on a failure, none.
    fn load_rows(&mut self, _table: &str, _columns: &[&str], _rows: &Rows) -> Result<()> {
        bail!("this database's driver has no bulk load yet (PostgreSQL and MySQL/MariaDB do)")
    }
    /// Makes the server refuse every write of this session, whoever its user is (MariaDB's
    /// read_only does not bind accounts with READ ONLY ADMIN or SUPER): for runs that must
    /// not write. False where the database has no such session mode (Oracle's READ ONLY is
    /// per transaction; its runs send only corescale's own selects).
    fn hold_read_only(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Why this session's role may not run `sql` (with `parameters` placeholders), checked
    /// without running it: the server's own privilege check, where it makes one before
    /// execution; None when it may, or when the server cannot tell beforehand.
    fn missing_privilege(&mut self, _sql: &str, _parameters: usize) -> Result<Option<String>> {
        Ok(None)
    }
}

/// The mean block count of the sample statements, which must be positive.
pub fn mean_of_samples(samples: &[f64], source: &str) -> Result<f64> {
    let mean = samples.iter().sum::<f64>() / samples.len().max(1) as f64;
    if mean <= 0.0 {
        bail!("{source} reported no blocks for the sample statements");
    }
    Ok(mean)
}

/// The first `parts` dot-separated numbers of a server's version text: "15" of "15.20
/// (Debian 15.20-0+deb12u1)", "10.11" of "10.11.19-MariaDB-0+deb12u1" at 2.
pub(crate) fn major_version(version: &str, parts: usize) -> String {
    version
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .unwrap_or("")
        .split('.')
        .take(parts)
        .collect::<Vec<_>>()
        .join(".")
}

/// Drops `objects` one at a time (for databases whose DDL commits at once): answers each
/// one's verdict; when a drop fails, the error says exactly which were dropped before it.
pub(crate) fn drop_one_by_one<D: Catalogue + ?Sized>(
    database: &D,
    objects: &[Owned],
) -> Result<Vec<Verdict>> {
    let mut verdicts = Vec::with_capacity(objects.len());
    for object in objects {
        match database.drop_owned(object) {
            Ok(verdict) => verdicts.push(verdict),
            Err(error) => {
                let dropped: Vec<String> = objects
                    .iter()
                    .zip(&verdicts)
                    .filter(|(_, verdict)| **verdict == Verdict::Same)
                    .map(|(object, _)| object.shown())
                    .collect();
                let before = if dropped.is_empty() {
                    "nothing was dropped".to_string()
                } else {
                    format!(
                        "dropped before it, with their catalogue rows: {}",
                        dropped.join(", ")
                    )
                };
                return Err(error.context(format!(
                    "teardown stopped at {} in {}; {before}",
                    object.shown(),
                    database.target()
                )));
            }
        }
    }
    Ok(verdicts)
}
