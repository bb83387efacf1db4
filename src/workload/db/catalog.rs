//! Ownership: `db setup` records every object it creates in a catalogue table of its own, and
//! `db teardown` drops exactly what that table lists, never by a name pattern. A user's own
//! `corescale_orders` table, or one created with a hostile name, is listed and left alone.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::{Database, PREFIX, loop_function, table_name};

/// corescale's catalogue of the objects it created.
pub const CATALOG_TABLE: &str = "corescale_catalog";
/// Name of the advisory lock (MariaDB `GET_LOCK`) that keeps two setups or teardowns apart.
pub const LOCK_NAME: &str = "corescale_setup";
/// Key of PostgreSQL's advisory lock: "coresca1" in ASCII.
pub const PG_LOCK_KEY: i64 = 0x636f_7265_7363_6131;

/// What kind of object a catalogue row describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Table,
    Function,
}

impl ObjectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Table => "table",
            ObjectKind::Function => "function",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "table" => Some(ObjectKind::Table),
            "function" => Some(ObjectKind::Function),
            _ => None,
        }
    }
}

/// Catalogue row state: `loading` while a table is filled (MariaDB and Oracle commit DDL at
/// once), `ready` when it holds its rows.
pub const LOADING: &str = "loading";
pub const READY: &str = "ready";

/// The setup parameters stored with each object, as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupRecord {
    pub schema: u64,
    pub schemas: u64,
    pub rows: u64,
}

impl SetupRecord {
    pub fn to_json(self) -> String {
        serde_json::to_string(&self).expect("three integers serialise")
    }
}

/// One row of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    /// None for a kind this corescale does not know (a newer version's, or a tampered row).
    pub kind: Option<ObjectKind>,
    pub name: String,
    pub state: String,
    pub parameters: String,
}

impl Owned {
    /// Whether the row names an object of a shape corescale creates. A row that does not is
    /// never dropped: whoever can write the catalogue must not steer teardown elsewhere.
    /// corescale's names are all lower case, or all upper case where the database folds
    /// unquoted names so (`upper_case`, Oracle); any other spelling is never one of them.
    pub fn is_corescale_shaped(&self, upper_case: bool) -> bool {
        let lower = self.name.to_ascii_lowercase();
        let expected = if upper_case {
            self.name.to_ascii_uppercase()
        } else {
            lower.clone()
        };
        if self.name != expected {
            return false;
        }
        let numbered = |prefix: &str| {
            lower.strip_prefix(prefix).is_some_and(|digits| {
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            })
        };
        match self.kind {
            Some(ObjectKind::Table) => numbered(&format!("{PREFIX}t")),
            Some(ObjectKind::Function) => numbered(&format!("{PREFIX}loop_t")),
            None => false,
        }
    }
}

/// What a teardown did.
#[derive(Debug, Default)]
pub struct Teardown {
    pub dropped: Vec<String>,
    /// Objects named like corescale's that the catalogue does not list.
    pub left_alone: Vec<String>,
    /// Catalogue rows naming something corescale never creates.
    pub refused: Vec<String>,
}

/// Drops what the catalogue lists (functions first), then the catalogue when nothing is left.
fn drop_catalogued(database: &dyn Database) -> Result<(Vec<String>, Vec<String>)> {
    let mut owned = database.catalogue()?;
    owned.sort_by_key(|object| object.kind != Some(ObjectKind::Function));
    let (mut dropped, mut refused) = (Vec::new(), Vec::new());
    for object in &owned {
        if object.is_corescale_shaped(database.upper_case_names()) {
            database.drop_owned(object)?;
            dropped.push(match object.kind {
                Some(ObjectKind::Function) => format!("{}()", object.name),
                _ => object.name.clone(),
            });
        } else {
            refused.push(object.name.clone());
        }
    }
    if refused.is_empty() && database.has_catalogue()? {
        database.drop_catalogue()?;
        dropped.push(CATALOG_TABLE.to_string());
    }
    Ok((dropped, refused))
}

/// Drops corescale's own objects, by its catalogue, under the setup lock.
pub fn teardown(database: &dyn Database) -> Result<Teardown> {
    database.lock_setup()?;
    let (dropped, refused) = drop_catalogued(database)?;
    let left_alone = database
        .lookalikes()?
        .into_iter()
        .filter(|name| !dropped.iter().any(|gone| gone.eq_ignore_ascii_case(name)))
        .filter(|name| !name.eq_ignore_ascii_case(CATALOG_TABLE))
        .collect();
    Ok(Teardown {
        dropped,
        left_alone,
        refused,
    })
}

/// Creates `schemas` tables of `rows` one-row blocks under the setup lock: what an earlier
/// setup created is dropped first, and nothing corescale did not create is overwritten.
/// Returns the objects the earlier setup left, now dropped.
pub fn setup(
    database: &dyn Database,
    schemas: u64,
    rows: u64,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<Vec<String>> {
    database.lock_setup()?;
    let (previous, refused) = drop_catalogued(database)?;
    if !refused.is_empty() {
        bail!(
            "{CATALOG_TABLE} in {} lists {} which corescale never creates: fix or drop the catalogue by hand before a new setup",
            database.target(),
            refused.join(", ")
        );
    }
    let wanted: Vec<String> = (0..schemas)
        .flat_map(|schema| [table_name(schema), loop_function(schema)])
        .collect();
    let in_the_way: Vec<String> = database
        .lookalikes()?
        .into_iter()
        .filter(|name| {
            name.eq_ignore_ascii_case(CATALOG_TABLE)
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
    database.create_catalogue()?;
    std::thread::scope(|scope| -> Result<()> {
        let loaders: Vec<_> = (0..schemas)
            .map(|schema| {
                let record = SetupRecord {
                    schema,
                    schemas,
                    rows,
                };
                scope.spawn(move || database.load_table(record, loaded))
            })
            .collect();
        for loader in loaders {
            loader
                .join()
                .map_err(|_| anyhow::anyhow!("a loader thread panicked"))??;
        }
        Ok(())
    })?;
    Ok(previous)
}

/// The tables a finished setup recorded: how many schemas, and rows per schema.
pub fn inventory(database: &dyn Database) -> Result<(u64, u64)> {
    let mut tables: Vec<(u64, SetupRecord)> = Vec::new();
    for object in database.catalogue()? {
        if object.kind != Some(ObjectKind::Table)
            || !object.is_corescale_shaped(database.upper_case_names())
        {
            continue;
        }
        if object.state != READY {
            bail!(
                "{} in {} was not fully loaded (an interrupted `corescale db setup`?): run the setup again",
                object.name,
                database.target()
            );
        }
        let record: SetupRecord = serde_json::from_str(&object.parameters).map_err(|error| {
            anyhow::anyhow!(
                "{CATALOG_TABLE} in {} has unreadable parameters for {}: {error}",
                database.target(),
                object.name
            )
        })?;
        tables.push((record.schema, record));
    }
    tables.sort_by_key(|(schema, _)| *schema);
    let Some((_, first)) = tables.first() else {
        return Ok((0, 0));
    };
    let consistent = tables.iter().enumerate().all(|(index, (schema, record))| {
        *schema == index as u64 && record.rows == first.rows && record.schemas == first.schemas
    });
    if !consistent || first.schemas != tables.len() as u64 {
        bail!(
            "{CATALOG_TABLE} in {} lists an incomplete or mixed set of tables: run `corescale db setup` again",
            database.target()
        );
    }
    Ok((first.schemas, first.rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(kind: Option<ObjectKind>, name: &str) -> Owned {
        Owned {
            kind,
            name: name.to_string(),
            state: READY.to_string(),
            parameters: String::new(),
        }
    }

    #[test]
    fn only_corescale_shaped_rows_are_dropped() {
        assert!(owned(Some(ObjectKind::Table), "corescale_t0").is_corescale_shaped(false));
        assert!(owned(Some(ObjectKind::Table), "CORESCALE_T12").is_corescale_shaped(true));
        assert!(!owned(Some(ObjectKind::Table), "CORESCALE_T12").is_corescale_shaped(false));
        assert!(!owned(Some(ObjectKind::Table), "Corescale_t12").is_corescale_shaped(true));
        assert!(owned(Some(ObjectKind::Function), "corescale_loop_t3").is_corescale_shaped(false));
        for hostile in [
            "corescale_orders",
            "corescale_t",
            "corescale_t1\"; DROP TABLE victim; --",
            "corescale_t1`; DROP TABLE victim; --",
            "victim",
            "corescale_t1 ",
        ] {
            assert!(
                !owned(Some(ObjectKind::Table), hostile).is_corescale_shaped(false),
                "{hostile}"
            );
        }
        assert!(!owned(Some(ObjectKind::Function), "corescale_t0").is_corescale_shaped(false));
        assert!(!owned(None, "corescale_t0").is_corescale_shaped(false));
    }

    #[test]
    fn parameters_round_trip() {
        let record = SetupRecord {
            schema: 1,
            schemas: 2,
            rows: 1024,
        };
        assert_eq!(
            serde_json::from_str::<SetupRecord>(&record.to_json()).unwrap(),
            record
        );
    }
}
