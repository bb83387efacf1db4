//! `corescale capture`: a server's logs read into a replay file, with progress, and a line
//! saying what was kept and left out.

use std::io::BufRead;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::CaptureArgs;
use crate::error::UsageError;
use crate::workload::replay::capture::{Capturer, Log};
use crate::workload::replay::file::{self, Line, Writer};
use crate::workload::replay::fingerprint::Quoting;

pub fn execute(args: &CaptureArgs) -> Result<()> {
    let total = checked_logs(args)?;
    let formats = formats(args)?;
    let bar = progress_bar(total, args.quiet);
    if let Some(folder) = args
        .output
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        crate::result::writer::check_folders(folder)?;
    }
    let mut writer = Writer::create(&args.output)?;
    writer.write(&Line::Header {
        format: file::FORMAT.to_string(),
        version: file::VERSION,
        product: formats[0].product().to_string(),
        logs: args
            .logs
            .iter()
            .zip(&formats)
            .map(|(log, format)| format!("{} ({})", file_name(log), format.name()))
            .collect(),
    })?;
    let mut capturer = Capturer::new(&mut writer, Quoting::of_product(formats[0].product()));
    capturer.sessions_by_process(formats.iter().any(Log::sessions_by_process));
    let mut to_the_second = false;
    for (log, format) in args.logs.iter().zip(&formats) {
        let name = log.display().to_string();
        to_the_second |= format.read_entries(
            &mut open(log)?,
            &name,
            &|read| bar.inc(read),
            &mut |entry| capturer.take(entry),
        )?;
    }
    let logs = args
        .logs
        .iter()
        .map(|log| log.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let captured = capturer.finish(&logs)?;
    writer.finish()?;
    bar.finish_and_clear();
    say_captured(args, &captured, to_the_second);
    Ok(())
}

/// The capture's closing lines: what it wrote, over what time, and what to know of it.
fn say_captured(
    args: &CaptureArgs,
    captured: &crate::workload::replay::capture::Captured,
    to_the_second: bool,
) {
    let summary = &captured.summary;
    let counted = crate::format::counted::<u64>;
    let span_s = captured.span_us as f64 / 1e6;
    let mut said = format!(
        "captured {} of {} over {}",
        counted(summary.statements, "statement"),
        counted(summary.sessions, "session"),
        crate::format::span(span_s),
    );
    if span_s > 0.0 {
        said.push_str(&format!(
            " ({} statements/s)",
            crate::format::significant(summary.statements as f64 / span_s)
        ));
    }
    said.push_str(&format!(" into {}", args.output.display()));
    if summary.with_duration > 0 {
        said.push_str(&format!(", {} with their duration", summary.with_duration));
    }
    if summary.passwords_left_out > 0 {
        said.push_str(&format!(
            "; {} statements setting a password left out",
            summary.passwords_left_out
        ));
    }
    println!("corescale: {said}");
    if captured.databases.len() > 1 {
        let each: Vec<String> = (captured.databases.iter())
            .map(|(database, sessions)| {
                let name = if database.is_empty() {
                    "(none named)"
                } else {
                    database
                };
                format!(
                    "{} {}",
                    crate::format::printable(name),
                    counted(*sessions, "session")
                )
            })
            .collect();
        println!(
            "corescale: sessions by database: {}; a replay runs those of its --target's database and leaves the others out",
            each.join(", ")
        );
    }
    if captured.backwards > 0 {
        say!(
            "corescale: warning: {} entries are dated more than {} s before entries read before them: the logs were given out of the order they were written in, or the server's clock was set back; give the logs in the order written",
            captured.backwards,
            crate::workload::replay::capture::BACKWARDS_US / 1_000_000
        );
    }
    if to_the_second {
        say!(
            "corescale: note: the log times statements to the second only (MariaDB's logs and MySQL's before 5.6 do): each second's statements are spread over it evenly, in the order the log has them"
        );
    }
    if !captured.connections_logged {
        say!(
            "corescale: note: the log does not say when sessions connected (log_connections and log_disconnections are off): each session is taken from its first statement to its last"
        );
    }
}

/// A log's first bytes (up to 64 KiB), to tell its kind, left in the reader.
fn first_bytes(reader: &mut std::io::BufReader<std::fs::File>, name: &str) -> Result<String> {
    let buffer = reader
        .fill_buf()
        .with_context(|| format!("reading {name}"))?;
    Ok(String::from_utf8_lossy(&buffer[..buffer.len().min(64 << 10)]).into_owned())
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {bytes}/{total_bytes} at {bytes_per_sec}  ETA {eta}",
        )
        .expect("the progress template is valid"),
    );
    bar
}

/// Refuses logs that cannot be read (missing, not a file, empty, the output itself);
/// answers their total size.
fn checked_logs(args: &CaptureArgs) -> Result<u64> {
    for log in &args.logs {
        if same_file(log, &args.output) {
            return Err(UsageError::new(format!(
                "-o {} is one of the logs read: write the capture to another file",
                args.output.display()
            ))
            .into());
        }
    }
    let mut total = 0;
    for log in &args.logs {
        let meta = std::fs::metadata(log).map_err(|error| {
            crate::error::unreadable(&format!("the log {}", log.display()), error)
        })?;
        if !meta.is_file() {
            return Err(UsageError::new(format!(
                "{} is not a regular file: give the server's log files",
                log.display()
            ))
            .into());
        }
        if meta.len() == 0 {
            return Err(UsageError::new(format!(
                "{} is empty: give a log the server wrote while the workload ran",
                log.display()
            ))
            .into());
        }
        total += meta.len();
    }
    Ok(total)
}

/// Each log's kind; all of one server's.
fn formats(args: &CaptureArgs) -> Result<Vec<Log>> {
    // Every log's format first: the header names them, and a log of the wrong kind is
    // refused before anything is read.
    let mut formats = Vec::new();
    for log in &args.logs {
        let name = log.display().to_string();
        let mut reader = open(log)?;
        let format = Log::detect(
            &first_bytes(&mut reader, &name)?,
            args.log_line_prefix.as_deref(),
        )
        .map_err(|error| anyhow::anyhow!("{name}: {error:#}"))?;
        if let Some(first) = formats.first()
            && Log::product(first) != format.product()
        {
            return Err(UsageError::new(format!(
                "{name} is a {} log and {} a {} one: capture one server's logs at a time",
                format.product(),
                args.logs[0].display(),
                Log::product(first)
            ))
            .into());
        }
        formats.push(format);
    }
    if let Some(given) = &args.log_line_prefix
        && !formats.iter().any(Log::has_prefix)
    {
        return Err(UsageError::new(format!(
            "--log-line-prefix '{given}' reads PostgreSQL's stderr logs, and {} {}: its records name their fields; leave --log-line-prefix out",
            args.logs[0].display(),
            match formats.first() {
                Some(Log::Postgres(format)) => format!("is a {}", format.name()),
                Some(log) => format!("is MySQL's {}", log.name()),
                None => "is none".to_string(),
            }
        ))
        .into());
    }
    Ok(formats)
}

fn open(log: &std::path::Path) -> Result<std::io::BufReader<std::fs::File>> {
    let file = crate::input_file::open_regular(log, &format!("the log '{}'", log.display()))?;
    Ok(std::io::BufReader::with_capacity(1 << 20, file))
}

/// A log's file name alone: the capture does not record where the server keeps its logs.
fn file_name(log: &std::path::Path) -> String {
    log.file_name().map_or_else(
        || log.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}
