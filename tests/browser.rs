//! The report page in a real browser: headless Chromium renders it at 700 and 1400 px, and a
//! probe script (added to a copy of the page; the page itself has none) reads the layout
//! from the DOM. Screenshots stay under target/ for people to look at.
//!
//! Needs Chromium (Debian's `chromium` package, or `CORESCALE_CHROMIUM` naming a binary):
//! `.ci/run` installs it and runs these with `cargo test --test browser -- --ignored`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::anchor_report_command;
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

/// Reads the layout once the page has loaded, into a `<pre id="probe">` holding JSON.
const PROBE: &str = r#"<script>
window.addEventListener('load', () => {
  const width = document.documentElement.clientWidth;
  const figures = [...document.querySelectorAll('figure')].map(figure => {
    const svg = figure.querySelector('svg');
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')];
    const inside = texts.filter(text => {
      const r = text.getBoundingClientRect();
      return r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1;
    }).length;
    return {id: figure.id, left: box.left, right: box.right, width: box.width,
            height: box.height, texts: texts.length, inside: inside,
            labels: texts.map(text => text.textContent.trim())};
  });
  const probe = document.createElement('pre');
  probe.id = 'probe';
  probe.textContent = JSON.stringify({
    width: width, scroll_width: document.documentElement.scrollWidth, figures: figures});
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

#[test]
#[ignore = "needs headless Chromium; .ci/run installs it and runs this with --ignored"]
fn the_report_page_fits_700_and_1400_pixel_windows() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    anchor_report_command()
        .args(["-q", "--html"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let probed = dir.path().join("probed.html");
    std::fs::write(&probed, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let screenshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser");
    std::fs::create_dir_all(&screenshots).unwrap();

    for width in [700, 1400] {
        let dom = render(&probed, width, &["--dump-dom"]);
        let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
        let end = start + dom[start..].find("</pre>").unwrap();
        let json = dom[start..end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        let layout: Value = serde_json::from_str(&json).unwrap();
        let window = layout["width"].as_f64().unwrap();
        assert!(
            layout["scroll_width"].as_f64().unwrap() <= window + 1.0,
            "{width} px: the page scrolls sideways: {layout}"
        );
        let figures = layout["figures"].as_array().unwrap();
        assert_eq!(figures.len(), 5, "{width} px: {layout}");
        for figure in figures {
            let id = &figure["id"];
            let (left, right) = (
                figure["left"].as_f64().unwrap(),
                figure["right"].as_f64().unwrap(),
            );
            assert!(
                left >= 0.0 && right <= window + 1.0,
                "{width} px: {id} overflows: {figure}"
            );
            // Scaled to the window, not cut: wider than half of it, and with its height.
            assert!(
                figure["width"].as_f64().unwrap() > window * 0.5,
                "{width} px: {figure}"
            );
            assert!(
                figure["height"].as_f64().unwrap() > 150.0,
                "{width} px: {figure}"
            );
            // Every label, legend included, is drawn inside the figure.
            assert_eq!(
                figure["texts"], figure["inside"],
                "{width} px: {id}: {figure}"
            );
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
        let shot = screenshots.join(format!("report-{width}.png"));
        let _ = std::fs::remove_file(&shot);
        render(&page, width, &[&format!("--screenshot={}", shot.display())]);
        assert!(shot.is_file(), "no screenshot at {}", shot.display());
    }
    // Printed, each figure takes a page of its own: at least one page per figure.
    let pdf = screenshots.join("report.pdf");
    let _ = std::fs::remove_file(&pdf);
    render(
        &page,
        1400,
        &[
            &format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer",
        ],
    );
    let bytes = std::fs::read(&pdf).expect("a PDF was printed");
    // Page objects: "/Type /Page" (or "/Type/Page") not followed by the "s" of "/Pages".
    let pages = ["/Type /Page", "/Type/Page"]
        .iter()
        .map(|marker| {
            bytes
                .windows(marker.len() + 1)
                .filter(|window| {
                    window.starts_with(marker.as_bytes()) && window[marker.len()] != b's'
                })
                .count()
        })
        .sum::<usize>();
    assert!(pages >= 5, "{pages} pages");
}
