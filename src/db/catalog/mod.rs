//! Ownership: `db setup` records every object it creates in a catalogue table of its own, with
//! the object's identity as the database knows it, and `db teardown` drops what that table
//! lists, never by a name pattern, and only while each object still is the one setup created.
//! A user's own `corescale_orders` table, one created with a hostile name, or one a forged
//! catalogue row names, is listed and left alone.

use anyhow::{Context, Result, bail, ensure};

mod record;

pub use record::READY;
pub(crate) use record::{
    CATALOG_TABLE, IDENTITY_COLUMNS, LOADING, LOCK_NAME, NotCreated, PG_LOCK_KEY, Teardown,
    identity_select, listed, verdict,
};
pub use record::{Claim, Identity, ObjectKind, Owned, PREFIX, SetupStamp, Verdict};

use super::Database;

/// Drops what the catalogue lists (functions first) while it still is what setup created,
/// only what `of` one setup claims when given, then, with `empty_catalogue` (teardown), the
/// catalogue when it lists nothing any more. Rows no setup of `claims` claims are refused,
/// never dropped. A setup keeps an empty catalogue and works in it: it never drops an object
/// it did not create, and the catalogue may be another's.
fn drop_catalogued(
    database: &dyn Database,
    claims: &[&dyn Claim],
    of: Option<&dyn Claim>,
    empty_catalogue: bool,
) -> Result<Teardown> {
    let writers = database.catalogue_writers()?;
    if !writers.is_empty() {
        bail!(
            "{CATALOG_TABLE} in {} may be written by {} as well: a row they added could name their own objects, so corescale drops nothing; REVOKE INSERT, UPDATE ON {CATALOG_TABLE} FROM them, then run this again",
            database.target(),
            writers.join(", ")
        );
    }
    let upper_case = database.upper_case_names();
    let mut owned = database.catalogue()?;
    owned.retain(|object| {
        of.is_none_or(|of| object.claimed_by(of, upper_case))
            || !object.is_corescale_shaped(claims, upper_case)
    });
    owned.sort_by_key(|object| object.kind != Some(ObjectKind::Function));
    let mut torn = Teardown::default();
    let (shaped, refused): (Vec<Owned>, Vec<Owned>) = owned
        .into_iter()
        .partition(|object| object.is_corescale_shaped(claims, upper_case));
    torn.refused = refused.into_iter().map(|object| object.name).collect();
    let verdicts = database.drop_owned_all(&shaped)?;
    ensure!(
        verdicts.len() == shaped.len(),
        "{}: teardown answered for {} of {} objects",
        database.target(),
        verdicts.len(),
        shaped.len()
    );
    for (object, verdict) in shaped.iter().zip(verdicts) {
        match verdict {
            Verdict::Same => torn.dropped.push(object.shown()),
            other => torn.not_created.push(NotCreated {
                name: object.shown(),
                reason: other.reason(),
            }),
        }
    }
    if empty_catalogue && database.has_catalogue()? {
        if torn.refused.is_empty() && torn.not_created.is_empty() && database.drop_catalogue()? {
            torn.dropped.push(CATALOG_TABLE.to_string());
        } else {
            torn.catalogue_kept = true;
        }
    }
    Ok(torn)
}

/// Drops corescale's own objects, by its catalogue, under the setup lock: those some setup
/// of `claims` (every workload's) claims, and only while each still is what setup created.
pub(crate) fn teardown(database: &dyn Database, claims: &[&dyn Claim]) -> Result<Teardown> {
    under_setup_lock(database, || teardown_locked(database, claims))
}

/// Runs `work` holding the setup lock, and releases it whatever `work` answered.
fn under_setup_lock<T>(database: &dyn Database, work: impl FnOnce() -> Result<T>) -> Result<T> {
    if !database.lock_setup()? {
        bail!(
            "another `corescale db setup` or `db teardown` is working on {}: wait until it ends, then run this again",
            database.target()
        );
    }
    let done = work();
    let released = database
        .unlock_setup()
        .and_then(|ours| {
            ensure!(
                ours,
                "the setup lock on {} was not this session's to release",
                database.target()
            );
            Ok(())
        })
        .context("releasing the setup lock (the server frees it when this connection closes)");
    // The work's own error says more than a failed release after it.
    let done = done?;
    released?;
    Ok(done)
}

fn teardown_locked(database: &dyn Database, claims: &[&dyn Claim]) -> Result<Teardown> {
    let mut torn = drop_catalogued(database, claims, None, true)?;
    // Listed once: what the catalogue lists is reported above, dropped or not.
    let reported: Vec<&str> = torn
        .dropped
        .iter()
        .chain(torn.not_created.iter().map(|object| &object.name))
        .map(|name| name.trim_end_matches("()"))
        .collect();
    torn.left_alone = database
        .lookalikes()?
        .into_iter()
        .filter(|name| !reported.iter().any(|gone| gone.eq_ignore_ascii_case(name)))
        .filter(|name| !name.eq_ignore_ascii_case(CATALOG_TABLE))
        .collect();
    Ok(torn)
}

/// One setup under the setup lock: what `of` claims of the catalogue is dropped first (the
/// objects of the other setups of `claims` stay), objects named as `wanted` that the
/// catalogue does not list are refused, never overwritten; then `create` makes the objects,
/// each marked with the stamp it is given and recorded. Returns the objects the earlier
/// setup left, now dropped.
pub(crate) fn setup_owned(
    database: &dyn Database,
    claims: &[&dyn Claim],
    of: &dyn Claim,
    wanted: &[String],
    create: impl FnOnce(&SetupStamp) -> Result<()>,
) -> Result<Vec<String>> {
    under_setup_lock(database, || {
        refuse_others_in_control(database, wanted)?;
        let previous = drop_earlier_setup(database, claims, of)?;
        // Kept when it lists another workload's objects.
        let has_catalogue = database.has_catalogue()?;
        if has_catalogue
            && database
                .catalogue()?
                .iter()
                .any(|object| object.identity.is_none())
        {
            bail!(
                "{CATALOG_TABLE} in {} records no identity for some of its objects (an older corescale's catalogue, or rows written by hand): run `corescale db teardown` first",
                database.target()
            );
        }
        refuse_unlisted(database, wanted, has_catalogue)?;
        if !has_catalogue {
            database.create_catalogue()?;
        }
        let stamp = database.begin_setup()?;
        create(&stamp).inspect_err(|_| {
            // The window closes on a failed setup too, so its tables are known by it.
            let _ = database.end_setup(&stamp);
        })?;
        database.end_setup(&stamp)?;
        Ok(previous)
    })
}

/// Drops what the workload's earlier setup created; refuses to go on when the catalogue
/// lists anything else teardown would not drop.
fn drop_earlier_setup(
    database: &dyn Database,
    claims: &[&dyn Claim],
    of: &dyn Claim,
) -> Result<Vec<String>> {
    let torn = drop_catalogued(database, claims, Some(of), false)?;
    if !torn.refused.is_empty() {
        bail!(
            "{CATALOG_TABLE} in {} lists {} which corescale never creates: fix or drop the catalogue by hand before a new setup",
            database.target(),
            torn.refused.join(", ")
        );
    }
    if !torn.not_created.is_empty() {
        bail!(
            "{CATALOG_TABLE} in {} lists objects that are not the ones corescale created, left alone: {}. Check them, drop what is yours to drop, then delete their rows (or the catalogue) by hand before a new setup",
            database.target(),
            listed(&torn.not_created)
        );
    }
    let upper_case = database.upper_case_names();
    if torn.catalogue_kept
        && database
            .catalogue()?
            .iter()
            .any(|object| object.claimed_by(of, upper_case))
    {
        bail!(
            "{CATALOG_TABLE} in {} gained rows while its objects were dropped: is something else writing it? Check it before a new setup",
            database.target()
        );
    }
    Ok(torn.dropped)
}

/// Refuses a setup whose objects' names are taken by objects the catalogue does not list.
fn refuse_unlisted(database: &dyn Database, wanted: &[String], has_catalogue: bool) -> Result<()> {
    let in_the_way: Vec<String> = database
        .lookalikes()?
        .into_iter()
        .filter(|name| {
            (name.eq_ignore_ascii_case(CATALOG_TABLE) && !has_catalogue)
                || wanted.iter().any(|own| own.eq_ignore_ascii_case(name))
        })
        .collect();
    if !in_the_way.is_empty() {
        bail!(
            "{} already exist(s) in {} but corescale's catalogue does not list it: corescale does not overwrite objects it did not create (rename or drop them yourself)",
            in_the_way.join(", "),
            database.target()
        );
    }
    Ok(())
}

/// Refuses to work where a role other than corescale's user (and superusers) could alter,
/// drop or replace corescale's tables, or put a trigger on them (`Catalogue::
/// others_in_control`): a view or a trigger of theirs would run their code as corescale's
/// user. `wanted` names the tables the command makes or reads; the catalogue's are added,
/// once the catalogue itself is known to be out of others' reach. A usage error: the fix
/// is a schema (or database) of corescale's own.
pub(crate) fn refuse_others_in_control(database: &dyn Database, wanted: &[String]) -> Result<()> {
    let mut names: Vec<String> = wanted.to_vec();
    names.push(CATALOG_TABLE.to_string());
    if let Some(why) = database.others_in_control(&names)? {
        return Err(crate::error::UsageError::new(why).into());
    }
    let listed: Vec<String> = database
        .catalogue()?
        .into_iter()
        .filter(|object| object.kind == Some(ObjectKind::Table))
        .map(|object| object.name)
        .filter(|name| !names.iter().any(|known| known.eq_ignore_ascii_case(name)))
        .collect();
    if listed.is_empty() {
        return Ok(());
    }
    if let Some(why) = database.others_in_control(&listed)? {
        return Err(crate::error::UsageError::new(why).into());
    }
    Ok(())
}

/// The tables of `objects` and the catalogue, locked from a connection of their own for as
/// long as the answer lives (`Catalogue::hold_tables`): a run holds them so that no one
/// can drop or replace them under it.
pub(crate) fn hold_tables(
    database: &dyn Database,
    objects: &[Owned],
) -> Result<Option<Box<dyn super::TablesHeld>>> {
    let mut names: Vec<String> = objects
        .iter()
        .filter(|object| object.kind == Some(ObjectKind::Table))
        .map(|object| object.name.clone())
        .collect();
    names.push(CATALOG_TABLE.to_string());
    database.hold_tables(&names).with_context(|| {
        format!(
            "locking corescale's tables in {} for the run",
            database.target()
        )
    })
}

/// Says, as a warning, why the schema corescale works in may hold others' objects beside its
/// own (`Database::schema_warning`): setup, check, run db and teardown all tell it.
pub(crate) fn warn_of_schema(database: &dyn Database) -> Result<()> {
    if let Some(warning) = database.schema_warning()? {
        say!("corescale: warning: {warning}");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
