//! A folder is a sweep: the result files under it, other tools' outputs among them, and
//! their one-level-a-file series merged into one series per folder and job, with the
//! levels files do not state taken from their names or `--level`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{IMPORTERS, Importer, is_report_analysis, printable};
use crate::analysis::series::{Point, Series};
use crate::error::UsageError;

/// How much of a file is looked at to tell whose output it is.
pub(super) const HEAD_BYTES: usize = 64 * 1024;

/// The result files a report reads: each file as given (`-` for standard input), and under
/// each directory, recursively and in path order, every `*.json` and `*.csv` and every
/// other tool's output `report` reads (found by content); a CSV beside a JSON of the same
/// name is the same run and is left out, and so is a pgbench thread's log beside its run's
/// first (read with it). Hidden files (lock files) are skipped.
pub fn result_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            files.push(input.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = Vec::new();
        // Links are followed (walkdir stops at loops); hidden folders and files are not read.
        let walk = walkdir::WalkDir::new(input)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| {
                entry.depth() == 0 || !entry.file_name().to_string_lossy().starts_with('.')
            });
        for entry in walk {
            let entry = entry.with_context(|| format!("cannot read '{}'", input.display()))?;
            let extension = entry
                .path()
                .extension()
                .map(|extension| extension.to_string_lossy().to_ascii_lowercase());
            let ours = matches!(extension.as_deref(), Some("json" | "csv"));
            let file_type = entry.file_type();
            if file_type.is_file()
                && (ours && !is_report_analysis(entry.path())
                    || !ours && other_tools_output(entry.path()).is_some())
            {
                found.push(entry.into_path());
            } else if ours && !file_type.is_file() && !file_type.is_dir() {
                // A FIFO or a device (perhaps behind a link) is never opened: it could wait
                // for ever or never end.
                say!(
                    "corescale: note: left out '{}': not a regular file",
                    printable(&entry.path().display().to_string())
                );
            }
        }
        let all: std::collections::BTreeSet<&PathBuf> = found.iter().collect();
        let has_json = |csv: &Path| {
            all.contains(&csv.with_extension("json")) || all.contains(&csv.with_extension("JSON"))
        };
        let kept: Vec<PathBuf> = found
            .iter()
            .filter(|path| {
                let csv = path
                    .extension()
                    .is_some_and(|extension| extension.eq_ignore_ascii_case("csv"));
                let beside_its_run = thread_part(path).is_some_and(|first| all.contains(&first));
                !(beside_its_run || csv && has_json(path))
            })
            .cloned()
            .collect();
        if kept.is_empty() {
            return Err(UsageError::new(format!(
                "no .json or .csv results, and no other tool's output corescale reads (pgbench, sysbench, HammerDB, AWR, Statspack), under '{}'",
                input.display()
            ))
            .into());
        }
        files.extend(kept);
    }
    Ok(files)
}

/// For a pgbench thread's log (`pgbench_log.PID.N`), its run's first log
/// (`pgbench_log.PID`), which reads it.
pub(super) fn thread_part(path: &Path) -> Option<PathBuf> {
    let thread = path.extension()?.to_str()?;
    let first = path.with_extension("");
    let pid = first.extension()?.to_str()?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    (digits(thread) && digits(pid)).then_some(first)
}

/// The importer whose output a file in a folder is: text files (.txt, .log, .out, .lst,
/// .html, none, or a pgbench log's process number) whose first 64 KiB say so. Others are
/// left alone.
pub(super) fn other_tools_output(path: &Path) -> Option<&'static Importer> {
    let extension = path
        .extension()
        .map(|extension| extension.to_string_lossy().to_ascii_lowercase());
    let text_file = match extension.as_deref() {
        None | Some("txt" | "log" | "out" | "lst" | "html" | "htm" | "hlog") => true,
        Some(other) => other.bytes().all(|byte| byte.is_ascii_digit()),
    };
    if !text_file {
        return None;
    }
    use std::io::{Read, Seek};
    let mut file = crate::input_file::open_regular(path, "").ok()?;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut file)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .ok()?;
    // The tail too: a long pgbench run's -P lines put its summary past the head.
    let length = file.metadata().ok()?.len();
    let mut tail = Vec::new();
    if length > 2 * HEAD_BYTES as u64 {
        file.seek(std::io::SeekFrom::End(-(HEAD_BYTES as i64)))
            .ok()?;
        (&mut file)
            .take(HEAD_BYTES as u64)
            .read_to_end(&mut tail)
            .ok()?;
    }
    let found = detect(
        &String::from_utf8_lossy(&head),
        &String::from_utf8_lossy(&tail),
    );
    if found.is_some() || length <= HEAD_BYTES as u64 || length > MOST_SNIFFED_WHOLE {
        return found;
    }
    // A key line between head and tail (HammerDB's result after 100 virtual users' lines):
    // the whole file looked at, as `report` reads it.
    file.seek(std::io::SeekFrom::Start(0)).ok()?;
    let mut whole = Vec::new();
    file.take(MOST_SNIFFED_WHOLE).read_to_end(&mut whole).ok()?;
    detect(&String::from_utf8_lossy(&whole), "")
}

/// The largest file in a folder looked at whole when its head and tail do not say whose
/// output it is.
const MOST_SNIFFED_WHOLE: u64 = 64 << 20;

/// The importer that reads a text, from its first and last 64 KiB.
pub(super) fn detect(head: &str, tail: &str) -> Option<&'static Importer> {
    let text = if tail.is_empty() {
        std::borrow::Cow::Borrowed(head)
    } else {
        std::borrow::Cow::Owned(format!("{head}\n{tail}"))
    };
    IMPORTERS
        .iter()
        .copied()
        .find(|importer| (importer.detects)(&text))
}

/// The one number in a file's name (`awr.16.txt`): the load level of a file that does not
/// state its own. An error naming `--level FILE=N` when there is none, or several.
pub(super) fn level_from_name(path: &Path, what: &str) -> Result<usize> {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Whole words of digits only (`awr.16.txt`, `run-8.log`): `awr-19c` or a release
    // `11.2` in a name is no level.
    let stem = name
        .rsplit_once('.')
        .map_or(name.as_str(), |(stem, _)| stem);
    let numbers: Vec<&str> = stem
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty() && word.bytes().all(|byte| byte.is_ascii_digit()))
        .collect();
    let fix = format!(
        "give it with --level '{}'=N (N the sessions, clients or threads it ran)",
        path.display()
    );
    // SLOB's harness names its runs exactly awr.<update %>.<sessions>.txt (awr_rac too).
    let slob_harness = super::awr::slob_update_share(path).is_some();
    match numbers.as_slice() {
        [_, number] | [number] if numbers.len() == 1 || slob_harness => match number
            .parse::<f64>()
            .ok()
            .and_then(|level| crate::result::ranges::workers(level).ok())
        {
            Some(level) => Ok(level),
            None => Err(UsageError::new(format!(
                "'{}': {what}, and the number in its name ({number}) is no load level: {fix}",
                path.display()
            ))
            .into()),
        },
        [] => Err(UsageError::new(format!(
            "'{}': {what}, and its name holds no number (as in awr.16.txt): {fix}",
            path.display()
        ))
        .into()),
        _ => Err(UsageError::new(format!(
            "'{}': {what}, and its name holds several numbers ({}): {fix}",
            path.display(),
            numbers.join(", ")
        ))
        .into()),
    }
}

/// An error naming the fix when a file's load level is still unknown: neither the file, its
/// name, `--level` nor a pgbench summary it joined gave one.
pub(super) fn level_known(series: &Series) -> Result<()> {
    if series.points.iter().all(|point| point.workers > 0) {
        return Ok(());
    }
    let path = Path::new(&series.source);
    Err(level_from_name(path, "its load level is not in the file")
        .err()
        .unwrap_or_else(|| {
            UsageError::new(format!(
                "'{}': its load level is not in the file: give it with --level '{}'=N",
                path.display(),
                path.display()
            ))
            .into()
        }))
}

/// The folder a series' file was in: levels of one folder make a sweep.
fn folder_of(one: &Series) -> PathBuf {
    Path::new(&one.source)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Each pgbench log joins the summary of its run (same folder, same clients, same
/// transactions processed), which gains its percentiles and intervals; a run at a rate
/// limit (`-R`) with its log becomes an open-loop level. Done before levels are left out:
/// such a summary alone is no level of capacity.
pub fn pgbench_logs_joined(series: Vec<Series>) -> Vec<Series> {
    let (logs, series): (Vec<Series>, Vec<Series>) = series
        .into_iter()
        .partition(|one| one.job.tool == super::pgbench_log::TOOL);
    let mut series = series;
    // Each summary takes one log at most, and a log joins only a summary it alone matches.
    let mut joined = vec![false; series.len()];
    for mut log in logs {
        let candidates: Vec<usize> = series
            .iter()
            .enumerate()
            .filter(|(index, summary)| {
                !joined.get(*index).copied().unwrap_or(true)
                    && summary.job.tool == super::pgbench::TOOL
                    && folder_of(summary) == folder_of(&log)
                    && super::pgbench_log::level_of(&log)
                        .zip(summary.points.first())
                        .is_some_and(|(level, summary)| {
                            super::pgbench_log::belongs_to(level, summary)
                        })
            })
            .map(|(index, _)| index)
            .collect();
        match candidates.as_slice() {
            [index] => {
                joined[*index] = true;
                super::pgbench_log::join(log, &mut series[*index]);
            }
            [] => series.push(super::pgbench_log::alone(log)),
            several => {
                log.notes.push(format!(
                    "'{}': {} pgbench summaries beside it have its clients and transactions, so it joins none (keep each run's log and summary in a folder of their own)",
                    log.source,
                    several.len()
                ));
                series.push(super::pgbench_log::alone(log));
            }
        }
    }
    series
}

/// Levels imported one file each become one series per folder, job and host, named after
/// the folder: a folder of runs at 1, 2, 4 clients is a sweep (pgbench's logs joined to their
/// summaries first, [`pgbench_logs_joined`]). Several files at one level are repeats of it:
/// the level's rate is their mean, their range its spread.
pub fn levels_into_sweeps(series: Vec<Series>) -> Result<Vec<Series>> {
    let imported = |one: &Series| {
        IMPORTERS
            .iter()
            .any(|importer| importer.tool == one.job.tool)
    };
    let (profiles, mut series): (Vec<Series>, Vec<Series>) = series
        .into_iter()
        .partition(|one| one.job.tool == super::hammerdb::XTPROF_TOOL);
    for profile in profiles {
        let results = series.iter_mut().find(|results| {
            results.job.tool == super::hammerdb::TOOL && folder_of(results) == folder_of(&profile)
        });
        let left = match results {
            Some(results) => super::hammerdb::join(profile, results),
            None => Some(profile),
        };
        series.extend(left);
    }
    let series = counters_placed(series);
    // Each series with the folder its file was in.
    let mut merged: Vec<(PathBuf, Series)> = Vec::new();
    for one in series {
        level_known(&one)?;
        let folder = folder_of(&one);
        // One series per folder, job and host (an AWR report names its host).
        let same = merged.iter_mut().find(|(other_folder, other)| {
            imported(&one)
                && other.job == one.job
                && other.provenance.hostname == one.provenance.hostname
                && *other_folder == folder
        });
        match same {
            Some((_, sweep)) => {
                sweep.absorb(one);
                if let Some(name) = folder.file_name() {
                    sweep.name = printable(&name.to_string_lossy());
                }
                sweep.source = folder.display().to_string();
            }
            None => merged.push((folder, one)),
        }
    }
    let merged = merged
        .into_iter()
        .map(|(folder, mut sweep)| {
            sweep.points = repeats_averaged(std::mem::take(&mut sweep.points));
            (folder, sweep)
        })
        .collect();
    Ok(subfolders_joined(merged, &imported)
        .into_iter()
        .map(|(_, sweep)| sweep)
        .collect())
}

/// A sweep kept one level a folder (`thr1/res.txt`, `thr2/res.txt`, ...): sibling folders
/// whose series are each one level of one job and host, at levels all different, are the
/// levels of one series named after their parent, with a note naming them. Siblings that
/// each hold a whole sweep, or that repeat a level, stay a series each.
fn subfolders_joined(
    merged: Vec<(PathBuf, Series)>,
    imported: &dyn Fn(&Series) -> bool,
) -> Vec<(PathBuf, Series)> {
    let one_level = |(folder, one): &(PathBuf, Series)| {
        imported(one)
            && one.points.len() == 1
            && one.paced.is_empty()
            && folder
                .parent()
                .is_some_and(|parent| !parent.as_os_str().is_empty())
    };
    let same_kind = |a: &(PathBuf, Series), b: &(PathBuf, Series)| {
        a.0.parent() == b.0.parent()
            && a.1.job == b.1.job
            && a.1.provenance.hostname == b.1.provenance.hostname
    };
    let mut groups: Vec<Vec<(PathBuf, Series)>> = Vec::new();
    for entry in merged {
        let group = groups.iter_mut().find(|group| {
            one_level(&entry) && one_level(&group[0]) && same_kind(&group[0], &entry)
        });
        match group {
            Some(group) => group.push(entry),
            None => groups.push(vec![entry]),
        }
    }
    let mut joined = Vec::new();
    for group in groups {
        let levels: std::collections::BTreeSet<usize> = group
            .iter()
            .flat_map(|(_, one)| one.points.iter().map(|point| point.workers))
            .collect();
        if group.len() < 2 || levels.len() < group.len() {
            joined.extend(group);
            continue;
        }
        let parent = group[0]
            .0
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let names: Vec<String> = group
            .iter()
            .map(|(folder, _)| printable(&folder.file_name().unwrap_or_default().to_string_lossy()))
            .collect();
        let mut entries = group.into_iter();
        let Some((_, mut sweep)) = entries.next() else {
            continue;
        };
        for (_, one) in entries {
            sweep.absorb(one);
        }
        sweep.points.sort_by_key(|point| point.workers);
        if let Some(name) = parent.file_name() {
            sweep.name = printable(&name.to_string_lossy());
        }
        sweep.source = parent.display().to_string();
        sweep.notes.push(format!(
            "'{}': its folders {} each hold one level of {}: read as the levels of one sweep",
            printable(&sweep.source),
            names.join(", "),
            sweep.job.tool
        ));
        joined.push((parent, sweep));
    }
    joined
}

/// A HammerDB transaction counter log whose virtual users neither its name nor `--level`
/// gives takes them from the results beside it (same folder) when those ran one count;
/// otherwise it is left out with a note, so the folder's other files are still read.
fn counters_placed(series: Vec<Series>) -> Vec<Series> {
    let (unplaced, mut series): (Vec<Series>, Vec<Series>) = series.into_iter().partition(|one| {
        one.job.tool == super::hammerdb::COUNTER_TOOL
            && one.points.iter().any(|point| point.workers == 0)
    });
    for mut counter in unplaced {
        let users: std::collections::BTreeSet<usize> = series
            .iter()
            .filter(|results| {
                results.job.tool == super::hammerdb::TOOL
                    && folder_of(results) == folder_of(&counter)
            })
            .flat_map(|results| results.points.iter().map(|point| point.workers))
            .collect();
        match users.into_iter().collect::<Vec<usize>>().as_slice() {
            [users] => {
                for point in &mut counter.points {
                    point.workers = *users;
                }
                counter.notes.push(format!(
                    "'{}': its virtual users, {users}, are those of the HammerDB results beside it",
                    counter.source
                ));
                series.push(counter);
            }
            // Alone, it is the report: its error names the fix.
            _ if series.is_empty() => series.push(counter),
            _ => {
                let note = format!(
                    "'{}' left out: a transaction counter log whose virtual users are not known (give them with --level '{}'=N)",
                    counter.source, counter.source
                );
                series[0].notes.push(note);
            }
        }
    }
    series
}

/// Points of one worker count averaged into one, their range its spread. A point that is
/// already a mean of repeats (a `repeats` figure: HammerDB's autopilot) weighs as many, so
/// every run counts once. The other figures are averaged the same way. Repeats' latencies
/// and timelines are not averaged (percentiles do not average): each file alone shows them.
pub(super) fn repeats_averaged(mut points: Vec<Point>) -> Vec<Point> {
    points.sort_by_key(|point| point.workers);
    // Most files repeat no level: they are kept as they are, not copied.
    if !points
        .windows(2)
        .any(|pair| pair[0].workers == pair[1].workers)
    {
        return points;
    }
    let mut levels: Vec<Point> = Vec::new();
    for group in points.chunk_by(|a, b| a.workers == b.workers) {
        let mut level = group[0].clone();
        if group.len() > 1 {
            let weight = |point: &Point| point.figures.get("repeats").copied().unwrap_or(1.0);
            let total: f64 = group.iter().map(weight).sum();
            let mean = |value: &dyn Fn(&Point) -> Option<f64>| -> Option<f64> {
                let weighed: Vec<(f64, f64)> = group
                    .iter()
                    .filter_map(|point| Some((value(point)?, weight(point))))
                    .collect();
                let weights: f64 = weighed.iter().map(|(_, weight)| weight).sum();
                (weights > 0.0).then(|| {
                    weighed
                        .iter()
                        .map(|(value, weight)| value * weight)
                        .sum::<f64>()
                        / weights
                })
            };
            level.raw = mean(&|point| Some(point.raw)).unwrap_or(level.raw);
            let names: std::collections::BTreeSet<String> = group
                .iter()
                .flat_map(|point| point.figures.keys().cloned())
                .collect();
            level.figures = names
                .into_iter()
                .filter(|name| name != "repeats")
                .filter_map(|name| {
                    let value = mean(&|point| point.figures.get(&name).copied())?;
                    Some((name, value))
                })
                .collect();
            level.spread = Some((
                group
                    .iter()
                    .map(|point| point.spread.map_or(point.raw, |(low, _)| low))
                    .fold(f64::INFINITY, f64::min),
                group
                    .iter()
                    .map(|point| point.spread.map_or(point.raw, |(_, high)| high))
                    .fold(f64::NEG_INFINITY, f64::max),
            ));
            level.figures.insert("repeats".to_string(), total);
            level.latency = None;
            level.intervals.clear();
        }
        levels.push(level);
    }
    levels
}
