//! The report page in a real browser: headless Chromium renders it at 700 and 1400 px, and a
//! probe script (added to a copy of the page; the page itself has none) reads the layout
//! from the DOM. Screenshots stay under target/ for people to look at.
//!
//! Needs Chromium (Debian's `chromium` package, or `CORESCALE_CHROMIUM` naming a binary):
//! `.ci/run` installs it and runs these with `cargo test --test report -- --ignored browser::`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{anchor_report_command, corescale};
use serde_json::Value;

fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CORESCALE_CHROMIUM") {
        return PathBuf::from(path);
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .map(|name| which(name))
        .find_map(|found| found)
        .expect("no Chromium: apt-get install chromium, or set CORESCALE_CHROMIUM")
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|directory| directory.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// Reads the layout once the page has loaded, into a `<pre id="probe">` holding JSON: the
/// page's and every table's scroll width (collapsed sections opened), each figure's box and
/// labels, and the smallest text on screen (figure text scaled as the page shows it).
const PROBE: &str = r#"<script>
window.addEventListener('load', () => {
  document.querySelectorAll('details').forEach(details => details.open = true);
  const width = document.documentElement.clientWidth;
  let smallest = Infinity;
  const figures = [...document.querySelectorAll('figure')].map(figure => {
    const svg = figure.querySelector('svg');
    const box = svg.getBoundingClientRect();
    const scale = box.width / svg.viewBox.baseVal.width;
    const texts = [...svg.querySelectorAll('text')].filter(text => text.textContent.trim());
    const inside = texts.filter(text => {
      const r = text.getBoundingClientRect();
      return r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1;
    }).length;
    texts.forEach(text => {
      smallest = Math.min(smallest, parseFloat(text.getAttribute('font-size')) * scale);
    });
    return {id: figure.id, left: box.left, right: box.right, width: box.width,
            height: box.height, texts: texts.length, inside: inside,
            labels: texts.map(text => text.textContent.trim())};
  });
  document.querySelectorAll('td, th, li, p, figcaption, summary').forEach(element => {
    smallest = Math.min(smallest, parseFloat(getComputedStyle(element).fontSize));
  });
  const cut = [...document.querySelectorAll('.wide')]
    .filter(wide => wide.scrollWidth > wide.clientWidth + 1)
    .map(wide => (wide.previousElementSibling || {}).textContent + ': ' + wide.scrollWidth +
                 ' px in ' + wide.clientWidth);
  const probe = document.createElement('pre');
  probe.id = 'probe';
  probe.textContent = JSON.stringify({
    width: width, scroll_width: document.documentElement.scrollWidth, cut: cut,
    smallest_text: smallest, figures: figures});
  document.body.appendChild(probe);
});
</script>"#;

fn render(page: &Path, width: u32, extra: &[&str]) -> String {
    let output = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            &format!("--window-size={width},1000"),
            "--virtual-time-budget=5000",
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("running Chromium");
    assert!(
        output.status.success(),
        "Chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The pages a reader opens: the three anchor sweeps, a fleet of hosts, and a run of two
/// levels, each as `report -q --html` writes it, in `dir`.
fn pages(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let anchor = dir.join("anchor.html");
    anchor_report_command()
        .args(["-q", "--html"])
        .arg(&anchor)
        .assert()
        .success();
    let results = common::write_fleet(dir, 6, 0.03);
    let fleet = dir.join("fleet.html");
    corescale()
        .arg("report")
        .arg(&results)
        .args(["--include-disturbed", "-q", "--html"])
        .arg(&fleet)
        .assert()
        .success();
    let csv = dir.join("two-levels.csv");
    std::fs::write(
        &csv,
        "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec)\n1,30.1,30.2,0.4\n2,31.0,31.1,0.6\n",
    )
    .unwrap();
    let two = dir.join("two-levels.html");
    corescale()
        .arg("report")
        .arg(&csv)
        .args(["-q", "--html"])
        .arg(&two)
        .assert()
        .success();
    vec![("anchor", anchor), ("fleet", fleet), ("two-levels", two)]
}

#[test]
#[ignore = "needs headless Chromium; .ci/run installs it and runs this with --ignored"]
fn report_pages_fit_700_and_1400_pixel_windows() {
    let dir = tempfile::tempdir().unwrap();
    let screenshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser");
    std::fs::create_dir_all(&screenshots).unwrap();
    for (name, page) in pages(dir.path()) {
        let html = std::fs::read_to_string(&page).unwrap();
        let probed = dir.path().join(format!("{name}-probed.html"));
        std::fs::write(&probed, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
        for width in [700, 1400] {
            let layout = probe(&probed, width);
            let window = layout["width"].as_f64().unwrap();
            assert!(
                layout["scroll_width"].as_f64().unwrap() <= window + 1.0,
                "{name} at {width} px: the page scrolls sideways: {layout}"
            );
            assert_eq!(
                layout["cut"].as_array().unwrap().len(),
                0,
                "{name} at {width} px: tables scroll sideways: {}",
                layout["cut"]
            );
            let smallest = layout["smallest_text"].as_f64().unwrap();
            assert!(
                smallest >= 11.0 - 0.05,
                "{name} at {width} px: text of {smallest:.1} px"
            );
            check_figures(name, width, window, &layout);
            let shot = screenshots.join(format!("{name}-{width}.png"));
            let _ = std::fs::remove_file(&shot);
            render(&page, width, &[&format!("--screenshot={}", shot.display())]);
            assert!(shot.is_file(), "no screenshot at {}", shot.display());
        }
    }
}

fn probe(probed: &Path, width: u32) -> Value {
    let dom = render(probed, width, &["--dump-dom"]);
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

/// Each figure is inside the window, scaled rather than cut, and draws every label inside
/// itself; on the anchor page each names the three series.
fn check_figures(name: &str, width: u32, window: f64, layout: &Value) {
    let figures = layout["figures"].as_array().unwrap();
    assert!(figures.len() >= 4, "{name} at {width} px: {layout}");
    for figure in figures {
        let id = &figure["id"];
        let (left, right) = (
            figure["left"].as_f64().unwrap(),
            figure["right"].as_f64().unwrap(),
        );
        assert!(
            left >= 0.0 && right <= window + 1.0,
            "{name} at {width} px: {id} overflows: {figure}"
        );
        assert!(
            figure["width"].as_f64().unwrap() > window.min(960.0) * 0.5,
            "{name} at {width} px: {figure}"
        );
        assert!(
            figure["height"].as_f64().unwrap() > 150.0,
            "{name} at {width} px: {figure}"
        );
        assert_eq!(
            figure["texts"], figure["inside"],
            "{name} at {width} px: {id}: {figure}"
        );
        if name == "anchor" {
            let labels: Vec<&str> = figure["labels"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            for series in ["RAC52", "RAC54", "RAC55"] {
                assert!(
                    labels.contains(&series) || id == "fig5_ratio",
                    "{width} px: {id} has no legend entry {series}: {labels:?}"
                );
            }
        }
    }
}

/// Printed on A4 and on Letter: the anchor page takes at most 7 A4 pages, and no page holds
/// only a heading (headings keep with what follows them). Needs pdftotext (poppler-utils).
#[test]
#[ignore = "needs headless Chromium and pdftotext; .ci/run installs them and runs this with --ignored"]
fn the_printed_page_keeps_headings_with_their_content() {
    let dir = tempfile::tempdir().unwrap();
    let screenshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser");
    std::fs::create_dir_all(&screenshots).unwrap();
    let anchor = &pages(dir.path())[0].1;
    let html = std::fs::read_to_string(anchor).unwrap();
    for (paper, most) in [("A4", 7), ("letter", 8)] {
        let sized = dir.path().join(format!("anchor-{paper}.html"));
        std::fs::write(
            &sized,
            html.replace(
                "</head>",
                &format!("<style>@page{{size:{paper}}}</style></head>"),
            ),
        )
        .unwrap();
        let pdf = screenshots.join(format!("anchor-{paper}.pdf"));
        let _ = std::fs::remove_file(&pdf);
        render(
            &sized,
            1400,
            &[
                &format!("--print-to-pdf={}", pdf.display()),
                "--no-pdf-header-footer",
            ],
        );
        let text = Command::new("pdftotext")
            .args(["-layout"])
            .arg(&pdf)
            .arg("-")
            .output()
            .expect("running pdftotext (apt-get install poppler-utils)");
        assert!(text.status.success());
        let text = String::from_utf8_lossy(&text.stdout).into_owned();
        // pdftotext ends each page with a form feed.
        let pages: Vec<&str> = text
            .split('\u{c}')
            .filter(|page| !page.trim().is_empty())
            .collect();
        assert!(
            (5..=most).contains(&pages.len()),
            "{paper}: {} pages",
            pages.len()
        );
        for (number, page) in pages.iter().enumerate() {
            let lines: Vec<&str> = page
                .lines()
                .filter(|line| !line.trim().is_empty())
                .collect();
            assert!(
                lines.len() > 1,
                "{paper}: page {} holds only {lines:?}",
                number + 1
            );
        }
    }
}

/// A page with a kept disturbed level (the PostgreSQL run in tests/fixtures/engines had one
/// at 3 workers, judged so while it ran): the headline opens with it, and in the rendered
/// page every figure of the series draws that level hollow, with a legend entry saying what
/// hollow means.
#[test]
#[ignore = "needs headless Chromium; .ci/run installs it and runs this with --ignored"]
fn kept_disturbed_levels_are_hollow_and_said_first() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("disturbed.html");
    corescale()
        .args(["report", "tests/fixtures/engines/pg.json"])
        .args(["--include-disturbed", "-q", "--html"])
        .arg(&page)
        .assert()
        .success();
    let dom = render(&page, 1400, &["--dump-dom"]);
    let summary = dom
        .split("<p class=\"summary\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_else(|| panic!("no headline in the page"));
    assert!(
        summary.starts_with(
            "Kept though disturbed while measured (--include-disturbed): vm at 3 workers"
        ),
        "{summary}"
    );
    let figures = dom.matches("<svg").count();
    let hollow = dom
        .split("<circle")
        .skip(1)
        .filter(|circle| {
            circle
                .split('>')
                .next()
                .unwrap_or("")
                .contains("fill=\"none\"")
        })
        .count();
    assert!(figures >= 4, "{figures} figures");
    // Figures 1 to 4 each draw the 3-worker level hollow and their legend's key to it.
    assert!(hollow >= 8, "{hollow} hollow circles in {figures} figures");
    assert!(
        dom.matches("hollow: disturbed while measured, kept")
            .count()
            >= 4,
        "no legend entry for the hollow markers"
    );
    assert!(
        dom.contains("3 !"),
        "the levels table does not mark the level"
    );
}

/// A server against a 2-node cluster (the engines fixture, its sessions spread over two
/// instances): the page opens with the answer, above the headline and every figure; the
/// cluster's per-instance table is on it; no axis tick is a long run of digits.
#[test]
#[ignore = "needs headless Chromium; .ci/run installs it and runs this with --ignored"]
fn the_answer_opens_the_page_and_the_cluster_is_shown_per_instance() {
    let dir = tempfile::tempdir().unwrap();
    let mut cluster: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("tests/fixtures/engines/pg.json").unwrap())
            .unwrap();
    for level in cluster["levels"].as_array_mut().unwrap() {
        let workers = level["workers"].as_u64().unwrap();
        let statements = level["workload_figures"]["statements"]
            .as_f64()
            .unwrap_or(1000.0);
        let elapsed = level["elapsed_s"].as_f64().unwrap();
        let node = |name: &str, role: &str, sessions: u64| {
            serde_json::json!({
                "instance": name, "role": role, "sessions": sessions,
                "statements": statements / 2.0, "statements_per_s": statements / 2.0 / elapsed,
                "share_of_sessions": sessions as f64 / workers as f64, "share_of_work": 0.5,
                "latency": {"count": 1000, "mean_ms": 0.4, "p50_ms": 0.3, "p90_ms": 0.5,
                            "p95_ms": 0.6, "p99_ms": 0.9, "p999_ms": 1.5, "max_ms": 3.0}
            })
        };
        level["instances"] = serde_json::json!([
            node("db1:5432", "primary", workers.div_ceil(2)),
            node("db2:5432", "replica", workers / 2)
        ]);
    }
    cluster["host"]["label"] = "cluster".into();
    let cluster_file = dir.path().join("cluster.json");
    std::fs::write(&cluster_file, cluster.to_string()).unwrap();
    let page = dir.path().join("answer.html");
    corescale()
        .arg("report")
        .arg(&cluster_file)
        .arg("tests/fixtures/engines/pg-again.json")
        .args(["--label", "tests/fixtures/engines/pg-again.json=server"])
        .args(["--include-disturbed", "-q", "--html"])
        .arg(&page)
        .assert()
        .success();
    let dom = render(&page, 1400, &["--dump-dom"]);
    let at = |needle: &str| {
        dom.find(needle)
            .unwrap_or_else(|| panic!("no {needle} in the page"))
    };
    let answer = at("id=\"answer\"");
    assert!(answer < at("<figure") && answer < at("class=\"summary\""));
    let sentence = dom[answer..].split("</p>").next().unwrap();
    assert!(
        sentence.contains("server replaces ")
            && sentence.contains(" of cluster's 2 nodes at saturation"),
        "{sentence}"
    );
    assert!(
        dom.contains("cluster: each instance's part"),
        "no per-instance table"
    );
    assert!(dom.contains("db2:5432"));
    let long_ticks: Vec<&str> = dom
        .split("<text")
        .skip(1)
        .filter_map(|text| text.split('>').nth(1)?.split('<').next())
        .map(str::trim)
        .filter(|label| label.len() >= 5 && label.chars().all(|c| c.is_ascii_digit()))
        .collect();
    assert!(
        long_ticks.is_empty(),
        "ticks without an SI prefix: {long_ticks:?}"
    );
    assert!(dom.contains("3.0M"), "no tick with an SI prefix");
}
