//! Oracle's AWR reports (text and HTML) and Statspack reports, as SLOB's runs leave them
//! (`awr.txt`): one file is one level. Its rate is the Load Profile's logical reads per
//! second ("Logical read (blocks)", "Logical reads" before 11.2.0.4); DB time, DB CPU,
//! physical reads, read IO requests, executes and transactions per second are kept beside
//! it, and so are the top timed events' shares of DB time. The load (sessions) is not in a
//! report: it comes from the file's name (`awr.16.txt`) or `--level`. A level whose average
//! active sessions (DB time per second) differ from it by more than 10% is said.

use super::*;

pub(super) const TOOL: &str = "Oracle AWR";
const STATSPACK_TOOL: &str = "Oracle Statspack";

pub(super) const AWR: Importer = Importer {
    tool: TOOL,
    detects: is_awr,
    hints: &["WORKLOAD REPOSITORY", "Load Profile", "Logical read"],
    runs: one_run,
    read: Reader::Text(from_awr),
};

/// A Load Profile section alone, as DBAs paste it into tickets, mails and posts (and as
/// SLOB results are shown): read as an AWR report's, its load from `--level` or its name.
pub(super) const LOAD_PROFILE_ALONE: Importer = Importer {
    tool: TOOL,
    detects: is_load_profile,
    hints: &["Load Profile", "Per Second", "Logical read"],
    runs: one_run,
    read: Reader::Text(from_awr),
};

/// "Load Profile" with "Per Second" on its line or within the next two (10g's layout), and
/// a logical reads row.
fn is_load_profile(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().take(4000).collect();
    let headed = lines.iter().enumerate().any(|(index, line)| {
        line.trim_start().starts_with("Load Profile")
            && lines[index..(index + 3).min(lines.len())]
                .iter()
                .any(|line| line.contains("Per Second"))
    });
    headed
        && lines.iter().any(|line| {
            let label = line.trim_start().to_ascii_lowercase();
            label.starts_with("logical read (blocks):") || label.starts_with("logical reads:")
        })
}

pub(super) const STATSPACK: Importer = Importer {
    tool: STATSPACK_TOOL,
    detects: is_statspack,
    hints: &["STATSPACK report for", "Load Profile", "Logical reads"],
    runs: one_run,
    read: Reader::Text(from_statspack),
};

/// Where the active sessions may differ from the load before it is said.
const ACTIVE_SESSIONS_TOLERANCE: f64 = 0.10;

/// An instance's report: "WORKLOAD REPOSITORY report for", "... PDB report (root snapshots)"
/// (19c). A RAC-wide report (awrgrpt, SLOB's awr_rac.txt) is `awr_rac`'s.
fn is_awr(text: &str) -> bool {
    let upper = text.to_ascii_uppercase();
    upper.contains("WORKLOAD REPOSITORY")
        && upper.contains("LOAD PROFILE")
        && !upper.contains("WORKLOAD REPOSITORY REPORT (RAC")
}

/// The share of updates SLOB's harness writes in a run's name: exactly
/// `awr.<update %>.<sessions>.txt` (or `.html`, `awr_rac.`).
pub(super) fn slob_update_share(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let mut parts = name.split('.');
    let (Some("awr" | "awr_rac"), Some(update), Some(sessions), Some("txt" | "html"), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    (digits(update) && digits(sessions)).then(|| update.to_string())
}

/// One report's level as a series of logical reads per second: its job names the tool, what
/// was counted and the report's table it was read from, and SLOB's update share where the
/// file's name gives it; also answers the workload's words, for the provenance.
pub(super) fn lio_series(
    file: &InputFile,
    tool: &str,
    counted: &str,
    table: &str,
    point: Point,
) -> (Series, String) {
    let mut workload = counted.to_string();
    if let Some(update) = slob_update_share(file.path) {
        workload.push_str(&format!(", SLOB at {update}% updates"));
    }
    let job = Job {
        tool: tool.to_string(),
        workload: Some(workload.clone()),
        shape: Some(format!("{tool} {table}, {workload} per second")),
        ..Job::default()
    };
    let series = Series::new(
        file.stem(),
        Measure::Rate {
            unit: "LIO/s".to_string(),
        },
        vec![point],
        job,
    );
    (series, workload)
}

fn is_statspack(text: &str) -> bool {
    text.contains("STATSPACK report for") && text.contains("Load Profile")
}

fn from_awr(file: &InputFile, text: &str) -> Result<Series> {
    from_report(file, text, TOOL)
}

fn from_statspack(file: &InputFile, text: &str) -> Result<Series> {
    from_report(file, text, STATSPACK_TOOL)
}

/// A Load Profile row: the figure it becomes, and its labels across releases.
const LOAD_PROFILE: &[(&str, &[&str])] = &[
    ("lio_per_s", &["logical read (blocks)", "logical reads"]),
    ("db_time_per_s", &["db time(s)"]),
    ("db_cpu_per_s", &["db cpu(s)"]),
    (
        "physical_reads_per_s",
        &["physical read (blocks)", "physical reads"],
    ),
    ("read_io_requests_per_s", &["read io requests"]),
    ("executes_per_s", &["executes (sql)", "executes"]),
    ("transactions_per_s", &["transactions"]),
];

fn events_seen(figures: &std::collections::BTreeMap<String, f64>) -> bool {
    figures.keys().any(|name| name.starts_with("top event"))
}

/// "1,234,567.8" as a number.
fn figure(text: &str, what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    let plain: String = text.chars().filter(|c| *c != ',').collect();
    count_in(&plain, what, at)
}

fn from_report(file: &InputFile, text: &str, tool: &str) -> Result<Series> {
    let path = file.path;
    let html;
    let text =
        if text.trim_start().starts_with('<') || text.contains("<html") || text.contains("<HTML") {
            html = super::html::as_text(text);
            &html
        } else {
            text
        };
    let lines: Vec<&str> = text.lines().collect();
    let mut figures = Figures::new();
    let mut header = Header::default();
    let mut in_profile = false;
    // Rows of the top timed events still to read.
    let mut events_left = 0;
    for (index, line) in lines.iter().enumerate() {
        let at = || format!("'{}' line {}", path.display(), index + 1);
        let trimmed = line.trim();
        // The header tables: a row of names, a row of dashes, a row of values.
        let values = || {
            lines[index + 1..]
                .iter()
                .map(|line| line.trim())
                .find(|line| !line.is_empty() && !line.starts_with('-') && !line.starts_with('~'))
                .map(|line| line.split_whitespace().collect::<Vec<&str>>())
                .unwrap_or_default()
        };
        if !header.read(trimmed, values) {
            if let Some((name, label, rest)) = [
                ("DB Time:", "db_time_min", "DB time"),
                ("DB time:", "db_time_min", "DB time"),
                ("Elapsed:", "elapsed_min", "elapsed"),
            ]
            .iter()
            .find_map(|(prefix, name, label)| Some((*name, *label, trimmed.strip_prefix(prefix)?)))
            {
                if let Ok(minutes) = number_in(rest, label, &at) {
                    figures.insert(name.to_string(), in_range(minutes, &COUNT, label, &at)?);
                }
            } else if trimmed.starts_with("Load Profile") {
                in_profile = true;
                continue;
            } else if let Some(rest) = trimmed.strip_prefix("Top ")
                && (trimmed.contains("Timed") || trimmed.contains("Foreground Events"))
                && !events_seen(&figures)
            {
                // "Top 5 Timed Foreground Events" (11g), "Top 10 Foreground Events by ..." (12c
                // on).
                events_left = rest
                    .split_whitespace()
                    .next()
                    .and_then(|count| count.parse::<usize>().ok())
                    .unwrap_or(5)
                    .min(10);
                continue;
            }
        }
        if in_profile {
            in_profile = load_profile_row(trimmed, &mut figures, &at)?;
        }
        if events_left > 0 {
            events_left = top_event_row(trimmed, &mut figures, events_left, &at)?;
        }
    }
    let lio = figures.get("lio_per_s").copied().ok_or_else(|| {
        anyhow::anyhow!(
            "'{}': {tool} report without a Load Profile 'Logical read (blocks):' (or 'Logical reads:') row (is the report cut short?)",
            path.display()
        )
    })?;
    if lio == 0.0 {
        bail!(
            "'{}': its Load Profile counts 0 logical reads per second: the database was idle between its snapshots (take the report over the snapshots around the run)",
            path.display()
        );
    }
    let at = || format!("'{}'", path.display());
    let lio = in_range(lio, &RAW, "logical reads per second", &at)?;
    let level = file.given_level();
    let notes = level_notes(file, &figures, level);
    let point = Point {
        workers: level,
        raw: lio,
        figures,
        ..Point::default()
    };
    let counted = format!(
        "{} logical reads",
        if tool == TOOL { "AWR" } else { "Statspack" }
    );
    let (mut series, workload) = lio_series(file, tool, &counted, "Load Profile", point);
    series.provenance = header.provenance(tool, &workload);
    series.notes = notes;
    Ok(series)
}

type Figures = std::collections::BTreeMap<String, f64>;

/// What a report's header says: the database, its instance and host, its release, and the
/// snapshots the report spans.
#[derive(Default)]
struct Header {
    db_name: Option<String>,
    instance: Option<String>,
    host: Option<String>,
    release: Option<String>,
    /// "37 12-Feb-17 12:16:04" of the begin and end snapshots.
    snapshots: Vec<String>,
}

impl Header {
    /// Reads `trimmed` if it is a header row (`values` gives the row of values under a row of
    /// names); false for any other line.
    fn read<'a>(&mut self, trimmed: &str, values: impl Fn() -> Vec<&'a str>) -> bool {
        if trimmed.starts_with("DB Name") && self.db_name.is_none() {
            let row = values();
            self.db_name = row.first().map(|name| printable(name));
            if trimmed.split_whitespace().nth(4) == Some("Instance") {
                self.instance = row.get(2).map(|name| printable(name));
            }
            self.release = row
                .iter()
                .find(|word| {
                    word.split('.').count() >= 4
                        && word.split('.').all(|part| part.parse::<u32>().is_ok())
                })
                .map(|word| printable(word));
        } else if trimmed.starts_with("Host Name") && self.host.is_none() {
            self.host = values().first().map(|name| printable(name));
        } else if trimmed.starts_with("Instance")
            && self.instance.is_none()
            && trimmed.contains("Inst Num")
        {
            self.instance = values().first().map(|name| printable(name));
        } else if let Some(rest) = trimmed
            .strip_prefix("Begin Snap:")
            .or_else(|| trimmed.strip_prefix("End Snap:"))
        {
            // "37 12-Feb-17 12:16:04 25 1.6": the snapshot's id, date and time.
            let words: Vec<&str> = rest.split_whitespace().take(3).collect();
            if words.len() == 3 {
                self.snapshots.push(printable(&words.join(" ")));
            }
        } else {
            return false;
        }
        true
    }

    fn provenance(self, tool: &str, workload: &str) -> Provenance {
        let mut provenance = imported(
            tool,
            self.release,
            &format!(
                "{workload} of {}{}{}",
                self.db_name
                    .as_deref()
                    .unwrap_or("a database it does not name"),
                self.instance
                    .map(|instance| format!(" (instance {instance})"))
                    .unwrap_or_default(),
                match self.snapshots.as_slice() {
                    [begin, end, ..] => format!(", snapshots {begin} to {end}"),
                    _ => String::new(),
                }
            ),
        );
        provenance.hostname = self.host;
        provenance
    }
}

/// A row of the Load Profile: its per-second figure, where corescale reads it. False once the
/// profile has ended (a blank line after its logical reads).
fn load_profile_row(trimmed: &str, figures: &mut Figures, at: &dyn Fn() -> String) -> Result<bool> {
    if let Some((label, rest)) = trimmed.split_once(':')
        && let Some((name, _)) = LOAD_PROFILE
            .iter()
            .find(|(_, labels)| labels.contains(&label.trim().to_ascii_lowercase().as_str()))
    {
        let per_second = rest.split_whitespace().next().unwrap_or("");
        figures
            .entry(name.to_string())
            .or_insert(figure(per_second, label.trim(), at)?);
        return Ok(true);
    }
    Ok(!(figures.contains_key("lio_per_s") && trimmed.is_empty()))
}

/// A row of the top timed events: its share of DB time, under the event's name. Returns the
/// rows still to read.
fn top_event_row(
    trimmed: &str,
    figures: &mut Figures,
    left: usize,
    at: &dyn Fn() -> String,
) -> Result<usize> {
    // "db file sequential read  35,732  6,575  184  77.5 User I/O", "DB CPU  .4  .8",
    // "enq: TX - row lock contention  1  52.9  52.86 s  98.9 Applicat": the name, then
    // figures (some with units, 19c); the share of DB time is the last plain number.
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let plain = |word: &&str| figure(word, "", at).is_ok();
    // "30.8K" seconds of DB CPU (11.2.0.4's HTML), "52.86 ms": figures with a unit.
    let scaled = |word: &&str| {
        plain(word)
            || word
                .strip_suffix(['K', 'M', 'G', 'T'])
                .is_some_and(|number| plain(&number))
    };
    let numbers = words.iter().filter(|word| scaled(word)).count();
    match words.iter().position(scaled) {
        Some(first) if first > 0 && numbers >= 2 => {
            let name = words[..first].join(" ");
            let share = words
                .iter()
                .rev()
                .find(|word| plain(word))
                .map_or(Ok(0.0), |word| figure(word, "% DB time", at))?;
            figures.insert(
                format!("top event % DB time: {}", quote(&name)),
                in_range(share, &PERCENT, "% DB time", at)?,
            );
            Ok(left - 1)
        }
        _ if trimmed.is_empty() && events_seen(figures) => Ok(0),
        _ => Ok(left),
    }
}

/// What the report's load rests on: the number in its name, and how far its average active
/// sessions are from it.
pub(super) fn level_notes(file: &InputFile, figures: &Figures, level: usize) -> Vec<String> {
    let path = file.path;
    let mut notes = Vec::new();
    if file.level.is_none() && level > 0 {
        notes.push(format!(
            "'{}': its load, {level} sessions, is the number in its name (--level sets it)",
            path.display()
        ));
    }
    if let Some(&active) = figures.get("db_time_per_s")
        && level > 0
        && (active - level as f64).abs() > ACTIVE_SESSIONS_TOLERANCE * level as f64
    {
        notes.push(format!(
            "'{}': {} average active sessions (DB time per second) at a load of {level} sessions: {}",
            path.display(),
            crate::format::significant(active),
            if active < level as f64 {
                "sessions were idle part of the time (or waiting off the database)"
            } else {
                "more sessions were active than the load ran (others shared the database)"
            }
        ));
    }
    notes
}
