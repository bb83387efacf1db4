//! `corescale db setup|teardown`: corescale's tables in a real database.

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::DbCommand;
use crate::db::catalog::{self, Teardown};
use crate::db::cluster::{Cluster, Replay, Role};
use crate::workload::db::args::{DEFAULT_SETUP_ROWS, DbSetupArgs, SetupWorkload};
use crate::workload::db::tables;
use crate::workload::tpcc;

pub fn execute(command: &DbCommand) -> Result<()> {
    match command {
        DbCommand::Check(args) => check(args),
        DbCommand::Setup(args) => {
            args.check_workload()?;
            match args.workload {
                SetupWorkload::Slob => setup_slob(args),
                SetupWorkload::Tpcc => setup_tpcc(args),
            }
        }
        DbCommand::Teardown(args) => {
            let cluster = Cluster::connect(&args.open_all()?)?;
            let database = cluster.primary()?;
            let target = database.target();
            catalog::warn_of_schema(database.as_ref())?;
            let Teardown {
                dropped,
                not_created,
                left_alone,
                refused,
                catalogue_kept,
            } = catalog::teardown(database.as_ref())?;
            wait_for_replicas(&cluster, args.replay_limit())?;
            if dropped.is_empty() && not_created.is_empty() && refused.is_empty() {
                tell(format!("no objects of corescale's catalogue in {target}"));
            } else if !dropped.is_empty() {
                tell(format!("dropped from {target}: {}", dropped.join(", ")));
            }
            if !not_created.is_empty() {
                tell(format!(
                    "left alone: not the object corescale created: {}",
                    catalog::listed(&not_created)
                ));
            }
            if !left_alone.is_empty() {
                tell(format!(
                    "left alone (not created by corescale: its catalogue does not list them): {}",
                    left_alone.join(", ")
                ));
            }
            if !refused.is_empty() {
                say!(
                    "corescale: warning: {} lists {} which corescale never creates: left alone",
                    catalog::CATALOG_TABLE,
                    refused.join(", ")
                );
            }
            if catalogue_kept {
                tell(format!(
                    "kept {}: it still lists what was left alone; check those objects, drop what is yours to drop, then delete their rows (or the catalogue) by hand",
                    catalog::CATALOG_TABLE
                ));
            }
            Ok(())
        }
    }
}

fn setup_slob(args: &DbSetupArgs) -> Result<()> {
    let asked = args.rows()?;
    let schemas = args.schemas();
    let cluster = Cluster::connect(&args.target.open_all()?)?;
    // Setup writes on the primary; the replicas replay it.
    let database = cluster.primary()?;
    let target = database.target();
    catalog::warn_of_schema(database.as_ref())?;
    let cache = database.buffer_cache()?;
    let bytes_per_row = tables::bytes_per_row(target.product.dialect);
    let rows = match asked {
        Some(rows) => {
            warn_when_larger_than_the_cache(cache, bytes_per_row, schemas, rows);
            rows
        }
        None => rows_that_fit(cache, bytes_per_row, schemas),
    };
    let bar = rows_bar(schemas.saturating_mul(rows));
    let previous = tables::setup(database.as_ref(), schemas, rows, &|count| bar.inc(count))
        .context("setting up corescale's tables")?;
    bar.finish_and_clear();
    wait_for_replicas(&cluster, args.target.replay_limit())?;
    tell_dropped(&previous);
    tell(format!(
        "created {schemas} table(s) corescale_t0..corescale_t{} of {rows} one-row blocks in {target}",
        schemas - 1
    ));
    Ok(())
}

/// The order-entry tables: created, loaded in parallel, indexed, then checked against the
/// specification's consistency conditions.
fn setup_tpcc(args: &DbSetupArgs) -> Result<()> {
    let warehouses = args.warehouses.unwrap_or(1);
    let loaders = args.loaders.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |loaders| loaders as usize,
    );
    let loaders = loaders.min(warehouses as usize).max(1);
    let cluster = Cluster::connect(&args.target.open_all()?)?;
    let database = cluster.primary()?;
    let target = database.target();
    catalog::warn_of_schema(database.as_ref())?;
    let bar = rows_bar(tpcc::load::ITEMS + warehouses * tpcc::load::ROWS_PER_WAREHOUSE);
    let started = std::time::Instant::now();
    let loaded = tpcc::setup(database.as_ref(), warehouses, loaders, &|count| {
        bar.inc(count)
    })
    .context("setting up the order-entry tables")?;
    bar.finish_and_clear();
    let took = started.elapsed();
    let mut session = database.open_session()?;
    let conditions = tpcc::consistency::check(database.as_ref(), session.as_mut())?;
    wait_for_replicas(&cluster, args.target.replay_limit())?;
    tell_dropped(&loaded.previous);
    tell(format!(
        "created the nine order-entry tables corescale_tpcc_* (derived from TPC-C, not an audited TPC-C) of {warehouses} warehouse(s) in {target}: {} rows by {loaders} session(s) in {:.1} s; consistency conditions {} hold",
        loaded.rows,
        took.as_secs_f64(),
        numbered(&conditions)
    ));
    Ok(())
}

fn rows_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} rows  ETA {eta}",
        )
        .expect("the progress template is valid"),
    );
    bar
}

fn tell_dropped(previous: &[String]) {
    if !previous.is_empty() {
        tell(format!(
            "dropped the earlier setup's objects: {}",
            previous.join(", ")
        ));
    }
}

/// Waits until the cluster's replicas (if any) replayed what setup or teardown did on the
/// primary, and says so.
fn wait_for_replicas(cluster: &Cluster, limit: std::time::Duration) -> Result<()> {
    match cluster.wait_for_replicas(limit)? {
        Replay::NoReplica => {}
        Replay::Replayed(replicas) => tell(format!("replayed on {replicas} replica(s)")),
        Replay::NotWaited(why) => say!("corescale: warning: {why}"),
    }
    Ok(())
}

/// A line of `db setup` or `db teardown`: wrapped to 80 columns on a terminal (lists of
/// objects run long), whole in a file or a pipe, one line per message as logs want.
fn tell(text: String) {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        println!("{}", crate::format::wrap_to(&text, 80));
    } else {
        println!("{text}");
    }
}

/// `db check`: connects to every instance and says what it reached, which is primary and
/// which replica, where each setting came from and whether the privileges are there; an
/// error when one is missing.
fn check(args: &crate::cli::DbCheckArgs) -> Result<()> {
    let targets = args.target.open_all()?;
    let cluster = Cluster::connect(&targets)?;
    let mut missing = Vec::new();
    for (index, instance) in cluster.instances.iter().enumerate() {
        if index > 0 {
            println!();
        }
        let role = (cluster.len() > 1).then_some(instance.role);
        let lacking = check_instance(instance.database.as_ref(), role)?;
        if lacking > 0 {
            missing.push(format!("{lacking} in {}", instance.database.target()));
        }
    }
    // A capture's settings are said whatever `db setup` may do there; both failures are.
    let capture = if args.capture {
        capture_settings(&cluster)
    } else {
        Ok(())
    };
    if !missing.is_empty() {
        anyhow::bail!(
            "privileges missing: {}: grant them, or use another user{}",
            missing.join(", "),
            capture
                .err()
                .map_or_else(String::new, |error| format!("; and {error:#}"))
        );
    }
    capture?;
    if args.workload == Some(SetupWorkload::Tpcc) {
        let database = cluster.primary()?;
        tpcc::verify(database.as_ref())?;
        let mut session = database.open_session()?;
        let conditions = tpcc::consistency::check(database.as_ref(), session.as_mut())?;
        println!(
            "\norder-entry tables: consistency conditions {} hold",
            numbered(&conditions)
        );
    }
    Ok(())
}

/// `db check --capture`: each instance's logging settings as a capture needs them; an error
/// naming those missing.
fn capture_settings(cluster: &Cluster) -> Result<()> {
    use crate::workload::replay::settings::{self, Standing};
    let mut missing = Vec::new();
    for instance in &cluster.instances {
        let findings = settings::read(instance.database.as_ref())?;
        println!(
            "\nlogging, as `corescale capture` reads it ({}):",
            instance.database.target()
        );
        for finding in &findings {
            let mark = match finding.standing {
                Standing::Ready => "ok     ",
                Standing::Missing => "MISSING",
                Standing::Advised => "advice ",
            };
            println!("  {mark} {}: {}", finding.setting, finding.meaning);
            if finding.standing == Standing::Missing {
                missing.push(finding.setting.clone());
            }
        }
    }
    if !missing.is_empty() {
        anyhow::bail!(
            "the server does not log what `corescale capture` reads: {}; set them as said above, then capture the log written after",
            missing.join("; ")
        );
    }
    Ok(())
}

/// "1, 2, 3, 4".
fn numbered(conditions: &[u8]) -> String {
    conditions
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One instance's part of `db check`; answers how many privileges are missing.
fn check_instance(database: &dyn crate::db::Database, role: Option<Role>) -> Result<usize> {
    let target = database.target();
    let facts = database.check()?;
    let read_only = database.read_only()?;
    let mut rows = vec![("server".to_string(), facts.server.clone(), String::new())];
    if let Some(role) = role {
        rows.push((
            "role".to_string(),
            match role {
                Role::Primary => "primary: takes writes; setup and updates run here",
                Role::Replica => "replica: replays the primary's changes; reads only",
            }
            .to_string(),
            String::new(),
        ));
    }
    rows.extend([
        (
            "writes".to_string(),
            if read_only {
                "refused: read-only (a replica, or by its settings); `run script` runs only scripts that read"
            } else {
                "allowed"
            }
            .to_string(),
            String::new(),
        ),
        ("user".to_string(), facts.user.clone(), String::new()),
        (
            "database".to_string(),
            facts.database.clone(),
            String::new(),
        ),
        (
            "TLS".to_string(),
            facts.tls.as_ref().map_or_else(
                || "none: the connection is not encrypted".to_string(),
                |tls| format!("{} {}", tls.protocol, tls.cipher),
            ),
            String::new(),
        ),
    ]);
    println!("connected to {target}");
    print_rows(&rows);
    println!("settings, and where each came from:");
    rows = target.settings().describe();
    rows.push((
        "password".to_string(),
        if target.password_source().is_some() {
            "(given, not shown)".to_string()
        } else {
            "(none)".to_string()
        },
        target
            .password_source()
            .map_or_else(String::new, ToString::to_string),
    ));
    print_rows(&rows);
    println!("privileges `db setup` and `run db` need:");
    for (privilege, held) in &facts.privileges {
        println!(
            "  {} {privilege}",
            if *held { "ok     " } else { "MISSING" }
        );
    }
    catalog::warn_of_schema(database)?;
    Ok(facts.privileges.iter().filter(|(_, held)| !held).count())
}

/// `name  value  (source)` lines, aligned, wrapped to 80 columns.
fn print_rows(rows: &[(String, String, String)]) {
    let width = rows
        .iter()
        .map(|(name, _, _)| name.len())
        .max()
        .unwrap_or(0);
    for (name, value, source) in rows {
        let source = if source.is_empty() {
            String::new()
        } else {
            format!("  (from {source})")
        };
        let line = format!("  {name:width$}  {value}{source}");
        let options = textwrap::Options::new(80).subsequent_indent("      ");
        for piece in textwrap::wrap(&line, options) {
            println!("{piece}");
        }
    }
}

/// Rows per table that `schemas` tables may have to leave a fifth of the buffer cache free
/// (for indexes, catalogues and other tables).
fn rows_in_cache(cache: u64, bytes_per_row: u64, schemas: u64) -> u64 {
    cache * 4 / 5 / bytes_per_row.max(1) / schemas.max(1)
}

/// Rows per table for a setup without `--scale`: the default, or as many as leave a fifth of
/// the buffer cache (`cache`: its size and setting) free, so the default sweep is cached.
fn rows_that_fit(cache: Option<(u64, &str)>, bytes_per_row: u64, schemas: u64) -> u64 {
    let Some((bytes, setting)) = cache else {
        return DEFAULT_SETUP_ROWS;
    };
    let fit = rows_in_cache(bytes, bytes_per_row, schemas);
    if fit >= DEFAULT_SETUP_ROWS {
        return DEFAULT_SETUP_ROWS;
    }
    let rows = fit.max(128);
    say!(
        "corescale: note: {schemas} table(s) of {rows} rows, sized to fit {setting} = {} MiB with a fifth to spare (a cached test); --scale sets the size",
        bytes >> 20
    );
    if fit < 128 {
        warn_when_larger_than_the_cache(cache, bytes_per_row, schemas, rows);
    }
    rows
}

/// Says, before loading, when the tables will not fit the database's buffer cache (`cache`:
/// its size and setting): runs would then read from disk (the run warns on every level, too
/// late to change anything).
fn warn_when_larger_than_the_cache(
    cache: Option<(u64, &str)>,
    bytes_per_row: u64,
    schemas: u64,
    rows: u64,
) {
    let Some((cache, setting)) = cache else {
        return;
    };
    let data = schemas.saturating_mul(rows).saturating_mul(bytes_per_row);
    // The cache also holds indexes, catalogues and other tables: keep a fifth free.
    if data.saturating_mul(5) / 4 > cache {
        let mib = |bytes: u64| bytes as f64 / (1u64 << 20) as f64;
        let rows_that_fit = rows_in_cache(cache, bytes_per_row, schemas).max(1);
        say!(
            "corescale: warning: {schemas} table(s) of {rows} rows take about {:.0} MiB, more than fits in {setting} = {:.0} MiB with room to spare: runs will read from disk instead of measuring logical IO. Raise {setting} to at least {:.0} MiB, or use --scale {rows_that_fit} or fewer --schemas",
            mib(data),
            mib(cache),
            mib(data * 5 / 4)
        );
    }
}
