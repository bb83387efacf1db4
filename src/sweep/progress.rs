//! What the user sees while a run goes on. On a terminal: a progress bar on stderr with the
//! level, batch, ETA, the last batch's median job time (or rate) and the CV so far. With
//! `--report-interval`: instead, one plain line per interval (for logs and terminals without
//! a bar) with the same figures and the host's steal and other load over that interval.
//! Figures come from finished batches only: workers are never read in the middle of a job.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, bounded};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::format::{significant, workers_text};
use crate::host::interference::CpuTicks;
use crate::host::sysfs::FsRoot;
use crate::latency::{LiveCounts, LiveResponses, interval_percentiles};

pub struct Progress {
    bar: ProgressBar,
    live: Option<LiveLines>,
    /// `--metrics-listen`: the endpoint Prometheus scrapes, fed as the lines are.
    export: Option<super::export::MetricsEndpoint>,
    /// `--push-gateway`: where each level's figures go as it ends.
    pusher: Option<super::export::LevelPusher>,
    /// The level in progress in the bar's words, long and short ("level 3/6, 4 workers at
    /// 500/s", "3/6, n=4"): the short one where the long would push the batch's CV off the
    /// line.
    level_words: Mutex<(String, String)>,
}

/// What the interval lines say, updated by the runner between batches.
#[derive(Default)]
struct LiveState {
    /// Workers of the level in progress.
    level: String,
    batch: String,
    counts: Option<LiveCounts>,
    unit: String,
    /// CV of the level's finished jobs so far.
    cv: Option<f64>,
    /// The sessions' response counts (workloads that time statements).
    responses: Option<Arc<LiveResponses>>,
}

struct LiveLines {
    state: Arc<Mutex<LiveState>>,
    stop: Sender<()>,
    handle: Option<JoinHandle<()>>,
}

impl LiveLines {
    fn start(interval: Duration) -> Self {
        let state = Arc::new(Mutex::new(LiveState::default()));
        let (stop, stopped) = bounded::<()>(1);
        let shared = Arc::clone(&state);
        let handle = std::thread::spawn(move || {
            let root = FsRoot::new("/");
            let began = Instant::now();
            let mut previous = CpuTicks::read(&root);
            let mut last_count: Option<(LiveCounts, u64, Instant)> = None;
            let mut last_responses: Option<(Arc<LiveResponses>, Vec<u64>)> = None;
            while stopped.recv_timeout(interval).is_err() {
                let now = CpuTicks::read(&root);
                let state = shared.lock().unwrap_or_else(PoisonError::into_inner);
                // The rate over this interval, from the workers' running counts.
                let rate = state.counts.as_ref().and_then(|counts| {
                    let total: u64 = counts.iter().map(|slot| slot.load(Ordering::Relaxed)).sum();
                    let at = Instant::now();
                    let rate = match &last_count {
                        Some((seen, before, then)) if Arc::ptr_eq(seen, counts) => {
                            let per_s = total.saturating_sub(*before) as f64
                                / at.duration_since(*then).as_secs_f64().max(1e-9);
                            Some(format!(
                                "{} {}/s, {}/worker",
                                significant(per_s),
                                state.unit,
                                significant(per_s / counts.len().max(1) as f64)
                            ))
                        }
                        _ => None,
                    };
                    last_count = Some((Arc::clone(counts), total, at));
                    rate
                });
                // The interval's p50 and p99, as pgbench's -P lines carry latency.
                let responses = state.responses.as_ref().and_then(|responses| {
                    let totals = responses.totals();
                    let said = match &last_responses {
                        Some((seen, before)) if Arc::ptr_eq(seen, responses) => {
                            interval_percentiles(before, &totals).map(|(p50, p99)| {
                                format!("p50 {} ms, p99 {} ms", significant(p50), significant(p99))
                            })
                        }
                        _ => None,
                    };
                    last_responses = Some((Arc::clone(responses), totals));
                    said
                });
                let rate = match (rate, responses) {
                    (Some(rate), Some(responses)) => Some(format!("{rate}, {responses}")),
                    (rate, _) => rate,
                };
                let host = match (previous, now) {
                    (Some(before), Some(after)) => format!(
                        "steal {:.1}%, others {:.2} CPU",
                        before.steal_pct(&after),
                        before.other_busy_cpus(&after)
                    ),
                    _ => String::new(),
                };
                previous = now;
                let figures = match (rate, state.cv) {
                    (Some(rate), Some(cv)) => format!("{rate}, CV {:.1}%", 100.0 * cv),
                    (Some(rate), None) => rate,
                    (None, _) if state.batch.is_empty() => "first batch running".to_string(),
                    (None, _) => format!("last batch {}", state.batch),
                };
                eprintln!(
                    "[{:.1}s] {}: {figures}, {host}",
                    began.elapsed().as_secs_f64(),
                    state.level,
                );
            }
        });
        Self {
            state,
            stop,
            handle: Some(handle),
        }
    }

    fn update(&self, change: impl FnOnce(&mut LiveState)) {
        change(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
    }

    fn finish(&mut self) {
        let _ = self.stop.send(());
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

impl Progress {
    /// A bar counting `total_batches` planned batches, or interval lines every `interval`.
    pub fn new(total_batches: u64, quiet: bool, interval: Option<Duration>) -> Self {
        let live = interval.filter(|_| !quiet).map(LiveLines::start);
        let bar = if quiet || live.is_some() || !std::io::stderr().is_terminal() {
            ProgressBar::with_draw_target(Some(total_batches), ProgressDrawTarget::hidden())
        } else {
            ProgressBar::new(total_batches)
        };
        bar.set_style(
            // The message last and cut to whole words by `fitted`: indicatif's own cut
            // ({wide_msg}) falls mid-word ("(3.36 M per work ETA 4s").
            ProgressStyle::with_template("{spinner} [{elapsed}] {pos}/{len} ETA {eta} {msg}")
                .expect("the progress template is valid"),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Self {
            bar,
            live,
            export: None,
            pusher: None,
            level_words: Mutex::default(),
        }
    }

    /// Pushes each level's figures with `pusher` as it ends.
    pub fn push_with(&mut self, pusher: super::export::LevelPusher) {
        self.pusher = Some(pusher);
    }

    /// Serves the run's figures at `endpoint` while it goes on.
    pub fn export_to(&mut self, endpoint: super::export::MetricsEndpoint) {
        self.export = Some(endpoint);
    }

    /// Where the server's counters go as they are read, when metrics are served.
    pub fn server_reads(&self) -> Option<Arc<super::export::ServerReadsSeen>> {
        self.export
            .as_ref()
            .map(super::export::MetricsEndpoint::server_reads)
    }

    /// Whether interval lines are printed or metrics served, so workers should keep
    /// running counts.
    pub fn wants_live_counts(&self) -> bool {
        self.live.is_some() || self.export.is_some()
    }

    /// The running counts of the level starting (None when it ends), and their unit.
    pub fn watch_counts(&self, counts: Option<LiveCounts>, unit: &str) {
        if let Some(export) = &self.export {
            export.watch_counts(counts.clone());
        }
        if let Some(live) = &self.live {
            live.update(|state| {
                state.counts = counts;
                state.unit = unit.to_string();
            });
        }
    }

    /// The response counts of the level starting (None when it ends).
    pub fn watch_responses(&self, responses: Option<Arc<LiveResponses>>) {
        if let Some(export) = &self.export {
            export.watch_responses(responses.clone());
        }
        if let Some(live) = &self.live {
            live.update(|state| state.responses = responses);
        }
    }

    /// A level begins: `rate` is its open-loop rate per second, if it has one.
    pub fn level(&self, index: usize, levels: usize, workers: usize, rate: Option<f64>) {
        if let Some(export) = &self.export {
            export.level(index, workers, rate);
        }
        let at = rate
            .map(|rate| format!(" at {}/s", significant(rate)))
            .unwrap_or_default();
        let text = format!(
            "level {}/{levels}, {}{at}",
            index + 1,
            workers_text(workers)
        );
        if let Some(live) = &self.live {
            live.update(|state| {
                state.level = format!("n={workers}{at}");
                state.batch.clear();
                state.cv = None;
            });
        }
        let short = format!("{}/{levels}, n={workers}", index + 1);
        self.bar.set_message(fitted(&text));
        *self
            .level_words
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = (text, short);
    }

    /// A batch finished, with its figures ("median 1.02 s, CV 0.8%"); batches beyond the
    /// plan (added by --precision) stretch the bar.
    pub fn batch_done(&self, beyond_plan: bool, figures: &str, cv: f64) {
        if beyond_plan {
            self.bar.inc_length(1);
        }
        self.bar.inc(1);
        let (long, short) = (self.level_words.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        self.bar
            .set_message(bar_message(&long, &short, figures, message_columns()));
        if let Some(live) = &self.live {
            live.update(|state| {
                state.batch = figures.to_string();
                state.cv = Some(cv);
            });
        }
    }

    /// A warning for the user on stderr, above the bar when there is one. --quiet hides the
    /// bar and the table, never a warning.
    /// A message between progress lines, wrapped to the terminal (see `format::for_terminal`).
    pub fn note(&self, text: &str) {
        self.notes().note(text);
    }

    /// Where another thread's warnings go: above this bar, as [`Progress::note`]'s.
    pub fn notes(&self) -> Notes {
        Notes(self.bar.clone())
    }

    /// Level `index` ended, as the result records it. A push that fails is a warning: the
    /// run goes on.
    pub fn level_done(&self, index: usize, level: &crate::result::Level) {
        if let Some(export) = &self.export {
            export.level_done(level);
        }
        if let Some(pusher) = &self.pusher
            && let Err(error) = pusher.push(index + 1, level)
        {
            self.note(&format!("corescale: warning: {error:#}"));
        }
    }

    pub fn finish(&mut self) {
        if let Some(live) = self.live.as_mut() {
            live.finish();
        }
        if let Some(export) = self.export.as_mut() {
            export.finish();
        }
        if let Some(pusher) = self.pusher.as_mut() {
            pusher.finish();
        }
        self.bar.finish_and_clear();
    }
}

/// Columns the bar's fixed part takes ("⠁ [00:01:02] 12/40 ETA 1m 3s "), at most.
const BAR_PREFIX: usize = 34;

/// The bar's message cut to whole words so the line fits the terminal (80 columns where
/// its width is unknown), ending in "..." where words were left out.
fn fitted(text: &str) -> String {
    fit_words(text, message_columns())
}

/// Columns the bar leaves its message.
fn message_columns() -> usize {
    crate::format::stderr_columns()
        .unwrap_or(80)
        .max(40)
        .saturating_sub(BAR_PREFIX)
}

/// The level and its last batch's figures in `width` columns: the level in its short words
/// where the long ones would cut the figures.
fn bar_message(long: &str, short: &str, figures: &str, width: usize) -> String {
    let message = format!("{long} | {figures}");
    if message.chars().count() <= width {
        return message;
    }
    fit_words(&format!("{short} | {figures}"), width)
}

fn fit_words(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    for word in text.split(' ') {
        let next = if out.is_empty() {
            word.to_string()
        } else {
            format!("{out} {word}")
        };
        if next.chars().count() + 4 > width {
            break;
        }
        out = next;
    }
    let kept = out.trim_end_matches([',', '|', ' ']);
    if kept.is_empty() {
        "...".to_string()
    } else {
        format!("{kept} ...")
    }
}

/// A [`Progress`]'s notes, for another thread: each above the bar when there is one.
#[derive(Clone)]
pub struct Notes(ProgressBar);

impl Notes {
    pub fn note(&self, text: &str) {
        let text = crate::format::for_terminal(text);
        if self.0.is_hidden() {
            eprintln!("{text}");
        } else {
            self.0.println(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{BAR_PREFIX, bar_message, fit_words};

    #[test]
    fn the_batch_figures_keep_their_cv_at_80_columns() {
        let width = 80 - BAR_PREFIX;
        for (long, short, figures) in [
            (
                "level 3/6, 4 workers",
                "3/6, n=4",
                "median 1.234 s, CV 0.8%",
            ),
            (
                "level 10/12, 16 workers",
                "10/12, n=16",
                "median 12.345 s, CV 10.5%",
            ),
            (
                "level 2/9, 2 workers",
                "2/9, n=2",
                "10.9 K transactions/s, CV 2.1%",
            ),
            // An open-loop level: its asked rate goes before the CV does.
            (
                "level 1/4, 12 workers at 12.3 K/s",
                "1/4, n=12",
                "12.3 K statements/s, CV 0.0%",
            ),
        ] {
            let message = bar_message(long, short, figures, width);
            assert!(message.ends_with(figures), "{message}");
            assert!(message.chars().count() <= width, "{message}");
        }
        // Where it fits, the level keeps its words.
        assert_eq!(
            bar_message("level 1/2, 1 worker", "1/2, n=1", "median 1.2 s, CV 0%", 80),
            "level 1/2, 1 worker | median 1.2 s, CV 0%"
        );
    }

    #[test]
    fn a_long_message_is_cut_between_words() {
        let text = "level 3/5, 4 workers | median 1.02 s, CV 0.8% (3.36 M per worker)";
        assert_eq!(fit_words(text, 80), text);
        let cut = fit_words(text, 40);
        assert_eq!(cut, "level 3/5, 4 workers | median 1.02 ...");
        assert!(cut.chars().count() <= 40);
        for width in 10..text.len() {
            let cut = fit_words(text, width);
            assert!(cut.chars().count() <= width.max(4), "{width}: {cut}");
            let kept = cut.trim_end_matches(" ...").trim_end_matches("...");
            assert!(text.starts_with(kept), "{width}: {cut}");
            assert!(
                kept.is_empty() || text[kept.len()..].starts_with([' ', ',']),
                "{width}: cut mid-word: {cut}"
            );
        }
    }
}
