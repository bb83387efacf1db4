//! `run tpcc` on the real PostgreSQL and MariaDB: NOPM from the districts equal to the
//! New-Orders the sessions committed, the mix as near its shares as its deck allows, TPM from the
//! server's counters, the consistency conditions true after a run and after a run killed
//! at a random moment, and a teardown that leaves nothing. Each test works in a database of
//! its own, dropped when it ends.

use std::time::Duration;

use crate::common;

use common::scratch::{MyScratch, PgScratch, scratch_name};
use common::{corescale, hold_server, required as server};

const KINDS: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// What a test reads of its own database: a count, and whether the server's transaction
/// counters are the whole server's (MySQL/MariaDB) rather than this database's.
struct Database<'a> {
    url: &'a str,
    count: &'a dyn Fn(&str) -> i64,
    server_wide: bool,
    /// The server's default isolation, which the run records.
    isolation: &'a str,
}

/// Sets up two warehouses, runs three levels of `run tpcc` (the last with two terminals a
/// warehouse), checks their figures, kills a fourth run at a random moment, and checks the
/// tables after each and the teardown.
fn runs_and_stays_consistent(database: &Database) {
    let url = database.url;
    corescale()
        .args(["db", "setup", "tpcc", "--warehouses", "2"])
        .args(["--target", url])
        .assert()
        .success();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("tpcc.json");
    let output = corescale()
        .args(["run", "tpcc", "--target", url, "--sweep", "1,2,4"])
        .args(["--duration", "3s", "--mix", "40,40,8,6,6", "-o"])
        .arg(&json)
        .arg("-o")
        .arg(dir.path().join("tpcc.csv"))
        .assert()
        .success();
    let said = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(
        said.contains("consistency conditions 1, 2, 3, 4 of clause 3.3.2 after the run"),
        "{said}"
    );
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    summed_up_as_hammerdb_and_pgbench(
        &String::from_utf8_lossy(&output.get_output().stdout),
        &document,
    );
    csv_says_nopm_is_not_audited(&dir.path().join("tpcc.csv"));
    consistent_after_run(&document);
    let description = document["workload"]["description"].as_str().unwrap();
    assert!(description.contains("not an audited TPC-C result"));
    assert!(
        description.contains(&format!("at {} (the sessions' default", database.isolation)),
        "{description}"
    );
    let levels = document["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 3);
    for level in levels {
        check_level(level, [40.0, 40.0, 8.0, 6.0, 6.0], database.server_wide);
    }
    // A hundredth of the New-Orders is rolled back by its unused item: over 1,000 orders or
    // more, some are (none in 1,000 is a chance of 4e-5); a host too slow for that many
    // leaves the check to the unit test of the draw.
    let sum = |figure: &str| -> f64 {
        levels
            .iter()
            .map(|level| level["workload_figures"][figure].as_f64().unwrap())
            .sum()
    };
    let new_orders = sum("new_order transactions");
    if new_orders >= 1_000.0 {
        assert!(
            sum("rollbacks") > 0.0,
            "none of {new_orders} New-Orders rolled back"
        );
    }
    report_is_on_the_nopm_axis(&json, dir.path());
    campaign_parts_count_their_own_orders(url, dir.path());
    searched_on_new_orders(url, dir.path());
    killed_run_leaves_consistent_tables(database);
    let torn = corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success();
    let torn = String::from_utf8_lossy(&torn.get_output().stdout).into_owned();
    assert!(torn.contains("corescale_tpcc_order_line"), "{torn}");
}

/// How far a type's share of a level may stray from the mix, in percent: 4.5 standard
/// deviations of the deck's draw. Each session deals a freshly shuffled deck of 100 cards
/// when the level starts (these runs have no warm-up, which could end mid-deck), and its full
/// decks hold the mix exactly: only its last deck, dealt in part, strays. Drawing k of 100
/// cards, the count of a type of share p varies by k·p(1-p)·(100-k)/99, at most 25.25·p(1-p).
/// For a 40% share, four sessions' 3,000 transactions are held to 0.74%, their 690 to 3.2%.
fn mix_tolerance_percent(share_percent: f64, sessions: f64, transactions: f64) -> f64 {
    let p = share_percent / 100.0;
    let cards = (sessions * 25.25 * p * (1.0 - p)).sqrt();
    100.0 * 4.5 * cards / transactions
}

/// The CSV's last column says, on each row, that its NOPM is not an audited result, and
/// `report` still reads the file, on the NOPM axis.
fn csv_says_nopm_is_not_audited(csv: &std::path::Path) {
    let mut reader = csv::Reader::from_path(csv).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().next_back(),
        Some("nopm_note")
    );
    let mut rows = 0;
    for record in reader.records() {
        let record = record.unwrap();
        let note = record.iter().next_back().unwrap();
        assert!(note.contains("not an audited TPC-C result"), "{note}");
        rows += 1;
    }
    assert_eq!(rows, 3);
    // Both sessions of a level share this host with the server: keep disturbed levels.
    corescale()
        .args(["report", "--include-disturbed"])
        .arg(csv)
        .assert()
        .success()
        .stdout(predicates::str::contains("NOPM"));
}

/// The summary above the run's table: per level, its workers, NOPM and TPM as the
/// document records them, and the words that it is not an audited result.
fn summed_up_as_hammerdb_and_pgbench(table: &str, document: &serde_json::Value) {
    // The title is wrapped to the terminal's 80 columns.
    let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "as HammerDB and pgbench sum up (NOPM derived from TPC-C: not an audited TPC-C result"
        ),
        "{table}"
    );
    for level in document["levels"].as_array().unwrap() {
        let figures = &level["workload_figures"];
        let row = format!(
            "{} {:.0} {:.0} {:.0}",
            level["workers"],
            figures["nopm"].as_f64().unwrap(),
            figures["tpm"].as_f64().unwrap(),
            figures["transactions"].as_f64().unwrap()
        );
        assert!(
            table.lines().any(|line| line
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .starts_with(&row)),
            "no row '{row}' in {table}"
        );
    }
}

/// One level's figures: NOPM from the districts within one order of the sessions' own
/// count, each type's share as near the mix as its deck allows, TPM at least the transactions and,
/// where the counters are this database's, at most its tries and a few of corescale's own.
fn check_level(level: &serde_json::Value, mix: [f64; 5], server_wide: bool) {
    let figures = &level["workload_figures"];
    let figure = |name: &str| {
        figures[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} missing: {figures}"))
    };
    let elapsed_min = level["elapsed_s"].as_f64().unwrap() / 60.0;
    let (nopm, client_nopm) = (figure("nopm"), figure("client_nopm"));
    assert!(nopm > 0.0, "{figures}");
    assert!(
        ((nopm - client_nopm) * elapsed_min).abs() <= 1.0 + 1e-6,
        "NOPM {nopm} from the districts, {client_nopm} by the sessions"
    );
    let transactions = figure("transactions");
    assert!(transactions > 0.0 && figure("transactions_per_s") > 0.0);
    let workers = level["workers"].as_f64().unwrap();
    for (kind, share) in KINDS.iter().zip(mix) {
        let measured = figure(&format!("{kind} share_percent"));
        let within = mix_tolerance_percent(share, workers, transactions);
        assert!(
            (measured - share).abs() <= within,
            "{kind}: {measured}% for {share}% (within {within:.2}% of {transactions} transactions by {workers} sessions)"
        );
        assert!(figure(&format!("{kind} p90_ms")) > 0.0, "{kind}");
    }
    // The server's block reads per transaction: the level's over its transactions, and a
    // New-Order alone reads tens of blocks.
    let lio = figure("server_lio_per_transaction");
    assert!(
        (lio * transactions - figure("server_lio_per_s") * level["elapsed_s"].as_f64().unwrap())
            .abs()
            <= 1e-6 * lio * transactions + 1e-6,
        "{figures}"
    );
    assert!(lio >= 10.0, "{lio} blocks read per transaction");
    // The server counts at least the run's own commits and rollbacks (PostgreSQL counts
    // the monitor's reads too); the figure is a rate, times the minutes to a float's
    // precision.
    let counted = figure("tpm") * elapsed_min;
    assert!(
        counted >= transactions - 0.01,
        "TPM {} over {elapsed_min} min for {transactions} transactions",
        figure("tpm")
    );
    if !server_wide {
        // Each retry and failure rolled back once; corescale's own reads (the districts'
        // counters, the statistics flushes) and autovacuum's are a few more.
        let tries = transactions + figure("retries") + figure("failed_transactions");
        assert!(
            counted <= tries + 20.0,
            "TPM {} over {elapsed_min} min counts {counted} for {tries} tries",
            figure("tpm")
        );
    }
    // A hundredth of New-Orders is rolled back by its unused item.
    let new_orders = figure("new_order transactions");
    assert!(figure("rollbacks") <= new_orders * 0.05 + 5.0, "{figures}");
}

/// Two parts of a campaign run together on this host, each at home in its own warehouse:
/// each part's NOPM, from its own districts, is within one order of the New-Orders its
/// sessions committed (the other part's are not in it), and the merged level's NOPM is the
/// parts' sum. A campaign of more parts than warehouses is refused.
fn campaign_parts_count_their_own_orders(url: &str, dir: &std::path::Path) {
    let paths: Vec<std::path::PathBuf> = (1..=2)
        .map(|part| dir.join(format!("part{part}.json")))
        .collect();
    let part = |number: usize| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_corescale"));
        command
            .args(["run", "tpcc", "--target", url, "--sweep", "2"])
            .args(["--duration", "2s", "--repeat", "1", "-q"])
            .args(["--campaign", "tpcc-parts", "--part", &format!("{number}/2")])
            .arg("-o")
            .arg(&paths[number - 1]);
        command
    };
    let parts: Vec<std::process::Child> = (1..=2)
        .map(|number| part(number).spawn().unwrap())
        .collect();
    for child in parts {
        let ended = child.wait_with_output().unwrap();
        assert!(ended.status.success(), "{ended:?}");
    }
    let mut nopm = 0.0;
    for path in &paths {
        let document: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let level = &document["levels"][0];
        let figures = &level["workload_figures"];
        let (own, committed) = (
            figures["nopm"].as_f64().unwrap(),
            figures["client_nopm"].as_f64().unwrap(),
        );
        let elapsed_min = level["elapsed_s"].as_f64().unwrap() / 60.0;
        assert!(own > 0.0, "{figures}");
        assert!(
            ((own - committed) * elapsed_min).abs() <= 1.0 + 1e-6,
            "{}: NOPM {own} from its districts, {committed} by its sessions",
            path.display()
        );
        nopm += own;
    }
    let analysis = common::campaign::merged_analysis(&paths, dir);
    let merged = &analysis["series"][0]["series"]["points"][0];
    let raw = merged["raw"].as_f64().unwrap();
    assert!(
        (raw - nopm).abs() <= 1e-9 * nopm,
        "merged {raw}, parts {nopm}"
    );
    corescale()
        .args([
            "run",
            "tpcc",
            "--target",
            url,
            "--sweep",
            "3",
            "--duration",
            "1s",
        ])
        .args(["--campaign", "tpcc-parts", "--part", "1/3"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "a campaign of 3 parts needs at least 3 warehouses",
        ));
}

/// `report` on the run's own document, as two servers priced apart: each level's capacity is
/// its NOPM, its response times New-Order's, the price per NOPM the cost over the capacity,
/// and the output says NOPM is not an audited TPC-C result.
fn report_is_on_the_nopm_axis(json: &std::path::Path, dir: &std::path::Path) {
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let (old, new) = (dir.join("old.json"), dir.join("new.json"));
    std::fs::copy(json, &old).unwrap();
    std::fs::copy(json, &new).unwrap();
    let report = dir.join("report.json");
    let output = corescale()
        .arg("report")
        .args([&old, &new])
        .args(["--label", &format!("{}=old", old.display())])
        .args(["--label", &format!("{}=new", new.display())])
        // The suite's host is busy: its levels may be judged disturbed, and are still read.
        .args([
            "--cost",
            "old=1000",
            "--cost",
            "new=500",
            "--include-disturbed",
            "-o",
        ])
        .arg(&report)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&output.get_output().stdout).into_owned();
    assert!(said.contains("not an audited TPC-C result"), "{said}");
    assert!(said.contains("response time per New-Order"), "{said}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let series = &report["series"][0]["series"];
    assert_eq!(series["measure"]["unit"], "NOPM");
    for (point, level) in series["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(run["levels"].as_array().unwrap())
    {
        let nopm = level["workload_figures"]["nopm"].as_f64().unwrap();
        let raw = point["raw"].as_f64().unwrap();
        assert!((raw - nopm).abs() <= 1e-9 * nopm, "{raw} for NOPM {nopm}");
        assert_eq!(point["latency"]["unit"], "New-Order");
        assert_eq!(
            point["latency"]["count"].as_f64(),
            level["workload_figures"]["new_order transactions"].as_f64()
        );
    }
    // The run's CSV gives the same levels on the NOPM axis, as one job with its JSON.
    let from_csv = dir.join("from_csv.json");
    corescale()
        .arg("report")
        .arg(json.with_extension("csv"))
        .args(["--include-disturbed", "-o"])
        .arg(&from_csv)
        .assert()
        .success();
    let from_csv: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&from_csv).unwrap()).unwrap();
    let csv_series = &from_csv["series"][0]["series"];
    assert_eq!(csv_series["measure"]["unit"], "NOPM");
    assert_eq!(csv_series["job"]["shape"], series["job"]["shape"]);
    for (csv, json) in csv_series["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(series["points"].as_array().unwrap())
    {
        let (csv, json) = (csv["raw"].as_f64().unwrap(), json["raw"].as_f64().unwrap());
        assert!((csv - json).abs() <= 1e-6 * json, "CSV {csv}, JSON {json}");
    }
    objective_on_a_transaction_type(json, dir);
    let row = &report["comparisons"][0]["rows"][1];
    assert_eq!(row["name"], "new");
    let capacity = row["capacity_at_saturation"].as_f64().unwrap();
    let findings = report["findings"].to_string();
    // "Price per NOPM: old at most 0.0266 (1000 for at least 37.6 K NOPM); new ...": three
    // significant digits of the cost over the capacity.
    let stated = findings
        .split("Price per NOPM: ")
        .nth(1)
        .and_then(|prices| prices.split("; new ").nth(1))
        .and_then(|rest| rest.trim_start_matches("at most ").split(' ').next())
        .and_then(|price| price.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no price per NOPM for new: {findings}"));
    let price = 500.0 / capacity;
    assert!(
        (stated - price).abs() <= 0.005 * price,
        "{stated} for {price}: {findings}"
    );
}

/// `--slo` on one transaction type reads that type's responses: a limit of an hour on
/// Payment's median holds at every level (the verdict names the fastest), and a type the
/// run did not record is refused, naming the ones it did.
fn objective_on_a_transaction_type(json: &std::path::Path, dir: &std::path::Path) {
    let out = dir.join("payment.json");
    corescale()
        .arg("report")
        .arg(json)
        .args(["--include-disturbed", "--slo", "payment:p50<=1h", "-o"])
        .arg(&out)
        .assert()
        .success();
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(report["slo"]["objective"], "payment p50 <= 3600000 ms");
    let verdict = &report["slo"]["verdicts"][0];
    // Every level kept it: the verdict names the level of the largest throughput, which on a
    // busy host of 2 CPUs need not be the one of the most sessions.
    let largest = report["series"][0]["series"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .max_by(|a, b| {
            a["raw"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["raw"].as_f64().unwrap())
        })
        .map(|point| point["workers"].as_u64().unwrap());
    assert_eq!(verdict["workers"].as_u64(), largest, "{verdict}");
    // The limit lies beyond only where that level is the last: past a fall in throughput,
    // more sessions deliver less, whatever their p50.
    let last = (report["series"][0]["series"]["points"]
        .as_array()
        .unwrap()
        .iter())
    .filter_map(|point| point["workers"].as_u64())
    .max();
    assert_eq!(
        verdict["beyond_largest"].as_bool(),
        Some(largest == last),
        "{verdict}"
    );
    // The median read is Payment's own, from the level's classes.
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let level = (run["levels"].as_array().unwrap().iter())
        .rfind(|level| level["workers"].as_u64() == largest)
        .unwrap();
    let payment = (level["classes"].as_array().unwrap().iter())
        .find(|class| class["class"] == "payment")
        .unwrap();
    let p50 = corescale::latency::ResponseTimes::decode(payment["histogram"].as_str().unwrap())
        .unwrap()
        .percentiles()
        .unwrap()
        .p50_ms;
    assert_eq!(verdict["value_ms"].as_f64(), Some(p50), "{verdict}");
    let refused = corescale()
        .arg("report")
        .arg(json)
        .args(["--include-disturbed", "--slo", "refund:p50<=1h"])
        .assert()
        .code(1);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        said.contains("no series recorded class 'refund' (the classes recorded: delivery, new_order, order_status, payment, stock_level)"),
        "{said}"
    );
}

/// `--find` on one transaction type: each probe judges New-Order's own responses (its class
/// in the level, fewer than the level's), the rate is the mix's transactions/s, and the run
/// ends with the answer and its check of the tables.
fn searched_on_new_orders(url: &str, dir: &std::path::Path) {
    let json = dir.join("found.json");
    let output = corescale()
        .args([
            "run",
            "tpcc",
            "--target",
            url,
            "--find",
            "new_order:p90<=1s",
        ])
        .args(["--max-time", "20s", "-w", "4", "-q", "-o"])
        .arg(&json)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&output.get_output().stdout).into_owned();
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let search = &document["search"];
    assert!(
        stdout.ends_with(&format!(
            "corescale: {}\n",
            search["answer"].as_str().unwrap()
        )),
        "{stdout}"
    );
    assert_eq!(
        search["objectives"][0], "new_order p90 <= 1000 ms",
        "{search:#}"
    );
    assert_eq!(search["unit"], "transactions/s", "{search:#}");
    consistent_after_run(&document);
    let probes = search["probes"].as_array().unwrap();
    assert!(!probes.is_empty(), "{search:#}");
    for probe in probes {
        let level = &document["levels"][probe["level"].as_u64().unwrap() as usize];
        let new_orders = (level["classes"].as_array().unwrap().iter())
            .find(|class| class["class"] == "new_order")
            .map(|class| {
                corescale::latency::ResponseTimes::decode(class["histogram"].as_str().unwrap())
                    .unwrap()
                    .count()
            })
            .unwrap();
        let judged = &probe["objectives"][0]["interval"]["responses"];
        assert_eq!(judged.as_u64(), Some(new_orders), "{probe}");
        assert!(
            new_orders < level["latency"]["count"].as_u64().unwrap(),
            "{probe}"
        );
    }
}

/// The run's own check of the tables after it: the four consistency conditions held.
fn consistent_after_run(document: &serde_json::Value) {
    let checked = &document["checked_after_run"];
    assert!(
        checked
            .as_str()
            .is_some_and(|text| text.contains("conditions 1, 2, 3, 4")),
        "{checked}"
    );
}

/// A run killed (SIGKILL) at a random moment, while it writes orders, leaves every
/// transaction whole: the consistency conditions hold.
fn killed_run_leaves_consistent_tables(database: &Database) {
    let url = database.url;
    let orders = || (database.count)("SELECT COUNT(*) FROM corescale_tpcc_orders");
    let before = orders();
    let binary = assert_cmd::cargo::cargo_bin("corescale");
    let mut child = std::process::Command::new(binary)
        .args(["run", "tpcc", "--target", url, "--sweep", "2"])
        .args(["--duration", "30s", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    // Killed once it writes (a busy host may take seconds to start), at a random moment.
    let began = std::time::Instant::now();
    while orders() == before {
        assert!(
            began.elapsed() < Duration::from_secs(60) && child.try_wait().unwrap().is_none(),
            "the run wrote no order"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(u64::from(nanos % 2_500)));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before it was killed"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    corescale()
        .args(["db", "check", "--workload", "tpcc", "--target", url])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "consistency conditions 1, 2, 3, 4 hold",
        ));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn order_entry_runs_on_postgresql() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "tpccrun");
    runs_and_stays_consistent(&Database {
        url: &scratch.url,
        count: &|sql| scratch.count(sql),
        server_wide: false,
        isolation: "read committed",
    });
    assert_eq!(
        scratch.count(
            "SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'"
        ),
        0,
        "teardown left nothing"
    );
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn order_entry_runs_on_mariadb() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("tpccrun"));
    runs_and_stays_consistent(&Database {
        url: &scratch.url,
        count: &|sql| scratch.count(sql),
        server_wide: true,
        isolation: "repeatable read",
    });
    assert_eq!(
        scratch.count(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
        ),
        0,
        "teardown left nothing"
    );
}

#[test]
fn bad_options_are_usage_errors() {
    for (args, says) in [
        (&["--mix", "45,43,4,4"][..], "gives 4 shares"),
        (&["--mix", "45,43,4,4,5"][..], "sum to 101"),
        (&["--replay-limit", "5s"][..], "leave --replay-limit out"),
        (
            &["--keying-time", "--rate", "100"][..],
            "cannot be used with",
        ),
        (
            &["--keying-time", "--find", "p99<=5ms"][..],
            "cannot be used with",
        ),
        (
            &["--find", "p99<=5ms", "--rate", "100"][..],
            "cannot be used with",
        ),
        (
            &["--route", "reads=replicas"][..],
            "one --target was given: add the replicas' --target",
        ),
        (
            &["--target", "postgres://nobody@127.0.0.1:2/none"][..],
            "give --route reads=replicas to send Order-Status and Stock-Level to the replicas",
        ),
    ] {
        let output = corescale()
            .args([
                "run",
                "tpcc",
                "--target",
                "postgres://nobody@127.0.0.1:1/none",
            ])
            .args(args)
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&output.get_output().stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
