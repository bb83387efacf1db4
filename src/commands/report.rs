//! `corescale report`: read series, name them, analyse, render every requested output.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;

use crate::analysis::input::{printable, read_series, result_files};
use crate::analysis::model::Analysis;
use crate::analysis::series::Series;
use crate::analysis::study::analyse;
use crate::cli::ReportArgs;
use crate::error::UsageError;
use crate::report::analysis_text;
use crate::report::output::{Format, renderer};

pub fn execute(args: &ReportArgs) -> Result<()> {
    let series = load_series(args)?;
    let analysis = analyse(series);
    write_outputs(args, &analysis)?;
    if !args.quiet {
        super::write_out(&analysis_text::render(&analysis, args.wide))?;
    }
    Ok(())
}

fn load_series(args: &ReportArgs) -> Result<Vec<Series>> {
    for (file, _) in &args.labels {
        if !args.files.iter().any(|path| path == Path::new(file)) {
            return Err(UsageError::new(format!(
                "--label {file}=...: '{file}' is not one of the files to report"
            ))
            .into());
        }
    }
    let mut series = Vec::new();
    for path in &result_files(&args.files)? {
        let mut one = read_series(path)?;
        if !args.include_disturbed {
            one.leave_out_disturbed();
        }
        if let Some((_, name)) = args.labels.iter().find(|(file, _)| Path::new(file) == path) {
            one.name = printable(name);
        }
        series.push(one);
    }
    disambiguate(&mut series);
    let names: BTreeSet<String> = series.iter().map(|one| one.name.clone()).collect();
    let unknown = |name: &str, option: &str| -> Result<()> {
        if names.contains(name) {
            return Ok(());
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
    for (name, cost) in &args.costs {
        unknown(name, "--cost")?;
        for one in series.iter_mut().filter(|one| &one.name == name) {
            one.cost = Some(*cost);
        }
    }
    Ok(series)
}

/// Two runs from one host share a label; tell them apart by their file names.
fn disambiguate(series: &mut [Series]) {
    let names: Vec<String> = series.iter().map(|one| one.name.clone()).collect();
    for one in series.iter_mut() {
        if names.iter().filter(|name| **name == one.name).count() > 1 {
            let stem = Path::new(&one.source)
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default();
            one.name = format!("{} ({stem})", one.name);
        }
    }
}

/// Every output asked for, by `-o` and by the format flags, each through its renderer.
fn write_outputs(args: &ReportArgs, analysis: &Analysis) -> Result<()> {
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
    Ok(())
}
