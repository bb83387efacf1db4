//! The replay file: what `corescale capture` keeps of a server's log, gzip-compressed JSON
//! lines, created readable by its owner only (it holds the application's literals). A
//! header, then sessions, statements and session ends in the log's order, then a summary.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use crate::error::UsageError;
use serde::{Deserialize, Serialize};

use super::class::Class;

/// What the file calls itself, and its version.
pub const FORMAT: &str = "corescale-capture";
pub const VERSION: u32 = 1;

/// One line of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Line {
    Header {
        format: String,
        version: u32,
        /// "postgresql" or "mysql".
        product: String,
        /// The logs read, by file name, with their format.
        logs: Vec<String>,
    },
    /// A session's first sign in the log (its connection, or its first statement).
    Session {
        id: u32,
        at_us: i64,
        user: String,
        database: String,
    },
    Statement(Statement),
    /// The session's disconnection.
    End {
        id: u32,
        at_us: i64,
    },
    Summary(Summary),
}

/// One captured statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    pub session: u32,
    /// When it was sent, in microseconds since the first entry of the log.
    pub at_us: i64,
    pub sql: String,
    /// The extended protocol's parameters, in order ($1 first; None a NULL); absent for a
    /// statement sent with its values in its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<Option<String>>>,
    /// How long the server took, where the log says (log_min_duration_statement, log_duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub took_us: Option<u64>,
    pub class: Class,
    /// The SQLSTATE of the error the capture logged for it ("" when the log gives none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// The database it ran in, where its session had moved from the one it began in
    /// (MySQL's `use`, `Init DB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Rows it returned or changed, where the log says (MySQL's slow log `Rows_sent`, or
    /// `Rows_affected` where it has them): compared with the replay's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// How long after its start it had ended at the latest: its duration, else until its
    /// session's next statement or disconnection (never stored: worked out on reading).
    #[serde(skip)]
    pub ends_within_us: Option<u64>,
}

/// What the capture kept and left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The log's time of its first entry, in UTC where its zone said how (the offsets count
    /// from it).
    pub origin: String,
    pub sessions: u64,
    pub statements: u64,
    /// Statements that set a password: never stored.
    pub passwords_left_out: u64,
    /// Errors the capture logged, by SQLSTATE ("unknown" where the log gives none).
    pub errors: BTreeMap<String, u64>,
    /// Statements with a captured duration.
    pub with_duration: u64,
}

/// Writes a replay file: into a temporary file beside `path`, renamed to it when finished,
/// so an interrupted capture leaves no half file.
pub struct Writer {
    /// Buffered before the encoder: flate2 clears its 32 KiB output buffer on every write,
    /// which, record by record, was 60% of a capture's time.
    encoder:
        std::io::BufWriter<flate2::write::GzEncoder<std::io::BufWriter<tempfile::NamedTempFile>>>,
    path: std::path::PathBuf,
}

impl Writer {
    pub fn create(path: &Path) -> Result<Self> {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        // tempfile creates it with mode 0600: readable by its owner only.
        let file = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("creating a file in {}", dir.display()))?;
        Ok(Self {
            encoder: std::io::BufWriter::with_capacity(
                1 << 18,
                flate2::write::GzEncoder::new(
                    std::io::BufWriter::new(file),
                    flate2::Compression::fast(),
                ),
            ),
            path: path.to_path_buf(),
        })
    }

    pub fn write(&mut self, line: &Line) -> Result<()> {
        serde_json::to_writer(&mut self.encoder, line)
            .and_then(|()| self.encoder.write_all(b"\n").map_err(serde_json::Error::io))
            .with_context(|| format!("writing {}", self.path.display()))
    }

    /// Finishes the file and puts it in place.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        let file = (self.encoder.into_inner())
            .map_err(|error| error.into_error())
            .and_then(flate2::write::GzEncoder::finish)
            .and_then(|buffered| buffered.into_inner().map_err(|error| error.into_error()))
            .with_context(|| format!("writing {}", path.display()))?;
        file.as_file()
            .sync_all()
            .with_context(|| format!("writing {}", path.display()))?;
        file.persist(&path)
            .map_err(|error| anyhow!("putting {} in place: {}", path.display(), error.error))?;
        Ok(())
    }
}

/// The longest statement, and the longest of its parameters together, a capture keeps:
/// the longest line a log may hold.
const LONGEST_STATEMENT: usize = super::pg_log::LONGEST_LINE;

/// The longest record read: a statement and its parameters at their longest, with room for
/// the rest of the record (a longer line is refused before it is parsed).
const LONGEST_RECORD: usize = 2 * LONGEST_STATEMENT + (1 << 20);

/// Why a statement record is longer than a capture keeps.
fn within_longest(statement: &Statement) -> std::result::Result<(), String> {
    let parameters: usize = statement
        .parameters
        .iter()
        .flatten()
        .flatten()
        .map(String::len)
        .sum();
    if statement.sql.len() > LONGEST_STATEMENT {
        return Err(format!("a statement of {} MiB", statement.sql.len() >> 20));
    }
    if parameters > LONGEST_STATEMENT {
        return Err(format!("parameters of {} MiB", parameters >> 20));
    }
    Ok(())
}

/// A reader that hashes what it reads: the capture is named by its content in one pass.
struct Hashing<R> {
    inner: R,
    hasher: sha2::Sha256,
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        use sha2::Digest as _;
        let read = self.inner.read(buffer)?;
        self.hasher.update(&buffer[..read]);
        Ok(read)
    }
}

/// Reads a replay file's lines in order, each handed to `take`; refuses anything else
/// (another file, a newer version) at its line. Answers the file's content as
/// "sha256 1a2b3c4d5e6f" (the start of its SHA-256): two runs replayed one capture when
/// they name the same.
pub fn read(path: &Path, take: &mut dyn FnMut(Line) -> Result<()>) -> Result<String> {
    use sha2::Digest as _;
    let file = crate::input_file::open_regular(path, &format!("the capture '{}'", path.display()))?;
    let mut reader = BufReader::new(flate2::read::GzDecoder::new(Hashing {
        inner: BufReader::new(file),
        hasher: sha2::Sha256::new(),
    }));
    let mut text = String::new();
    let mut number = 0_u64;
    loop {
        number += 1;
        text.clear();
        let read = std::io::Read::take(&mut reader, LONGEST_RECORD as u64 + 1)
            .read_line(&mut text)
            .map_err(|error| {
                anyhow!(
                    "{}: line {number}: {error}: not a capture of `corescale capture`",
                    path.display()
                )
            })?;
        if read == 0 {
            if number == 1 {
                bail!(
                    "{} is empty: not a capture of `corescale capture`",
                    path.display()
                );
            }
            // The whole file, past the compressed stream's end too.
            let hashing = reader.get_mut().get_mut();
            std::io::copy(hashing, &mut std::io::sink())
                .with_context(|| format!("reading the capture {}", path.display()))?;
            let hash = std::mem::take(&mut hashing.hasher).finalize();
            return Ok(format!("sha256 {}", crate::format::hex(&hash[..6])));
        }
        if text.len() > LONGEST_RECORD {
            return Err(UsageError::new(format!(
                "{}: line {number} is longer than {} MiB: not a record of `corescale capture`, which keeps no statement over {} MiB",
                path.display(),
                LONGEST_RECORD >> 20,
                LONGEST_STATEMENT >> 20
            ))
            .into());
        }
        let line: Line = serde_json::from_str(&text).map_err(|error| {
            anyhow!(
                "{}: line {number} is not a capture's record ({error}): make it again with `corescale capture`",
                path.display()
            )
        })?;
        if let Line::Statement(statement) = &line {
            within_longest(statement).map_err(|why| {
                UsageError::new(format!(
                    "{}: line {number}: {why}: not a record of `corescale capture`, which keeps no statement over {} MiB",
                    path.display(),
                    LONGEST_STATEMENT >> 20
                ))
            })?;
        }
        if number == 1 {
            match &line {
                Line::Header {
                    format, version, ..
                } if format == FORMAT && *version <= VERSION => {}
                Line::Header { version, .. } if *version > VERSION => bail!(
                    "{} is a capture of version {version}, newer than this corescale reads ({VERSION}): use a newer corescale",
                    path.display()
                ),
                _ => bail!(
                    "{} does not start as a capture of `corescale capture` does",
                    path.display()
                ),
            }
        }
        take(line)?;
    }
}
