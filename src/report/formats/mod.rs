//! `report`'s outputs behind one trait: each format renders an analysis into its destination,
//! chosen by the destination's name (`-o report.html`, `-o report.md`, `-o analysis.json`,
//! `-o figures/` for PNG files). A new format is its renderer's file here, walking the report
//! outline, and its entry in [`Format`].

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub mod html;
pub mod markdown;

use crate::analysis::model::Analysis;
use crate::error::UsageError;
use crate::report::charts::{figures, render_png};
use crate::result::writer::write_atomically_with;

/// One rendering of an analysis.
pub(crate) trait Renderer {
    /// Writes the analysis to `destination`, replacing what was there only when complete.
    fn write(&self, analysis: &Analysis, destination: &Path) -> Result<()>;
}

/// The formats `report` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Html,
    Markdown,
    Json,
    /// One PNG file per figure, into a folder.
    Png,
}

impl Format {
    /// The format a destination's name asks for: its extension, or a folder (a name ending
    /// in `/`, or an existing directory) for PNG figures.
    pub(crate) fn of(path: &Path) -> Result<Self, UsageError> {
        let text = path.to_string_lossy();
        if text.ends_with('/') || path.is_dir() {
            return Ok(Self::Png);
        }
        let extension = path
            .extension()
            .map(|extension| extension.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("html" | "htm") => Ok(Self::Html),
            Some("md" | "markdown") => Ok(Self::Markdown),
            Some("json") => Ok(Self::Json),
            _ => Err(UsageError::new(format!(
                "-o '{text}': name it *.html, *.md or *.json, or end it with / for a folder of PNG figures"
            ))),
        }
    }
}

struct Html;
struct Markdown {
    /// The PNG folder of the same report, linked relative to the Markdown file.
    figures: Option<PathBuf>,
}
struct Json;
struct Png;

/// The renderer of a format; Markdown links the figures of `png_folder` when there is one.
pub(crate) fn renderer(format: Format, png_folder: Option<&Path>) -> Box<dyn Renderer> {
    match format {
        Format::Html => Box::new(Html),
        Format::Markdown => Box::new(Markdown {
            figures: png_folder.map(Path::to_path_buf),
        }),
        Format::Json => Box::new(Json),
        Format::Png => Box::new(Png),
    }
}

impl Renderer for Html {
    fn write(&self, analysis: &Analysis, destination: &Path) -> Result<()> {
        let figures = html::figures_html(analysis)?;
        write_file_with(destination, &mut |file| {
            html::render_to(analysis, &figures, &mut |chunk| {
                Ok(file.write_all(chunk.as_bytes())?)
            })
        })
    }
}

impl Renderer for Markdown {
    fn write(&self, analysis: &Analysis, destination: &Path) -> Result<()> {
        let linked = self
            .figures
            .as_deref()
            .map(|folder| figures_from(destination, folder));
        write_file(
            destination,
            markdown::render(analysis, linked.as_deref()).as_bytes(),
        )
    }
}

impl Renderer for Json {
    fn write(&self, analysis: &Analysis, destination: &Path) -> Result<()> {
        // Written as it is encoded: an analysis of 10^5 levels is never held whole as text.
        write_file_with(destination, &mut |file| {
            // A write's own error (a full disk), not serde's wrapper, so the message names
            // the file asked for (`write_file_with` looks for the io error).
            serde_json::to_writer_pretty(&mut *file, analysis).map_err(|error| {
                if error.is_io() {
                    anyhow::Error::from(std::io::Error::from(error))
                } else {
                    error.into()
                }
            })?;
            Ok(file.write_all(b"\n")?)
        })
    }
}

impl Renderer for Png {
    fn write(&self, analysis: &Analysis, destination: &Path) -> Result<()> {
        crate::result::writer::check_folders(destination)?;
        std::fs::create_dir_all(destination)
            .with_context(|| format!("cannot create '{}'", destination.display()))?;
        for figure in figures(analysis) {
            render_png(&figure, &destination.join(format!("{}.png", figure.slug)))?;
        }
        Ok(())
    }
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
    write_file_with(path, &mut |file| Ok(file.write_all(bytes)?))
}

/// [`write_file`] with the bytes written by `write` as they are made.
fn write_file_with(path: &Path, write: &mut dyn FnMut(&mut dyn Write) -> Result<()>) -> Result<()> {
    if let Some(directory) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        && !directory.is_dir()
    {
        anyhow::bail!(
            "cannot write '{}': there is no directory '{}' (create it, or name another file)",
            path.display(),
            directory.display()
        );
    }
    // The error names the file asked for, not the temporary file written first.
    write_atomically_with(path, write).map_err(|error| {
        let cause = error
            .chain()
            .find_map(|cause| cause.downcast_ref::<std::io::Error>())
            .map_or_else(
                || error.to_string(),
                // The OS's own words: the io error's Display names the temporary file.
                |io| match io.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
                    None => std::io::Error::from(io.kind()).to_string(),
                },
            );
        anyhow::anyhow!(
            "cannot write '{}': {cause} (check the directory exists and has space)",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_follows_the_name() {
        assert_eq!(Format::of(Path::new("r.html")), Ok(Format::Html));
        assert_eq!(Format::of(Path::new("r.HTM")), Ok(Format::Html));
        assert_eq!(Format::of(Path::new("r.md")), Ok(Format::Markdown));
        assert_eq!(Format::of(Path::new("a.json")), Ok(Format::Json));
        assert_eq!(Format::of(Path::new("figures/")), Ok(Format::Png));
        assert_eq!(Format::of(Path::new(".")), Ok(Format::Png));
        let error = Format::of(Path::new("report.pdf")).unwrap_err().to_string();
        assert!(error.contains("*.html, *.md or *.json"), "{error}");
    }
}
