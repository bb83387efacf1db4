//! corescale's own JSON result document, and `run -o -` logs around it.

use super::*;

/// The document, its schema checked first: a report's analysis or another version is named.
fn parsed(path: &Path, text: &str) -> Result<RunDocument> {
    // A string of hundreds of megabytes (a label) would take gigabytes once parsed.
    crate::input_file::check_json_strings(&format!("'{}'", path.display()), text.as_bytes())?;
    let value: serde_json::Value = serde_json::from_str(text).map_err(|error| {
        anyhow::anyhow!(
            "'{}' line {} column {}: not JSON ({error})",
            path.display(),
            error.line(),
            error.column()
        )
    })?;
    match value.get("schema").and_then(serde_json::Value::as_str) {
        Some(SCHEMA) => {}
        Some(schema) if schema.starts_with("corescale-report/") => bail!(
            "'{}' is an analysis written by `corescale report --json`, not a run: report the run's own JSON or CSV",
            path.display()
        ),
        Some(schema) => bail!(
            "'{}': schema '{}' is not supported (this corescale reads '{SCHEMA}')",
            path.display(),
            quote(schema)
        ),
        None => {
            return Err(super::NotAResult(format!(
                "'{}': not a corescale result document (no \"schema\" field)",
                path.display()
            ))
            .into());
        }
    }
    serde_json::from_value(value).map_err(|error| {
        anyhow::anyhow!(
            "'{}': not a corescale result document ({})",
            path.display(),
            quote(&error.to_string())
        )
    })
}

pub(super) fn from_document(path: &Path, text: &str) -> Result<Series> {
    let document = parsed(path, text)?;
    let measure = match document.settings.mode {
        RunMode::FixedWork => Measure::JobTime,
        RunMode::FixedTime => Measure::Rate {
            unit: format!("{}/s", document.workload.unit),
        },
    };
    if let Some(campaign) = &document.campaign
        && !((1..=MOST_PARTS).contains(&campaign.parts)
            && (1..=campaign.parts).contains(&campaign.part))
    {
        bail!(
            "'{}' campaign: part {} of {} parts: a campaign has 1 to {MOST_PARTS} parts, and each part's number is one of them",
            path.display(),
            campaign.part,
            campaign.parts
        );
    }
    let points = (document.levels.iter().enumerate())
        .map(|(index, level)| level_point(path, &document, index, level))
        .collect::<Result<Vec<_>>>()?;
    let topology = &document.host.topology;
    let workload = &document.workload;
    let job = Job {
        tool: document.tool.name.clone(),
        workload: Some(workload.kind.name().to_string()),
        size: (document.settings.mode == RunMode::FixedWork)
            .then(|| (workload.job_size, workload.job_size_unit.clone())),
        duration_s: document.settings.duration_s,
        shape: workload.shape.as_ref().map(|shape| shape.key()),
    };
    // The instances that ran sessions: a cluster's nodes, compared node for node with a
    // single server.
    let nodes = document
        .levels
        .iter()
        .map(|level| {
            level
                .instances
                .iter()
                .filter(|instance| instance.sessions > 0)
                .count()
        })
        .max()
        .filter(|nodes| *nodes > 1);
    // The host is the client: a database server elsewhere has cores of its own, which only
    // --cores or --nodes give.
    let cores_here = workload.server_on_this_host != Some(false);
    let series = Series {
        nodes,
        campaign: document.campaign.clone(),
        physical_cores: cores_here.then_some(topology.physical_cores),
        logical_cpus: cores_here.then_some(topology.logical_cpus),
        client_cpus: Some(topology.logical_cpus),
        complete: document.complete,
        provenance: provenance(&document, &job),
        search: document
            .search
            .as_ref()
            .map(|search| checked_search(path, search, document.levels.len()))
            .transpose()?,
        search_disturbed: (document.search.iter())
            .flat_map(|search| &search.probes)
            .filter_map(|probe| document.levels.get(probe.level?))
            .filter(|level| level.is_disturbed())
            .count(),
        statements: replayed_statements(&workload.description),
        ..Series::new(document.host.label.clone(), measure, points, job)
    };
    Ok(series)
}

/// A replay's fingerprints from its description ("...; fingerprint 1: SELECT ...;
/// fingerprint 2: ..."), by class: each runs to the next one's marker, numbered in order.
fn replayed_statements(description: &str) -> std::collections::BTreeMap<String, String> {
    let mut statements = std::collections::BTreeMap::new();
    let Some(first) = description.find("; fingerprint 1: ") else {
        return statements;
    };
    let mut rest = &description[first..];
    for number in 1.. {
        let Some(text) = rest.strip_prefix(&format!("; fingerprint {number}: ")) else {
            break;
        };
        let next = format!("; fingerprint {}: ", number + 1);
        let end = text.find(&next).unwrap_or(text.len());
        statements.insert(
            format!("fingerprint-{number}"),
            crate::format::printable(&text[..end]),
        );
        rest = &text[end..];
    }
    statements
}

/// The most objectives and probes a search's record may hold: a search of `--max-time`
/// probes a few dozen rates.
const MOST_OBJECTIVES: usize = 16;
const MOST_PROBES: usize = 10_000;

/// A document's search, its words made printable and its figures checked where they are:
/// the report re-derives its sentence from them, never repeats the file's own.
fn checked_search(
    path: &Path,
    search: &crate::result::search::SearchRecord,
    levels: usize,
) -> Result<crate::result::search::SearchRecord> {
    let at = |field: &str| format!("'{}' search.{field}", path.display());
    let mut search = search.clone();
    if search.objectives.is_empty() || search.objectives.len() > MOST_OBJECTIVES {
        bail!(
            "{}: 1 to {MOST_OBJECTIVES} objectives, not {}",
            at("objectives"),
            search.objectives.len()
        );
    }
    if search.probes.len() > MOST_PROBES.min(levels) {
        bail!(
            "{}: {} probes, more than the document's {levels} levels",
            at("probes"),
            search.probes.len()
        );
    }
    for objective in &mut search.objectives {
        *objective = quote(objective);
    }
    search.unit = quote(&search.unit);
    search.answer = String::new();
    let rate = |value: f64, field: &str| in_range(value, &RAW, "a rate per second", &|| at(field));
    for (index, probe) in search.probes.iter_mut().enumerate() {
        rate(probe.rate_per_s, &format!("probes[{index}].rate_per_s"))?;
        in_range(probe.achieved_per_s, &COUNT, "a rate per second", &|| {
            at(&format!("probes[{index}].achieved_per_s"))
        })?;
        for check in &mut probe.objectives {
            check.objective = quote(&check.objective);
            if let Some(interval) = &check.interval {
                let times = [interval.estimate_ms, interval.lower_ms]
                    .into_iter()
                    .chain(interval.upper_ms);
                for time in times {
                    in_range(
                        time,
                        &(0.0..=crate::latency::A_DAY_MS),
                        "a response time in ms",
                        &|| at(&format!("probes[{index}].objectives")),
                    )?;
                }
            }
        }
    }
    for (value, field) in [
        (search.kept_rate, "kept_rate"),
        (search.broken_rate, "broken_rate"),
        (search.capacity_per_s, "capacity_per_s"),
    ] {
        if let Some(value) = value {
            rate(value, field)?;
        }
    }
    Ok(search)
}

/// Level `index` as the analysis reads it, every value checked at its own place.
fn level_point(path: &Path, document: &RunDocument, index: usize, level: &Level) -> Result<Point> {
    let at = |field: &str| format!("'{}' levels[{index}].{field}", path.display());
    // Derived again from the fields it comes from, by the one definition the run used
    // to store `summary.merit`: a document edited (or older than that field) cannot
    // make the two disagree, and each value is checked at its own place.
    let merit = level.derive_merit(document.settings.mode, &document.workload.unit);
    let workers = worker_count(level.workers as f64, &|| at("workers"))?;
    let (raw, raw_field) = (merit.value, merit.source.as_str());
    let (cpu_fraction, cpu_field) = (merit.cpu_fraction, merit.cpu_fraction_source.as_str());
    // What the host delivered, from the samples as the run computed it (documents
    // without job starts: test_cpu_parallel's n / median, from the median).
    let delivered = match document.settings.mode {
        RunMode::FixedWork => delivered_jobs_per_min(&level.samples)
            .map(|capacity| {
                in_range(capacity, &RAW, "the capacity", &|| {
                    at("samples (started_s and wall_s)")
                })
            })
            .transpose()?,
        RunMode::FixedTime => None,
    };
    let checked = checked_classes(&level.classes, &|| at("classes"))?;
    let point = Point {
        workers,
        scheduled: None,
        raw: in_range(raw, &RAW, "the measurement", &|| at(raw_field))?,
        delivered,
        cache: cache_figures(&level.workload_figures, &|field: &str| {
            at(&format!("workload_figures.{field}"))
        })?,
        figures: checked_figures(&level.workload_figures, &|field: &str| {
            at(&format!("workload_figures.{field}"))
        })?,
        cv: Some(in_range(level.summary.cv, &CV, "the CV", &|| {
            at("summary.cv")
        })?),
        capacity_uncertainty: crate::stats::relative_half_width_95(
            &crate::result::summary::batch_capacities(&level.samples, document.settings.mode),
        )
        .filter(|half| half.is_finite()),
        cpu_fraction: Some(in_range(
            cpu_fraction,
            &CPU_FRACTION,
            "the on-CPU fraction",
            &|| at(cpu_field),
        )?),
        steal_pct: Some(in_range(level.os.steal_pct, &PERCENT, "steal %", &|| {
            at("os.steal_pct")
        })?),
        disturbed: level
            .disturbances()
            .iter()
            .map(|reason| printable(reason))
            .collect(),
        precision_reached: level.precision_reached,
        parts: Vec::new(),
        open_reading: None,
        classes: checked
            .iter()
            .filter(|class| !class.class.starts_with(crate::latency::LOGGED))
            .cloned()
            .collect(),
        logged: checked
            .iter()
            .filter_map(|class| {
                let name = class.class.strip_prefix(crate::latency::LOGGED)?;
                Some(crate::latency::ClassTimes {
                    class: name.to_string(),
                    ..class.clone()
                })
            })
            .collect(),
        instances: checked_instances(&level.instances, &|| at("instances"))?,
        campaign: level.campaign.as_ref().map(|campaign| PointInCampaign {
            // At least this part's own sessions (a hand-edited 0 would divide by zero).
            workers: campaign.workers.max(workers),
            level: index,
            started_at: level.started_at,
            scheduled_start: campaign.scheduled_start,
            clock_offset_ms: campaign.clock_offset_ms,
            elapsed_s: level.elapsed_s,
            server_counted: merit.server_counted,
        }),
        intervals: checked_intervals(&level.intervals, &|| at("intervals"))?,
        latency: level
            .latency
            .as_ref()
            .map(|latency| level_latency(latency, level, &at("latency")))
            .transpose()?,
        spread: merit
            .low
            .zip(merit.high)
            .map(|spread| checked_spread(spread, raw, raw_field, &at))
            .transpose()?,
    };
    in_range(
        level.summary.job_time_s.stdev,
        &(0.0..=*RAW.end()),
        "the stdev",
        &|| at("summary.job_time_s.stdev"),
    )?;
    Ok(point)
}

/// A level's response times, checked against themselves and its statements figure.
fn level_latency(
    latency: &crate::latency::Latency,
    level: &Level,
    at: &str,
) -> Result<Box<crate::latency::Latency>> {
    checked_latency(latency).map_err(|problem| anyhow::anyhow!("{at}: {problem}"))?;
    statements_agree(latency, &level.workload_figures)
        .map_err(|problem| anyhow::anyhow!("{at}: {problem}"))?;
    Ok(Box::new(crate::latency::Latency {
        unit: printable(&latency.unit),
        ..latency.clone()
    }))
}

/// A level's spread, checked as the median is: a spread of 1e300 would otherwise be drawn
/// (and an axis to f64::MAX never ends), and an inverted one is not a spread.
fn checked_spread(
    (low, high): (f64, f64),
    raw: f64,
    raw_field: &str,
    at: &dyn Fn(&str) -> String,
) -> Result<(f64, f64)> {
    let (low_field, high_field) = if raw_field == "summary.job_time_s.median" {
        ("summary.job_time_s.min", "summary.job_time_s.max")
    } else {
        (
            "samples (the lowest batch rate)",
            "samples (the highest batch rate)",
        )
    };
    let low = in_range(low, &RAW, "the spread's low end", &|| at(low_field))?;
    let high = in_range(high, &RAW, "the spread's high end", &|| at(high_field))?;
    if low > raw || raw > high {
        bail!(
            "{}: the spread {} to {} does not hold the median {} ({})",
            at(low_field),
            ranges::short(low),
            ranges::short(high),
            ranges::short(raw),
            high_field
        );
    }
    Ok((low, high))
}

/// A cluster level's instances as the file gives them: names made printable, every figure
/// finite and not negative, shares within 0..=1.
fn checked_instances(
    instances: &[crate::result::InstanceFigures],
    at: &dyn Fn() -> String,
) -> Result<Vec<crate::result::InstanceFigures>> {
    instances
        .iter()
        .map(|instance| {
            let latency = instance.latency.map(|p| p.p99_ms);
            let figures = [
                Some(instance.statements),
                Some(instance.statements_per_s),
                instance.db_lio,
                instance.db_pio,
                instance.db_lio_per_s,
                instance.db_cpu_s,
                latency,
            ];
            let shares = [instance.share_of_sessions, instance.share_of_work];
            if figures.iter().flatten().any(|value| !value.is_finite() || *value < 0.0)
                || shares.iter().any(|share| !(0.0..=1.0).contains(share))
            {
                anyhow::bail!(
                    "{}: instance '{}' has a figure that is not finite, negative, or a share outside 0..1",
                    at(),
                    printable(&instance.instance)
                );
            }
            Ok(crate::result::InstanceFigures {
                instance: printable(&instance.instance),
                failed: instance.failed.as_deref().map(printable),
                // -0.0 and 0.0 are one share.
                share_of_work: instance.share_of_work + 0.0,
                share_of_sessions: instance.share_of_sessions + 0.0,
                ..instance.clone()
            })
        })
        .collect()
}

/// A level's classes of responses as the file gives them: each histogram decodes (a
/// campaign adds them up, `--slo` on a class reads them), each name quoted as input is.
fn checked_classes(
    classes: &[crate::latency::ClassTimes],
    at: &dyn Fn() -> String,
) -> Result<Vec<crate::latency::ClassTimes>> {
    classes
        .iter()
        .enumerate()
        .map(|(index, class)| {
            crate::latency::ResponseTimes::decode(&class.histogram)
                .map_err(|problem| anyhow::anyhow!("{}[{index}].histogram: {problem}", at()))?;
            Ok(crate::latency::ClassTimes {
                class: quote(&class.class),
                measured_from: class.measured_from,
                histogram: class.histogram.clone(),
            })
        })
        .collect()
}

/// A level's timeline as the file gives it, each figure checked: finite, not negative, in
/// order of time, percentiles in order.
pub(super) fn checked_intervals(
    intervals: &[crate::latency::IntervalFigures],
    at: &dyn Fn() -> String,
) -> Result<Vec<crate::latency::IntervalFigures>> {
    const A_DAY: f64 = 86_400.0;
    let mut last_start = f64::NEG_INFINITY;
    for (index, interval) in intervals.iter().enumerate() {
        let times_ok = (0.0..=7.0 * A_DAY).contains(&interval.start_s)
            && (0.0..=7.0 * A_DAY).contains(&interval.length_s)
            && interval.start_s >= last_start;
        let rate_ok = (0.0..=*RAW.end()).contains(&interval.rate_per_s)
            && [interval.server_lio_per_s, interval.server_pio_per_s]
                .iter()
                .flatten()
                .all(|rate| (0.0..=*RAW.end()).contains(rate));
        let percentiles_ok = [interval.p50_ms, interval.p99_ms]
            .iter()
            .flatten()
            .all(|value| (0.0..=A_DAY * 1e3).contains(value))
            && interval
                .p50_ms
                .zip(interval.p99_ms)
                .is_none_or(|(p50, p99)| p50 <= p99);
        if !(times_ok && rate_ok && percentiles_ok) {
            bail!(
                "{}[{index}]: not an interval of the level's window (start_s and length_s from 0 to a week and in order, rate_per_s and the server's rates 0 or more, p50_ms <= p99_ms from 0 to a day)",
                at()
            );
        }
        last_start = interval.start_s;
    }
    Ok(intervals.to_vec())
}

/// What the run document says about where and how it ran; every text shown escaped of
/// control characters, and the command line's passwords hidden again (the file may come
/// from anywhere).
pub(super) fn provenance(document: &RunDocument, job: &Job) -> Provenance {
    let topology = &document.host.topology;
    let judged: Vec<&Level> = document
        .levels
        .iter()
        .filter(|level| level.interference.is_some() || level.summary.together.is_some())
        .collect();
    let disturbed = judged.iter().filter(|level| level.is_disturbed()).count();
    Provenance {
        label: Some(printable(&document.host.label)),
        tags: document
            .tags
            .iter()
            .map(|(key, value)| (printable(key), printable(value)))
            .collect(),
        hostname: Some(printable(&document.host.hostname)),
        cpu_model: topology.model_name.as_deref().map(printable),
        sockets: Some(topology.sockets),
        memory_bytes: document
            .host
            .memory
            .as_ref()
            .map(|memory| memory.total_bytes),
        kernel: document.host.kernel.as_deref().map(printable),
        hypervisor: Some(
            topology
                .hypervisor
                .as_deref()
                .map_or_else(|| "bare metal".to_string(), printable),
        ),
        started_at: Some(
            document
                .started_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
        version: Some(format!(
            "{} {}",
            printable(&document.tool.name),
            printable(&document.tool.version)
        )),
        cpu_limit: document
            .host
            .cpu_limit
            .as_ref()
            .filter(|limit| limit.limits(topology.logical_cpus))
            .map(|limit| printable(&limit.describe())),
        workload: Some(job.describe()),
        connection: document
            .levels
            .iter()
            .rev()
            .find_map(Level::connection_summary)
            .map(|text| printable(&text)),
        pinning: Some(format!("{:?}", document.settings.pin).to_lowercase()),
        verdict: Some(match (judged.len(), disturbed) {
            (0, _) => "not judged".to_string(),
            (_, 0) => "clean".to_string(),
            (count, disturbed) => format!("disturbed at {disturbed} of {count} levels"),
        }),
        command_line: Some(
            document
                .command_line
                .iter()
                .map(|argument| printable(&redact_argument(argument)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

/// The most parts (client hosts) a campaign may have.
const MOST_PARTS: usize = 10_000;

/// A closed-loop db level times every statement it counts: its responses and its
/// `statements` figure are one number, written twice. Parts whose two disagree were changed.
fn statements_agree(
    latency: &crate::latency::Latency,
    figures: &std::collections::BTreeMap<String, f64>,
) -> std::result::Result<(), String> {
    let Some(statements) = figures.get("statements") else {
        return Ok(());
    };
    if latency.unit != "statement" || latency.rate.is_some() || latency.response.count == 0 {
        return Ok(());
    }
    if latency.response.count as f64 != *statements {
        return Err(format!(
            "count says {} responses and workload_figures.statements {statements}: a level times every statement it counts",
            latency.response.count
        ));
    }
    Ok(())
}
