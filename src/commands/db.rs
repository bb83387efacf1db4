//! `corescale db setup|teardown|check`: corescale's tables in a real database. Which
//! tables, and how they are made and checked, is each workload's (`workload::objects`).

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::DbCommand;
use crate::db::catalog::{self, Teardown};
use crate::db::cluster::{Cluster, Replay, Role};
use crate::workload::objects::Progress;

pub fn execute(command: &DbCommand) -> Result<()> {
    match command {
        DbCommand::Check(args) => check(args),
        DbCommand::Setup(args) => setup(args),
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
            } = catalog::teardown(database.as_ref(), crate::workload::CLAIMS)?;
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

/// `db setup [NAME]`: the workload's objects made on the primary, the replicas waited for.
fn setup(args: &crate::workload::SetupArgs) -> Result<()> {
    let request = args.request();
    request.validate()?;
    let cluster = Cluster::connect(&request.target().open_all()?)?;
    // Setup writes on the primary; the replicas replay it.
    let database = cluster.primary()?;
    catalog::warn_of_schema(database.as_ref())?;
    let bar = rows_bar(0);
    let done = request.setup(
        database.as_ref(),
        &Progress {
            total: &|rows| bar.set_length(rows),
            loaded: &|count| bar.inc(count),
        },
    )?;
    bar.finish_and_clear();
    wait_for_replicas(&cluster, request.target().replay_limit())?;
    tell_dropped(&done.previous);
    tell(done.summary);
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
    if let Some(workload) = args.workload
        && let Some(held) = workload.check(cluster.primary()?.as_ref())?
    {
        println!("\n{held}");
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
