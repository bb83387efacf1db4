//! Each reader on every spelling its tool's versions print: fixtures in
//! tests/fixtures/import (their sources in SOURCES.md there), each with the figures its
//! lines give.

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/import")
            .join(name),
    )
    .unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// The series a fixture is read into, as `report` reads it (levels may stay unknown).
fn read(name: &str) -> Vec<Series> {
    parse_input(&InputFile::new(Path::new(name), None), &fixture(name))
        .unwrap_or_else(|error| panic!("{name}: {error:#}"))
}

fn levels(series: &Series) -> Vec<(usize, f64)> {
    series
        .points
        .iter()
        .map(|point| (point.workers, point.raw))
        .collect()
}

#[test]
fn a_pgbench_sweep_in_one_file_is_every_level_and_a_repeat() {
    let series = read("pgbench-15-sweep.txt");
    assert_eq!(series.len(), 1, "one job: {series:?}");
    let sweep = &series[0];
    // Runs at 1, 2, 4 clients and a second run at 2: its repeat, the two averaged.
    let two = (1012.750188 + 1101.743933) / 2.0;
    assert_eq!(sweep.points.len(), 3);
    assert_eq!(sweep.points[0].workers, 1);
    assert!((sweep.points[0].raw - 571.565247).abs() < 1e-6);
    assert!(
        (sweep.points[1].raw - two).abs() < 1e-6,
        "{:?}",
        levels(sweep)
    );
    assert_eq!(sweep.points[1].spread, Some((1012.750188, 1101.743933)));
    assert_eq!(sweep.points[1].figures["repeats"], 2.0);
    assert_eq!(sweep.points[2].workers, 4);
    // Each run's own progress lines, not the next run's.
    assert_eq!(sweep.points[0].intervals.len(), 3);
    assert_eq!(sweep.points[2].intervals.len(), 3);
}

#[test]
fn two_pgbench_jobs_in_one_file_are_two_series_never_paired() {
    let series = read("pgbench-15-two-jobs.txt");
    assert_eq!(series.len(), 2, "{series:?}");
    let names: Vec<&str> = series.iter().map(|one| one.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "pgbench-15-two-jobs (TPC-B (sort of))",
            "pgbench-15-two-jobs (select only)"
        ]
    );
    assert!((series[0].points[0].raw - 1074.083364).abs() < 1e-6);
    assert!((series[1].points[0].raw - 15245.969646).abs() < 1e-6);
}

#[test]
fn a_throttled_pgbench_run_ran_to_a_schedule() {
    let series = read("pgbench-15-throttled.txt");
    let point = &series[0].points[0];
    let why = point.scheduled.as_deref().expect("-R is a schedule");
    assert!(why.contains("rate limit (-R"), "{why}");
    // The line that says so: its summary's schedule lag.
    assert!(why.ends_with("line 18)"), "{why}");
    assert_eq!(point.figures["schedule_lag_average_ms"], 0.242);
    assert_eq!(point.figures["latency_limit_ms"], 50.0);
    assert_eq!(point.figures["late_transactions"], 0.0);
    assert_eq!(point.figures["skipped_transactions"], 0.0);
    // Never capacity: left out of the analysis whatever --include-disturbed says.
    let mut one = series[0].clone();
    assert!(!one.leave_out_scheduled());
    assert_eq!(one.left_out.len(), 1);
}

#[test]
fn pgbench_9_5_spells_latency_with_a_colon_and_statements_with_tabs() {
    let series = read("pgbench-9.5-r.txt");
    let point = &series[0].points[0];
    assert_eq!((point.workers, point.raw), (8, 872.533690));
    assert_eq!(point.figures["latency_average_ms"], 9.170);
    assert_eq!(point.figures["latency_stddev_ms"], 6.822);
    assert_eq!(
        point.figures["statement 11 ms: UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;"],
        3.276054
    );
    assert_eq!(series[0].job.workload.as_deref(), Some("TPC-B (sort of)"));
}

#[test]
fn pgbench_10_script_statistics_and_18_scripts_are_one_run() {
    let ten = read("pgbench-10-script-statistics.txt");
    assert_eq!(levels(&ten[0]), [(4, 42067.806745)]);
    assert_eq!(
        ten[0].points[0].figures["statement 02 ms: SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"],
        0.093
    );
    let eighteen = read("pgbench-18-scripts.txt");
    assert_eq!(eighteen.len(), 1);
    assert_eq!(levels(&eighteen[0]), [(4, 4129.532417)]);
    assert_eq!(eighteen[0].points[0].figures["latency_average_ms"], 0.967);
    assert_eq!(eighteen[0].provenance.version.as_deref(), Some("18.3"));
}

#[test]
fn pgbench_progress_lines_alone_are_a_level_of_intervals() {
    // --progress-timestamp: times since the epoch, the first interval as long as the next.
    let name = "pgbench-progress-timestamp.txt";
    let file = InputFile::new(Path::new(name), Some(2));
    let series = parse_input(&file, &fixture(name)).unwrap();
    let point = &series[0].points[0];
    assert_eq!(point.workers, 2);
    assert_eq!(point.intervals.len(), 3);
    assert_eq!(point.intervals[0].length_s, 1.0);
    assert!((point.intervals[2].start_s - 2.0).abs() < 1e-6);
    assert!((point.raw - (1385.8 + 1462.0 + 1144.0) / 3.0).abs() < 1e-6);
    // Without a level, the fix is named.
    let error = parse_all(Path::new(name), &fixture(name)).unwrap_err();
    assert!(format!("{error:#}").contains("--level"), "{error:#}");
}

#[test]
fn several_sysbench_tests_in_one_file_are_split_by_test() {
    let series = read("sysbench-1.0.20-oltp-cpu.txt");
    assert_eq!(series.len(), 2, "{series:?}");
    let (oltp, cpu) = (&series[0], &series[1]);
    assert!(
        oltp.job
            .workload
            .as_deref()
            .unwrap()
            .starts_with("oltp_point_select"),
        "{:?}",
        oltp.job
    );
    assert_eq!(levels(oltp), [(1, 5773.39), (2, 26785.84)]);
    // Each run's own latency: the point select's 95th percentile, never the cpu test's.
    assert_eq!(oltp.points[0].figures["latency_p95_ms"], 0.23);
    assert_eq!(oltp.points[0].intervals.len(), 2);
    assert_eq!(levels(cpu), [(2, 6650.37)]);
    assert!(
        cpu.name.ends_with("(cpu, primes up to 10000)"),
        "{}",
        cpu.name
    );

    let series = read("sysbench-1.0.20-cpu-memory.txt");
    assert_eq!(series.len(), 2);
    assert_eq!(levels(&series[0]), [(1, 3488.74), (2, 6724.26)]);
    assert_eq!(series[1].job.workload.as_deref(), Some("memory"));
    assert_eq!(levels(&series[1]), [(1, 5580629.45)]);
    assert_eq!(series[1].points[0].figures["mib_per_s"], 5449.83);
}

#[test]
fn sysbench_1_1_throughput_is_read_and_0_5_refused_by_name() {
    let series = read("sysbench-1.1-cpu.txt");
    assert_eq!(levels(&series[0]), [(4, 4850.2712)]);
    assert_eq!(
        series[0].provenance.version.as_deref(),
        Some("1.1.0-3ceba0b")
    );
    let name = "sysbench-0.5-oltp.txt";
    let error = parse_all(Path::new(name), &fixture(name)).unwrap_err();
    let error = format!("{error:#}");
    assert!(
        error.contains("sysbench 0.5's report is not read") && error.contains("1.0 or later"),
        "{error}"
    );
}

#[test]
fn hammerdb_3_results_and_etprof_profiles_are_read() {
    let series = read("hammerdb-3.3-etprof.log");
    let level = &series[0].points[0];
    assert_eq!((level.workers, level.raw), (2, 40322.0));
    assert_eq!(level.figures["tpm"], 93421.0);
    assert_eq!(series[0].job.workload.as_deref(), Some("TPROC-C on Oracle"));
    // Both virtual users' profiles summed: calls, and the share of their exclusive time.
    assert_eq!(level.figures["NEWORD calls"], 40512.0 + 40210.0);
    let neword = 61483211.0 + 60392120.0;
    let total = neword
        + 40312877.0
        + 40012333.0
        + 19922107.0
        + 19801211.0
        + 8311042.0
        + 8102004.0
        + 3490111.0
        + 3362133.0;
    assert!((level.figures["NEWORD time share %"] - 100.0 * neword / total).abs() < 1e-9);
}

#[test]
fn appended_hammerdb_logs_are_a_sweep() {
    let series = read("hammerdb-two-logs.log");
    assert_eq!(series.len(), 1);
    assert_eq!(levels(&series[0]), [(4, 48213.0), (8, 61022.0)]);
}

#[test]
fn a_hammerdb_counter_log_is_a_level_of_samples() {
    let name = "hdbtcount.log";
    let series = parse_input(&InputFile::new(Path::new(name), Some(4)), &fixture(name)).unwrap();
    let level = &series[0].points[0];
    assert_eq!(level.workers, 4);
    // The rampup's zeros left out: the mean of the four samples after them.
    assert_eq!(level.raw, (98412.0 + 109842.0 + 111204.0 + 110546.0) / 4.0);
    assert_eq!(series[0].capacity_unit(), "tpm");
    assert_eq!(level.intervals.len(), 5);
    assert_eq!(level.intervals[1].length_s, 10.0);
    assert!((level.intervals[4].rate_per_s - 110546.0 / 60.0).abs() < 1e-9);
}

#[test]
fn awr_html_gives_what_its_text_gives() {
    let series = read("awr-11.2.0.4.html");
    let figures = &series[0].points[0].figures;
    for (name, value) in [
        ("lio_per_s", 528424.6),
        ("physical_reads_per_s", 645.7),
        ("read_io_requests_per_s", 431.2),
        ("executes_per_s", 1842.3),
        ("transactions_per_s", 1283.0),
        ("top event % DB time: DB CPU", 73.6),
        ("top event % DB time: log file sync", 9.4),
        ("top event % DB time: latch: cache buffers chains", 6.4),
    ] {
        assert_eq!(figures.get(name), Some(&value), "{name}: {figures:?}");
    }
    // The text report gives the same rows.
    let text = read("awr-11.2.txt");
    for name in [
        "physical_reads_per_s",
        "executes_per_s",
        "transactions_per_s",
        "top event % DB time: log file sync",
    ] {
        assert!(text[0].points[0].figures.contains_key(name), "{name}");
    }
}

#[test]
fn awr_html_re_saved_with_a_cell_a_line_and_upper_case_tags_reads_the_same() {
    let html = String::from_utf8(fixture("awr-11.2.0.4.html")).unwrap();
    // As an HTML editor re-saves it: every cell and row on a line of its own, tags in
    // upper case.
    let mut resaved = html.clone();
    for (tag, upper) in [
        ("<td", "\n<TD"),
        ("</td>", "\n</TD>\n"),
        ("<th", "\n<TH"),
        ("</th>", "</TH>\n"),
        ("<tr>", "<TR>\n"),
        ("</tr>", "</TR>\n"),
        ("<table", "<TABLE"),
        ("</table>", "</TABLE>"),
    ] {
        resaved = resaved.replace(tag, upper);
    }
    assert!(resaved.lines().count() > 3 * html.lines().count());
    let read = |text: &str| {
        let file = InputFile::new(Path::new("awr-11.2.0.4.html"), Some(4));
        parse_input(&file, text.as_bytes())
            .unwrap()
            .remove(0)
            .points
            .remove(0)
    };
    let (as_written, as_resaved) = (read(&html), read(&resaved));
    assert_eq!(as_resaved.raw, 528424.6);
    assert_eq!(as_resaved.figures, as_written.figures);
}

#[test]
fn a_load_profile_alone_is_read_with_its_level() {
    for (name, lio) in [
        ("awr-load-profile-12c.txt", 6323758.9),
        ("statspack-load-profile-10g.txt", 19994.77),
    ] {
        let file = InputFile::new(Path::new(name), Some(16));
        let series = parse_input(&file, &fixture(name)).unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(levels(&series[0]), [(16, lio)], "{name}");
        let error = parse_all(Path::new(name), &fixture(name)).unwrap_err();
        assert!(format!("{error:#}").contains("--level"), "{error:#}");
    }
    let name = "awr-idle.txt";
    let file = InputFile::new(Path::new(name), Some(16));
    let error = format!("{:#}", parse_input(&file, &fixture(name)).unwrap_err());
    assert!(
        error.contains("0 logical reads per second") && error.contains("idle"),
        "{error}"
    );
}

#[test]
fn an_xtprof_profile_without_tabs_reads_as_with_them() {
    let tabs = String::from_utf8(fixture("hdbxtprofile.log")).unwrap();
    let spaces = tabs.replace('\t', "  ");
    let read = |text: &str| {
        parse_input(
            &InputFile::new(Path::new("hdbxtprofile.log"), None),
            text.as_bytes(),
        )
        .unwrap()
    };
    let (with, without) = (read(&tabs), read(&spaces));
    assert_eq!(levels(&with[0]), levels(&without[0]));
    assert_eq!(with[0].points[0].figures, without[0].points[0].figures);
    assert!(with[0].points[0].figures["NEWORD calls"] > 0.0);
}

/// A folder of one pgbench run (its output and `--log`), read and joined as `report` does.
fn read_run(folder: &str) -> Vec<Series> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let files = result_files(&[root.join(folder)]).expect("the fixture folder");
    let mut series = Vec::new();
    for path in &files {
        let read = read_input(&InputFile::new(path, None))
            .unwrap_or_else(|error| panic!("{}: {error:#}", path.display()));
        series.extend(read);
    }
    pgbench_logs_joined(series)
}

fn open_loop(series: &Series) -> (&crate::latency::Latency, &crate::latency::RateFigures) {
    assert!(series.points.is_empty(), "no capacity level: {series:?}");
    assert_eq!(series.paced.len(), 1, "{series:?}");
    let latency = series.paced[0].latency.as_deref().expect("its log's times");
    (latency, latency.rate.as_ref().expect("an open loop"))
}

#[test]
fn a_rate_limited_pgbench_run_with_its_log_is_an_open_loop_level() {
    // `-c 1 -T 4 -R 100`: 381 transactions, "latency average = 6.404 ms", "rate limit
    // schedule lag: avg 2.088 (max 30.987) ms", tps 95.42.
    let series = read_run("pgbench-15-rate/sustained");
    assert_eq!(series.len(), 1, "the log joined its summary: {series:?}");
    let (latency, rate) = open_loop(&series[0]);
    assert_eq!(latency.measured_from, crate::latency::MeasuredFrom::Due);
    assert_eq!(series[0].paced[0].scheduled, None);
    // The rate asked, estimated from 381 Poisson arrivals: 100/s within three of its
    // standard errors (5%).
    assert!((rate.target_per_s - 100.0).abs() < 15.0, "{rate:?}");
    assert!(rate.sustained, "{rate:?}");
    assert_eq!(rate.sent, 381);
    assert!((rate.achieved_per_s - 95.42).abs() < 2.0, "{rate:?}");
    // The log's own times give what the summary averages.
    assert!(
        (latency.response.mean_ms - 6.404).abs() < 0.07,
        "{latency:?}"
    );
    let lag = latency
        .schedule_lag
        .as_ref()
        .expect("the lag's percentiles");
    assert!((lag.mean_ms - 2.088).abs() < 0.03, "{lag:?}");
    assert!((lag.max_ms - 30.987).abs() < 0.1, "{lag:?}");
    let service = latency.service.as_ref().expect("the service times");
    assert!(
        (service.mean_ms - (6.404 - 2.088)).abs() < 0.07,
        "{service:?}"
    );
    let notes = series[0].notes.join("\n");
    assert!(notes.contains("open-loop level"), "{notes}");
    assert!(!notes.contains(super::pgbench::NO_PERCENTILES), "{notes}");
}

#[test]
fn a_pgbench_run_behind_its_rate_limit_did_not_keep_it() {
    // `-c 2 -T 2 -R 20000` on a host that ran 485 tps: 966 transactions, lag up to 1.9 s.
    let series = read_run("pgbench-15-rate/behind");
    let (_, rate) = open_loop(&series[0]);
    assert_eq!(series[0].paced[0].workers, 2);
    assert!((rate.target_per_s - 20_000.0).abs() < 2_000.0, "{rate:?}");
    assert!(!rate.sustained, "{rate:?}");
    assert!((rate.achieved_per_s - 484.8).abs() < 25.0, "{rate:?}");
    assert!(rate.due > 10 * rate.sent, "{rate:?}");
}

#[test]
fn retries_in_the_7th_field_are_not_a_schedule() {
    // `--max-tries 3` without -R: the 7th field is the retries, the run a closed loop.
    let series = read_run("pgbench-15-rate/max-tries");
    assert_eq!(series.len(), 1, "{series:?}");
    assert!(series[0].paced.is_empty());
    let latency = series[0].points[0]
        .latency
        .as_deref()
        .expect("the log's times");
    assert_eq!(latency.measured_from, crate::latency::MeasuredFrom::Send);
    assert_eq!(latency.rate, None);
    // Its log alone cannot tell: read as a closed loop, and said so.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let log = root.join("pgbench-15-rate/max-tries/pgbench_log.17015");
    let alone = pgbench_logs_joined(read_input(&InputFile::new(&log, Some(1))).unwrap());
    assert!(alone[0].paced.is_empty() && alone[0].points[0].open_reading.is_none());
    assert!(alone[0].notes.join("\n").contains("7th field"), "{alone:?}");
}

#[test]
fn a_log_with_lag_and_retries_is_an_open_loop_alone() {
    // `-R 100 --max-tries 3`: 8 fields, the 7th the lag for certain.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let log = root.join("pgbench-15-rate/max-tries-rate/pgbench_log.16921");
    let alone = pgbench_logs_joined(read_input(&InputFile::new(&log, None)).unwrap());
    let (_, rate) = open_loop(&alone[0]);
    assert!((rate.target_per_s - 100.0).abs() < 25.0, "{rate:?}");
    let joined = read_run("pgbench-15-rate/max-tries-rate");
    let (_, rate) = open_loop(&joined[0]);
    assert!(rate.sustained, "{rate:?}");
}

/// A level's lines (one per interval) are added together; lines of one level apart, as
/// corescale never writes them, and a tag no comment names are refused, each before the
/// next histogram is read (a hostile log cannot make the reader hold one per tag).
#[test]
fn an_hlogs_interval_lines_add_up_to_their_level() {
    let mut times = crate::latency::ResponseTimes::coarse();
    for micros in [100, 200, 300, 400] {
        times.record(std::time::Duration::from_micros(micros));
    }
    let histogram = times.encode();
    let log = |tags: &[&str]| {
        let mut text = "#corescale 0.1.0: each level's response times in nanoseconds, tagged level-N\n#level-1: 2 workers\n#level-2: 4 workers\n#[StartTime: 1795935262.299 (seconds since epoch)]\n".to_string();
        for (index, tag) in tags.iter().enumerate() {
            text.push_str(&format!("Tag={tag},{index}.000,1.000,0.400,{histogram}\n"));
        }
        text
    };
    let read = |text: String| {
        parse_input(
            &InputFile::new(Path::new("run.hlog"), None),
            text.as_bytes(),
        )
    };
    let series = &read(log(&["level-1", "level-1", "level-1", "level-2"])).unwrap()[0];
    let counts: Vec<(usize, u64, f64)> = series
        .points
        .iter()
        .map(|point| {
            (
                point.workers,
                point.latency.as_ref().unwrap().response.count,
                point.raw,
            )
        })
        .collect();
    // Level 1: three lines of 4 responses over three seconds; level 2: one.
    assert_eq!(counts, [(2, 12, 4.0), (4, 4, 4.0)]);
    let apart = read(log(&["level-1", "level-2", "level-1"]))
        .unwrap_err()
        .to_string();
    assert!(
        apart.contains("level-1's lines are not together"),
        "{apart}"
    );
    let unnamed = read(log(&["level-1", "level-7"])).unwrap_err().to_string();
    assert!(
        unnamed.contains("level-7 has no '#level-7: W workers' comment"),
        "{unnamed}"
    );
}

#[test]
fn only_corescales_own_hdrhistogram_log_is_read() {
    // Another tool's log (YCSB writes the same header) does not state its values' unit.
    let foreign = "#[StartTime: 1795935262.299 (seconds since epoch)]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n0.113,6.005,29.147,HISTFAAAAA==\n";
    let error = parse_input(
        &InputFile::new(Path::new("ycsb.hlog"), None),
        foreign.as_bytes(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("not written by corescale"), "{error}");
    // corescale's, with an interval whose histogram is not one: refused at its level.
    let broken = "#corescale 0.1.0: each level's response times in nanoseconds, tagged level-N\n#level-1: 2 workers\n#[StartTime: 1795935262.299 (seconds since epoch)]\nTag=level-1,0.113,6.005,29.147,HISTFAAAAA==\n";
    let error = parse_input(
        &InputFile::new(Path::new("run.hlog"), None),
        broken.as_bytes(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("level-1"), "{error}");
    // A level at a rate whose sent and due counts are not in the log cannot be read as the
    // run measured it.
    let bare = broken.replace("#level-1: 2 workers", "#level-1: 2 workers at 100/s");
    let error = parse_input(
        &InputFile::new(Path::new("run.hlog"), None),
        bare.as_bytes(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("not the run's own"), "{error}");
}

#[test]
fn a_runs_hlog_at_set_rates_reads_back_as_open_loop_levels() {
    // `--sweep 1 --rate 20,40,...,200`: ten levels of one worker (the log's header after its
    // tenth line), each at its rate. The run's JSON gave level 1 33 responses, 32 sent of 33
    // due, p99 1.709055 ms, and level 10 303 responses, p99 1.656831 ms.
    let series = read("corescale-rate.hlog");
    let paced = &series[0].paced;
    assert_eq!(paced.len(), 10, "{series:?}");
    for (index, level) in paced.iter().enumerate() {
        let rate = level.latency.as_deref().unwrap().rate.as_ref().unwrap();
        assert_eq!(
            (level.workers, rate.target_per_s),
            (1, 20.0 * (index + 1) as f64)
        );
        assert!(rate.sustained, "{rate:?}");
    }
    let first = paced[0].latency.as_deref().unwrap();
    let rate = first.rate.as_ref().unwrap();
    // The histogram holds the request due but never sent; the sent count is the run's own.
    assert_eq!((first.response.count, rate.sent, rate.due), (33, 32, 33));
    assert!((first.response.p99_ms - 1.709055).abs() < 1e-6, "{first:?}");
    let last = paced[9].latency.as_deref().unwrap();
    assert_eq!(last.response.count, 303);
    assert!((last.response.p99_ms - 1.656831).abs() < 1e-6, "{last:?}");
}

#[test]
fn a_sysbench_rate_of_zero_is_no_capacity() {
    // Found by the hostile-number property test: "(0 per sec.)" gave a level of capacity 0.
    let text = String::from_utf8(fixture("sysbench-1.0.20-oltp-histogram.txt")).unwrap();
    let (before, after) = text.split_once("transactions:").unwrap();
    let (_, rest) = after.split_once('(').unwrap();
    let (_, rest) = rest.split_once(')').unwrap();
    let zero = format!("{before}transactions:                        4981   (0 per sec.){rest}");
    let error = parse_input(
        &InputFile::new(Path::new("zero.txt"), None),
        zero.as_bytes(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("transactions"), "{error}");
}

#[test]
fn pgbench_with_reconnections_reads_its_tps_with_a_note_saying_so() {
    let series = read("pgbench-15-C.txt");
    assert_eq!(levels(&series[0]), [(2, 114.302542)]);
    assert!(
        series[0]
            .notes
            .iter()
            .any(|note| note.contains("line 14: pgbench ran with -C")),
        "{:?}",
        series[0].notes
    );
}

#[test]
fn a_run_pasted_indented_in_markdown_notes_is_a_repeat_of_its_level() {
    let series = read("pgbench-15-pasted-notes.md");
    assert_eq!(series.len(), 1, "{series:?}");
    let point = &series[0].points[0];
    assert_eq!(series[0].points.len(), 1);
    assert_eq!(point.workers, 8);
    // Both runs read: their mean, their range the spread.
    assert!((point.raw - (14159.817499 + 13859.460299) / 2.0).abs() < 1e-6);
    assert_eq!(point.spread, Some((13859.460299, 14159.817499)));
    assert!(
        series[0]
            .notes
            .iter()
            .any(|note| note.contains("lines 24-37: indented")),
        "{:?}",
        series[0].notes
    );
}

#[test]
fn sysbench_with_a_prompt_and_warnings_above_its_banner_is_read() {
    let series = read("sysbench-1.0.20-prompt-warning.txt");
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].points.len(), 1);
    assert_eq!(series[0].points[0].workers, 2);
    assert!((series[0].points[0].raw - 2127.66).abs() < 1e-9);
}

#[test]
fn indented_blocks_that_are_no_run_are_left_as_they_are() {
    // pgbench -r's statement lines and sysbench's statistics are indented, and no run.
    for name in ["pgbench-15-r.txt", "sysbench-1.0.20-cpu.txt"] {
        let text = String::from_utf8(fixture(name)).unwrap();
        assert!(indented_runs(&text).is_none(), "{name}");
    }
}

#[test]
fn hammerdb_result_past_the_first_64_kib_is_found() {
    let bytes = fixture("hammerdb-4.7-100-vusers.log");
    let at = String::from_utf8_lossy(&bytes).find("TEST RESULT").unwrap();
    assert!(at > HEAD_BYTES && bytes.len() < 2 * HEAD_BYTES);
    let series = read("hammerdb-4.7-100-vusers.log");
    assert_eq!(levels(&series[0]), [(100, 412087.0)]);
}

#[test]
fn a_folder_finds_hammerdb_result_past_the_first_64_kib() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/hammerdb-4.7-100-vusers.log");
    let found = folder::other_tools_output(&path).expect("claimed");
    assert_eq!(found.tool, hammerdb::TOOL);
}

#[test]
fn a_rac_wide_awr_reports_active_sessions_far_from_its_load() {
    let name = "awr_rac-11.2.txt";
    let read_at = |level: usize| {
        parse_input(
            &InputFile::new(Path::new(name), Some(level)),
            &fixture(name),
        )
        .unwrap_or_else(|error| panic!("{name}: {error:#}"))
    };
    // 7.96 + 8.02 + 7.93 = 23.91 average active sessions over the cluster.
    let far = read_at(48);
    assert!(
        far[0].notes.iter().any(|note| note.contains(
            "23.9 average active sessions (DB time per second) at a load of 48 sessions"
        )),
        "{:?}",
        far[0].notes
    );
    let near = read_at(24);
    assert!(
        !near[0]
            .notes
            .iter()
            .any(|note| note.contains("average active sessions")),
        "{:?}",
        near[0].notes
    );
}
