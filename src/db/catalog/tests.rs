use super::record::{OPEN, is_setup_mark, setup_mark};
use super::*;

fn owned(kind: Option<ObjectKind>, name: &str) -> Owned {
    Owned {
        kind,
        name: name.to_string(),
        state: READY.to_string(),
        parameters: String::new(),
        identity: None,
    }
}

const MARK: &str = "corescale setup 1a2b-7";

#[test]
fn only_marks_of_setups_shape_prove_anything() {
    assert!(is_setup_mark(MARK));
    assert!(is_setup_mark(&setup_mark()));
    for other in [
        "orders archive",
        "corescale setup ",
        "corescale setup x-1",
        "corescale setup 1a2b",
    ] {
        assert!(!is_setup_mark(other), "{other}");
    }
    // A row copying a user's own comment as its mark proves nothing.
    let mut recorded = identity("public", Some("16385"), None, "alice");
    recorded.mark = Some("orders archive".into());
    assert_eq!(
        verdict(Some(&recorded), Some(&recorded)),
        Verdict::Unrecorded
    );
}

#[test]
fn a_row_cannot_switch_mariadbs_checks_off() {
    let mut current = identity("shop", Some("18"), Some("1700000005"), "x");
    current.owner = None;
    current.engine = Some("MyISAM".into());
    // No engine recorded: still compared with the table's.
    let mut forged = current.clone();
    forged.engine = None;
    forged.object_id = None;
    forged.setup_window = Some(("1700000004".into(), "1700000006".into()));
    assert!(matches!(
        verdict(Some(&forged), Some(&current)),
        Verdict::Changed(why) if why.contains("engine")
    ));
    // No id recorded where the server shows one: not the creation time instead.
    current.engine = Some("InnoDB".into());
    forged.engine = Some("InnoDB".into());
    assert!(matches!(
        verdict(Some(&forged), Some(&current)),
        Verdict::Changed(why) if why.contains("id is 18")
    ));
    // A setup that never recorded its end (killed): its window is open to now.
    current.object_id = None;
    forged.setup_window = Some(("1700000004".into(), OPEN.into()));
    assert_eq!(verdict(Some(&forged), Some(&current)), Verdict::Same);
}

fn identity(namespace: &str, id: Option<&str>, created: Option<&str>, owner: &str) -> Identity {
    Identity {
        namespace: namespace.to_string(),
        object_id: id.map(str::to_string),
        created: created.map(str::to_string),
        owner: Some(owner.to_string()),
        mark: Some(MARK.to_string()),
        ..Identity::default()
    }
}

#[test]
fn only_an_object_carrying_its_setup_mark_is_the_same() {
    let recorded = identity("public", Some("16385"), None, "corescale");
    // A row copying every readable fact of a user's table: the table has no mark.
    let mut unmarked = recorded.clone();
    unmarked.mark = None;
    assert!(matches!(
        verdict(Some(&recorded), Some(&unmarked)),
        Verdict::Changed(why) if why.contains("no corescale setup comment")
    ));
    let mut other = recorded.clone();
    other.mark = Some("my notes".into());
    assert!(matches!(
        verdict(Some(&recorded), Some(&other)),
        Verdict::Changed(why) if why.contains("not the one its setup wrote")
    ));
    // A row recording no mark (an older corescale's, or written by hand) proves nothing.
    let mut bare = recorded.clone();
    bare.mark = None;
    assert_eq!(verdict(Some(&bare), Some(&recorded)), Verdict::Unrecorded);
}

#[test]
fn mariadb_engine_and_setup_window() {
    let mut recorded = identity("shop", None, Some("1700000005"), "root@localhost");
    recorded.engine = Some("InnoDB".into());
    recorded.setup_window = Some(("1700000004".into(), "1700000006".into()));
    let mut current = recorded.clone();
    current.owner = None;
    current.setup_window = None;
    assert_eq!(verdict(Some(&recorded), Some(&current)), Verdict::Same);
    // A MyISAM table under the name: not what setup made.
    current.engine = Some("MyISAM".into());
    assert!(matches!(
        verdict(Some(&recorded), Some(&current)),
        Verdict::Changed(why) if why.contains("engine is MyISAM")
    ));
    current.engine = Some("InnoDB".into());
    // Created in the second the setup began or ended: not strictly inside, left alone.
    for (started, ended) in [("1700000005", "1700000006"), ("1700000004", "1700000005")] {
        recorded.setup_window = Some((started.into(), ended.into()));
        assert!(matches!(
            verdict(Some(&recorded), Some(&current)),
            Verdict::Changed(why) if why.contains("granting PROCESS")
        ));
    }
    // No window recorded, or an unreadable one: not proven.
    recorded.setup_window = None;
    assert!(matches!(
        verdict(Some(&recorded), Some(&current)),
        Verdict::Changed(why) if why.contains("unrecorded")
    ));
    recorded.setup_window = Some(("soon".into(), "1700000006".into()));
    assert!(matches!(
        verdict(Some(&recorded), Some(&current)),
        Verdict::Changed(_)
    ));
    // With a table id the window is not needed: the id decides.
    recorded.object_id = Some("18".into());
    current.object_id = Some("18".into());
    assert_eq!(verdict(Some(&recorded), Some(&current)), Verdict::Same);
}

#[test]
fn only_the_recorded_object_is_the_same() {
    let recorded = identity("public", Some("16385"), None, "corescale");
    assert_eq!(verdict(Some(&recorded), Some(&recorded)), Verdict::Same);
    // A user's table the row names: another oid.
    let other = identity("public", Some("16401"), None, "corescale");
    assert!(matches!(
        verdict(Some(&recorded), Some(&other)),
        Verdict::Changed(why) if why.contains("16401") && why.contains("16385")
    ));
    // Same oid, another owner or schema: not what setup left.
    let given_away = identity("public", Some("16385"), None, "alice");
    assert!(matches!(
        verdict(Some(&recorded), Some(&given_away)),
        Verdict::Changed(why) if why.contains("owner is alice")
    ));
    let elsewhere = identity("other", Some("16385"), None, "corescale");
    assert!(matches!(
        verdict(Some(&recorded), Some(&elsewhere)),
        Verdict::Changed(why) if why.contains("schema other")
    ));
    assert_eq!(verdict(Some(&recorded), None), Verdict::Missing);
}

#[test]
fn a_row_without_identity_proves_nothing() {
    let current = identity("public", Some("16385"), None, "corescale");
    assert_eq!(verdict(None, Some(&current)), Verdict::Unrecorded);
    assert_eq!(verdict(None, None), Verdict::Unrecorded);
    // A namespace alone (no id, no creation time) is no identity either.
    let bare = identity("public", None, None, "corescale");
    assert_eq!(verdict(Some(&bare), Some(&current)), Verdict::Unrecorded);
    assert_eq!(
        Identity::from_columns([
            None,
            Some("1".into()),
            None,
            None,
            Some(MARK.into()),
            None,
            None,
            None
        ]),
        None
    );
}

#[test]
fn mariadb_tables_by_table_id_else_creation_time() {
    // MariaDB keeps no owner: the recorded creator is not compared.
    let mut recorded = identity("shop", Some("18"), Some("1700000000"), "root@localhost");
    let mut current = identity("shop", Some("18"), Some("1700000005"), "x");
    current.owner = None;
    // The TABLE_ID decides: CREATE INDEX moved CREATE_TIME, the table is the same.
    assert_eq!(verdict(Some(&recorded), Some(&current)), Verdict::Same);
    // Recreated within the same second: same CREATE_TIME, new TABLE_ID.
    current.object_id = Some("19".into());
    current.created = Some("1700000000".into());
    assert!(matches!(
        verdict(Some(&recorded), Some(&current)),
        Verdict::Changed(_)
    ));
    // The id is unreadable now (no PROCESS privilege): not proven, left alone.
    current.object_id = None;
    assert!(matches!(
        verdict(Some(&recorded), Some(&current)),
        Verdict::Changed(why) if why.contains("unknown")
    ));
    // No id recorded: the creation time decides, inside the setup's window.
    recorded.object_id = None;
    recorded.setup_window = Some(("1699999999".into(), "1700000001".into()));
    assert_eq!(verdict(Some(&recorded), Some(&current)), Verdict::Same);
    current.created = Some("1700000042".into());
    assert!(matches!(
        verdict(Some(&recorded), Some(&current)),
        Verdict::Changed(why) if why.contains("creation time")
    ));
}

/// A claim on one table name, for the catalogue's own rules (the workloads' claims are
/// tested with them, in `workload::objects`).
struct OneTable;

impl Claim for OneTable {
    fn claims(&self, kind: ObjectKind, name: &str) -> bool {
        kind == ObjectKind::Table && name == "corescale_x"
    }
}

#[test]
fn a_claim_sees_only_names_spelled_as_corescale_spells_them() {
    let table = |name| owned(Some(ObjectKind::Table), name);
    assert!(table("corescale_x").claimed_by(&OneTable, false));
    assert!(table("CORESCALE_X").claimed_by(&OneTable, true));
    assert!(!table("CORESCALE_X").claimed_by(&OneTable, false));
    assert!(!table("Corescale_x").claimed_by(&OneTable, true));
    assert!(!owned(None, "corescale_x").claimed_by(&OneTable, false));
    assert!(
        !owned(Some(ObjectKind::Function), "corescale_x").is_corescale_shaped(&[&OneTable], false)
    );
    // A name no setup claims is never corescale's.
    assert!(!table("corescale_x").is_corescale_shaped(&[], false));
}
