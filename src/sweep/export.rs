//! `run --metrics-listen`: the run's figures served as OpenMetrics text while it goes on, for
//! Prometheus to scrape beside the server's own metrics. Each scrape reads the running counts
//! the interval lines read (relaxed loads of each worker's own slots and response buckets):
//! the timed path takes no lock and writes nothing for it. The level's figures (its rate,
//! p99 and verdict) follow when it ends. Encoded by prometheus-client, served by tiny_http.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Result, anyhow};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::host::interference::process_cpu_seconds;
use crate::latency::{LiveCounts, LiveResponses, classic_buckets};
use crate::result::Level;

/// The response-time histogram's bounds in seconds: 100 us to 10 s, as Prometheus 2.x scrapes.
const BOUNDS_S: [f64; 17] = [
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    f64::INFINITY,
];

/// What a scrape reads, changed by the run between batches and levels only.
#[derive(Default)]
struct Exported {
    /// The level in progress: its number from 1 (0 before the first), workers, rate asked.
    level: usize,
    workers: usize,
    offered_per_s: Option<f64>,
    /// The running counts of the level in progress (fixed-time levels).
    counts: Option<LiveCounts>,
    responses: Option<Arc<LiveResponses>>,
    /// The ended levels' operations and response counts, so the counters only grow.
    done_operations: u64,
    done_responses: Vec<u64>,
    /// The last level ended, as its result records it.
    last: Option<EndedLevel>,
}

/// A level's figures as its result records them, as the endpoint serves the last one and the
/// Pushgateway takes each.
#[derive(Debug, Clone)]
struct EndedLevel {
    workers: usize,
    rate_per_s: f64,
    elapsed_s: f64,
    p99_s: Option<f64>,
    lag_p99_s: Option<f64>,
    offered_per_s: Option<f64>,
    disturbed: bool,
    /// The server's own logical and physical reads per second, where read.
    server_reads_per_s: [Option<f64>; 2],
    /// A cluster's instances, numbered from 1 as the result lists them.
    instances: Vec<EndedInstance>,
}

/// One instance's part of the last level: labelled by its number and role, never its target.
#[derive(Debug, Clone)]
struct EndedInstance {
    role: String,
    sessions: usize,
    statements_per_s: f64,
    p99_s: Option<f64>,
    server_reads_per_s: Option<f64>,
}

/// Where workloads record the server's reads per second: the db workload's own figures, the
/// others' `server_` ones.
const SERVER_READS: [[&str; 2]; 2] = [
    ["db_lio_per_s", "db_pio_per_s"],
    ["server_lio_per_s", "server_pio_per_s"],
];

impl EndedLevel {
    fn of(level: &Level) -> Self {
        let latency = level.latency.as_ref();
        let figure =
            |names: [&str; 2], index: usize| level.workload_figures.get(names[index]).copied();
        let server_reads_per_s =
            [0, 1].map(|index| SERVER_READS.iter().find_map(|names| figure(*names, index)));
        Self {
            server_reads_per_s,
            instances: level
                .instances
                .iter()
                .map(|instance| EndedInstance {
                    role: instance.role.to_string(),
                    sessions: instance.sessions,
                    statements_per_s: instance.statements_per_s,
                    p99_s: instance
                        .latency
                        .as_ref()
                        .map(|latency| latency.p99_ms / 1e3),
                    server_reads_per_s: instance.db_lio_per_s,
                })
                .collect(),
            workers: level.workers,
            rate_per_s: level.summary.rate_total,
            elapsed_s: level.elapsed_s,
            p99_s: latency.map(|latency| latency.response.p99_ms / 1e3),
            lag_p99_s: latency
                .and_then(|latency| latency.schedule_lag.as_ref())
                .map(|lag| lag.p99_ms / 1e3),
            offered_per_s: latency
                .and_then(|latency| latency.rate.as_ref())
                .map(|rate| rate.target_per_s),
            disturbed: level.is_disturbed(),
        }
    }

    fn disturbed(&self) -> f64 {
        f64::from(u8::from(self.disturbed))
    }
}

/// The server's own reads as the sampler thread last read them at an interval's edge
/// (logical, physical; f64 bits, NaN until read): its cumulative counters, as it keeps them.
pub struct ServerReadsSeen([AtomicU64; 2]);

impl ServerReadsSeen {
    fn new() -> Self {
        Self([0, 1].map(|_| AtomicU64::new(f64::NAN.to_bits())))
    }

    /// A reading of the server's counters, from the sampler's thread.
    pub fn set(&self, logical: f64, physical: f64) {
        self.0[0].store(logical.to_bits(), Ordering::Relaxed);
        self.0[1].store(physical.to_bits(), Ordering::Relaxed);
    }

    fn get(&self) -> [Option<f64>; 2] {
        [0, 1].map(|index| {
            Some(f64::from_bits(self.0[index].load(Ordering::Relaxed))).filter(|v| v.is_finite())
        })
    }
}

/// The endpoint: a thread answering scrapes until the run ends.
pub struct MetricsEndpoint {
    state: Arc<Mutex<Exported>>,
    server_reads: Arc<ServerReadsSeen>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    pub address: SocketAddr,
}

impl MetricsEndpoint {
    /// Listens on `address`, the run's workload and unit as labels of `corescale_run_info`
    /// (the host's label and the campaign part too; never a target or a tag's value).
    pub fn start(address: SocketAddr, labels: Vec<(String, String)>) -> Result<Self> {
        let server = tiny_http::Server::http(address).map_err(|error| {
            anyhow!("--metrics-listen {address}: cannot listen there ({error}): give a free port")
        })?;
        let address = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| anyhow!("--metrics-listen {address}: not an IP address"))?;
        let state = Arc::new(Mutex::new(Exported::default()));
        let server_reads = Arc::new(ServerReadsSeen::new());
        let stop = Arc::new(AtomicBool::new(false));
        let mut registry = Registry::default();
        registry.register_collector(Box::new(RunCollector {
            state: Arc::clone(&state),
            server_reads: Arc::clone(&server_reads),
            labels,
        }));
        let stopped = Arc::clone(&stop);
        let handle = std::thread::spawn(move || serve(&server, &registry, &stopped));
        Ok(Self {
            state,
            server_reads,
            stop,
            handle: Some(handle),
            address,
        })
    }

    /// Where the sampler thread puts each reading of the server's counters.
    pub fn server_reads(&self) -> Arc<ServerReadsSeen> {
        Arc::clone(&self.server_reads)
    }

    fn update(&self, change: impl FnOnce(&mut Exported)) {
        change(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// A level begins.
    pub fn level(&self, index: usize, workers: usize, offered_per_s: Option<f64>) {
        self.update(|state| {
            state.level = index + 1;
            state.workers = workers;
            state.offered_per_s = offered_per_s;
        });
    }

    /// The running operation counts of the level starting (None as it ends: the counts it
    /// ended with join the run's).
    pub fn watch_counts(&self, counts: Option<LiveCounts>) {
        self.update(|state| {
            if let Some(ended) = state.counts.take() {
                state.done_operations += sum(&ended);
            }
            state.counts = counts;
        });
    }

    /// The response counts of the level starting (None as it ends).
    pub fn watch_responses(&self, responses: Option<Arc<LiveResponses>>) {
        self.update(|state| {
            if let Some(ended) = state.responses.take() {
                add(&mut state.done_responses, &ended.totals());
            }
            state.responses = responses;
        });
    }

    /// A level ended: its figures as the result records them.
    pub fn level_done(&self, level: &Level) {
        let last = EndedLevel::of(level);
        self.update(|state| state.last = Some(last));
    }

    /// Stops answering; a scrape in flight is answered first.
    pub fn finish(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.finish();
    }
}

fn sum(counts: &LiveCounts) -> u64 {
    counts.iter().map(|slot| slot.load(Ordering::Relaxed)).sum()
}

fn add(into: &mut Vec<u64>, counts: &[u64]) {
    into.resize(into.len().max(counts.len()), 0);
    for (total, count) in into.iter_mut().zip(counts) {
        *total += count;
    }
}

/// Answers `GET /metrics` (and `/`) until stopped.
fn serve(server: &tiny_http::Server, registry: &Registry, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let request = match server.recv_timeout(Duration::from_millis(100)) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(error) => {
                // tiny_http's listener has stopped for good (out of file descriptors?).
                eprintln!("corescale: warning: the metrics endpoint stopped: {error}");
                return;
            }
        };
        let path = request.url().split('?').next().unwrap_or_default();
        let response = if matches!(path, "/metrics" | "/") {
            let mut text = String::new();
            match prometheus_client::encoding::text::encode(&mut text, registry) {
                Ok(()) => tiny_http::Response::from_string(text).with_header(
                    tiny_http::Header::from_bytes(
                        "Content-Type",
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )
                    .expect("a valid header"),
                ),
                Err(_) => tiny_http::Response::from_string("encoding failed").with_status_code(500),
            }
        } else {
            tiny_http::Response::from_string("corescale serves /metrics").with_status_code(404)
        };
        let _ = request.respond(response);
    }
}

struct RunCollector {
    state: Arc<Mutex<Exported>>,
    server_reads: Arc<ServerReadsSeen>,
    labels: Vec<(String, String)>,
}

impl std::fmt::Debug for RunCollector {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("the run's collector")
    }
}

/// One value of a gauge or counter, as prometheus-client encodes it.
struct Value(MetricType, f64);

impl EncodeMetric for Value {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::MetricEncoder,
    ) -> Result<(), std::fmt::Error> {
        match self.0 {
            MetricType::Counter => encoder.encode_counter::<NoLabelSet, _, f64>(&self.1, None),
            _ => encoder.encode_gauge(&self.1),
        }
    }

    fn metric_type(&self) -> MetricType {
        self.0
    }
}

/// The response times as a classic histogram.
struct Responses(Vec<(f64, u64)>, f64, u64);

impl EncodeMetric for Responses {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::MetricEncoder,
    ) -> Result<(), std::fmt::Error> {
        encoder.encode_histogram::<NoLabelSet>(self.1, self.2, &self.0, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

impl Collector for RunCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut one = |name: &str, help: &str, value: Value| -> Result<(), std::fmt::Error> {
            let kind = value.0;
            value.encode(encoder.encode_descriptor(name, help, None, kind)?)
        };
        let gauge = |value: f64| Value(MetricType::Gauge, value);
        let operations = state.done_operations + state.counts.as_ref().map_or(0, sum);
        one(
            "corescale_level",
            "The level in progress, from 1 (0 before the first).",
            gauge(state.level as f64),
        )?;
        one(
            "corescale_workers",
            "Workers (sessions) of the level in progress.",
            gauge(state.workers as f64),
        )?;
        if let Some(offered) = state.offered_per_s {
            one(
                "corescale_offered_rate_per_second",
                "The open loop's rate asked of the level in progress.",
                gauge(offered),
            )?;
        }
        one(
            "corescale_operations",
            "Operations completed in fixed-time levels (the workload's unit: jobs, statements, transactions, new orders).",
            Value(MetricType::Counter, operations as f64),
        )?;
        one(
            "corescale_client_cpu_seconds",
            "CPU time of corescale's process, user and system.",
            Value(MetricType::Counter, client_cpu_s()),
        )?;
        let mut responses = state.done_responses.clone();
        if let Some(live) = &state.responses {
            add(&mut responses, &live.totals());
        }
        let (buckets, sum_s, count) = classic_buckets(&responses, &BOUNDS_S);
        let histogram = encoder.encode_descriptor(
            "corescale_response_seconds",
            "Response times of fixed-time levels, each from when it was due (open loop) or sent (closed loop).",
            None,
            MetricType::Histogram,
        )?;
        Responses(buckets, sum_s, count).encode(histogram)?;
        labelled(
            &mut encoder,
            ("corescale_server_reads", MetricType::Counter),
            "The server's own block reads (logical: from its cache; physical: from storage), its cumulative counters as read at each interval's edge of fixed-time levels.",
            &by_kind(self.server_reads.get()),
        )?;
        if let Some(last) = &state.last {
            encode_last(last, &mut encoder)?;
            encode_servers(last, &mut encoder)?;
        }
        drop(state);
        let mut info = encoder.encode_descriptor(
            "corescale_run",
            "The run: its workload and unit, host label and campaign part.",
            None,
            MetricType::Info,
        )?;
        let labels: Vec<(&str, &str)> = self
            .labels
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
            .collect();
        info.encode_info(&labels)
    }
}

/// The last level's figures, once one has ended.
fn encode_last(last: &EndedLevel, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
    let figures = [
        (
            "corescale_last_level_workers",
            "Workers of the last level ended.",
            Some(last.workers as f64),
        ),
        (
            "corescale_last_level_rate_per_second",
            "The last level's rate, as its result records it.",
            Some(last.rate_per_s),
        ),
        (
            "corescale_last_level_p99_seconds",
            "The last level's 99th percentile response time.",
            last.p99_s,
        ),
        (
            "corescale_last_level_schedule_lag_p99_seconds",
            "The last open-loop level's 99th percentile lag behind its schedule.",
            last.lag_p99_s,
        ),
        (
            "corescale_last_level_disturbed",
            "1 when the last level was judged disturbed by other load on this host.",
            Some(last.disturbed()),
        ),
    ];
    for (name, help, value) in figures {
        if let Some(value) = value {
            Value(MetricType::Gauge, value).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Gauge,
            )?)?;
        }
    }
    Ok(())
}

/// One of an instance's figures, where it has it.
type InstanceFigure = dyn Fn(&EndedInstance) -> Option<f64>;

/// The server's reads of the last level, and a cluster's instances' figures, labelled.
fn encode_servers(
    last: &EndedLevel,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    labelled(
        encoder,
        (
            "corescale_last_level_server_reads_per_second",
            MetricType::Gauge,
        ),
        "The server's own block reads per second over the last level (logical: from its cache; physical: from storage), where read.",
        &by_kind(last.server_reads_per_s),
    )?;
    let labels = |number: usize, instance: &EndedInstance| {
        vec![
            ("instance_number".to_string(), number.to_string()),
            ("role".to_string(), instance.role.clone()),
        ]
    };
    let each = |pick: &InstanceFigure| -> Vec<Labelled> {
        (last.instances.iter().enumerate())
            .filter_map(|(index, instance)| Some((labels(index + 1, instance), pick(instance)?)))
            .collect()
    };
    let figures: [(&str, &str, &InstanceFigure); 4] = [
        (
            "corescale_last_level_instance_sessions",
            "Sessions of the last level on each instance of a cluster (numbered as the result lists them).",
            &|instance| Some(instance.sessions as f64),
        ),
        (
            "corescale_last_level_instance_statements_per_second",
            "Statements per second each instance answered over the last level.",
            &|instance| Some(instance.statements_per_s),
        ),
        (
            "corescale_last_level_instance_p99_seconds",
            "Each instance's 99th percentile response time over the last level.",
            &|instance| instance.p99_s,
        ),
        (
            "corescale_last_level_instance_server_reads_per_second",
            "Each instance's own logical reads per second over the last level, where read.",
            &|instance| instance.server_reads_per_s,
        ),
    ];
    for (name, help, pick) in figures {
        labelled(encoder, (name, MetricType::Gauge), help, &each(pick))?;
    }
    Ok(())
}

/// A value and its labels.
type Labelled = (Vec<(String, String)>, f64);

/// The server's logical and physical reads, labelled `kind`; those not read left out.
fn by_kind(reads: [Option<f64>; 2]) -> Vec<Labelled> {
    ["logical", "physical"]
        .iter()
        .zip(reads)
        .filter_map(|(kind, value)| Some((vec![("kind".into(), (*kind).into())], value?)))
        .collect()
}

/// A gauge or counter with one value per label set; nothing when there is none.
fn labelled(
    encoder: &mut DescriptorEncoder,
    (name, kind): (&str, MetricType),
    help: &str,
    values: &[Labelled],
) -> Result<(), std::fmt::Error> {
    if values.is_empty() {
        return Ok(());
    }
    let mut family = encoder.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in values {
        let mut metric = family.encode_family(labels)?;
        match kind {
            MetricType::Counter => metric.encode_counter::<NoLabelSet, _, f64>(value, None)?,
            _ => metric.encode_gauge(value)?,
        }
    }
    Ok(())
}

/// `--push-gateway`: each level's figures pushed to a Prometheus Pushgateway as it ends, for
/// parts too short to be scraped. Each level is a group of its own (`level` in the grouping
/// key, with the host's label and the campaign part), so no level replaces another. A thread
/// of its own pushes: a slow or silent gateway never delays the next level.
pub struct LevelPusher {
    levels: Option<crossbeam_channel::Sender<(usize, String)>>,
    /// Closed by the thread as it ends: the run waits for it a while, never for ever.
    done: crossbeam_channel::Receiver<()>,
    warn: Arc<dyn Fn(&str) + Send + Sync>,
}

/// How long a run's end waits for the levels still to push.
const PUSHES_AT_THE_END: Duration = Duration::from_secs(10);

impl LevelPusher {
    /// Pushes to `url`; a push that fails is said with `warn`.
    pub fn new(
        url: &str,
        group: &[(String, String)],
        warn: impl Fn(&str) + Send + Sync + 'static,
    ) -> Self {
        let warn: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(warn);
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .timeout_global(Some(Duration::from_secs(5)))
                .build(),
        );
        let url = url.trim_end_matches('/').to_string();
        let mut base = format!("{url}/metrics/job/corescale");
        for (key, value) in group {
            base.push_str(&grouping_key(key, value));
        }
        let (levels, pending) = crossbeam_channel::bounded::<(usize, String)>(64);
        let (finished, done) = crossbeam_channel::bounded::<()>(0);
        let warned = Arc::clone(&warn);
        std::thread::spawn(move || {
            // Dropped as the thread ends, which closes `done`.
            let _finished = finished;
            let warn = warned;
            for (number, text) in pending {
                let path = format!("{base}{}", grouping_key("level", &number.to_string()));
                let pushed = agent
                    .put(&path)
                    .header("Content-Type", "text/plain; version=0.0.4")
                    .send(text);
                if let Err(error) = pushed {
                    warn(&format!(
                        "corescale: warning: pushing level {number} to {url}: {error}"
                    ));
                }
            }
        });
        Self {
            levels: Some(levels),
            done,
            warn,
        }
    }

    /// Queues level `number` (from 1): it replaces that level's group, nothing else.
    pub fn push(&self, number: usize, level: &Level) -> Result<()> {
        let text = level_text(number, level)?;
        if let Some(levels) = &self.levels {
            levels
                .try_send((number, text))
                .map_err(|error| match error {
                    crossbeam_channel::TrySendError::Full(_) => {
                        anyhow!("level {number} was not pushed: 64 levels wait already")
                    }
                    crossbeam_channel::TrySendError::Disconnected(_) => {
                        anyhow!("level {number} was not pushed: the pushing thread has stopped")
                    }
                })?;
        }
        Ok(())
    }

    /// Pushes what is queued, for at most `PUSHES_AT_THE_END`; a gateway that does not
    /// answer by then is left with what it has, and said so.
    pub fn finish(&mut self) {
        if self.levels.take().is_none() {
            return;
        }
        if let Err(crossbeam_channel::RecvTimeoutError::Timeout) =
            self.done.recv_timeout(PUSHES_AT_THE_END)
        {
            (self.warn)(&format!(
                "corescale: warning: the Pushgateway did not take every level within {} s of the run's end: the rest are not pushed",
                PUSHES_AT_THE_END.as_secs()
            ));
        }
    }
}

impl Drop for LevelPusher {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One pair of a grouping key as the Pushgateway reads it: `/key/value`, or
/// `/key@base64/<base64url>` when the value holds a character a path segment cannot (or is
/// empty).
fn grouping_key(key: &str, value: &str) -> String {
    use base64::Engine;
    if !value.is_empty()
        && value
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-_.".contains(&byte))
    {
        return format!("/{key}/{value}");
    }
    let encoded = base64::engine::general_purpose::URL_SAFE.encode(value);
    format!(
        "/{key}@base64/{}",
        if encoded.is_empty() { "=" } else { &encoded }
    )
}

/// One level's figures in Prometheus' text format, gauges only.
fn level_text(number: usize, level: &Level) -> Result<String> {
    use prometheus_client::metrics::gauge::Gauge;
    let mut registry = Registry::default();
    let ended = EndedLevel::of(level);
    let figures = [
        (
            "corescale_level",
            "The level's number, from 1.",
            Some(number as f64),
        ),
        (
            "corescale_level_workers",
            "The level's workers or sessions.",
            Some(ended.workers as f64),
        ),
        (
            "corescale_level_rate_per_second",
            "The level's rate, as its result records it.",
            Some(ended.rate_per_s),
        ),
        (
            "corescale_level_elapsed_seconds",
            "The level's measured time.",
            Some(ended.elapsed_s),
        ),
        (
            "corescale_level_p99_seconds",
            "The level's 99th percentile response time.",
            ended.p99_s,
        ),
        (
            "corescale_level_schedule_lag_p99_seconds",
            "The open loop's 99th percentile lag behind its schedule.",
            ended.lag_p99_s,
        ),
        (
            "corescale_level_offered_rate_per_second",
            "The open loop's rate asked.",
            ended.offered_per_s,
        ),
        (
            "corescale_level_disturbed",
            "1 when other load on the host disturbed the level.",
            Some(ended.disturbed()),
        ),
    ];
    for (name, help, value) in figures {
        if let Some(value) = value {
            let gauge = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
            gauge.set(value);
            registry.register(name, help, gauge);
        }
    }
    let mut text = String::new();
    prometheus_client::encoding::text::encode_registry(&mut text, &registry)
        .map_err(|_| anyhow!("encoding level {number}'s figures"))?;
    Ok(text)
}

/// This process's CPU seconds so far, user and system (0 where /proc cannot tell).
fn client_cpu_s() -> f64 {
    process_cpu_seconds(std::process::id()).unwrap_or(0.0)
}

/// `--metrics-listen`'s value: a port (on 127.0.0.1), or an address and port.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(port) = text.trim_start_matches(':').parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse::<SocketAddr>().map_err(|_| {
        format!("'{text}' is not a port or an address and port: give 9187, 127.0.0.1:9187 or 0.0.0.0:9187")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_keys_are_plain_or_base64_on_the_key_as_the_pushgateway_reads_them() {
        assert_eq!(grouping_key("host", "db-1.lab"), "/host/db-1.lab");
        // base64url of "my host/2".
        assert_eq!(
            grouping_key("host", "my host/2"),
            "/host@base64/bXkgaG9zdC8y"
        );
        assert_eq!(grouping_key("host", ""), "/host@base64/=");
    }

    /// The server's reads as last read, and a cluster's last level per instance, are served
    /// labelled by kind, instance number and role; nothing of an instance's target is.
    #[test]
    fn server_reads_and_instances_are_served_with_bounded_labels() {
        let server_reads = Arc::new(ServerReadsSeen::new());
        let state = Arc::new(Mutex::new(Exported::default()));
        let mut registry = Registry::default();
        registry.register_collector(Box::new(RunCollector {
            state: Arc::clone(&state),
            server_reads: Arc::clone(&server_reads),
            labels: vec![("workload".into(), "db".into())],
        }));
        let text = || {
            let mut text = String::new();
            prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
            text
        };
        assert!(!text().contains("corescale_server_reads"), "{}", text());
        server_reads.set(1_234_567.0, 89.0);
        let instance = |role: &str, statements_per_s: f64, lio: Option<f64>| EndedInstance {
            role: role.to_string(),
            sessions: 2,
            statements_per_s,
            p99_s: Some(0.0025),
            server_reads_per_s: lio,
        };
        state.lock().unwrap().last = Some(EndedLevel {
            workers: 4,
            rate_per_s: 100.0,
            elapsed_s: 2.0,
            p99_s: Some(0.003),
            lag_p99_s: None,
            offered_per_s: None,
            disturbed: false,
            server_reads_per_s: [Some(5000.0), None],
            instances: vec![
                instance("primary", 60.0, Some(3000.0)),
                instance("replica", 40.0, None),
            ],
        });
        let text = text();
        for line in [
            "corescale_server_reads_total{kind=\"logical\"} 1234567.0",
            "corescale_server_reads_total{kind=\"physical\"} 89.0",
            "corescale_last_level_server_reads_per_second{kind=\"logical\"} 5000.0",
            "corescale_last_level_instance_statements_per_second{instance_number=\"1\",role=\"primary\"} 60.0",
            "corescale_last_level_instance_statements_per_second{instance_number=\"2\",role=\"replica\"} 40.0",
            "corescale_last_level_instance_sessions{instance_number=\"2\",role=\"replica\"} 2.0",
            "corescale_last_level_instance_p99_seconds{instance_number=\"1\",role=\"primary\"} 0.0025",
            "corescale_last_level_instance_server_reads_per_second{instance_number=\"1\",role=\"primary\"} 3000.0",
        ] {
            assert!(
                text.lines().any(|served| served == line),
                "{line} not in\n{text}"
            );
        }
        // A reading not made is not served as a zero.
        assert!(!text.contains("kind=\"physical\"} 0"), "{text}");
        assert!(
            !text.contains("server_reads_per_second{instance_number=\"2\""),
            "{text}"
        );
    }

    #[test]
    fn a_port_alone_listens_on_the_loopback() {
        assert_eq!(parse_listen("9187").unwrap().to_string(), "127.0.0.1:9187");
        assert_eq!(parse_listen(":9187").unwrap().to_string(), "127.0.0.1:9187");
        assert_eq!(
            parse_listen("0.0.0.0:9100").unwrap().to_string(),
            "0.0.0.0:9100"
        );
        assert!(parse_listen("somewhere").is_err());
        assert!(parse_listen("70000").is_err());
    }
}
