//! Who else could replace corescale's tables, and the lock a run holds on them from a
//! connection of its own, so a drop or a swap waits for the run's end.

use anyhow::{Context, Result, bail};

use super::explain;
use super::wire::WireSession;
use crate::db::connect::target::Target;

/// The rows of `others_in_control`: (role, what, object) for schema $1 and tables $2 (names
/// a line each). `what` is `schema` (object: whether through pg_database_owner), `table`,
/// `member` (of the role named), `trigger` or `createrole`.
pub(super) const OTHERS_IN_CONTROL: &str = "WITH me AS (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER),
     nsp AS (
       SELECT n.oid,
              CASE WHEN pg_catalog.pg_get_userbyid(n.nspowner) OPERATOR(pg_catalog.=) 'pg_database_owner'
                   THEN (SELECT d.datdba FROM pg_catalog.pg_database d WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
                   ELSE n.nspowner END AS owner,
              (pg_catalog.pg_get_userbyid(n.nspowner) OPERATOR(pg_catalog.=) 'pg_database_owner')::pg_catalog.text AS through_database
       FROM pg_catalog.pg_namespace n WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.text),
     tabs AS (
       SELECT c.oid, c.relname::pg_catalog.text AS relname, c.relowner FROM pg_catalog.pg_class c, nsp
       WHERE c.relnamespace OPERATOR(pg_catalog.=) nsp.oid
         AND c.relname::pg_catalog.text OPERATOR(pg_catalog.=) ANY (pg_catalog.string_to_array($2::pg_catalog.text, E'\\n'))),
     owners AS (SELECT nsp.owner AS oid FROM nsp UNION SELECT tabs.relowner FROM tabs UNION SELECT me.oid FROM me),
     others AS (
       SELECT r.oid, r.rolname::pg_catalog.text AS rolname, r.rolcreaterole FROM pg_catalog.pg_roles r
       WHERE NOT r.rolsuper AND r.oid OPERATOR(pg_catalog.<>) ALL (SELECT me.oid FROM me)
         AND NOT pg_catalog.starts_with(r.rolname::pg_catalog.text, 'pg_'))
SELECT o.rolname, 'schema', nsp.through_database FROM others o, nsp WHERE o.oid OPERATOR(pg_catalog.=) nsp.owner
UNION ALL
SELECT o.rolname, 'table', t.relname FROM others o, tabs t WHERE o.oid OPERATOR(pg_catalog.=) t.relowner
UNION ALL
SELECT o.rolname, 'member', pg_catalog.pg_get_userbyid(w.oid)::pg_catalog.text FROM others o, owners w
WHERE o.oid OPERATOR(pg_catalog.<>) w.oid AND pg_catalog.pg_has_role(o.oid, w.oid, 'MEMBER')
UNION ALL
SELECT o.rolname, 'trigger', t.relname FROM others o, tabs t
WHERE o.oid OPERATOR(pg_catalog.<>) t.relowner AND NOT pg_catalog.pg_has_role(o.oid, t.relowner, 'MEMBER')
  AND pg_catalog.has_table_privilege(o.oid, t.oid, 'TRIGGER')
UNION ALL
SELECT o.rolname, 'createrole', '' FROM others o
WHERE o.rolcreaterole AND pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.<) 160000
  AND EXISTS (SELECT 1 FROM owners w JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) w.oid WHERE NOT r.rolsuper)
ORDER BY 1, 2, 3";

/// corescale's tables locked by a connection of their own (`Catalogue::hold_tables`).
pub(super) struct PostgresHold {
    pub session: WireSession,
    pub schema: String,
    pub tables: Vec<String>,
    pub target: Target,
}

impl crate::db::TablesHeld for PostgresHold {
    /// The connection answers, and still holds ACCESS SHARE on every table.
    fn still_held(&mut self) -> Result<()> {
        let held: i64 = self
            .session
            .query_value(
                "SELECT pg_catalog.count(DISTINCT c.oid) FROM pg_catalog.pg_locks l
                   JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) l.relation
                   JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                 WHERE l.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid() AND l.granted AND l.mode OPERATOR(pg_catalog.=) 'AccessShareLock'
                   AND n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.text
                   AND c.relname::pg_catalog.text OPERATOR(pg_catalog.=) ANY (pg_catalog.string_to_array($2::pg_catalog.text, E'\\n'))",
                &[&self.schema, &self.tables.join("\n")],
            )
            .map_err(|error| explain(error, &self.target))
            .with_context(|| {
                format!(
                    "the connection locking corescale's tables in {} was lost: they could be dropped or replaced",
                    self.target
                )
            })?;
        // The query's portal keeps its snapshot, and so the server's xmin, until it is
        // dropped: a simple query drops it, so the held transaction holds back no vacuum.
        self.session
            .simple("SELECT 1")
            .map_err(|error| explain(error, &self.target))?;
        if held < self.tables.len() as i64 {
            bail!(
                "{}: the connection locking corescale's tables holds {held} of {} locks: they could be dropped or replaced",
                self.target,
                self.tables.len()
            );
        }
        Ok(())
    }
}
