//! `run --metrics-listen`: a real Prometheus (Debian's `prometheus`) scrapes a real db run on
//! PostgreSQL every second; its HTTP API then gives the last level's rate, p99 and workers
//! exactly as the run's JSON records them, the levels run, and response counts at least the
//! first level's.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use crate::sessions::{own_database, setup};
use common::{corescale, read_json};

/// A port no one listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

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
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus runs (Debian's package; .ci/run installs it)");
        let prometheus = Self { child, port };
        let began = Instant::now();
        while !get(port, "/-/ready").is_some_and(|(status, _)| status.contains(" 200")) {
            assert!(
                began.elapsed() < Duration::from_secs(30),
                "Prometheus was not ready in 30 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        prometheus
    }

    /// An instant query's one value.
    fn value(&self, query: &str) -> f64 {
        let encoded: String = query
            .bytes()
            .map(|byte| match byte {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (byte as char).to_string(),
                other => format!("%{other:02X}"),
            })
            .collect();
        let (status, body) =
            get(self.port, &format!("/api/v1/query?query={encoded}")).expect("Prometheus answers");
        assert!(status.contains(" 200"), "{query}: {status} {body}");
        let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
        let value = &answer["data"]["result"][0]["value"][1];
        value
            .as_str()
            .and_then(|text| text.parse().ok())
            .unwrap_or_else(|| panic!("{query}: {answer}"))
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
    ignore = "needs CORESCALE_TEST_PG (a PostgreSQL URL, see README) and Prometheus (apt-get install prometheus)"
)]
fn prometheus_scrapes_a_run_and_finds_its_levels_figures() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    setup(&url);
    let dir = tempfile::tempdir().unwrap();
    let target = free_port();
    let prometheus = Prometheus::start(dir.path(), target);
    let json = dir.path().join("run.json");
    let output = corescale()
        .args(["run", "db", "--target", &url, "--sweep", "1,2"])
        .args(["--duration", "4s", "--repeat", "1", "--metrics-listen"])
        .arg(target.to_string())
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
}
