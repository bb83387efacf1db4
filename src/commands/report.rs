//! `corescale report`: read series, name them, analyse, render every requested output.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};

use crate::analysis::input::{printable, read_series, result_files};
use crate::analysis::model::Analysis;
use crate::analysis::series::Series;
use crate::analysis::study::analyse;
use crate::cli::ReportArgs;
use crate::error::UsageError;
use crate::report::charts::{figures, render_png};
use crate::report::{analysis_text, html, markdown};
use crate::result::writer::write_atomically;

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

fn write_outputs(args: &ReportArgs, analysis: &Analysis) -> Result<()> {
    if let Some(path) = &args.json {
        let mut text = serde_json::to_vec_pretty(analysis)?;
        text.push(b'\n');
        write_file(path, &text)?;
    }
    if let Some(directory) = &args.png {
        std::fs::create_dir_all(directory)
            .with_context(|| format!("cannot create '{}'", directory.display()))?;
        for figure in figures(analysis) {
            render_png(&figure, &directory.join(format!("{}.png", figure.slug)))?;
        }
    }
    if let Some(path) = &args.markdown {
        let linked = args
            .png
            .as_deref()
            .map(|directory| figures_from(path, directory));
        write_file(
            path,
            markdown::render(analysis, linked.as_deref()).as_bytes(),
        )?;
    }
    if let Some(path) = &args.html {
        write_file(path, html::render(analysis)?.as_bytes())?;
    }
    Ok(())
}

/// The PNG directory as a link from the Markdown file: relative to the file's directory when
/// both resolve, else as given. Written with forward slashes, as Markdown links are.
fn figures_from(markdown: &Path, directory: &Path) -> String {
    let absolute = |path: &Path| std::path::absolute(path).ok();
    let base = markdown.parent().and_then(absolute);
    let relative = base
        .zip(absolute(directory))
        .and_then(|(base, directory)| pathdiff::diff_paths(directory, base))
        .unwrap_or_else(|| directory.to_path_buf());
    let text = relative
        .to_string_lossy()
        .replace('\\', "/")
        .replace(' ', "%20");
    if text.is_empty() {
        ".".to_string()
    } else {
        text
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically(path, bytes).with_context(|| {
        format!(
            "cannot write '{}': check the directory exists and has space",
            path.display()
        )
    })
}
