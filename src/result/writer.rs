//! Writes result documents to the files named with `-o`, each rewritten atomically after every
//! level (temporary file in the same directory, then rename) so an interrupted run keeps every
//! completed level.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::RunDocument;
use super::csv_format;
use crate::error::UsageError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
}

/// A result file and its format, chosen by extension.
#[derive(Debug, Clone)]
pub struct Output {
    pub path: PathBuf,
    pub format: Format,
}

impl Output {
    /// Checks the extension and that the directory exists, before any measuring starts.
    pub fn parse(path: &Path) -> Result<Self, UsageError> {
        let format = match path.extension().and_then(|ext| ext.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("json") => Format::Json,
            Some(ext) if ext.eq_ignore_ascii_case("csv") => Format::Csv,
            _ => {
                return Err(UsageError::new(format!(
                    "cannot tell the format of output '{}': name it *.json or *.csv",
                    path.display()
                )));
            }
        };
        let directory = parent_directory(path);
        if !directory.is_dir() {
            return Err(UsageError::new(format!(
                "output directory '{}' does not exist: create it or choose another --output",
                directory.display()
            )));
        }
        Ok(Self {
            path: path.to_path_buf(),
            format,
        })
    }

    pub fn write(&self, document: &RunDocument) -> Result<()> {
        let bytes = match self.format {
            Format::Json => {
                let mut text = serde_json::to_vec_pretty(document)?;
                text.push(b'\n');
                text
            }
            Format::Csv => csv_format::to_csv(document)?,
        };
        write_atomically(&self.path, &bytes).with_context(|| {
            format!(
                "cannot write results to '{}' (is the disk full or read-only? free space or choose another --output)",
                self.path.display()
            )
        })
    }
}

fn parent_directory(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Writes to a temporary file beside `path`, syncs it and renames it over `path`. A kill in
/// the middle can leave a `.corescale-*` file behind, never a half-written result.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut temporary = tempfile::Builder::new()
        .prefix(".corescale-")
        .tempfile_in(parent_directory(path))?;
    temporary.write_all(bytes)?;
    // Temporary files are private (0600); results are ordinary files.
    temporary
        .as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    temporary.as_file().sync_all()?;
    temporary.persist(path)?;
    Ok(())
}

/// Writes the document to every output.
pub fn write_all(outputs: &[Output], document: &RunDocument) -> Result<()> {
    outputs.iter().try_for_each(|output| output.write(document))
}
