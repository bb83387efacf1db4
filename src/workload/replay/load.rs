//! Replay files read for a run: one database's sessions within the chosen part of the
//! capture, each with its statements in order, dealt to lanes (sessions that never overlap
//! share one, as a connection pool would); each lane is one session of the replay. The
//! captures of a cluster's instances, given together, are replayed together, each on the
//! clock of its log.

use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, anyhow, bail};

use super::class::Class;
use super::commit_order::{Order, Planner, Transactions, Within};
use super::file::{self, Line};
use super::fingerprint::{Quoting, as_written, fingerprint};
use super::log_time::Zone;
use crate::db::driver::BoundValue;
use crate::error::UsageError;
use crate::latency::ResponseTimes;

/// The longest duration a statement is taken to have (longer ones are a log's nonsense):
/// the day every response time is bounded by.
const A_DAY_US: u64 = (crate::latency::A_DAY_MS * 1e3) as u64;

/// The most fingerprints with figures of their own; the rest are counted together.
pub const MOST_FINGERPRINTS: usize = 40;

/// One statement as a lane sends it: it owns its text and values, which its lane's
/// sessions borrow to send it (nothing copied per statement) and which are freed with the
/// replay.
#[derive(Debug, Clone)]
pub struct Sent {
    /// Microseconds from the start of the replayed part.
    pub at_us: u64,
    pub sql: Box<str>,
    /// The extended protocol's values and its prepared statement's number; None for a
    /// statement sent as text.
    pub prepared: Option<(usize, Box<[BoundValue]>)>,
    /// Its fingerprint's number (the last number: the others, together).
    pub fingerprint: usize,
    /// Whether it starts a captured session other than the one before it in the lane:
    /// the lane connects anew first.
    pub new_session: bool,
    /// Its captured session's user, by number in [`Replay::users`] (`--map` may connect
    /// each as a user of its own).
    pub user: usize,
    /// Whether its captured session only reads (`--route reads=replicas` replays it on a
    /// replica).
    pub reads_only: bool,
    /// Its place in the capture's commit order.
    pub order: Order,
}

/// What is replayed, and what was left out.
#[derive(Debug, Default)]
pub struct Replay {
    /// Commits numbered in the capture's commit order (`commit_order`).
    pub commits: usize,
    /// The captures' file names ("shop.capture", "node1.capture + node2.capture"), in the
    /// order of their clocks whatever the command line's.
    pub name: String,
    /// The captures' content ("sha256 1a2b3c4d5e6f", `file::read`; joined by " + " for
    /// several, in the same order).
    pub digest: String,
    /// Said before the run: several captures kept on one local clock.
    pub warnings: Vec<String>,
    pub lanes: Vec<Vec<Sent>>,
    /// The replayed part's length at 1x.
    pub span: Duration,
    pub database: String,
    pub users: Vec<String>,
    pub statements: u64,
    pub sessions: u64,
    /// Fingerprints with figures of their own, by number; "others" last when some are
    /// counted together.
    pub fingerprints: Vec<String>,
    /// Each fingerprint's captured durations, where the log gave them.
    pub captured: Vec<ResponseTimes>,
    /// Each fingerprint's statements, and their rows summed where the log gave every one's
    /// (MySQL's slow log; copies made by `--sessions-factor` not counted).
    pub counts: Vec<u64>,
    pub captured_rows: Vec<Option<u64>>,
    /// Writes kept: their count and the first one's fingerprint.
    pub writes: (u64, Option<String>),
    pub left_out: LeftOut,
    pub capture_errors: BTreeMap<String, u64>,
    /// `--sessions-factor`'s copies of read-only sessions: sessions, statements.
    pub copied: (u64, u64),
    /// Idle gaps longer than `--max-idle`, shortened to it, and the time taken out.
    pub idle_shortened: (u64, Duration),
}

/// Statements the capture holds that this replay does not send, by why.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LeftOut {
    pub other_databases: u64,
    pub outside_window: u64,
    pub ddl: u64,
    pub server_wide: u64,
    /// COPY with the client's data (FROM STDIN, TO STDOUT), which no log holds.
    pub copy: u64,
    /// Never stored by the capture, or found in it and not sent.
    pub passwords: u64,
    /// `USE` statements (a replay stays in the URL's database).
    pub database_changes: u64,
    /// Refused in production for want of a privilege (SQLSTATE 42501): never sent, so a
    /// replay cannot do what the application could not.
    pub denied: u64,
}

/// Which part of the capture, and what of it.
#[derive(Debug, Clone, Default)]
pub struct Choice {
    pub database: Option<String>,
    pub from: Option<Duration>,
    pub window: Option<Duration>,
    pub include_ddl: bool,
    pub include_server_wide: bool,
    /// `--sessions-factor`: each read-only session replayed this many times.
    pub sessions_factor: u32,
    /// The database the replay connects to (the URL's): a statement naming another
    /// database, or the captured one under another name, is left out.
    pub target_database: Option<String>,
    /// `--max-idle`: longer idle time (no statement sent or running) is shortened to it.
    pub max_idle: Option<Duration>,
}

/// A captured session while the file is read.
#[derive(Clone)]
struct Captured {
    database: String,
    user: String,
    statements: Vec<file::Statement>,
    /// When the session disconnected, where the log says.
    ended_us: Option<i64>,
    /// A copy made by `--sessions-factor`: its statements' captured durations are the
    /// original's, not counted again.
    copy: bool,
}

/// One replay file, read whole.
struct Read {
    /// Its sessions, by their number in the file.
    sessions: BTreeMap<u32, Captured>,
    summary: file::Summary,
    product: String,
    digest: String,
}

fn read(path: &Path) -> Result<Read> {
    let mut sessions = BTreeMap::new();
    let mut summary = None;
    let mut product = String::new();
    let digest = file::read(path, &mut |line| {
        match line {
            Line::Header { product: read, .. } => product = read,
            Line::Session {
                id, user, database, ..
            } => {
                sessions.insert(
                    id,
                    Captured {
                        database,
                        user,
                        statements: Vec::new(),
                        ended_us: None,
                        copy: false,
                    },
                );
            }
            Line::Statement(statement) => {
                if let Some(session) = sessions.get_mut(&statement.session) {
                    session.statements.push(statement);
                }
            }
            Line::Summary(read) => summary = Some(read),
            Line::End { id, at_us } => {
                if let Some(session) = sessions.get_mut(&id) {
                    session.ended_us = Some(at_us);
                }
            }
        }
        Ok(())
    })?;
    for session in sessions.values_mut() {
        ending_within(session);
    }
    let Some(summary) = summary else {
        bail!(
            "{} ends before its summary: the capture was cut short; make it again with `corescale capture`",
            path.display()
        );
    };
    Ok(Read {
        sessions,
        summary,
        product,
        digest,
    })
}

/// Each statement's latest end after its start: its duration, else until the session's
/// next statement, else until its disconnection.
fn ending_within(session: &mut Captured) {
    let mut next_start = session.ended_us;
    for statement in session.statements.iter_mut().rev() {
        statement.ends_within_us = statement.took_us.or_else(|| {
            next_start.map(|next| u64::try_from(next.saturating_sub(statement.at_us)).unwrap_or(0))
        });
        next_start = Some(statement.at_us);
    }
}

/// Microseconds to add to each capture's offsets to put it on the earliest one's clock (its
/// first entry's time, as its log wrote it), and that clock. Captures of two products, of
/// one log twice, or of clocks that cannot be placed on one are refused.
fn shifts(reads: &[Read], names: &[String]) -> Result<(Vec<i64>, Zone)> {
    if reads.len() == 1 {
        return Ok((vec![0], Zone::Utc));
    }
    let mut origins = Vec::with_capacity(reads.len());
    for (index, (read, name)) in reads.iter().zip(names).enumerate() {
        if let Some(first) = reads[..index]
            .iter()
            .position(|other| other.digest == read.digest)
        {
            return Err(UsageError::new(format!(
                "{name} holds the same capture as {}: give each instance's capture once",
                names[first]
            ))
            .into());
        }
        if read.product != reads[0].product {
            return Err(UsageError::new(format!(
                "{name} is a capture of {}, {} of {}: replay the captures of one product together",
                read.product, names[0], reads[0].product
            ))
            .into());
        }
        let origin = super::log_time::parse_time(&read.summary.origin).ok_or_else(|| {
            anyhow!(
                "{name}: its first entry's time '{}' is not one corescale reads: make the capture again with `corescale capture`",
                read.summary.origin
            )
        })?;
        origins.push(origin);
    }
    if let Some(other) = origins
        .iter()
        .position(|origin| origin.zone != origins[0].zone)
    {
        return Err(UsageError::new(format!(
            "{} was logged on {} and {} on {}, which corescale cannot place on one clock: set log_timezone = 'UTC' (PostgreSQL) or log_timestamps = UTC (MySQL) on every instance, or replay each capture on its own",
            names[0], origins[0].zone, names[other], origins[other].zone
        ))
        .into());
    }
    let earliest = origins.iter().map(|origin| origin.at_us).min().unwrap_or(0);
    let shifts = origins
        .iter()
        .map(|origin| origin.at_us - earliest)
        .collect();
    Ok((shifts, origins.swap_remove(0).zone))
}

/// Refuses captures logged over different times: each must begin before those that began
/// earlier have all ended, as a cluster's instances logged at once do; else the replay
/// would wait through the gap, hours or years of it.
fn overlapping(reads: &[Read], shifts: &[i64], names: &[String]) -> Result<()> {
    let mut spans: Vec<(i64, i64, usize)> = reads
        .iter()
        .zip(shifts)
        .enumerate()
        .map(|(index, (read, shift))| {
            let last = read
                .sessions
                .values()
                .flat_map(|session| session.statements.iter().map(|statement| statement.at_us))
                .max()
                .unwrap_or(0);
            (*shift, shift.saturating_add(last), index)
        })
        .collect();
    spans.sort_unstable();
    let (mut end, mut ending) = (spans[0].1, spans[0].2);
    for &(start, last, index) in &spans[1..] {
        if start > end {
            return Err(UsageError::new(format!(
                "{} begins {:.1} s after {} ends: captures replay together only when their instances were logged over the same time; capture one period on each instance, or replay each capture on its own",
                names[index],
                start.abs_diff(end) as f64 / 1e6,
                names[ending]
            ))
            .into());
        }
        if last > end {
            (end, ending) = (last, index);
        }
    }
    Ok(())
}

/// A capture as results name it: its file name.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// One capture on the replay's clock: the microseconds that put it there, and its place
/// on the command line.
struct Placed {
    read: Read,
    shift: i64,
    given: usize,
}

/// The captures read and put on one clock, in that clock's order.
struct Together {
    placed: Vec<Placed>,
    /// Their paths (for messages), file names (for results) and contents, each joined by
    /// " + ".
    named: String,
    name: String,
    digest: String,
    warnings: Vec<String>,
}

/// Reads the captures and puts them on one clock, in its order (then by content) whatever
/// the command line's: the same captures are one replay, compared as one.
fn together(paths: &[PathBuf]) -> Result<Together> {
    let reads = paths
        .iter()
        .map(|path| read(path))
        .collect::<Result<Vec<_>>>()?;
    let names = paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>();
    let (shifts, clock) = shifts(&reads, &names)?;
    overlapping(&reads, &shifts, &names)?;
    let mut placed: Vec<Placed> = reads
        .into_iter()
        .zip(shifts)
        .enumerate()
        .map(|(given, (read, shift))| Placed { read, shift, given })
        .collect();
    placed.sort_by(|a, b| (a.shift, &a.read.digest).cmp(&(b.shift, &b.read.digest)));
    let joined =
        |text: &dyn Fn(&Placed) -> String| placed.iter().map(text).collect::<Vec<_>>().join(" + ");
    let named = joined(&|capture| names[capture.given].clone());
    let mut warnings = Vec::new();
    if let Zone::Wall(_) = clock
        && placed.len() > 1
    {
        warnings.push(format!(
            "{named} were logged on {clock}: they are replayed as if every instance's clock kept the same local time; where they did not, capture with times in UTC (log_timezone = 'UTC' on PostgreSQL, log_timestamps = UTC on MySQL, MariaDB started with TZ=UTC)"
        ));
    }
    warnings.extend(one_log_twice(&placed, &names));
    Ok(Together {
        name: joined(&|capture| file_name(&paths[capture.given])),
        digest: joined(&|capture| capture.read.digest.clone()),
        named,
        warnings,
        placed,
    })
}

/// Captures whose first entries fell in the same instant to a fraction of a second: most
/// likely one log captured twice (with other options, so another content), which doubles
/// its load. Said, not refused: instances started together may log their first entry at
/// once, and a log in whole seconds (MariaDB's slow log) proves nothing.
fn one_log_twice(placed: &[Placed], names: &[String]) -> Option<String> {
    let pair = placed.windows(2).find(|pair| {
        pair[0].shift == pair[1].shift
            && super::log_time::parse_time(&pair[0].read.summary.origin)
                .is_some_and(|origin| origin.precise)
    })?;
    Some(format!(
        "{} and {} begin at the same instant ({}): if they are one log captured twice, give it once, or the replay sends its statements twice",
        names[pair[0].given], names[pair[1].given], pair[0].read.summary.origin
    ))
}

/// Reads the captures at `paths` (one, or one per instance of a cluster) and keeps what
/// `choice` asks for.
pub fn load(paths: &[PathBuf], choice: &Choice) -> Result<Replay> {
    let Together {
        placed,
        named,
        name,
        digest,
        warnings,
    } = together(paths)?;
    let quoting = Quoting::of_product(&placed[0].read.product);
    let mut left_out = LeftOut::default();
    let mut capture_errors = BTreeMap::new();
    let mut sessions = Vec::new();
    for Placed { read, shift, .. } in placed {
        left_out.passwords += read.summary.passwords_left_out;
        for (sqlstate, count) in read.summary.errors {
            *capture_errors.entry(sqlstate).or_default() += count;
        }
        for mut session in read.sessions.into_values() {
            for statement in &mut session.statements {
                statement.at_us = statement.at_us.saturating_add(shift);
            }
            sessions.push(session);
        }
    }
    let database = match &choice.database {
        Some(database) => database.clone(),
        None => busiest_database(&sessions).unwrap_or_default(),
    };
    let known = database_names(&sessions);
    let mut kept: Vec<Captured> = Vec::new();
    for mut session in sessions {
        in_one_database(&mut session, &database, choice, quoting, &mut left_out);
        session
            .statements
            .retain_mut(|statement| kept_by_class(statement, choice, quoting, &mut left_out));
        session.statements.sort_by_key(|statement| statement.at_us);
        if !session.statements.is_empty() {
            kept.push(session);
        }
    }
    if kept.is_empty() {
        bail!(
            "{named}: no statement of database '{database}' to replay (databases captured: {}): name one with --database",
            known.join(", ")
        );
    }
    window(&mut kept, choice, &mut left_out, &named)?;
    let idle_shortened = choice
        .max_idle
        .map_or((0, Duration::ZERO), |most| shorten_idle(&mut kept, most));
    let copied = copy_read_only(&mut kept, choice.sessions_factor);
    let mut replay = dealt(kept, (database, digest), left_out, capture_errors, quoting);
    replay.copied = copied;
    replay.idle_shortened = idle_shortened;
    replay.name = name;
    replay.warnings = warnings;
    Ok(replay)
}

/// Keeps the session's statements that run in `database`, as the capture says where each
/// ran and its `USE` statements move it: `USE` itself is left out (the replay stays in the
/// URL's database), as is every statement naming a database other than the URL's.
fn in_one_database(
    session: &mut Captured,
    database: &str,
    choice: &Choice,
    quoting: Quoting,
    left_out: &mut LeftOut,
) {
    let mut current = session.database.clone();
    let target = choice.target_database.as_deref();
    session.statements.retain(|statement| {
        if let Some(moved) = &statement.database {
            current.clone_from(moved);
        }
        if let Some(used) = super::class::used_database(&statement.sql, quoting) {
            current = used;
            left_out.database_changes += 1;
            return false;
        }
        let elsewhere = super::class::databases_named(&statement.sql, quoting)
            .iter()
            .any(|named| named != database || target.is_some_and(|target| target != named));
        if current != database || elsewhere {
            left_out.other_databases += 1;
            return false;
        }
        true
    });
}

/// Whether a statement is sent, by its class read anew from its text (a capture file is
/// input, never trusted) and by whether production refused it for want of a privilege.
fn kept_by_class(
    statement: &mut file::Statement,
    choice: &Choice,
    quoting: Quoting,
    left_out: &mut LeftOut,
) -> bool {
    statement.class = super::class::classify(&statement.sql, quoting);
    if super::class::parameters_hold_password(statement.parameters.as_deref()) {
        statement.class = Class::Password;
    }
    if statement.failed.as_deref() == Some(INSUFFICIENT_PRIVILEGE) {
        left_out.denied += 1;
        return false;
    }
    match statement.class {
        _ if copies_with_client(&statement.sql) => {
            left_out.copy += 1;
            false
        }
        Class::Ddl if !choice.include_ddl => {
            left_out.ddl += 1;
            false
        }
        Class::ServerWide if !choice.include_server_wide => {
            left_out.server_wide += 1;
            false
        }
        Class::Password => {
            left_out.passwords += 1;
            false
        }
        _ => true,
    }
}

/// PostgreSQL's SQLSTATE for a statement refused for want of a privilege.
const INSUFFICIENT_PRIVILEGE: &str = "42501";

/// `--sessions-factor K`: each session that neither writes nor resets anything gets K - 1
/// copies, copy i sending each statement i/K of the session's mean gap between statements
/// later (a session of one statement: at the same time), so the copies interleave with it
/// rather than march in step. The copies' sessions and statements, counted.
fn copy_read_only(sessions: &mut Vec<Captured>, factor: u32) -> (u64, u64) {
    let mut copies = Vec::new();
    for session in sessions.iter() {
        if factor <= 1 || session.statements.iter().any(writes_or_resets) {
            continue;
        }
        let (first, last) = (
            session.statements[0].at_us,
            session.statements[session.statements.len() - 1].at_us,
        );
        let gap = last.saturating_sub(first) / (session.statements.len() as i64 - 1).max(1);
        for copy in 1..factor {
            let shift = gap.saturating_mul(i64::from(copy)) / i64::from(factor);
            let mut copied = session.clone();
            copied.copy = true;
            for statement in &mut copied.statements {
                statement.at_us = statement.at_us.saturating_add(shift);
            }
            copies.push(copied);
        }
    }
    let counted = (
        copies.len() as u64,
        copies.iter().map(|copy| copy.statements.len() as u64).sum(),
    );
    sessions.extend(copies);
    counted
}

/// What the classes call writes, and whatever the script check finds may write or change
/// the session's access mode (DISCARD ALL, SET transaction_read_only, EXPLAIN ANALYZE
/// DELETE, SELECT ... INTO): refused without --allow-writes, and never copied.
fn writes_or_resets(statement: &file::Statement) -> bool {
    matches!(
        statement.class,
        Class::Write | Class::Ddl | Class::ServerWide
    ) || crate::workload::script::access::may_write(&statement.sql)
}

/// Whether a captured session may replay on a replica (`--route reads=replicas`): none of
/// its statements writes, resets anything, or uses what a hot standby refuses.
fn only_reads(session: &Captured) -> bool {
    !session.statements.iter().any(|statement| {
        writes_or_resets(statement)
            || crate::workload::script::access::standby_refuses(&statement.sql)
    })
}

/// COPY ... FROM STDIN or TO STDOUT: the rows go between client and server, and the log
/// holds none of them.
fn copies_with_client(sql: &str) -> bool {
    let upper = sql.trim_start().to_ascii_uppercase();
    upper.starts_with("COPY") && (upper.contains("STDIN") || upper.contains("STDOUT"))
}

/// The databases the captures' sessions named, for a refusal.
fn database_names(sessions: &[Captured]) -> Vec<String> {
    let names: std::collections::BTreeSet<String> = sessions
        .iter()
        .map(|session| {
            if session.database.is_empty() {
                "(none named)".to_string()
            } else {
                format!("'{}'", session.database)
            }
        })
        .collect();
    names.into_iter().collect()
}

fn busiest_database(sessions: &[Captured]) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for session in sessions {
        *counts.entry(session.database.as_str()).or_default() += session.statements.len();
    }
    counts
        .into_iter()
        .max_by_key(|(_, count)| *count)
        .map(|(database, _)| database.to_string())
}

/// Keeps the statements within `--from` and `--window`, with offsets from the window's
/// start.
fn window(
    sessions: &mut Vec<Captured>,
    choice: &Choice,
    left_out: &mut LeftOut,
    named: &str,
) -> Result<()> {
    let first = sessions
        .iter()
        .filter_map(|session| session.statements.first())
        .map(|statement| statement.at_us)
        .min()
        .unwrap_or(0);
    let last = sessions
        .iter()
        .filter_map(|session| session.statements.last())
        .map(|statement| statement.at_us)
        .max()
        .unwrap_or(0);
    let span_s = last.saturating_sub(first) as f64 / 1e6;
    let start = first.saturating_add(choice.from.map_or(0, |from| from.as_micros() as i64));
    let end = choice.window.map_or(i64::MAX, |window| {
        start.saturating_add(window.as_micros() as i64)
    });
    for session in sessions.iter_mut() {
        let before = session.statements.len();
        session
            .statements
            .retain(|statement| (start..end).contains(&statement.at_us));
        left_out.outside_window += (before - session.statements.len()) as u64;
        for statement in &mut session.statements {
            statement.at_us = statement.at_us.saturating_sub(start);
        }
    }
    sessions.retain(|session| !session.statements.is_empty());
    if sessions.is_empty() {
        bail!(
            "{named}: no statement within --from and --window: the captured statements span {span_s:.3} s from the first; give a part within it"
        );
    }
    Ok(())
}

/// Shortens each stretch longer than `most` in which no statement was sent or running
/// (by the captured durations) to `most`, moving every later statement earlier: a capture
/// dated years apart, or with a night's gap, replays without waiting through it. The gaps
/// shortened, and the time taken out.
fn shorten_idle(sessions: &mut [Captured], most: Duration) -> (u64, Duration) {
    let most_us = i64::try_from(most.as_micros()).unwrap_or(i64::MAX);
    let mut busy: Vec<(i64, i64)> = sessions
        .iter()
        .flat_map(|session| &session.statements)
        .map(|statement| {
            let took = statement.took_us.unwrap_or(0).min(A_DAY_US) as i64;
            (statement.at_us, statement.at_us.saturating_add(took))
        })
        .collect();
    busy.sort_unstable();
    // Each gap's end, and the time taken out up to and including it.
    let mut cuts: Vec<(i64, i64)> = Vec::new();
    let mut busy_until = i64::MIN;
    let mut taken = 0_i64;
    for (start, end) in busy {
        if busy_until != i64::MIN && start.saturating_sub(busy_until) > most_us {
            taken = taken.saturating_add(start - busy_until - most_us);
            cuts.push((start, taken));
        }
        busy_until = busy_until.max(end);
    }
    if cuts.is_empty() {
        return (0, Duration::ZERO);
    }
    for statement in sessions
        .iter_mut()
        .flat_map(|session| &mut session.statements)
    {
        let before = cuts.partition_point(|(end, _)| *end <= statement.at_us);
        if before > 0 {
            statement.at_us -= cuts[before - 1].1;
        }
    }
    (
        cuts.len() as u64,
        Duration::from_micros(u64::try_from(taken).unwrap_or(0)),
    )
}

/// Lanes as sessions are dealt to them: each one's statements, their captured starts and
/// whether each is in a transaction, and when each lane's last session ends.
#[derive(Default)]
struct Lanes {
    sent: Vec<Vec<Sent>>,
    starts: Vec<Vec<i64>>,
    within: Vec<Vec<Within>>,
    /// The lane whose last session ended first takes the next.
    free: BinaryHeap<std::cmp::Reverse<(i64, usize)>>,
}

impl Lanes {
    /// The lane for a session from `start` to `end`: the first free then, else a new one.
    fn take(&mut self, start: i64, end: i64) -> usize {
        let lane = match self.free.peek() {
            Some(std::cmp::Reverse((ended, lane))) if *ended <= start => {
                let lane = *lane;
                self.free.pop();
                lane
            }
            _ => {
                self.sent.push(Vec::new());
                self.starts.push(Vec::new());
                self.within.push(Vec::new());
                self.sent.len() - 1
            }
        };
        self.free.push(std::cmp::Reverse((end, lane)));
        lane
    }
}

/// A captured statement's parameters as it binds them (None a NULL).
fn bound_values(values: Vec<Option<String>>) -> Box<[BoundValue]> {
    values
        .into_iter()
        .map(|value| value.map_or(BoundValue::Null, |text| BoundValue::Text(text.into())))
        .collect()
}

/// When a session's last statement ended, by the captured durations.
fn session_end(session: &Captured) -> i64 {
    session
        .statements
        .iter()
        .map(|statement| {
            statement
                .at_us
                .saturating_add(statement.took_us.unwrap_or(0).min(A_DAY_US) as i64)
        })
        .max()
        .unwrap_or(i64::MIN)
}

/// Sessions dealt to lanes: each to the first lane free when it starts (sessions that never
/// overlap share one), its statements' texts and values kept for the run.
fn dealt(
    sessions: Vec<Captured>,
    (database, digest): (String, String),
    left_out: LeftOut,
    capture_errors: BTreeMap<String, u64>,
    quoting: Quoting,
) -> Replay {
    let (fingerprints, numbers) = ranked_fingerprints(&sessions, quoting);
    let others = fingerprints.len().saturating_sub(1);
    let mut captured = vec![ResponseTimes::default(); fingerprints.len()];
    let mut counts = vec![0; fingerprints.len()];
    // Each fingerprint's rows summed, while every statement of it had them.
    let mut rows: Vec<Option<u64>> = vec![Some(0); fingerprints.len()];
    let mut prepared: HashMap<String, usize> = HashMap::new();
    let mut sorted = sessions;
    sorted.sort_by_key(|session| session.statements[0].at_us);
    let mut lanes = Lanes::default();
    let users: Vec<String> = sorted
        .iter()
        .map(|session| session.user.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut writes = (0, None);
    let mut planner = Planner::default();
    let mut statements = 0;
    let mut span_us = 0;
    let sessions = sorted.len() as u64;
    for session in sorted {
        let user = users.binary_search(&session.user).unwrap_or_default();
        let lane = lanes.take(session.statements[0].at_us, session_end(&session));
        let reads_only = only_reads(&session);
        let mut transactions = Transactions::default();
        for (index, statement) in session.statements.into_iter().enumerate() {
            statements += 1;
            let (commits, within) = transactions.step(&statement.sql, statement.class);
            if commits && let Some(within) = statement.ends_within_us {
                let end = statement.at_us.saturating_add(within.min(A_DAY_US) as i64);
                planner.commit(end, lane, lanes.sent[lane].len());
            }
            lanes.starts[lane].push(statement.at_us);
            lanes.within[lane].push(within);
            span_us = span_us.max(statement.at_us);
            let print = fingerprint(&statement.sql, quoting);
            let number = numbers.get(&print).copied().unwrap_or(others);
            if let Some(took) = statement.took_us.filter(|_| !session.copy) {
                captured[number].record(Duration::from_micros(took));
            }
            if !session.copy {
                counts[number] += 1;
                rows[number] = rows[number]
                    .zip(statement.rows)
                    .map(|(sum, more)| sum + more);
            }
            if writes_or_resets(&statement) {
                writes.0 += 1;
                writes.1.get_or_insert(print);
            }
            let values = statement.parameters.map(bound_values);
            let next = prepared.len();
            lanes.sent[lane].push(Sent {
                at_us: statement.at_us.max(0) as u64,
                prepared: values.map(|values| {
                    (
                        *prepared.entry(statement.sql.clone()).or_insert(next),
                        values,
                    )
                }),
                sql: statement.sql.into_boxed_str(),
                fingerprint: number,
                new_session: index == 0,
                user,
                reads_only,
                order: Order::default(),
            });
        }
    }
    let commits = planner.commits();
    let orders = planner.orders(&lanes.starts, &lanes.within);
    for (lane, orders) in lanes.sent.iter_mut().zip(orders) {
        for (sent, order) in lane.iter_mut().zip(orders) {
            sent.order = order;
        }
    }
    Replay {
        commits,
        digest,
        lanes: lanes.sent,
        span: Duration::from_micros(span_us.max(0) as u64),
        database,
        users,
        statements,
        sessions,
        fingerprints,
        captured,
        captured_rows: rows
            .into_iter()
            .zip(&counts)
            .map(|(rows, count)| rows.filter(|_| *count > 0))
            .collect(),
        counts,
        writes,
        left_out,
        capture_errors,
        ..Replay::default()
    }
}

/// The fingerprints by how many statements have them, the most first, up to
/// [`MOST_FINGERPRINTS`]; "(others)" last when there are more.
fn ranked_fingerprints(
    sessions: &[Captured],
    quoting: Quoting,
) -> (Vec<String>, HashMap<String, usize>) {
    // Each fingerprint's count, and how its first statement was written: what is shown.
    let mut counts: HashMap<String, (u64, String)> = HashMap::new();
    for statement in sessions.iter().flat_map(|session| &session.statements) {
        let (count, _) = counts
            .entry(fingerprint(&statement.sql, quoting))
            .or_insert_with(|| (0, as_written(&statement.sql, quoting)));
        *count += 1;
    }
    let mut ranked: Vec<(String, u64, String)> = (counts.into_iter())
        .map(|(print, (count, shown))| (print, count, shown))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let more = ranked.len() > MOST_FINGERPRINTS;
    ranked.truncate(MOST_FINGERPRINTS - usize::from(more));
    let numbers = ranked
        .iter()
        .enumerate()
        .map(|(number, (print, _, _))| (print.clone(), number))
        .collect();
    let mut names: Vec<String> = ranked.into_iter().map(|(_, _, shown)| shown).collect();
    if more {
        names.push("(others)".to_string());
    }
    (names, numbers)
}

#[cfg(test)]
mod tests;
