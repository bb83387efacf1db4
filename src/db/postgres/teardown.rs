//! Teardown on PostgreSQL: every object the catalogue lists that still is what setup
//! created is locked, checked again by oid, checked for other roles' objects that depend on
//! it in any way, then dropped with its catalogue row, all in one transaction.

use anyhow::{Result, anyhow, bail};

use super::wire::{ServerError, WireSession};
use super::{UNDEFINED_FUNCTION, UNDEFINED_TABLE, catalogue_in, current_identity, ddl_name};
use crate::db::catalog::{CATALOG_TABLE, Identity, ObjectKind, Owned, Verdict, verdict};

/// The statements that lock and drop an object of `kind`.
fn lock_and_drop(kind: ObjectKind, schema: &str, name: &str) -> (String, String) {
    let object = ddl_name(kind, schema, name);
    match kind {
        ObjectKind::Table => (
            format!("LOCK {object} IN ACCESS EXCLUSIVE MODE"),
            format!("DROP {object}"),
        ),
        // COMMENT locks the function against a concurrent DROP or CREATE OR REPLACE; it is
        // rolled back unless the function is dropped.
        ObjectKind::Function => (
            format!("COMMENT ON {object} IS NULL"),
            format!("DROP {object}"),
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
/// break, take with it or change, by every kind of dependency PostgreSQL records: what
/// depends on them (views, foreign keys, SQL functions, ...), what would be dropped with them
/// (sequences OWNED BY a column, statistics objects, policies, triggers, rules, other
/// indexes) and publications that publish a table (listed, by name or FOR ALL TABLES). Not counted: corescale's own objects ($1,
/// $2, the `<table>_key` and `<table>_pkey` indexes setup makes), the parts of a table
/// itself (its row type, TOAST table, column defaults, primary key and NOT NULL constraints).
/// Every name is qualified: the statement runs pinned, and names nothing another role made.
const DEPENDENTS_SQL: &str = "
WITH tables AS (SELECT pg_catalog.unnest($1::pg_catalog.text[])::pg_catalog.oid AS oid),
     functions AS (SELECT pg_catalog.unnest($2::pg_catalog.text[])::pg_catalog.oid AS oid),
     indexes AS (
        SELECT i.indexrelid AS oid FROM pg_catalog.pg_index i
        JOIN pg_catalog.pg_class t ON t.oid = i.indrelid JOIN pg_catalog.pg_class x ON x.oid = i.indexrelid
        WHERE i.indrelid IN (SELECT oid FROM tables)
          AND x.relname::pg_catalog.text IN (t.relname::pg_catalog.text || '_key', t.relname::pg_catalog.text || '_pkey')),
     ours AS (
        SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AS classid, oid FROM tables
        UNION ALL SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid, oid FROM indexes
        UNION ALL SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid, oid FROM functions),
     depending AS (
        SELECT d.classid, d.objid, d.objsubid, d.refclassid, d.refobjid, d.deptype FROM pg_catalog.pg_depend d
        JOIN ours r ON r.classid = d.refclassid AND r.oid = d.refobjid
        WHERE NOT EXISTS (SELECT 1 FROM ours o WHERE o.classid = d.classid AND o.oid = d.objid)
          AND NOT (d.deptype = 'i' AND (d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
               OR (d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                   AND (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = d.objid) = 't')))
          AND NOT (d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND d.refobjid IN (SELECT oid FROM tables))
          AND NOT (d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND EXISTS (
                SELECT 1 FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_class t ON t.oid = k.conrelid
                WHERE k.oid = d.objid AND k.conrelid IN (SELECT oid FROM tables)
                  AND (k.contype = 'n' OR (k.contype = 'p' AND k.conname::pg_catalog.text = t.relname::pg_catalog.text || '_pkey'))))
          AND d.classid NOT IN ('pg_catalog.pg_trigger'::pg_catalog.regclass, 'pg_catalog.pg_publication_rel'::pg_catalog.regclass)
          AND NOT (d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND EXISTS (
                SELECT 1 FROM pg_catalog.pg_rewrite r WHERE r.oid = d.objid AND r.ev_class IN (SELECT oid FROM tables))))
SELECT DISTINCT pg_catalog.format('%s %s %s',
    CASE WHEN d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass THEN
        (SELECT CASE c.relkind WHEN 'v' THEN 'view ' WHEN 'm' THEN 'materialized view ' ELSE 'relation ' END
                || pg_catalog.format('%I.%I', n.nspname, c.relname)
         FROM pg_catalog.pg_rewrite r JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE r.oid = d.objid)
    ELSE pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) END,
    CASE d.deptype WHEN 'n' THEN 'depends on' ELSE 'would be dropped or changed with' END,
    CASE WHEN d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
         THEN (SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_class c WHERE c.oid = d.refobjid)
         ELSE (SELECT p.proname::pg_catalog.text || '()' FROM pg_catalog.pg_proc p WHERE p.oid = d.refobjid) END)
FROM depending d
UNION
SELECT pg_catalog.format('trigger %I on %I would be dropped with it', t.tgname, c.relname)
FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
WHERE t.tgrelid IN (SELECT oid FROM tables) AND NOT t.tgisinternal
UNION
SELECT pg_catalog.format('rule %I on %I would be dropped with it', r.rulename, c.relname)
FROM pg_catalog.pg_rewrite r JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
WHERE r.ev_class IN (SELECT oid FROM tables) AND r.rulename <> '_RETURN'
UNION
SELECT pg_catalog.format('publication %I publishes %I, and would lose it', p.pubname, p.tablename)
FROM pg_catalog.pg_publication_tables p JOIN pg_catalog.pg_namespace n ON n.nspname = p.schemaname
JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = p.tablename
WHERE c.oid IN (SELECT oid FROM tables)
ORDER BY 1";

/// The dependents of `tables` and `functions` (oids) that are not corescale's, each
/// described: what DEPENDENTS_SQL finds.
pub(super) fn dependents(
    session: &mut WireSession,
    tables: &[&str],
    functions: &[&str],
) -> Result<Vec<String>> {
    let array = |oids: &[&str]| format!("{{{}}}", oids.join(","));
    Ok(session
        .query(DEPENDENTS_SQL, &[&array(tables), &array(functions)])?
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .map(|text| crate::format::printable(&text))
        .collect())
}

/// Drops every object of `objects` that still is the recorded object, with its catalogue
/// row, all in one transaction: each is looked at, locked and checked again by oid, then
/// what depends on them is checked (`pg_depend`), then all are dropped. Anything in the way
/// rolls everything back: nothing is dropped. DROP without IF EXISTS: `Same` means it existed
/// and is gone.
pub(super) fn drop_all_if_same(
    session: &mut WireSession,
    schema: &str,
    objects: &[Owned],
) -> Result<Vec<Verdict>> {
    // A first look without locks: an object that is not corescale's is never locked.
    let mut verdicts = Vec::with_capacity(objects.len());
    let mut firsts = Vec::with_capacity(objects.len());
    for object in objects {
        let current = match object.kind {
            Some(kind) => current_identity(session, schema, kind, &object.name)?,
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
    let catalogue = catalogue_in(schema);
    session
        .transaction(|session| {
            for (kind, object, first) in &chosen {
                let (lock, _) = lock_and_drop(*kind, schema, &object.name);
                let changed = || Undone::Changed(format!("{} {}", kind.as_str(), object.name));
                session.simple(&lock).map_err(|error| {
                    let gone = error.downcast_ref::<ServerError>().is_some_and(|server| {
                        [UNDEFINED_TABLE, UNDEFINED_FUNCTION].contains(&server.code.as_str())
                    });
                    if gone { changed().into() } else { error }
                })?;
                // Locked: the object under that name is the one first looked at (its mark was
                // checked then; COMMENT, the function's lock, has just cleared it).
                let now = current_identity(session, schema, *kind, &object.name)?;
                if !now.is_some_and(|now| now.same_object(first)) {
                    return Err(changed().into());
                }
            }
            let oids = |wanted: ObjectKind| -> Vec<&str> {
                chosen
                    .iter()
                    .filter(|(kind, _, _)| *kind == wanted)
                    .filter_map(|(_, _, first)| first.object_id.as_deref())
                    .collect()
            };
            let blockers = dependents(
                session,
                &oids(ObjectKind::Table),
                &oids(ObjectKind::Function),
            )?;
            if !blockers.is_empty() {
                return Err(Undone::Blocked(blockers).into());
            }
            for (kind, object, _) in &chosen {
                let (_, drop) = lock_and_drop(*kind, schema, &object.name);
                session.simple(&drop)?;
                let deleted = session.query(
                    &format!(
                        "DELETE FROM {catalogue} WHERE kind = $1::pg_catalog.text AND name = $2::pg_catalog.text RETURNING 1"
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
