//! Databases of a test's own on the servers the tests use: created when the guard is made,
//! dropped with everything in them (and, for PostgreSQL, their sessions) when it goes, failed
//! or not, so nothing is left in the configured databases.

use mysql::prelude::Queryable;

/// The server's URL with another database.
pub fn on_database(base: &str, database: &str) -> String {
    let mut url = url::Url::parse(base).unwrap();
    url.set_path(&format!("/{database}"));
    url.to_string()
}

/// A name for a test's own database: the test and this process, so runs never share one.
pub fn scratch_name(test: &str) -> String {
    format!("cs_test_{test}_{}", std::process::id())
}

/// A PostgreSQL database of the test's own, dropped with its sessions when the guard goes.
pub struct PgScratch {
    base: String,
    pub name: String,
    pub url: String,
}

impl PgScratch {
    pub fn new(base: &str, test: &str) -> Self {
        let name = scratch_name(test);
        // The guard exists before the database does, so a failure below still cleans up.
        let scratch = PgScratch {
            base: base.to_string(),
            url: on_database(base, &name),
            name,
        };
        let mut admin = postgres::Client::connect(base, postgres::NoTls).unwrap();
        admin.batch_execute(&scratch.drop_sql()).unwrap();
        admin
            .batch_execute(&format!("CREATE DATABASE \"{}\"", scratch.name))
            .unwrap();
        scratch
    }

    fn drop_sql(&self) -> String {
        format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name)
    }

    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.client().query_one(sql, &[]).unwrap().get(0)
    }
}

impl Drop for PgScratch {
    fn drop(&mut self) {
        if let Ok(mut admin) = postgres::Client::connect(&self.base, postgres::NoTls) {
            let _ = admin.batch_execute(&self.drop_sql());
        }
    }
}

/// A MariaDB database of the test's own, dropped when the guard goes.
pub struct MyScratch {
    pub base: String,
    pub name: String,
    pub url: String,
}

impl MyScratch {
    pub fn new(base: &str, name: String) -> Self {
        let scratch = MyScratch {
            base: base.to_string(),
            url: on_database(base, &name),
            name,
        };
        let mut admin = mysql::Conn::new(base).unwrap();
        admin
            .query_drop(format!("DROP DATABASE IF EXISTS `{}`", scratch.name))
            .unwrap();
        admin
            .query_drop(format!("CREATE DATABASE `{}`", scratch.name))
            .unwrap();
        scratch
    }

    pub fn connection(&self) -> mysql::Conn {
        mysql::Conn::new(self.url.as_str()).unwrap()
    }

    pub fn execute(&self, sql: &str) {
        self.connection().query_drop(sql).unwrap();
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.connection().query_first(sql).unwrap().unwrap()
    }

    /// Tables and routines left in this database.
    pub fn objects(&self) -> i64 {
        self.count(
            "SELECT (SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()) + (SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE())",
        )
    }
}

impl Drop for MyScratch {
    fn drop(&mut self) {
        if let Ok(mut admin) = mysql::Conn::new(self.base.as_str()) {
            let _ = admin.query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.name));
        }
    }
}

/// A database of the test's own on the server `base` names, PostgreSQL or MariaDB by its
/// scheme; `test` names it, with this process and a count, so no two tests share one.
pub enum Scratch {
    Pg(PgScratch),
    My(MyScratch),
}

impl Scratch {
    pub fn new(base: &str, test: &str) -> Self {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let test = format!(
            "{test}_{}",
            COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        if base.starts_with("postgres") {
            Scratch::Pg(PgScratch::new(base, &test))
        } else {
            Scratch::My(MyScratch::new(base, scratch_name(&test)))
        }
    }

    pub fn url(&self) -> &str {
        match self {
            Scratch::Pg(scratch) => &scratch.url,
            Scratch::My(scratch) => &scratch.url,
        }
    }
}
