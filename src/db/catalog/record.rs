//! What the catalogue records: the names of corescale's objects, each object's kind, state
//! and identity as the database knows it, and the verdict on whether an object still is the
//! one setup created. Data only: the drivers fill it, `catalog` acts on it.

use anyhow::Result;

/// Every object corescale creates starts with this; teardown drops what its catalogue lists.
pub const PREFIX: &str = "corescale_";

/// A setup's claim on the objects it creates, by their kind and name: what a workload
/// answers for its own (`workload::objects`), so the catalogue drops only objects some
/// setup claims and its records prove, and knows no workload's names itself.
pub trait Claim: Sync {
    /// Whether an object of `kind` named `name` (lower case; Oracle's upper-case names
    /// folded by the caller) is one this setup creates.
    fn claims(&self, kind: ObjectKind, name: &str) -> bool;
}

/// corescale's catalogue of the objects it created.
pub(crate) const CATALOG_TABLE: &str = "corescale_catalog";
/// Name of the advisory lock (MariaDB `GET_LOCK`) that keeps two setups or teardowns apart.
pub(crate) const LOCK_NAME: &str = "corescale_setup";
/// Key of PostgreSQL's advisory lock: "coresca1" in ASCII.
pub(crate) const PG_LOCK_KEY: i64 = 0x636f_7265_7363_6131;

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
pub(crate) const LOADING: &str = "loading";
pub const READY: &str = "ready";

/// Catalogue columns holding an object's identity. A catalogue without all of them (an older
/// corescale's) records no identity: teardown then leaves every object it lists alone.
pub(crate) const IDENTITY_COLUMNS: [&str; 8] = [
    "object_namespace",
    "object_id",
    "object_created",
    "object_owner",
    "object_mark",
    "object_engine",
    "setup_started",
    "setup_ended",
];

/// The select list of the identity columns, each with `cast` appended (`::text`), when the
/// catalogue has them (`present`); NULLs in their place for an older catalogue.
pub(crate) fn identity_select(present: bool, cast: &str) -> String {
    IDENTITY_COLUMNS
        .map(|column| {
            if present {
                format!("{column}{cast}")
            } else {
                "NULL".to_string()
            }
        })
        .join(", ")
}

/// The comment setup puts on each object it creates: `corescale setup` and a token of that
/// setup. Only who may already drop or alter the object (its owner on PostgreSQL and Oracle,
/// a user with ALTER on MariaDB) can write a comment, so a catalogue row cannot lend this mark
/// to anyone else's object, whoever wrote the row.
/// Whether `text` is a mark [`setup_mark`] wrote: `corescale setup <hex>-<hex>`. A row's mark
/// of any other shape proves nothing: it could be the victim's own comment, copied.
pub(crate) fn is_setup_mark(text: &str) -> bool {
    text.strip_prefix("corescale setup ")
        .and_then(|token| token.split_once('-'))
        .is_some_and(|(time, process)| {
            let hex = |part: &str| {
                !part.is_empty() && part.len() <= 32 && part.bytes().all(|b| b.is_ascii_hexdigit())
            };
            hex(time) && hex(process)
        })
}

pub(crate) fn setup_mark() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!("corescale setup {:x}-{:x}", nanos, std::process::id())
}

/// What every object of one setup records of it: the comment it carries, and where the
/// database names tables by creation time only, the second its setup began (MariaDB's clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupStamp {
    pub mark: String,
    pub started: Option<String>,
}

impl SetupStamp {
    pub fn new(started: Option<String>) -> Self {
        SetupStamp {
            mark: setup_mark(),
            started,
        }
    }
}

/// An object as the database itself knows it, beyond its name: a name can be reused by
/// anyone, these cannot be chosen by whoever writes a catalogue row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    /// The schema holding it (PostgreSQL namespace, MariaDB database, Oracle owner).
    pub namespace: String,
    /// The database's own number for it: `pg_class`/`pg_proc` oid, InnoDB TABLE_ID, Oracle
    /// object_id. None where the database would not tell (MariaDB without PROCESS).
    pub object_id: Option<String>,
    /// When it was created (MariaDB's CREATE_TIME, in Unix seconds): the mark where no object
    /// id is readable.
    pub created: Option<String>,
    /// Its owner where the database keeps one (PostgreSQL role, Oracle schema); in the
    /// catalogue, MariaDB's creating user, recorded for people to read.
    pub owner: Option<String>,
    /// Its comment: [`setup_mark`] on what setup created.
    pub mark: Option<String>,
    /// Its storage engine where the database has several (MariaDB: InnoDB for corescale's).
    pub engine: Option<String>,
    /// In the catalogue, MariaDB's clock (Unix seconds) when the setup began and ended: an
    /// object known by its creation time alone must have been created strictly between them.
    pub setup_window: Option<(String, String)>,
}

impl Identity {
    /// An identity from the catalogue's identity columns, in [`IDENTITY_COLUMNS`] order; none
    /// when no namespace was recorded.
    pub fn from_columns(columns: [Option<String>; 8]) -> Option<Self> {
        let [
            namespace,
            object_id,
            created,
            owner,
            mark,
            engine,
            started,
            ended,
        ] = columns;
        Some(Identity {
            namespace: namespace?,
            object_id,
            created,
            owner,
            mark,
            engine,
            // A setup killed or failed before it recorded its end: teardown holds the setup
            // lock, so no setup runs now and the window is open to the present.
            setup_window: started.map(|started| (started, ended.unwrap_or_else(|| OPEN.into()))),
        })
    }

    /// Whether `other` is the very object this identity was read from: same schema, id and
    /// owner (its comment aside, which a lock by COMMENT changes).
    pub fn same_object(&self, other: &Identity) -> bool {
        (&self.namespace, &self.object_id, &self.created, &self.owner)
            == (
                &other.namespace,
                &other.object_id,
                &other.created,
                &other.owner,
            )
    }
}

/// Whether a catalogued object still is the one setup created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The same object: teardown may drop it.
    Same,
    /// The catalogue row records no identity or no setup mark (an older corescale's
    /// catalogue, or a row written by hand): nothing proves the object is corescale's.
    Unrecorded,
    /// No such object in the current schema (dropped, or only in another schema).
    Missing,
    /// An object of that name that is not the recorded one: what differs.
    Changed(String),
}

impl Verdict {
    /// Why an object was left alone, for people.
    pub fn reason(&self) -> String {
        match self {
            Verdict::Same => "the object corescale created".to_string(),
            Verdict::Unrecorded => {
                "the catalogue records no identity or setup mark for it".to_string()
            }
            Verdict::Missing => "no such object in the current schema".to_string(),
            Verdict::Changed(what) => what.clone(),
        }
    }
}

/// Compares the identity the catalogue recorded with the object now under that name in the
/// current schema. It must be the recorded object: by its id where one was recorded (it
/// changes whenever the object is recreated), else by its creation time, which must also fall
/// strictly inside the setup's recorded window; of the recorded engine; in the recorded schema
/// with the recorded owner (where the database keeps one, `current.owner`: MariaDB tables have
/// none); and it must carry the comment setup put on it, which only who can already drop or
/// alter it can write: ids, times and owners anyone can read and copy into a row.
pub(crate) fn verdict(recorded: Option<&Identity>, current: Option<&Identity>) -> Verdict {
    let Some(recorded) = recorded.filter(|recorded| {
        recorded.mark.as_deref().is_some_and(is_setup_mark)
            && (recorded.object_id.is_some() || recorded.created.is_some())
    }) else {
        return Verdict::Unrecorded;
    };
    let Some(current) = current else {
        return Verdict::Missing;
    };
    let shown = |value: &Option<String>| value.as_deref().unwrap_or("unknown").to_string();
    if current.namespace != recorded.namespace {
        return Verdict::Changed(format!(
            "it is in schema {}, setup recorded schema {}",
            current.namespace, recorded.namespace
        ));
    }
    // Where the database names an engine (MariaDB), the row must record the same one: a row
    // recording none does not switch the check off.
    if (recorded.engine.is_some() || current.engine.is_some()) && current.engine != recorded.engine
    {
        return Verdict::Changed(format!(
            "its engine is {}, setup created {}",
            shown(&current.engine),
            shown(&recorded.engine)
        ));
    }
    // Where the database shows the object's id, the row must record that id: a row recording
    // none does not fall back to the creation time.
    let (mark, now, then) = match (&recorded.object_id, &current.object_id) {
        (None, None) => ("creation time", &current.created, &recorded.created),
        _ => ("id", &current.object_id, &recorded.object_id),
    };
    if now != then {
        return Verdict::Changed(format!(
            "its {mark} is {}, setup recorded {}: recreated, or another object",
            shown(now),
            shown(then)
        ));
    }
    if recorded.object_id.is_none()
        && current.object_id.is_none()
        && !created_during_setup(recorded)
    {
        return Verdict::Changed(format!(
            "its creation time {} is not strictly inside its setup's ({}): with no table id to tell, it may be another object (granting PROCESS lets teardown read table ids and be exact)",
            shown(&recorded.created),
            recorded
                .setup_window
                .as_ref()
                .map_or("unrecorded".to_string(), |(started, ended)| format!(
                    "{started} to {ended}"
                ))
        ));
    }
    if current.owner.is_some() && current.owner != recorded.owner {
        return Verdict::Changed(format!(
            "its owner is {}, setup recorded {}",
            shown(&current.owner),
            shown(&recorded.owner)
        ));
    }
    if current.mark != recorded.mark {
        return Verdict::Changed(match &current.mark {
            None => "it carries no corescale setup comment: another object".to_string(),
            Some(_) => {
                "its comment is not the one its setup wrote: another object, or a changed one"
                    .to_string()
            }
        });
    }
    Verdict::Same
}

/// The end of a setup window that was never closed (the setup was killed or failed).
pub(super) const OPEN: &str = "open";

/// Whether an object known by its creation time alone (whole seconds) was created strictly
/// after its setup began and before it ended, by the same clock.
fn created_during_setup(recorded: &Identity) -> bool {
    let second = |text: &str| {
        if text == OPEN {
            Some(u64::MAX)
        } else {
            text.parse::<u64>().ok()
        }
    };
    match (&recorded.created, &recorded.setup_window) {
        (Some(created), Some((started, ended))) => {
            match (second(created), second(started), second(ended)) {
                (Some(created), Some(started), Some(ended)) => started < created && created < ended,
                _ => false,
            }
        }
        _ => false,
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
    /// What the object was when setup created it; None in an older catalogue.
    pub identity: Option<Identity>,
}

impl Owned {
    /// A row of `SELECT kind, name, state, parameters, <identity_select>`, read column by
    /// column (`column(index)`, NULL as None): one decoding for every database.
    pub(crate) fn from_columns(
        mut column: impl FnMut(usize) -> Result<Option<String>>,
    ) -> Result<Self> {
        let mut text = |index: usize| column(index).map(Option::unwrap_or_default);
        let (kind, name, state, parameters) = (text(0)?, text(1)?, text(2)?, text(3)?);
        let mut identity = [const { None }; IDENTITY_COLUMNS.len()];
        for (offset, slot) in identity.iter_mut().enumerate() {
            *slot = column(4 + offset)?;
        }
        Ok(Owned {
            kind: ObjectKind::parse(&kind),
            name,
            state,
            parameters,
            identity: Identity::from_columns(identity),
        })
    }

    /// Whether the row names an object of a shape some setup of `claims` creates. A row that
    /// does not is never dropped: whoever can write the catalogue must not steer teardown
    /// elsewhere.
    pub fn is_corescale_shaped(&self, claims: &[&dyn Claim], upper_case: bool) -> bool {
        claims
            .iter()
            .any(|claim| self.claimed_by(*claim, upper_case))
    }

    /// Whether `claim`'s setup creates this row's object, by its kind and name. corescale's
    /// names are all lower case, or all upper case where the database folds unquoted names
    /// so (`upper_case`, Oracle); any other spelling is never one of them.
    pub fn claimed_by(&self, claim: &dyn Claim, upper_case: bool) -> bool {
        let lower = self.name.to_ascii_lowercase();
        let expected = if upper_case {
            self.name.to_ascii_uppercase()
        } else {
            lower.clone()
        };
        self.name == expected && self.kind.is_some_and(|kind| claim.claims(kind, &lower))
    }
}

/// What a teardown did.
#[derive(Debug, Default)]
pub(crate) struct Teardown {
    pub dropped: Vec<String>,
    /// Catalogued objects that are not (or no longer) what setup created: left alone, their
    /// catalogue rows kept.
    pub not_created: Vec<NotCreated>,
    /// Objects named like corescale's that the catalogue does not list.
    pub left_alone: Vec<String>,
    /// Catalogue rows naming something corescale never creates.
    pub refused: Vec<String>,
    /// The catalogue was kept: it still lists objects left alone.
    pub catalogue_kept: bool,
}

/// A catalogued object teardown left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotCreated {
    /// As messages show it: functions with their parentheses.
    pub name: String,
    pub reason: String,
}

impl std::fmt::Display for NotCreated {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{} ({})", self.name, self.reason)
    }
}

/// Objects left alone, with why, for one message (the reasons hold commas).
pub(crate) fn listed(objects: &[NotCreated]) -> String {
    objects
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl Owned {
    /// An object's name as messages show it: functions with their parentheses.
    pub(crate) fn shown(&self) -> String {
        match self.kind {
            Some(ObjectKind::Function) => format!("{}()", self.name),
            _ => self.name.clone(),
        }
    }
}
