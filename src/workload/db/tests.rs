//! The db workload's level figures and setup lock, on a fake database.
use super::*;
use crate::db::catalog::{ObjectKind, Owned, READY, Verdict};
use crate::db::{
    AtTarget, Catalogue, DbSession, Replication, ServerCounters, ServerProcesses, SetupWindow,
    catalog, driver,
};
use std::sync::atomic::{AtomicBool, Ordering};
use tables::{SetupRecord, table_name};

/// A database of two catalogued tables whose block counters advance by what the test
/// says, and whose sessions answer at once.
struct FakeDatabase {
    target: Target,
    counters: Mutex<DbCounters>,
    /// Whether the setup lock is held, as a server would keep it until released.
    setup_locked: AtomicBool,
}

impl Database for FakeDatabase {
    fn open_session(&self) -> Result<Box<dyn DbSession>> {
        bail!("this test drives the level figures only")
    }
    fn check(&self) -> Result<driver::ServerCheck> {
        bail!("this test drives the level figures only")
    }
}

impl AtTarget for FakeDatabase {
    fn target(&self) -> &Target {
        &self.target
    }
}

impl Catalogue for FakeDatabase {
    fn has_catalogue(&self) -> Result<bool> {
        Ok(true)
    }
    fn own_name(&self, name: &str) -> String {
        crate::db::quote_double(name)
    }
    fn catalogue(&self) -> Result<Vec<Owned>> {
        Ok((0..2)
            .map(|schema| Owned {
                kind: Some(ObjectKind::Table),
                name: table_name(schema),
                state: READY.to_string(),
                parameters: SetupRecord {
                    schema,
                    schemas: 2,
                    rows: 1000,
                }
                .to_json(),
                identity: None,
            })
            .collect())
    }
    fn create_catalogue(&self) -> Result<()> {
        bail!("the fake database is read only")
    }
    fn drop_owned(&self, _: &Owned) -> Result<Verdict> {
        bail!("the fake database is read only")
    }
    fn drop_catalogue(&self) -> Result<bool> {
        bail!("the fake database is read only")
    }
    fn lookalikes(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    fn identity_now(&self, _: ObjectKind, _: &str) -> Result<Option<catalog::Identity>> {
        bail!("this test reads the catalogue only")
    }
    fn verify_owned(&self, objects: &[Owned]) -> Result<Vec<Verdict>> {
        // The fake's tables are what its catalogue lists, by construction.
        Ok(vec![Verdict::Same; objects.len()])
    }
}

impl SetupWindow for FakeDatabase {
    fn lock_setup(&self) -> Result<bool> {
        Ok(!self.setup_locked.swap(true, Ordering::SeqCst))
    }
    fn unlock_setup(&self) -> Result<bool> {
        Ok(self.setup_locked.swap(false, Ordering::SeqCst))
    }
    fn create_owned(
        &self,
        _: ObjectKind,
        _: &str,
        _: &str,
        _: &catalog::SetupStamp,
        _: &str,
    ) -> Result<()> {
        bail!("the fake database is read only")
    }
}

impl ServerProcesses for FakeDatabase {}

impl Replication for FakeDatabase {}

impl ServerCounters for FakeDatabase {
    fn counters(&self) -> Result<DbCounters> {
        Ok(*self.counters.lock().unwrap())
    }
    fn blocks_per_statement(&self, statement: &driver::SampledStatement) -> Result<f64> {
        let Some(
            [
                driver::BoundValue::Int(first),
                driver::BoundValue::Int(last),
            ],
        ) = statement.samples.first().map(Vec::as_slice)
        else {
            bail!("SLOB's samples bind a first and a last key")
        };
        // One block per row, and an update also visits its index leaf.
        Ok((last - first) as f64 + 1.0 + f64::from(u8::from(statement.changes)))
    }
}

#[test]
fn setup_and_teardown_release_the_setup_lock_even_when_they_fail() {
    let database = FakeDatabase {
        target: crate::db::registry::target("postgres://u@db.example/test").unwrap(),
        counters: Mutex::new(DbCounters::default()),
        setup_locked: Default::default(),
    };
    for _ in 0..2 {
        let failed = format!(
            "{:#}",
            catalog::teardown(&database, crate::workload::CLAIMS).unwrap_err()
        );
        assert!(
            failed.contains("read only") && failed.contains("nothing was dropped"),
            "{failed}"
        );
        let failed = format!(
            "{:#}",
            super::objects::setup(&database, 1, 10, &|_| {}).unwrap_err()
        );
        assert!(failed.contains("read only"), "{failed}");
    }
    assert!(!database.setup_locked.load(Ordering::SeqCst));
}

/// A workload on a fake database whose counters the test moves, with SLOB's 2 schemas of
/// 1000 rows: 10 blocks a select and 6 an update.
fn counted_workload() -> (Arc<FakeDatabase>, DbWorkload) {
    let database = Arc::new(FakeDatabase {
        target: crate::db::registry::target("postgres://u@db.example/test").unwrap(),
        setup_locked: Default::default(),
        counters: Mutex::new(DbCounters {
            lio: 5_000.0,
            pio: 10.0,
            db_cpu_s: None,
            transactions: None,
            maintenance: None,
        }),
    });
    let options = DbOptions {
        work_unit: 9,
        update_share: 0.5,
        update_work_unit: 4,
        server_loop: false,
        think_time: None,
        job_statements: 100,
        pipeline: 1,
        rates: Vec::new(),
        searched: false,
        rate: None,
        record_latency: true,
        arrivals: crate::latency::Arrivals::Uniform,
        arrivals_seed: 1,
        latency_limit: None,
        route: Route::default(),
        replay_limit: Duration::from_secs(120),
        instance: None,
    };
    let workload = DbWorkload::on(Cluster::single(database.clone()), options).unwrap();
    assert_eq!((workload.schemas, workload.rows), (2, 1000));
    assert_eq!(
        (workload.blocks.select, workload.blocks.update),
        (10.0, 6.0)
    );
    (database, workload)
}

/// The blocks two sessions' 100 selects and 50 updates read.
const CLIENT_BLOCKS: f64 = 1000.0 + 300.0;

/// The end of a level (started) of two sessions over 2 s, 0.5 s of client CPU: the
/// sessions hand their tallies in (the server spent 1.5 s of backend CPU on them) while the
/// server counts `server_blocks`.
fn level_with(
    database: &FakeDatabase,
    workload: &DbWorkload,
    server_blocks: f64,
) -> crate::workload::LevelFigures {
    let tallies = [
        SessionTally {
            statements: 90,
            updates: 30,
            rows_visited: 0,
            client_blocks: 60.0 * 10.0 + 30.0 * 6.0,
            backend_cpu_s: Some(1.0),
            published: true,
            ..SessionTally::default()
        },
        SessionTally {
            statements: 60,
            updates: 20,
            rows_visited: 0,
            client_blocks: 40.0 * 10.0 + 20.0 * 6.0,
            backend_cpu_s: Some(0.5),
            published: true,
            ..SessionTally::default()
        },
    ];
    for tally in tallies {
        workload.sessions.hand_in(tally).unwrap();
    }
    database.counters.lock().unwrap().lio += server_blocks;
    let totals = LevelTotals {
        workers: 2,
        elapsed_s: 2.0,
        cpu_s: 0.5,
        ops: 0,
    };
    workload.level_figures(&totals).unwrap()
}

#[test]
fn level_figures_come_from_the_databases_counters_checked_against_the_clients() {
    let (database, workload) = counted_workload();
    workload.level_started().unwrap();
    let figures = level_with(&database, &workload, CLIENT_BLOCKS);
    let recorded: std::collections::BTreeMap<&str, f64> = figures
        .recorded
        .iter()
        .map(|(name, value)| (name.as_ref(), *value))
        .collect();
    assert_eq!(recorded["statements"], 150.0);
    assert_eq!(recorded["updates"], 50.0);
    assert_eq!(recorded["db_lio_per_s"], CLIENT_BLOCKS / 2.0);
    assert_eq!(figures.rate_of_merit, Some(CLIENT_BLOCKS / 2.0));
    assert_eq!(figures.server_cpu_s, Some(1.5));
    assert_eq!(recorded["db_lio_per_s_per_worker"], CLIENT_BLOCKS / 4.0);
    assert_eq!(recorded["db_lio_over_client_blocks"], 1.0);
    assert_eq!(recorded["db_hit_ratio"], 1.0);
    assert_eq!(recorded["db_cpu_s"], 1.5);
    assert_eq!(recorded["client_cpu_share"], 0.5 / 2.0);
    assert_eq!(recorded["blocks_per_update"], 6.0);
    assert!(figures.warnings.is_empty(), "{:?}", figures.warnings);
}

/// The server counts twice the client's blocks (another client, a changed plan): said.
#[test]
fn a_server_counting_more_blocks_than_the_clients_read_is_said() {
    let (database, workload) = counted_workload();
    workload.level_started().unwrap();
    let figures = level_with(&database, &workload, 2.0 * CLIENT_BLOCKS);
    assert!(
        figures
            .recorded
            .contains(&(DbFigures::NAMES.db_lio_over_client_blocks.into(), 2.0))
    );
    assert!(
        figures.warnings[0].contains("counted 2.000x the blocks"),
        "{:?}",
        figures.warnings
    );
}

/// Autovacuum finished a run in the level, or was still at work when it ended: said,
/// since its reads are in the database's count; none seen, nothing said.
#[test]
fn autovacuum_in_the_level_is_said() {
    let (database, workload) = counted_workload();
    for (finished, running, said) in [(1.0, 0.0, true), (0.0, 1.0, true), (0.0, 0.0, false)] {
        database.counters.lock().unwrap().maintenance = Some(Maintenance::default());
        workload.level_started().unwrap();
        database.counters.lock().unwrap().maintenance = Some(Maintenance { finished, running });
        let figures = level_with(&database, &workload, CLIENT_BLOCKS);
        let autovacuum = figures
            .warnings
            .iter()
            .any(|warning| warning.starts_with("autovacuum ran in the database"));
        assert_eq!(
            autovacuum, said,
            "{finished} {running}: {:?}",
            figures.warnings
        );
    }
}

/// Documents written before `Level::workload_rate` keep the figure of merit under these
/// names, which `result::Level` reads for them.
#[test]
fn the_figure_names_read_back_are_the_recorded_ones() {
    let figures = DbFigures {
        db_lio_per_s: 5.0,
        db_cpu_s: Some(2.0),
        db_hit_ratio: 1.0,
        db_lio_over_client_blocks: 1.0,
        ..DbFigures::default()
    };
    let recorded: std::collections::BTreeMap<String, f64> = LevelFigures::of(&figures, Vec::new())
        .recorded
        .into_iter()
        .map(|(name, value)| (name.into_owned(), value))
        .collect();
    assert_eq!(recorded["db_lio_per_s"], 5.0);
    assert_eq!(recorded["db_cpu_s"], 2.0);
    assert!(!recorded.contains_key("blocks_per_update"));
    assert!(figures.warnings().is_empty());
    let short = DbFigures {
        sessions_unpublished: Some(2.0),
        db_lio: 1_000_000.0,
        db_pio: 101.0,
        ..figures
    };
    // 0.0101% of the blocks read from storage: not a cached test; 0.0099% passes.
    let cached = DbFigures {
        db_lio: 1_000_000.0,
        db_pio: 99.0,
        ..figures
    };
    assert!(cached.warnings().is_empty(), "{:?}", cached.warnings());
    assert_eq!(short.warnings().len(), 2, "{:?}", short.warnings());
}

/// The figures the result reads back by name are declared under those names.
#[test]
fn the_figures_the_result_reads_are_declared_by_its_names() {
    use crate::result::workload::figure_names as names;
    let declared = DbFigures::NAMES;
    assert_eq!(declared.db_lio_per_s, names::DB_LIO_PER_S);
    assert_eq!(
        declared.db_lio_per_s_per_worker,
        names::DB_LIO_PER_S_PER_WORKER
    );
    assert_eq!(declared.db_cpu_s, names::DB_CPU_S);
    assert_eq!(declared.db_hit_ratio, names::DB_HIT_RATIO);
    assert_eq!(declared.db_pio_per_s, names::DB_PIO_PER_S);
}
