//! The search's probes on a real workload (`run --find`): each a level measured by the
//! runner, in the document and handed to the observer as a sweep's levels are, then judged
//! by the objectives' confidence intervals for `search`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::Utc;

use super::levels::{SweepObserver, level_troubles};
use super::progress::Progress;
use super::runner::{LevelSettings, SessionsReady, measure_level};
use super::search::{
    Capacity, ProbeExecutor, START_SHARE, SearchSettings, probe_length, search, sessions_for,
};
use super::stop;
use crate::format::{significant, workers_text};
use crate::host::pinning::{self, Pin};
use crate::latency::{Objective, PercentileInterval, ResponseTimes, Verdict, responses_needed};
use crate::result::search::{ObjectiveCheck, ProbeRecord, SearchStep};
use crate::result::summary::summarize_document;
use crate::result::{Level, RunDocument};
use crate::workload::Workload;

/// The closed-loop measurement of capacity: short, as it only places the first probe.
const CAPACITY_LENGTH: Duration = Duration::from_secs(3);
/// A probe's window: at least this long whatever its rate, at most the longer (doubled
/// when an undecided probe runs again).
const SHORTEST_PROBE: Duration = Duration::from_secs(2);
const LONGEST_PROBE: Duration = Duration::from_secs(60);
/// The sessions a search may open when -w does not say.
pub(crate) const DEFAULT_MOST_SESSIONS: usize = 32;
/// Sessions busy this share of the window: the client, not the server, may be the limit (a
/// probe behind its schedule is measured again with more sessions, up to -w).
const BUSY_SESSIONS: f64 = 0.9;

/// What a search runs on and where its levels go.
pub(crate) struct SearchRun<'a> {
    pub workload: &'a dyn Workload,
    /// The levels' settings: --warmup, --interval; each probe sets its own length.
    pub settings: &'a LevelSettings,
    pub search: SearchSettings,
    /// The most sessions a probe opens (-w), and those of the capacity measurement.
    pub most_sessions: usize,
    pub capacity_sessions: usize,
    pub pin: Pin,
    pub progress: &'a Progress,
    /// A replay's search: its probes are speeds on its own sessions.
    pub pace: Option<Pace>,
}

/// A replay's search: its sessions are the capture's lanes, its rates speeds (times the
/// captured pace's statements/s), and its first probe the captured pace, as no closed loop
/// replays a capture.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pace {
    pub sessions: usize,
    /// Statements/s at speed 1.
    pub rate_1x: f64,
}

/// Runs the search, each probe a level of `document` handed to `observer`; the record goes
/// in `document.search`. A failed level ends it as it ends a sweep.
pub(crate) fn run_search(
    run: &SearchRun<'_>,
    document: &mut RunDocument,
    observer: &mut dyn SweepObserver,
    sessions_ready: Option<SessionsReady<'_>>,
) -> Result<()> {
    let mut probes = LevelProbes {
        run,
        document,
        observer,
        sessions_ready,
        mean_response_s: 0.0,
    };
    let record = search(&mut probes, &run.search)?;
    document.search = Some(record);
    document.updated_at = Utc::now();
    Ok(())
}

struct LevelProbes<'a, 'b> {
    run: &'a SearchRun<'a>,
    document: &'a mut RunDocument,
    observer: &'a mut dyn SweepObserver,
    sessions_ready: Option<SessionsReady<'b>>,
    /// The last level's mean time a session held each response: Little's law sizes the
    /// next probe's sessions from it.
    mean_response_s: f64,
}

impl LevelProbes<'_, '_> {
    /// Measures one level of the search and keeps it; None when stopped before it.
    fn measure(
        &mut self,
        workers: usize,
        rate: Option<f64>,
        length: Duration,
        step: SearchStep,
    ) -> Result<Option<usize>> {
        if stop::stop_requested() {
            return Ok(None);
        }
        let run = self.run;
        let index = self.document.levels.len();
        let label = match rate {
            Some(rate) => format!("{} at {}/s", workers_text(workers), significant(rate)),
            None => workers_text(workers),
        };
        run.progress.level(index, index + 1, workers, rate);
        let placement = pinning::placement(&self.document.host.topology, run.pin, workers);
        let mut settings = run.settings.clone();
        // A workload's own window (a replay's pass at the rate's speed) over the probe's.
        settings.duration = Some(settings.length.at(rate).unwrap_or(length));
        settings.repeat = 1;
        settings.max_repeat = 1;
        settings.precision = None;
        let measured = measure_level(
            run.workload,
            workers,
            rate,
            &placement,
            &settings,
            run.progress,
            self.sessions_ready.take(),
        );
        let mut outcome = match measured {
            Ok(Some(outcome)) => outcome,
            Ok(None) => return Ok(None),
            Err(error) => {
                self.document.stop_reason = Some(format!("failed at {label}: {error:#}"));
                self.document.updated_at = Utc::now();
                return Err(error.context(format!("measuring {label}")));
            }
        };
        outcome.level.search_step = Some(step);
        self.document.levels.push(outcome.level);
        summarize_document(self.document);
        let level = self.document.levels.last().expect("pushed just now");
        run.progress.level_done(index, level);
        for problem in outcome
            .pin_problems
            .iter()
            .chain(&level.warnings)
            .chain(level_troubles(level, &settings).iter())
        {
            run.progress
                .note(&format!("corescale: warning: {label}: {problem}"));
        }
        self.mean_response_s = held_s(level).unwrap_or(self.mean_response_s);
        self.document.updated_at = Utc::now();
        self.observer.level_done(self.document)?;
        Ok(Some(index))
    }
}

impl ProbeExecutor for LevelProbes<'_, '_> {
    fn capacity(&mut self) -> Result<Option<Capacity>> {
        if self.run.pace.is_some() {
            return Ok(Some(Capacity {
                rate_per_s: 1.0 / START_SHARE,
                spent: Duration::ZERO,
                measured: false,
            }));
        }
        let started = Instant::now();
        let sessions = self.run.capacity_sessions;
        let Some(index) = self.measure(sessions, None, CAPACITY_LENGTH, SearchStep::Capacity)?
        else {
            return Ok(None);
        };
        let level = &self.document.levels[index];
        let rate = level.response_rate().filter(|rate| *rate > 0.0).context(
            "the closed-loop level answered nothing: no capacity to start the search from",
        )?;
        Ok(Some(Capacity {
            rate_per_s: rate,
            spent: started.elapsed(),
            measured: true,
        }))
    }

    fn probe(&mut self, rate: f64, number: usize, longer: bool) -> Result<Option<ProbeRecord>> {
        let started = Instant::now();
        let run = self.run;
        // A replay's rate is a speed: its sessions and statements/s are the capture's.
        let (mut sessions, most_sessions, per_unit) = match run.pace {
            Some(pace) => (pace.sessions, pace.sessions, pace.rate_1x),
            None => (
                sessions_for(rate, self.mean_response_s, run.most_sessions),
                run.most_sessions,
                1.0,
            ),
        };
        let length = self.probe_window(rate, longer);
        let mut measured_again = false;
        loop {
            let step = SearchStep::Probe(number);
            let Some(index) = self.measure(sessions, Some(rate * per_unit), length, step)? else {
                return Ok(None);
            };
            let level = &self.document.levels[index];
            // Disturbed: measured again, once, so the verdict is the server's where it can be.
            if level.is_disturbed() && !measured_again {
                measured_again = true;
                run.progress.note(&format!(
                    "corescale: probe {number} was disturbed (other processes took the CPUs): measuring it again"
                ));
                continue;
            }
            let figures = level.latency.as_ref().and_then(|latency| latency.rate);
            let achieved = figures.map_or(0.0, |figures| figures.achieved_per_s);
            let kept_up = figures.is_some_and(|figures| figures.sustained);
            let busy = achieved * held_s(level).unwrap_or(0.0) >= BUSY_SESSIONS * sessions as f64;
            // Behind with every session busy: the client's sessions may be the limit, not
            // the server. Measured again with twice the sessions, up to the ceiling.
            if !kept_up && busy && sessions < most_sessions {
                sessions = (2 * sessions).min(most_sessions);
                continue;
            }
            let objectives = (run.search.objectives.iter())
                .map(|objective| judged(level, objective))
                .collect::<Result<Vec<_>>>()?;
            return Ok(Some(ProbeRecord {
                rate_per_s: rate,
                achieved_per_s: achieved / per_unit,
                kept_up,
                sessions,
                // A replay's sessions are the application's own: all busy is its limit.
                sessions_busy: busy && sessions == run.most_sessions && run.pace.is_none(),
                disturbed: level.is_disturbed(),
                objectives,
                verdict: Verdict::Undecided,
                spent_s: started.elapsed().as_secs_f64(),
                level: Some(index),
            }));
        }
    }
}

impl LevelProbes<'_, '_> {
    /// A probe's window: long enough for the responses its objectives' percentiles need at
    /// `rate` (twice that when `longer`). A replay's is one pass of the capture, whatever
    /// this says (its plan's length).
    fn probe_window(&self, rate: f64, longer: bool) -> Duration {
        let needed = (self.run.search.objectives.iter())
            .map(|objective| responses_needed(objective.percentile))
            .max()
            .unwrap_or(1_000);
        let stretch: u32 = if longer { 2 } else { 1 };
        probe_length(
            rate,
            needed * u64::from(stretch),
            SHORTEST_PROBE * stretch,
            LONGEST_PROBE * stretch,
        )
    }
}

/// How long a session held each response: from the send to the answer (an open loop's
/// service), else the response time.
fn held_s(level: &Level) -> Option<f64> {
    let latency = level.latency.as_ref()?;
    let held = latency.service.as_ref().unwrap_or(&latency.response);
    (held.count > 0).then_some(held.mean_ms / 1e3)
}

/// One objective on one level: its percentile's interval, from the responses of its class.
fn judged(level: &Level, objective: &Objective) -> Result<ObjectiveCheck> {
    let encoded = match &objective.class {
        None => level
            .latency
            .as_ref()
            .and_then(|latency| latency.histogram.as_ref()),
        Some(class) => level
            .classes
            .iter()
            .find(|times| &times.class == class)
            .map(|times| &times.histogram),
    };
    let interval = encoded
        .map(|text| ResponseTimes::decode(text).map_err(anyhow::Error::msg))
        .transpose()
        .context("reading the probe's response times")?
        .and_then(|times| PercentileInterval::of(&times, objective.percentile));
    Ok(ObjectiveCheck {
        objective: objective.to_string(),
        limit_ms: objective.limit_ms,
        verdict: interval.map_or(Verdict::Undecided, |interval| {
            interval.verdict(objective.limit_ms)
        }),
        interval,
    })
}
