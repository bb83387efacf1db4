//! The progress bar on stderr: level, batch, elapsed time and ETA. Hidden with --quiet or
//! when stderr is not a terminal.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    quiet: bool,
}

impl Progress {
    /// A bar counting `total_batches` planned batches.
    pub fn new(total_batches: u64, quiet: bool) -> Self {
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::with_draw_target(Some(total_batches), ProgressDrawTarget::hidden())
        } else {
            ProgressBar::new(total_batches)
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} batches  {msg}  ETA {eta}",
            )
            .expect("the progress template is valid"),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Self { bar, quiet }
    }

    pub fn level(&self, index: usize, levels: usize, workers: usize) {
        self.bar.set_message(format!(
            "level {}/{levels}: {workers} worker{}",
            index + 1,
            if workers == 1 { "" } else { "s" }
        ));
    }

    /// A batch finished; batches beyond the plan (added by --precision) stretch the bar.
    pub fn batch_done(&self, beyond_plan: bool) {
        if beyond_plan {
            self.bar.inc_length(1);
        }
        self.bar.inc(1);
    }

    /// A line for the user on stderr, above the bar when there is one; silent with --quiet.
    pub fn note(&self, text: &str) {
        if self.bar.is_hidden() {
            if !self.quiet {
                eprintln!("{text}");
            }
        } else {
            self.bar.println(text);
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
