//! `corescale report`: read series, name them, analyse, render every requested output.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::analysis::input::{
    InputFile, NodeCores, NotAResult, levels_into_sweeps, merge_campaigns, node_cores,
    pgbench_logs_joined, printable, read_input, result_files, traced,
};
use crate::analysis::model::Analysis;
use crate::analysis::series::Series;
use crate::analysis::study::{analyse, apply_objective};
use crate::cli::ReportArgs;
use crate::error::UsageError;
use crate::report::analysis_text;
use crate::report::formats::{Format, renderer};

/// What the note on a series whose every level ran to a schedule says.
const SCHEDULED_NOTE: &str = "ran to a schedule (pgbench -R)";

pub fn execute(args: &ReportArgs) -> Result<()> {
    crate::sweep::stop::install_exit_handler();
    // --verbose traces every number read from another tool's output to its line.
    let (loaded, trace) = if args.verbose {
        traced(|| load_series(args))
    } else {
        (load_series(args), Vec::new())
    };
    let (series, notes) = loaded?;
    if series.is_empty() {
        if notes.iter().all(|note| note.contains(SCHEDULED_NOTE)) {
            anyhow::bail!(
                "nothing to analyse: {}; measure without a rate limit to see capacity",
                notes.join("; ")
            );
        }
        anyhow::bail!(
            "every level of every series was disturbed or ran to a schedule: nothing to analyse ({}); measure again on an idle host, or --include-disturbed to see disturbed levels anyway",
            notes.join("; ")
        );
    }
    let mut analysis = analyse(series);
    if let Some(objective) = &args.slo {
        apply_objective(&mut analysis, objective)?;
    }
    analysis.warnings.splice(0..0, notes);
    let written = write_outputs(args, &analysis)?;
    if !args.quiet {
        super::write_out(&analysis_text::render(&analysis, args.wide, args.verbose))?;
        if !trace.is_empty() {
            let lines: Vec<String> = trace.iter().map(|line| format!("- {line}\n")).collect();
            super::write_out(&format!(
                "Numbers read from other tools' outputs, by line\n{}",
                lines.concat()
            ))?;
        }
        if !written.is_empty() {
            say!("corescale: wrote {}", written.join(", "));
        }
    }
    Ok(())
}

/// A file in a folder may be named as found there, or as written on the command line.
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || a.canonicalize()
            .ok()
            .is_some_and(|a| b.canonicalize().ok() == Some(a))
}

/// Every series of every file, with `--level` and `--label` applied; a last line that may be
/// cut is left out (and said) unless `--accept-truncated`.
fn read_all(args: &ReportArgs, files: &[PathBuf], notes: &mut Vec<String>) -> Result<Vec<Series>> {
    let mut series = Vec::new();
    let mut not_results = Vec::new();
    for path in files {
        let level = args
            .levels
            .iter()
            .find(|(file, _)| same_file(path, file))
            .map(|(_, level)| *level);
        let read = match read_input(&InputFile::new(path, level)) {
            // A folder's file that is no result (a harness's params.json) is left out.
            Err(error)
                if error.downcast_ref::<NotAResult>().is_some()
                    && !args.files.iter().any(|given| given == path) =>
            {
                not_results.push(error);
                continue;
            }
            read => read?,
        };
        for mut one in read {
            if let Some((line, point)) = one.cut_last_line.take() {
                if args.accept_truncated {
                    one.points.push(point);
                } else {
                    notes.push(format!(
                        "'{}' line {line}: left out: the last line may be cut (it has no line end and its last value is shorter than the rest of its column); --accept-truncated keeps it",
                        path.display()
                    ));
                }
            }
            if let Some((_, name)) = args.labels.iter().find(|(file, _)| Path::new(file) == path) {
                one.name = printable(name);
            }
            series.push(one);
        }
    }
    if series.is_empty() && !not_results.is_empty() {
        return Err(not_results.swap_remove(0));
    }
    for error in &not_results {
        notes.push(format!("left out, not a result: {error}"));
    }
    Ok(series)
}

/// `--nodes NAME=FILES`: the series named `name` ran on these nodes, its cores their sum.
fn apply_nodes(
    args: &ReportArgs,
    name: &str,
    files: &[PathBuf],
    series: &mut [Series],
    notes: &mut Vec<String>,
) -> Result<()> {
    if args.cores.iter().any(|(cores_of, _)| cores_of == name) {
        return Err(UsageError::new(format!(
            "--cores and --nodes both give the cores of '{name}': give one"
        ))
        .into());
    }
    let nodes: Vec<NodeCores> = files
        .iter()
        .map(|file| node_cores(file))
        .collect::<Result<_>>()?;
    if nodes.windows(2).any(|pair| {
        (pair[0].physical_cores, pair[0].logical_cpus)
            != (pair[1].physical_cores, pair[1].logical_cpus)
    }) {
        let each: Vec<String> = nodes
            .iter()
            .map(|node| {
                format!(
                    "{} {}/{}",
                    node.label, node.physical_cores, node.logical_cpus
                )
            })
            .collect();
        notes.push(format!(
            "the nodes of '{name}' differ ({}): a server's worth in its nodes is counted in nodes of their average size",
            each.join(", ")
        ));
    }
    for one in series.iter_mut().filter(|one| one.name == name) {
        if let Some(instances) = one.nodes
            && instances != nodes.len()
        {
            return Err(UsageError::new(format!(
                "'{name}' ran its sessions on {instances} instances, but --nodes gives {} host file(s): give one per instance",
                nodes.len()
            ))
            .into());
        }
        one.physical_cores = Some(nodes.iter().map(|node| node.physical_cores).sum());
        one.logical_cpus = Some(nodes.iter().map(|node| node.logical_cpus).sum());
        // A cluster reached through one address (a RAC SCAN, a proxy) is its nodes too.
        if nodes.len() > 1 {
            one.nodes = Some(nodes.len());
        }
    }
    Ok(())
}

/// The series to analyse, and a warning for each left out whole because every level of it
/// was disturbed.
fn load_series(args: &ReportArgs) -> Result<(Vec<Series>, Vec<String>)> {
    for (file, _) in &args.labels {
        if !args.files.iter().any(|path| path == Path::new(file)) {
            return Err(UsageError::new(format!(
                "--label {file}=...: '{file}' is not one of the files to report"
            ))
            .into());
        }
    }
    let mut notes = Vec::new();
    let files = result_files(&args.files)?;
    for (file, _) in &args.levels {
        if !files.iter().any(|path| same_file(path, file)) {
            return Err(UsageError::new(format!(
                "--level {}=...: '{}' is none of the files read",
                file.display(),
                file.display()
            ))
            .into());
        }
    }
    let series = read_all(args, &files, &mut notes)?;
    // A campaign's parts become one series first: a level one part judged disturbed is
    // the merged level's, and left out with it.
    let (series, mut merged_notes) = merge_campaigns(series)?;
    notes.append(&mut merged_notes);
    let mut kept = Vec::new();
    for mut one in pgbench_logs_joined(series) {
        if !one.leave_out_scheduled() {
            notes.push(format!(
                "every level of {} ('{}') {SCHEDULED_NOTE}: its rates are the rates asked, not capacity, so it is not analysed",
                one.name, one.source
            ));
            continue;
        }
        if !args.include_disturbed && !one.leave_out_disturbed() {
            notes.push(format!(
                "every level of {} ('{}') was disturbed: not analysed, not compared (--include-disturbed keeps it)",
                one.name, one.source
            ));
            continue;
        }
        kept.push(one);
    }
    let mut series = levels_into_sweeps(kept)?;
    for one in &mut series {
        notes.append(&mut one.notes);
    }
    disambiguate(&mut series);
    let names: BTreeSet<String> = series.iter().map(|one| one.name.clone()).collect();
    let unknown = |name: &str, option: &str| -> Result<()> {
        if names.contains(name) {
            return Ok(());
        }
        if names.is_empty() {
            // Every series was left out (its levels disturbed or run to a schedule).
            return Err(UsageError::new(format!(
                "{option} names '{name}', but no series is left to analyse (every level disturbed or run to a schedule: --include-disturbed keeps disturbed ones)"
            ))
            .into());
        }
        Err(UsageError::new(format!(
            "{option} names '{name}', which is none of the series: {}",
            names.iter().cloned().collect::<Vec<_>>().join(", ")
        ))
        .into())
    };
    for (name, (physical, logical)) in &args.cores {
        unknown(name, "--cores")?;
        for one in series.iter_mut().filter(|one| &one.name == name) {
            one.physical_cores = Some(*physical);
            one.logical_cpus = Some(*logical);
        }
    }
    for (name, files) in &args.nodes {
        unknown(name, "--nodes")?;
        apply_nodes(args, name, files, &mut series, &mut notes)?;
    }
    for (index, (name, warehouses)) in args.warehouses.iter().enumerate() {
        unknown(name, "--warehouses")?;
        if args.warehouses[..index]
            .iter()
            .any(|(given, _)| given == name)
        {
            return Err(UsageError::new(format!(
                "--warehouses names '{name}' twice: give each series its count once"
            ))
            .into());
        }
        for one in series.iter_mut().filter(|one| &one.name == name) {
            crate::analysis::input::orders::set_warehouses(one, *warehouses)?;
        }
    }
    for (name, cost) in &args.costs {
        unknown(name, "--cost")?;
        for one in series.iter_mut().filter(|one| &one.name == name) {
            one.cost = Some(*cost);
        }
    }
    // Two jobs read from one file carry its notes alike: each said once.
    let mut seen = BTreeSet::new();
    notes.retain(|note| seen.insert(note.clone()));
    Ok((series, notes))
}

/// Two runs from one host share a label; tell them apart by their file names.
fn disambiguate(series: &mut [Series]) {
    let stem = |one: &Series| {
        Path::new(&one.source)
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    // Two jobs of one folder share its name and stem: their workloads tell them apart.
    let workload = |one: &Series| {
        one.job
            .workload
            .clone()
            .unwrap_or_else(|| one.job.tool.clone())
    };
    let renamed: Vec<String> = series
        .iter()
        .map(|one| {
            let twins: Vec<&Series> = series
                .iter()
                .filter(|other| other.name == one.name)
                .collect();
            if twins.len() < 2 {
                return one.name.clone();
            }
            let stems: BTreeSet<String> = twins.iter().map(|twin| stem(twin)).collect();
            let tell = if stems.len() == twins.len() {
                stem(one)
            } else {
                printable(&workload(one))
            };
            format!("{} ({tell})", one.name)
        })
        .collect();
    for (one, name) in series.iter_mut().zip(renamed) {
        one.name = name;
    }
}

/// Every output asked for, by `-o` and by the format flags, each through its renderer; what
/// was written, in words.
fn write_outputs(args: &ReportArgs, analysis: &Analysis) -> Result<Vec<String>> {
    let mut outputs = Vec::new();
    for path in &args.outputs {
        outputs.push((Format::of(path)?, path.clone()));
    }
    for (format, path) in [
        (Format::Json, &args.json),
        (Format::Png, &args.png),
        (Format::Markdown, &args.markdown),
        (Format::Html, &args.html),
    ] {
        if let Some(path) = path {
            outputs.push((format, path.clone()));
        }
    }
    // PNG figures first, so the Markdown that links them never points at missing files.
    outputs.sort_by_key(|(format, _)| *format != Format::Png);
    let png_folder = outputs
        .iter()
        .find(|(format, _)| *format == Format::Png)
        .map(|(_, path)| path.clone());
    for (format, path) in &outputs {
        renderer(*format, png_folder.as_deref()).write(analysis, path)?;
    }
    Ok(outputs
        .iter()
        .map(|(format, path)| match format {
            Format::Png => format!(
                "{} ({} PNG)",
                path.display(),
                crate::report::charts::figures(analysis).len()
            ),
            _ => path.display().to_string(),
        })
        .collect())
}
