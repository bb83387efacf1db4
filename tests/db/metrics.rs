//! `run --metrics-listen` and `--push-gateway`: a real Prometheus (Debian's `prometheus`)
//! scrapes a real db run on PostgreSQL every second; its HTTP API then gives the last level's
//! rate, p99 and workers exactly as the run's JSON records them, the levels run, and response
//! counts at least the first level's. A real Pushgateway holds each level's group, its rate
//! and p99 the JSON's.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use crate::sessions::{own_database, setup};
use common::{corescale, free_port, read_json};

/// The status line and body of an HTTP GET to 127.0.0.1, or None when nothing answers.
fn get(port: u16, path: &str) -> Option<(String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

/// Prometheus scraping `target` every second, its data in `dir`; killed when dropped.
struct Prometheus {
    child: Child,
    port: u16,
}

/// A server started from its Debian package's binary on a free port, killed when dropped.
fn started(program: &str, args: &[String], port: u16) -> Child {
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("{program} runs (.ci/run installs it): {error}"));
    let began = Instant::now();
    while !get(port, "/-/ready").is_some_and(|(status, _)| status.contains(" 200")) {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "{program} was not ready in 30 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    child
}

/// A Pushgateway on a free port; killed when dropped.
struct Pushgateway {
    child: Child,
    port: u16,
}

impl Pushgateway {
    fn start() -> Self {
        let port = free_port();
        let address = format!("--web.listen-address=127.0.0.1:{port}");
        let child = started("prometheus-pushgateway", &[address], port);
        Self { child, port }
    }

    /// The value of `metric` in level `level`'s group.
    fn value(&self, metric: &str, level: usize) -> f64 {
        let (_, text) = get(self.port, "/metrics").expect("the Pushgateway answers");
        let wanted = format!("level=\"{level}\"");
        text.lines()
            .find(|line| line.starts_with(&format!("{metric}{{")) && line.contains(&wanted))
            .and_then(|line| line.rsplit(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {metric} of level {level} pushed:\n{text}"))
    }
}

impl Drop for Pushgateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(dir: &Path, target: u16) -> Self {
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: corescale\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let args = [
            format!("--config.file={}", config.display()),
            format!("--storage.tsdb.path={}", dir.join("data").display()),
            format!("--web.listen-address=127.0.0.1:{port}"),
        ];
        let child = started("prometheus", &args, port);
        Self { child, port }
    }

    /// An instant query's results, at `at` (seconds since the epoch) or now.
    fn results(&self, query: &str, at: Option<f64>) -> Vec<serde_json::Value> {
        let encoded: String = query
            .bytes()
            .map(|byte| match byte {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (byte as char).to_string(),
                other => format!("%{other:02X}"),
            })
            .collect();
        let time = at.map(|at| format!("&time={at:.3}")).unwrap_or_default();
        let (status, body) = get(self.port, &format!("/api/v1/query?query={encoded}{time}"))
            .expect("Prometheus answers");
        assert!(status.contains(" 200"), "{query}: {status} {body}");
        let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
        answer["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// An instant query's one value, now.
    fn value(&self, query: &str) -> f64 {
        let results = self.results(query, None);
        results
            .first()
            .and_then(|result| result["value"][1].as_str()?.parse().ok())
            .unwrap_or_else(|| panic!("{query}: {results:?}"))
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[cfg_attr(
    not(all(corescale_test_pg, corescale_test_prometheus)),
    ignore = "needs CORESCALE_TEST_PG (a PostgreSQL URL, see README), Prometheus and its Pushgateway (apt-get install prometheus prometheus-pushgateway)"
)]
fn prometheus_scrapes_a_run_and_a_pushgateway_holds_its_levels() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    setup(&url);
    let dir = tempfile::tempdir().unwrap();
    let target = free_port();
    let prometheus = Prometheus::start(dir.path(), target);
    let pushgateway = Pushgateway::start();
    let json = dir.path().join("run.json");
    let output = corescale()
        .args(["run", "db", "--target", &url, "--sweep", "1,2"])
        // An open loop, so the rate asked and the schedule's lag are served too.
        .args([
            "--duration",
            "4s",
            "--repeat",
            "1",
            "--rate",
            "300",
            "--metrics-listen",
        ])
        .arg(target.to_string())
        .args([
            "--push-gateway",
            &format!("http://127.0.0.1:{}", pushgateway.port),
        ])
        .arg("-o")
        .arg(&json)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(
        said.contains(&format!("metrics at http://127.0.0.1:{target}/metrics")),
        "{said}"
    );
    let document = read_json(&json);
    let levels = document["levels"].as_array().unwrap();
    // The run's target is gone now: its last samples are read over the run's minutes.
    let last = |metric: &str| prometheus.value(&format!("last_over_time({metric}[10m])"));
    assert_eq!(last("corescale_level"), 2.0);
    let workers = last("corescale_last_level_workers");
    let level = levels
        .iter()
        .find(|level| level["workers"].as_f64() == Some(workers))
        .unwrap_or_else(|| panic!("no level of {workers} workers"));
    let rate = level["summary"]["rate_total"].as_f64().unwrap();
    let scraped = last("corescale_last_level_rate_per_second");
    assert!(
        (scraped - rate).abs() <= rate * 1e-9,
        "{scraped} for {rate}"
    );
    let p99_s = level["latency"]["p99_ms"].as_f64().unwrap() / 1e3;
    let scraped = last("corescale_last_level_p99_seconds");
    assert!(
        (scraped - p99_s).abs() <= p99_s * 1e-9,
        "{scraped} for {p99_s}"
    );
    // The server's own reads over the level, as the run read them.
    let lio = level["workload_figures"]["db_lio_per_s"].as_f64().unwrap();
    let scraped = last("corescale_last_level_server_reads_per_second{kind=\"logical\"}");
    assert!((scraped - lio).abs() <= lio * 1e-9, "{scraped} for {lio}");
    // Every response of the first level was counted before the second began (its warm-up's
    // too, which its figures leave out).
    let first = levels[0]["latency"]["count"].as_f64().unwrap();
    let counted = prometheus.value("max_over_time(corescale_response_seconds_count[10m])");
    assert!(
        counted >= first,
        "{counted} responses scraped, {first} in level 1"
    );
    let all: f64 = levels
        .iter()
        .map(|level| level["latency"]["count"].as_f64().unwrap())
        .sum();
    assert!(
        counted <= 2.0 * all,
        "{counted} responses scraped, {all} in the run"
    );
    every_dashboard_query_answers(&prometheus, &levels[1]);
    // Each level in a group of its own, as its JSON has it.
    for (index, level) in levels.iter().enumerate() {
        let pushed = |metric: &str| pushgateway.value(metric, index + 1);
        let rate = level["summary"]["rate_total"].as_f64().unwrap();
        let p99_s = level["latency"]["p99_ms"].as_f64().unwrap() / 1e3;
        assert_eq!(
            pushed("corescale_level_workers"),
            level["workers"].as_f64().unwrap()
        );
        assert!((pushed("corescale_level_rate_per_second") - rate).abs() <= rate * 1e-9);
        assert!((pushed("corescale_level_p99_seconds") - p99_s).abs() <= p99_s * 1e-9);
    }
}

/// Every query of deploy/grafana's dashboard answers with series when evaluated late in
/// `level` (the second: the first's figures are served by then), its variables as Grafana
/// fills them: each names metrics the endpoint serves, in PromQL Prometheus reads.
fn every_dashboard_query_answers(prometheus: &Prometheus, level: &serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/corescale.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let started = chrono::DateTime::parse_from_rfc3339(level["started_at"].as_str().unwrap())
        .unwrap()
        .timestamp_millis() as f64
        / 1e3;
    // Late in the level: every range holds several scrapes by then.
    let at = started + level["elapsed_s"].as_f64().unwrap() - 0.5;
    let mut queries = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            let filled = expr
                .replace("$instance", ".+")
                .replace("$__rate_interval", "30s");
            let results = prometheus.results(&filled, Some(at));
            assert!(
                !results.is_empty(),
                "{}: '{expr}' answers nothing at {at}",
                panel["title"]
            );
            queries += 1;
        }
    }
    assert!(queries >= 8, "{queries} queries");
}
