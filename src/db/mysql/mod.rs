//! MySQL and MariaDB (InnoDB). InnoDB keeps rows in primary-key order, so the physical order is
//! an `id` primary key and the SLOB key is a secondary index over keys in random order; every
//! row visit descends the clustered index. Rows carry a 7600-byte filler, so two rows fill a
//! 16 KiB page (InnoDB keeps at least two rows per page; longer rows would move off-page).
//! LIO is Innodb_buffer_pool_read_requests and PIO Innodb_buffer_pool_reads.

mod blocks;
mod connection;
mod grants;
mod identity;
pub(crate) mod mycnf;
mod owned;
mod purge;
mod session;

use identity::{current_identity, table_ids_readable};
use session::MySqlSession;

use connection::*;

use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow, bail};
use mysql::prelude::Queryable;
use mysql::{ClientIdentity, Conn, Opts, OptsBuilder, SslOpts};

use crate::db::catalog::{
    CATALOG_TABLE, IDENTITY_COLUMNS, Identity, LOCK_NAME, ObjectKind, Owned, SetupStamp, Verdict,
    identity_select, verdict,
};
use crate::db::connect::settings::{Endpoint, RootCertificates, Setting, TlsMode, TlsSettings};
use crate::db::connect::target::{Target, within};
use crate::db::connect::tls::{self, TlsFacts};
use crate::db::driver::{ServerCheck, drop_one_by_one};
use crate::db::product::{Dialect, Product};
use crate::db::{
    AtTarget, Catalogue, Database, DbCounters, DbSession, PREFIX, Replication, ServerCounters,
    ServerProcesses, SetupWindow, quote_backtick,
};
use crate::error::locked;

/// MySQL's and MariaDB's row of the registry.
pub(crate) static PRODUCT: Product = Product {
    name: "MySQL/MariaDB",
    schemes: &["mysql", "mariadb"],
    resolve: mycnf::resolve,
    max_pipeline: 1,
    default_pipeline: 1,
    dialect: Dialect::MySql,
    placeholder: |_| "?".to_string(),
};

/// Opens a MySQL or MariaDB target's database.
pub(crate) fn open(target: &Target) -> Result<Arc<dyn Database>> {
    Ok(Arc::new(MySql::new(target.clone())?))
}

pub(crate) struct MySql {
    target: Target,
    monitor: Mutex<Conn>,
    /// Whether the server runs on this host, its process's CPU time readable here.
    on_this_host: bool,
}

impl MySql {
    pub(crate) fn new(target: Target) -> Result<Self> {
        let mut monitor = connect(&target)?;
        let on_this_host = on_this_host(&mut monitor, &target)?;
        Ok(Self {
            target,
            monitor: Mutex::new(monitor),
            on_this_host,
        })
    }

    /// Runs GET_LOCK or RELEASE_LOCK on the setup lock and answers whether it did. Lock
    /// names are server-wide: the database's name keeps two databases apart.
    fn setup_lock_call(&self, sql: &str) -> Result<bool> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let answer: Option<Option<i64>> = connection
            .exec_first(sql, (format!("{LOCK_NAME}:{}", self.target.database()),))
            .map_err(|error| describe(error, &self.target))?;
        Ok(answer.flatten() == Some(1))
    }

    /// A setup killed a moment ago frees the lock when the server notices its monitor
    /// connection gone, but its loaders' statements on other connections run to their end:
    /// wait (10 s at most) until no other session of this user runs a statement in this
    /// database, so nothing they create appears after this setup or teardown has looked.
    fn wait_for_stragglers(&self) -> Result<()> {
        const AT_MOST: std::time::Duration = std::time::Duration::from_secs(10);
        let began = std::time::Instant::now();
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        loop {
            let busy: Option<i64> = connection
                .query_first(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST
                      WHERE DB = DATABASE() AND ID <> CONNECTION_ID()
                        AND USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)
                        AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump')",
                )
                .map_err(|error| describe(error, &self.target))?;
            if busy.unwrap_or(0) == 0 || began.elapsed() >= AT_MOST {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Whether the server is MariaDB (whose GTIDs and functions differ from MySQL's).
    fn is_mariadb(&self, connection: &mut Conn) -> Result<bool> {
        let version: Option<String> = connection
            .query_first("SELECT VERSION()")
            .map_err(|error| describe(error, &self.target))?;
        Ok(version
            .unwrap_or_default()
            .to_ascii_lowercase()
            .contains("mariadb"))
    }

    /// Global status variables by name, read in one statement.
    fn status(&self, names: &[&str]) -> Result<Vec<f64>> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let quoted: Vec<String> = names.iter().map(|name| format!("'{name}'")).collect();
        let rows: Vec<(String, String)> = connection
            .query(format!(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
                quoted.join(",")
            ))
            .map_err(|error| describe(error, &self.target))?;
        names
            .iter()
            .map(|name| {
                let (_, value) = rows
                    .iter()
                    .find(|(variable, _)| variable.eq_ignore_ascii_case(name))
                    .ok_or_else(|| anyhow!("{}: no status variable {name}", self.target))?;
                value
                    .parse()
                    .with_context(|| format!("{}: {name} = '{value}' is not a number", self.target))
            })
            .collect()
    }
}

impl Database for MySql {
    fn engine(&self) -> Result<String> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let version: Option<String> = connection
            .query_first("SELECT VERSION()")
            .map_err(|error| describe(error, &self.target))?;
        let version = version.unwrap_or_default();
        let product = if version.to_ascii_lowercase().contains("mariadb") {
            "MariaDB"
        } else {
            "MySQL"
        };
        Ok(format!(
            "{product} {}",
            crate::db::driver::major_version(&version, 2)
        ))
    }

    fn open_session(&self) -> Result<Box<dyn DbSession>> {
        let mut connection = connect(&self.target)?;
        let tls = session_tls(&mut connection).map_err(|error| describe(error, &self.target))?;
        Ok(Box::new(MySqlSession {
            connection,
            target: self.target.clone(),
            statements: Vec::new(),
            tls,
        }))
    }

    /// corescale's sessions change no setting on MySQL/MariaDB: a script's session is one.
    fn open_script_session(&self) -> Result<Box<dyn DbSession>> {
        self.open_session()
    }

    fn check(&self) -> Result<ServerCheck> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let facts: Option<(String, String, Option<String>)> = connection
            .query_first("SELECT VERSION(), CURRENT_USER(), DATABASE()")
            .map_err(|error| describe(error, &self.target))?;
        let (server, user, database) = facts.unwrap_or_default();
        let tls = session_tls(&mut connection).map_err(|error| describe(error, &self.target))?;
        let grants: Vec<String> = connection
            .query("SHOW GRANTS")
            .map_err(|error| describe(error, &self.target))?;
        let database = database.unwrap_or_default();
        let grants_on = |needed: &str| {
            grants.iter().any(|grant| {
                let upper = grant.to_ascii_uppercase();
                let scope_ok = upper.contains(" ON *.* ")
                    || upper.contains(&format!(" ON `{}`.* ", database.to_ascii_uppercase()));
                scope_ok && (upper.contains("ALL PRIVILEGES") || upper.contains(needed))
            })
        };
        let status_readable = connection
            .query_drop("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_read_requests'")
            .is_ok();
        let ids_readable = identity::table_ids_visible(&mut connection);
        let grant_tables_readable = connection
            .query_drop("SELECT 1 FROM mysql.db LIMIT 1")
            .is_ok();
        Ok(ServerCheck {
            server: format!("MySQL/MariaDB {server}"),
            user,
            tls,
            privileges: vec![
                (
                    format!("CREATE on {database} (db setup creates its tables there)"),
                    grants_on("CREATE"),
                ),
                (
                    format!("SELECT, UPDATE on {database} (run db's statements)"),
                    grants_on("SELECT") && grants_on("UPDATE"),
                ),
                (
                    "reads global status (the run's LIO and PIO counters)".to_string(),
                    status_readable,
                ),
                (
                    "PROCESS (teardown knows its tables by id)".to_string(),
                    ids_readable,
                ),
                (
                    "SELECT on mysql.* (teardown proves no other account could forge its catalogue)"
                        .to_string(),
                    grant_tables_readable,
                ),
            ],
            database,
        })
    }
}

impl AtTarget for MySql {
    fn target(&self) -> &Target {
        &self.target
    }
}

impl Catalogue for MySql {
    fn own_name(&self, name: &str) -> String {
        quote_backtick(name)
    }

    /// Accounts that may write the catalogue without holding DROP on its database; an error
    /// naming the grant that lets teardown read the grant tables where it cannot.
    fn catalogue_writers(&self) -> Result<Vec<String>> {
        if !self.has_catalogue()? {
            return Ok(Vec::new());
        }
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let database = current_database(&mut connection, &self.target)?;
        let account = current_account(&mut connection, &self.target)?;
        grants::catalogue_forgers(&mut connection, &database, CATALOG_TABLE)
            .map_err(|error| grants::unreadable(&error, &account))
    }

    fn has_catalogue(&self) -> Result<bool> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let count: Option<u64> = connection
            .exec_first(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
                (CATALOG_TABLE,),
            )
            .map_err(|error| describe(error, &self.target))?;
        Ok(count.unwrap_or(0) > 0)
    }

    fn catalogue(&self) -> Result<Vec<Owned>> {
        if !self.has_catalogue()? {
            return Ok(Vec::new());
        }
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        // An older corescale's catalogue has fewer identity columns: read as unrecorded.
        let with_identity: Option<u64> = connection
            .exec_first(
                "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND FIND_IN_SET(column_name, ?) > 0",
                (CATALOG_TABLE, IDENTITY_COLUMNS.join(",")),
            )
            .map_err(|error| describe(error, &self.target))?;
        let identity = identity_select(with_identity == Some(IDENTITY_COLUMNS.len() as u64), "");
        let rows: Vec<mysql::Row> = connection
            .query(format!(
                "SELECT kind, name, state, parameters, {identity} FROM {} ORDER BY name",
                quote_backtick(CATALOG_TABLE)
            ))
            .map_err(|error| describe(error, &self.target))
            .with_context(|| format!("reading corescale's catalogue {CATALOG_TABLE}"))?;
        rows.into_iter()
            .map(|row| {
                let column = |index: usize| -> Result<Option<String>> {
                    row.get_opt::<Option<String>, usize>(index)
                        .transpose()
                        .map_err(|error| {
                            anyhow!(
                                "{}: {CATALOG_TABLE} has an unreadable value: {error}",
                                self.target
                            )
                        })
                        .map(Option::flatten)
                };
                Owned::from_columns(column)
            })
            .collect()
    }

    fn create_catalogue(&self) -> Result<()> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        connection
            .query_drop(format!(
                "CREATE TABLE {} (kind VARCHAR(16) NOT NULL, name VARCHAR(64) NOT NULL, state VARCHAR(16) NOT NULL, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, corescale_version VARCHAR(32) NOT NULL, parameters TEXT NOT NULL, object_namespace VARCHAR(64) NULL, object_id VARCHAR(32) NULL, object_created VARCHAR(32) NULL, object_owner VARCHAR(400) NULL, object_mark VARCHAR(2048) NULL, object_engine VARCHAR(64) NULL, setup_started VARCHAR(32) NULL, setup_ended VARCHAR(32) NULL, PRIMARY KEY (kind, name)) ENGINE=InnoDB",
                quote_backtick(CATALOG_TABLE)
            ))
            .map_err(|error| describe(error, &self.target))
    }

    /// LOCK TABLES holds the table from the identity check through the DROP (dropping a
    /// write-locked table does not end LOCK TABLES), so what is checked is what is dropped.
    fn drop_owned(&self, object: &Owned) -> Result<Verdict> {
        let recorded = object.identity.as_ref();
        if object.kind != Some(ObjectKind::Table) {
            // Setup creates tables only here: any other row names nothing of corescale's.
            return Ok(verdict(recorded, None));
        }
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let current = current_identity(&mut connection, &object.name)
            .map_err(|error| describe(error, &self.target))?;
        // A first look without a lock: a table that is not corescale's is never locked.
        let first = verdict(recorded, current.as_ref());
        if first != Verdict::Same {
            return Ok(first);
        }
        let database = current_database(&mut connection, &self.target)?;
        let table = qualified(&database, &object.name);
        let catalogue = qualified(&database, CATALOG_TABLE);
        match connection.query_drop(format!("LOCK TABLES {table} WRITE, {catalogue} WRITE")) {
            Err(mysql::Error::MySqlError(server)) if server.code == NO_SUCH_TABLE => {
                return Ok(Verdict::Missing);
            }
            Err(error) => {
                return Err(describe(error, &self.target)
                    .context("locking it to drop it (teardown needs the LOCK TABLES privilege)"));
            }
            Ok(()) => {}
        }
        let outcome = drop_locked(&mut connection, object, &table, &catalogue);
        let unlocked = connection.query_drop("UNLOCK TABLES");
        let outcome = outcome.map_err(|error| describe(error, &self.target))?;
        unlocked.map_err(|error| describe(error, &self.target))?;
        Ok(outcome)
    }

    /// MariaDB commits each DROP at once, and drops a table under a view without a word: what
    /// depends on the tables (views, other tables' foreign keys, triggers) is checked first,
    /// and stops the teardown before anything is dropped.
    fn drop_owned_all(&self, objects: &[Owned]) -> Result<Vec<Verdict>> {
        let blockers = {
            let mut connection = locked(&self.monitor, "the monitor connection")?;
            let database = current_database(&mut connection, &self.target)?;
            let tables: Vec<&str> = objects
                .iter()
                .filter(|object| object.kind == Some(ObjectKind::Table))
                .map(|object| object.name.as_str())
                .collect();
            if !tables.is_empty() && !table_ids_readable(&mut connection, &self.target)? {
                let account = current_account(&mut connection, &self.target)?;
                grants::refuse_by_creation_time(&mut connection, &database, &tables, &account)?;
            }
            dependents(&mut connection, &database, &tables)
                .map_err(|error| describe(error, &self.target))?
        };
        if !blockers.is_empty() {
            bail!(
                "{}: drop them first, or leave corescale's objects in place; nothing was dropped from {}",
                blockers.join("; "),
                self.target
            );
        }
        drop_one_by_one(self, objects)
    }

    fn drop_catalogue(&self) -> Result<bool> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let database = current_database(&mut connection, &self.target)?;
        let catalogue = qualified(&database, CATALOG_TABLE);
        connection
            .query_drop(format!("LOCK TABLES {catalogue} WRITE"))
            .map_err(|error| describe(error, &self.target))?;
        // Locked, so no row can be added between the count and the drop.
        let dropped = (|| -> Result<bool, mysql::Error> {
            let rows: Option<u64> =
                connection.query_first(format!("SELECT COUNT(*) FROM {catalogue}"))?;
            if rows != Some(0) {
                return Ok(false);
            }
            connection.query_drop(format!("DROP TABLE {catalogue}"))?;
            Ok(true)
        })();
        let unlocked = connection.query_drop("UNLOCK TABLES");
        let dropped = dropped.map_err(|error| describe(error, &self.target))?;
        unlocked.map_err(|error| describe(error, &self.target))?;
        Ok(dropped)
    }

    fn lookalikes(&self) -> Result<Vec<String>> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let pattern = format!("{}%", PREFIX.replace('_', "\\_"));
        connection
            .exec(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?
                 UNION ALL
                 SELECT routine_name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name LIKE ?
                 ORDER BY 1",
                (&pattern, &pattern),
            )
            .map_err(|error| describe(error, &self.target))
    }

    /// Accounts without global privileges holding DROP, ALTER, CREATE VIEW or TRIGGER on the
    /// database or one of `tables`, from the grant tables; None where they are unreadable
    /// (`schema_warning` then says so).
    fn others_in_control(&self, tables: &[String]) -> Result<Option<String>> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let database = current_database(&mut connection, &self.target)?;
        let account = current_account(&mut connection, &self.target)?;
        let names: Vec<&str> = tables.iter().map(String::as_str).collect();
        let Ok(mut others) = grants::others_in_control(&mut connection, &database, &names) else {
            return Ok(None);
        };
        // corescale's own user from another host is corescale's, not another's.
        let own_user = account
            .rsplit_once('@')
            .map_or(account.as_str(), |(user, _)| user);
        others.retain(|other| {
            other
                .rsplit_once('@')
                .is_none_or(|(user, _)| user != own_user)
        });
        if others.is_empty() {
            return Ok(None);
        }
        let count = others.len();
        let mut named: Vec<String> = others.into_iter().take(5).collect();
        if count > 5 {
            named.push(format!("and {} more", count - 5));
        }
        Ok(Some(format!(
            "in database {} of {}, {} may drop, alter, make views or triggers where corescale's tables are, and so replace them or run their code as {account} while a run reads them: give corescale a database of its own in the URL (mysql://{}@host/corescale, with no grants to others), or REVOKE DROP, ALTER, CREATE VIEW, TRIGGER ON {}.* FROM them",
            crate::format::printable(&database),
            self.target,
            named.join(", "),
            account.split('@').next().unwrap_or_default(),
            quote_backtick(&database)
        )))
    }

    /// Where the grant tables are unreadable, corescale cannot tell who else could drop or
    /// replace its tables.
    fn schema_warning(&self) -> Result<Option<String>> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        if connection
            .query_drop("SELECT 1 FROM mysql.db LIMIT 0")
            .is_ok()
        {
            return Ok(None);
        }
        let account = current_account(&mut connection, &self.target)?;
        Ok(Some(format!(
            "{account} cannot read the grant tables, so corescale cannot tell whether other accounts could drop or replace its tables in {} during a run: GRANT SELECT ON mysql.* TO {account} lets it check",
            self.target
        )))
    }

    /// A metadata lock: a transaction at READ COMMITTED (no read view kept between
    /// statements, so purge is not held back) that has read each table once and stays open.
    fn hold_tables(&self, tables: &[String]) -> Result<Option<Box<dyn crate::db::TablesHeld>>> {
        let mut connection = connect(&self.target)?;
        let database = current_database(&mut connection, &self.target)?;
        let mut statements = vec![
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED".to_string(),
            // An idle connection outlives any run (a year, the server's largest).
            "SET SESSION wait_timeout = 31536000".to_string(),
            "SET SESSION lock_wait_timeout = 60".to_string(),
            "START TRANSACTION".to_string(),
        ];
        statements.extend(
            tables
                .iter()
                .map(|name| format!("SELECT 1 FROM {} LIMIT 0", qualified(&database, name))),
        );
        for statement in statements {
            connection
                .query_drop(statement)
                .map_err(|error| describe(error, &self.target))?;
        }
        Ok(Some(Box::new(MySqlHold {
            connection,
            target: self.target.clone(),
        })))
    }

    /// Setup creates tables only here: any other kind names nothing of corescale's.
    fn identity_now(&self, kind: ObjectKind, name: &str) -> Result<Option<Identity>> {
        if kind != ObjectKind::Table {
            return Ok(None);
        }
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        current_identity(&mut connection, name).map_err(|error| describe(error, &self.target))
    }
}

impl SetupWindow for MySql {
    /// Where table ids are unreadable (no PROCESS privilege), tables are known by their
    /// CREATE_TIME, in whole seconds: the setup's window then starts a whole second before
    /// its first table, so "created strictly after the setup began" can be checked.
    fn begin_setup(&self) -> Result<SetupStamp> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let started = server_second(&mut connection, &self.target)?;
        if !table_ids_readable(&mut connection, &self.target)? {
            next_second(&mut connection, &self.target, started)?;
        }
        Ok(SetupStamp::new(Some(started.to_string())))
    }

    /// Records the setup window's end, a whole second after the last table was made where
    /// tables are known by CREATE_TIME.
    fn end_setup(&self, stamp: &SetupStamp) -> Result<()> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let mut ended = server_second(&mut connection, &self.target)?;
        if !table_ids_readable(&mut connection, &self.target)? {
            ended = next_second(&mut connection, &self.target, ended)?;
        }
        connection
            .exec_drop(
                format!(
                    "UPDATE {} SET setup_ended = ? WHERE setup_started = ?",
                    quote_backtick(CATALOG_TABLE)
                ),
                (ended.to_string(), &stamp.started),
            )
            .map_err(|error| describe(error, &self.target))?;
        purge::wait_for_purge(&mut connection, &self.target)
    }

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
                "{}: corescale creates only tables on MySQL/MariaDB, not a {}",
                self.target,
                kind.as_str()
            );
        }
        owned::create_owned_table(&self.target, name, create, stamp, parameters)
    }

    fn owned_table_ready(&self, name: &str, _rows: u64) -> Result<()> {
        owned::owned_table_ready(&self.target, name)
    }

    fn lock_setup(&self) -> Result<bool> {
        if !self.setup_lock_call("SELECT GET_LOCK(?, 0)")? {
            return Ok(false);
        }
        self.wait_for_stragglers()?;
        Ok(true)
    }

    fn unlock_setup(&self) -> Result<bool> {
        self.setup_lock_call("SELECT RELEASE_LOCK(?)")
    }
}

impl ServerCounters for MySql {
    fn blocks_per_statement(&self, statement: &crate::db::SampledStatement) -> Result<f64> {
        self.blocks_by_buffer_pool(statement)
    }

    fn buffer_cache(&self) -> Result<Option<(u64, &'static str)>> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let bytes: Option<u64> = connection
            .query_first("SELECT @@innodb_buffer_pool_size")
            .map_err(|error| describe(error, &self.target))?;
        Ok(bytes.map(|bytes| (bytes, "innodb_buffer_pool_size")))
    }

    fn counters(&self) -> Result<DbCounters> {
        let values = self.status(&[
            "Innodb_buffer_pool_read_requests",
            "Innodb_buffer_pool_reads",
            "Com_commit",
            "Com_rollback",
        ])?;
        Ok(DbCounters {
            lio: values[0],
            pio: values[1],
            db_cpu_s: None,
            transactions: Some(values[2] + values[3]),
            maintenance: None,
        })
    }
}

impl ServerProcesses for MySql {
    fn server_clock(&self) -> Result<Option<f64>> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let seconds: Option<String> = connection
            .query_first("SELECT CAST(UNIX_TIMESTAMP(NOW(6)) AS CHAR)")
            .map_err(|error| describe(error, &self.target))?;
        Ok(seconds.and_then(|text| text.parse().ok()))
    }

    fn on_this_host(&self) -> bool {
        self.on_this_host
    }

    fn server_pid(&self) -> Result<Option<u32>> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let pid_file: Option<String> = connection
            .query_first("SELECT @@pid_file")
            .map_err(|error| describe(error, &self.target))?;
        Ok(pid_file
            .and_then(|path| std::fs::read_to_string(path).ok())
            .and_then(|text| text.trim().parse().ok()))
    }
}

impl Replication for MySql {
    fn read_only(&self) -> Result<bool> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let read_only: Option<i64> = connection
            .query_first("SELECT @@global.read_only")
            .map_err(|error| describe(error, &self.target))?;
        Ok(read_only.unwrap_or(0) != 0)
    }

    fn is_replica(&self) -> Result<bool> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        // `SHOW REPLICA STATUS` since MariaDB 10.5 and MySQL 8.0.22, the older name before.
        let rows: Vec<mysql::Row> = match connection.query("SHOW REPLICA STATUS") {
            Ok(rows) => rows,
            Err(_) => connection
                .query("SHOW SLAVE STATUS")
                .map_err(|error| describe(error, &self.target))?,
        };
        Ok(!rows.is_empty())
    }

    fn replication_position(&self) -> Result<Option<String>> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let mariadb = self.is_mariadb(&mut connection)?;
        // A replica's position is what it applied; a primary's, what it wrote.
        let sql = if mariadb {
            "SELECT @@global.gtid_current_pos"
        } else {
            "SELECT @@global.gtid_executed"
        };
        let position: Option<String> = connection
            .query_first(sql)
            .map_err(|error| describe(error, &self.target))?;
        Ok(position.filter(|position| !position.is_empty()))
    }

    fn wait_replayed(&self, position: &str, limit: std::time::Duration) -> Result<bool> {
        let mut connection = locked(&self.monitor, "the monitor connection")?;
        let mariadb = self.is_mariadb(&mut connection)?;
        // MariaDB answers 0 when replayed and -1 at the limit; MySQL 0 and 1.
        let sql = if mariadb {
            "SELECT MASTER_GTID_WAIT(?, ?)"
        } else {
            "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?)"
        };
        let answer: Option<i64> = connection
            .exec_first(sql, (position, limit.as_secs_f64()))
            .map_err(|error| describe(error, &self.target))?;
        Ok(answer == Some(0))
    }
}

/// corescale's tables under a metadata lock of a connection of their own.
struct MySqlHold {
    connection: Conn,
    target: Target,
}

impl crate::db::TablesHeld for MySqlHold {
    /// The connection answers, its transaction still open (MariaDB's `in_transaction`;
    /// MySQL has none: there the connection answering is all that is read).
    fn still_held(&mut self) -> Result<()> {
        const UNKNOWN_VARIABLE: u16 = 1193;
        let open: Option<i64> = match self.connection.query_first("SELECT @@in_transaction") {
            Err(mysql::Error::MySqlError(server)) if server.code == UNKNOWN_VARIABLE => {
                self.connection.query_first("SELECT 1")
            }
            other => other,
        }
        .map_err(|error| describe(error, &self.target))
            .with_context(|| {
                format!(
                    "the connection locking corescale's tables in {} was lost: they could be dropped or replaced",
                    self.target
                )
            })?;
        if open != Some(1) {
            bail!(
                "{}: the transaction locking corescale's tables ended: they could be dropped or replaced",
                self.target
            );
        }
        Ok(())
    }
}

/// MySQL's "table doesn't exist".
const NO_SUCH_TABLE: u16 = 1146;

/// `database`.`name`, each quoted.
fn qualified(database: &str, name: &str) -> String {
    format!("{}.{}", quote_backtick(database), quote_backtick(name))
}

/// The account the server took this connection for, as `user@host`.
fn current_account(connection: &mut Conn, target: &Target) -> Result<String> {
    let account: Option<String> = connection
        .query_first("SELECT CURRENT_USER()")
        .map_err(|error| describe(error, target))?;
    Ok(account.unwrap_or_default())
}

/// The database setup creates in and teardown looks in.
fn current_database(connection: &mut Conn, target: &Target) -> Result<String> {
    let name: Option<Option<String>> = connection
        .query_first("SELECT DATABASE()")
        .map_err(|error| describe(error, target))?;
    name.flatten().ok_or_else(|| {
        anyhow!(
            "{target}: no database is selected: name one in the URL (mysql://user@host/DATABASE)"
        )
    })
}

/// The server's clock, in whole Unix seconds (CREATE_TIME's grain).
fn server_second(connection: &mut Conn, target: &Target) -> Result<u64> {
    let second: Option<u64> = connection
        .query_first("SELECT UNIX_TIMESTAMP()")
        .map_err(|error| describe(error, target))?;
    second.ok_or_else(|| anyhow!("{target}: UNIX_TIMESTAMP() answered nothing"))
}

/// Waits until the server's clock has passed `second`; returns the new second.
fn next_second(connection: &mut Conn, target: &Target, second: u64) -> Result<u64> {
    loop {
        let now = server_second(connection, target)?;
        if now > second {
            return Ok(now);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// What depends on `tables` of `database` besides corescale's own: views that name them,
/// foreign keys of other tables that reference them, and triggers on them or naming them.
fn dependents(
    connection: &mut Conn,
    database: &str,
    tables: &[&str],
) -> Result<Vec<String>, mysql::Error> {
    let mut found = Vec::new();
    for table in tables {
        let views: Vec<String> = connection.exec(
            "SELECT CONCAT('view ', table_schema, '.', table_name, ' depends on ', ?) FROM information_schema.views WHERE LOCATE(CONCAT('`', ?, '`.`', ?, '`'), view_definition) > 0",
            (table, database, table),
        )?;
        let keys: Vec<(String, String, String)> = connection.exec(
            "SELECT constraint_name, constraint_schema, table_name FROM information_schema.referential_constraints WHERE unique_constraint_schema = ? AND referenced_table_name = ?",
            (database, table),
        )?;
        let keys = keys
            .into_iter()
            .filter(|(_, schema, from)| !(schema == database && tables.contains(&from.as_str())))
            .map(|(key, schema, from)| {
                format!("foreign key {key} of {schema}.{from} references {table}")
            });
        let triggers: Vec<String> = connection.exec(
            "SELECT CONCAT('trigger ', trigger_schema, '.', trigger_name, IF(event_object_schema = ? AND event_object_table = ?, ' on ', ' names '), ?) FROM information_schema.triggers WHERE (event_object_schema = ? AND event_object_table = ?) OR LOCATE(?, action_statement) > 0",
            (database, table, table, database, table, table),
        )?;
        found.extend(views);
        found.extend(keys);
        found.extend(triggers);
    }
    found.sort();
    found.dedup();
    Ok(found)
}

/// Under LOCK TABLES: drops the table and its catalogue row if it still is the recorded
/// table. DROP without IF EXISTS: `Same` means it existed and is gone.
fn drop_locked(
    connection: &mut Conn,
    object: &Owned,
    table: &str,
    catalogue: &str,
) -> Result<Verdict, mysql::Error> {
    let current = current_identity(connection, &object.name)?;
    let now = verdict(object.identity.as_ref(), current.as_ref());
    if now != Verdict::Same {
        return Ok(now);
    }
    connection.query_drop(format!("DROP TABLE {table}"))?;
    connection.exec_drop(
        format!("DELETE FROM {catalogue} WHERE kind = ? AND name = ?"),
        (ObjectKind::Table.as_str(), &object.name),
    )?;
    Ok(Verdict::Same)
}

/// The session's TLS as the server sees it (Ssl_version, Ssl_cipher; empty in clear text).
fn session_tls(connection: &mut Conn) -> mysql::Result<Option<TlsFacts>> {
    let rows: Vec<(String, String)> = connection
        .query("SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")?;
    let value = |name: &str| {
        rows.iter()
            .find(|(variable, _)| variable.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
            .filter(|value| !value.is_empty())
    };
    Ok(value("Ssl_version").map(|protocol| TlsFacts {
        protocol,
        cipher: value("Ssl_cipher").unwrap_or_default(),
    }))
}
