//! Files a command line names for reading (`report`'s results, `--nodes` host files,
//! scripts, captures): regular files only, opened without ever waiting (a FIFO with no
//! writer, a terminal, `/proc/kmsg`), and read no further than a bound, so that a device
//! such as /dev/urandom, a file that grows while read, a line without end or a string of
//! hundreds of megabytes ends in a one-line error instead of a hang or a process that grows
//! without bound. The limits are stated in docs/report.md.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{Context, Result};

use crate::error::UsageError;

/// The most bytes of a file read whole into memory (a result's JSON, an AWR report, a tool's
/// summary): far beyond any run's document, well within a server's memory.
pub const MOST_WHOLE_BYTES: u64 = 256 << 20;

/// The most bytes of a file read as a stream of lines (a per-transaction log, a CSV), which
/// memory does not hold whole: some 4 minutes of reading at the measured 285 MiB/s.
pub const MOST_STREAMED_BYTES: u64 = 64 << 30;

/// The longest line of a file read line by line: no log or CSV line comes near it.
pub const MOST_LINE_BYTES: usize = 1 << 20;

/// The longest string in a result document (a label, a tag, a statement's text).
pub const MOST_STRING_BYTES: usize = 64 << 10;

/// A size in words: "256 MiB", "64 GiB".
pub fn size_in_words(bytes: u64) -> String {
    match bytes {
        _ if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) => format!("{} GiB", bytes >> 30),
        _ if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) => format!("{} MiB", bytes >> 20),
        _ if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) => format!("{} KiB", bytes >> 10),
        _ => format!("{bytes} bytes"),
    }
}

/// What a file that is not a regular one is, in words.
fn kind(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The refusal of a file that is not a regular one; `what` names it ("'sweep.json'",
/// "the script 'a.sql'").
fn not_regular(what: &str, file_type: std::fs::FileType) -> anyhow::Error {
    UsageError::new(format!(
        "{what} is {}, not a regular file: give a regular file (save a pipe's or a device's output to one first)",
        kind(file_type)
    ))
    .into()
}

/// Opens `path` for reading if it is a regular file (symbolic links followed), else a usage
/// error naming what it is; `what` names it in messages ("'sweep.json'", "the script
/// 'a.sql'"). The type is looked at before opening (opening some devices acts: a tape
/// rewinds) and again on the opened file, which is opened non-blocking: a FIFO swapped in
/// between is never waited on, nor is a pseudo-file such as /proc/kmsg read from.
pub fn open_regular(path: &Path, what: &str) -> Result<File> {
    let metadata =
        std::fs::metadata(path).map_err(|error| crate::error::unreadable(what, error))?;
    if !metadata.is_file() {
        return Err(not_regular(what, metadata.file_type()));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .map_err(|error| crate::error::unreadable(what, error))?;
    let metadata = file
        .metadata()
        .with_context(|| format!("cannot read {what}"))?;
    if !metadata.is_file() {
        return Err(not_regular(what, metadata.file_type()));
    }
    Ok(file)
}

/// The refusal of a file larger than `most` bytes.
pub fn too_large(what: &str, most: u64) -> anyhow::Error {
    UsageError::new(format!(
        "{what} is larger than {}, the most corescale reads of such a file: check that it is the file meant, or give a smaller one",
        size_in_words(most)
    ))
    .into()
}

/// A regular file's bytes, at most `most` of them: a larger file is refused before it is
/// read, and so is one that grew past `most` while read.
pub fn read_regular(path: &Path, what: &str, most: u64) -> Result<Vec<u8>> {
    let file = open_regular(path, what)?;
    let length = file
        .metadata()
        .with_context(|| format!("cannot read {what}"))?
        .len();
    if length > most {
        return Err(too_large(what, most));
    }
    let mut bytes = Vec::with_capacity(length as usize);
    file.take(most + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {what}"))?;
    if bytes.len() as u64 > most {
        return Err(too_large(what, most));
    }
    Ok(bytes)
}

/// Standard input's bytes, at most `most` of them (`report -`).
pub fn read_stdin(most: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(most + 1)
        .read_to_end(&mut bytes)
        .context("cannot read standard input")?;
    if bytes.len() as u64 > most {
        return Err(UsageError::new(format!(
            "standard input is larger than {}, the most corescale reads from it: save it to a file and give the file",
            size_in_words(most)
        ))
        .into());
    }
    Ok(bytes)
}

/// A reader that refuses, as an error of its reads, more than a number of bytes in all and,
/// once asked to ([`Bounded::bound_lines`]), a line longer than [`MOST_LINE_BYTES`]: so a
/// line reader (`read_until`, a CSV reader) never holds more than that of one line. Put a
/// `BufReader` over it. Its errors are `InvalidData` io errors whose words say what was
/// refused; the caller names the file.
#[derive(Debug)]
pub struct Bounded<R> {
    inner: R,
    most: u64,
    read: u64,
    /// Lines started so far (1 at the start) and bytes since the last line end.
    line: u64,
    line_bytes: usize,
    bound_lines: bool,
    /// A CSV's line ends inside quotes are within a field, not between lines.
    csv_quotes: bool,
    in_quotes: bool,
}

impl<R> Bounded<R> {
    /// At most `most` bytes of `inner`.
    pub fn new(inner: R, most: u64) -> Self {
        Self {
            inner,
            most,
            read: 0,
            line: 1,
            line_bytes: 0,
            bound_lines: false,
            csv_quotes: false,
            in_quotes: false,
        }
    }

    /// From now on no line is longer than [`MOST_LINE_BYTES`] (counted from the start).
    pub fn bound_lines(&mut self) {
        self.bound_lines = true;
    }

    /// Lines are a CSV's records: a line end inside double quotes does not end one.
    pub fn csv_records(&mut self) {
        self.csv_quotes = true;
    }

    /// The reader within (to seek it, or read its metadata).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The error a read gives once a bound is passed, if one is.
    fn passed(&self) -> Option<std::io::Error> {
        let words = if self.read > self.most {
            format!(
                "more than {} to read, the most corescale reads of such a file: check that it is the file meant (is it still growing?)",
                size_in_words(self.most)
            )
        } else if self.bound_lines && self.line_bytes > MOST_LINE_BYTES {
            format!(
                "line {} is longer than {}, the longest line corescale reads: check that it is the file meant",
                self.line,
                size_in_words(MOST_LINE_BYTES as u64)
            )
        } else {
            return None;
        };
        Some(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            UsageError::new(words),
        ))
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if let Some(error) = self.passed() {
            return Err(error);
        }
        let read = self.inner.read(buffer)?;
        self.read += read as u64;
        for &byte in &buffer[..read] {
            match byte {
                b'\n' if !self.in_quotes => {
                    self.line += 1;
                    self.line_bytes = 0;
                }
                b'"' if self.csv_quotes => {
                    self.in_quotes = !self.in_quotes;
                    self.line_bytes += 1;
                }
                _ => self.line_bytes += 1,
            }
        }
        match self.passed() {
            Some(error) => Err(error),
            None => Ok(read),
        }
    }
}

/// Where the first string longer than `most` bytes (as written, escapes included) begins in
/// a JSON text: its line. None when there is none (or the text ends inside a string, which
/// the JSON parser then refuses in its own words).
pub fn long_json_string(text: &[u8], most: usize) -> Option<usize> {
    let mut line = 1;
    let mut at = 0;
    while at < text.len() {
        match text[at] {
            b'\n' => line += 1,
            b'"' => {
                let start = at + 1;
                let mut end = start;
                loop {
                    let found = text
                        .get(end..)?
                        .iter()
                        .position(|byte| matches!(byte, b'"' | b'\\'))?;
                    end += found;
                    if text[end] == b'\\' {
                        end += 2;
                    } else {
                        break;
                    }
                }
                if end - start > most {
                    return Some(line);
                }
                line += text[start..end]
                    .iter()
                    .filter(|byte| **byte == b'\n')
                    .count();
                at = end;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// The refusal of a JSON document holding a string longer than [`MOST_STRING_BYTES`];
/// `what` names the file.
pub fn check_json_strings(what: &str, text: &[u8]) -> Result<()> {
    match long_json_string(text, MOST_STRING_BYTES) {
        Some(line) => Err(UsageError::new(format!(
            "{what} line {line}: a string longer than {}, the longest corescale reads in a document (labels, tags and names are far shorter): check that it is the file meant",
            size_in_words(MOST_STRING_BYTES as u64)
        ))
        .into()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    #[test]
    fn long_strings_are_found_at_their_line() {
        let most = 8;
        assert_eq!(long_json_string(br#"{"a": "12345678"}"#, most), None);
        assert_eq!(
            long_json_string(b"{\n\"a\":\n \"123456789\"}", most),
            Some(3)
        );
        // Escaped quotes stay within the string; an escape counts as written.
        assert_eq!(long_json_string(br#"{"a": "1\"3456\\"}"#, most), Some(1));
        assert_eq!(long_json_string(br#"{"a": "1\"3\\"}"#, most), None);
        assert_eq!(long_json_string(b"{\"a\": \"12345678", most), None);
        assert_eq!(long_json_string(b"\"\\", most), None);
    }

    #[test]
    fn a_long_line_is_refused_once_lines_are_bounded() {
        let mut text = b"a,b\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MOST_LINE_BYTES + 1));
        let mut free = std::io::BufReader::new(Bounded::new(&text[..], u64::MAX));
        let mut all = Vec::new();
        free.read_to_end(&mut all).unwrap();
        let mut bounded = Bounded::new(&text[..], u64::MAX);
        bounded.bound_lines();
        let mut lines = std::io::BufReader::new(bounded);
        let mut line = Vec::new();
        lines.read_until(b'\n', &mut line).unwrap();
        assert_eq!(line, b"a,b\n");
        let error = lines.read_until(b'\n', &mut line).unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 2 is longer than 1 MiB, the longest line corescale reads: check that it is the file meant"
        );
    }

    #[test]
    fn a_csv_field_may_hold_line_ends_but_not_a_long_record() {
        let mut text = b"\"a\nb\",c\n".repeat(MOST_LINE_BYTES / 4);
        let mut bounded = Bounded::new(&text[..], u64::MAX);
        bounded.bound_lines();
        bounded.csv_records();
        std::io::BufReader::new(bounded)
            .read_to_end(&mut Vec::new())
            .unwrap();
        text = [b"\"".as_slice(), &b"x\n".repeat(MOST_LINE_BYTES), b"\"\n"].concat();
        let mut bounded = Bounded::new(&text[..], u64::MAX);
        bounded.bound_lines();
        bounded.csv_records();
        let error = std::io::BufReader::new(bounded)
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert!(error.to_string().starts_with("line "), "{error}");
    }

    #[test]
    fn more_than_the_most_is_refused() {
        let text = [b'\n'; 100];
        let mut bounded = Bounded::new(&text[..], 99);
        let error = bounded.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(
            error.to_string().starts_with("more than 99 bytes to read"),
            "{error}"
        );
        let mut exact = Bounded::new(&text[..], 100);
        assert_eq!(exact.read_to_end(&mut Vec::new()).unwrap(), 100);
    }

    #[test]
    fn only_regular_files_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for (path, kind) in [
            (fifo.as_path(), "a FIFO (named pipe)"),
            (Path::new("/dev/null"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            let error = open_regular(path, "'x'").unwrap_err();
            assert!(crate::error::exit_code(&error) == 2);
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("'x' is {kind}, not")),
                "{error}"
            );
        }
        let file = dir.path().join("file");
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read_regular(&file, "'f'", 5).unwrap(), b"12345");
        let error = read_regular(&file, "'f'", 4).unwrap_err();
        assert!(
            error.to_string().starts_with("'f' is larger than 4 bytes"),
            "{error}"
        );
    }
}
