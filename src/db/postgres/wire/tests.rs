//! The client against scripted server bytes: no server needed, every branch reachable.
use std::io::Cursor;
use std::sync::{Arc, Mutex};

use super::*;
use crate::db::SessionError;

/// Plays the server: answers from a script, records what the client sent.
struct Scripted {
    answers: Cursor<Vec<u8>>,
    sent: Arc<Mutex<Vec<u8>>>,
}

impl Read for Scripted {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.answers.read(buffer)
    }
}

impl Write for Scripted {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        self.sent.lock().unwrap().extend_from_slice(buffer);
        Ok(buffer.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One backend message: tag, length, body.
fn message(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut bytes = vec![tag];
    bytes.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    bytes.extend_from_slice(body);
    bytes
}

fn auth(code: i32, extra: &[u8]) -> Vec<u8> {
    let mut body = code.to_be_bytes().to_vec();
    body.extend_from_slice(extra);
    message(b'R', &body)
}

fn ready() -> Vec<u8> {
    message(b'Z', b"I")
}

fn key_data(pid: i32) -> Vec<u8> {
    let mut body = pid.to_be_bytes().to_vec();
    body.extend_from_slice(&7i32.to_be_bytes());
    message(b'K', &body)
}

/// The server's greeting after trust authentication.
fn greeting(pid: i32) -> Vec<u8> {
    [auth(0, &[]), key_data(pid), ready()].concat()
}

fn error(code: &str, text: &str) -> Vec<u8> {
    let body = format!("SERROR\0C{code}\0M{text}\0\0");
    message(b'E', body.as_bytes())
}

fn complete(tag: &str) -> Vec<u8> {
    message(b'C', format!("{tag}\0").as_bytes())
}

/// A row of columns, binary int8 or text; None is NULL.
fn row(columns: &[Option<Vec<u8>>]) -> Vec<u8> {
    let mut body = (columns.len() as i16).to_be_bytes().to_vec();
    for column in columns {
        match column {
            Some(bytes) => {
                body.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                body.extend_from_slice(bytes);
            }
            None => body.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    message(b'D', &body)
}

fn text(value: i64) -> Option<Vec<u8>> {
    Some(value.to_string().into_bytes())
}

/// A select's answer in a pipelined batch: bind, row (sum, count), command complete.
fn select_answer(count: i64) -> Vec<u8> {
    [
        message(b'2', &[]),
        row(&[text(0), text(count)]),
        complete("SELECT 1"),
    ]
    .concat()
}

fn target(url: &str) -> Target {
    crate::db::registry::target(url).unwrap()
}

fn session(url: &str, script: Vec<u8>) -> (Result<WireSession<Scripted>>, Arc<Mutex<Vec<u8>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let stream = Scripted {
        answers: Cursor::new(script),
        sent: Arc::clone(&sent),
    };
    (
        WireSession::start(stream, &target(url), Transport::default()),
        sent,
    )
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

#[test]
fn the_server_version_is_read_at_startup() {
    let status = message(
        b'S',
        b"server_version\x0015.4 (Debian 15.4-1.pgdg120+1)\x00",
    );
    let script = [auth(0, &[]), status, key_data(1), ready()].concat();
    let (session, _) = session("postgres://u@db/x", script);
    assert_eq!(session.unwrap().server_major(), Some(15));
    for (text, major) in [("9.6.24", Some(9)), ("17devel", Some(17)), ("x", None)] {
        assert_eq!(major_version(text), major, "{text}");
    }
}

/// A server (or a man in the middle) that answers the first SCRAM message with "ok",
/// skipping the proof that it knows the password, is refused; so is one that does the same
/// after offering channel binding.
#[test]
fn an_unproven_scram_success_is_refused() {
    let mechanisms = b"SCRAM-SHA-256\0\0";
    let script = [auth(10, mechanisms), greeting(1)].concat();
    let (outcome, _) = session("postgres://u:secret-pw@db/x", script);
    let error = outcome.err().unwrap().to_string();
    assert!(error.contains("before completing SCRAM"), "{error}");
    assert!(!error.contains("secret-pw"), "{error}");
    // Without a password method at all, channel_binding=require refuses "ok" outright.
    let (outcome, _) = session("postgres://u@db/x?channel_binding=require", greeting(1));
    let error = outcome.err().unwrap().to_string();
    assert!(error.contains("without channel binding"), "{error}");
}

#[test]
fn trust_authentication_learns_the_backend() {
    let (session, sent) = session("postgres://alice@db/shop", greeting(4242));
    let session = session.unwrap();
    assert_eq!(session.backend_pid(), 4242);
    assert_eq!(session.server_major(), None, "no server_version was sent");
    let sent = sent.lock().unwrap();
    assert!(contains(&sent, b"user\0alice\0"));
    assert!(contains(&sent, b"database\0shop\0"));
    assert!(contains(&sent, b"application_name\0corescale\0"));
}

#[test]
fn md5_authentication_sends_the_salted_hash_never_the_password() {
    let salt = [1, 2, 3, 4];
    let script = [auth(5, &salt), greeting(1)].concat();
    let (session, sent) = session("postgres://alice:s3cret@db/shop", script);
    session.unwrap();
    let expected = md5_hash(b"alice", b"s3cret", salt);
    let sent = sent.lock().unwrap();
    assert!(contains(&sent, expected.as_bytes()));
    assert!(!contains(&sent, b"s3cret"));
}

#[test]
fn a_password_request_without_a_password_names_the_ways_to_give_one() {
    let (session, _) = session("postgres://alice@db/shop", auth(3, &[]));
    let text = format!("{:#}", session.err().unwrap());
    assert!(text.contains("CORESCALE_DB_PASSWORD"), "{text}");
}

#[test]
fn a_refused_login_is_a_connect_failure_with_the_servers_words() {
    let script = [
        auth(5, &[0; 4]),
        error("28P01", "password authentication failed"),
    ]
    .concat();
    let (session, _) = session("postgres://alice:wrong@db/shop", script);
    let text = format!("{:#}", session.err().unwrap());
    assert!(
        text.starts_with("cannot connect to postgres://alice:***@db/shop"),
        "{text}"
    );
    assert!(
        text.contains("password authentication failed (SQLSTATE 28P01)"),
        "{text}"
    );
    assert!(!text.contains("wrong"), "{text}");
}

#[test]
fn a_server_that_says_why_and_hangs_up_is_quoted() {
    let script = [
        auth(0, &[]),
        error("3D000", "database \"shop\" does not exist"),
    ]
    .concat();
    let (refused, _) = session("postgres://alice@db/shop", script);
    let text = format!("{:#}", refused.err().unwrap());
    assert_eq!(
        text,
        "cannot connect to postgres://alice@db/shop: database \"shop\" does not exist (SQLSTATE 3D000)"
    );
    // Mid-run, an administrator's shutdown keeps its SQLSTATE for the hints.
    let answers = [
        greeting(1),
        message(b'1', &[]),
        error(
            "57P01",
            "terminating connection due to administrator command",
        ),
    ]
    .concat();
    let (shut, _) = session("postgres://alice@db/shop", answers);
    let error = shut.unwrap().execute(0, SELECT, &keys(0)).unwrap_err();
    let SessionError::ConnectionLost(error) = error else {
        panic!("not a lost connection: {error:#}");
    };
    assert_eq!(error.downcast_ref::<ServerError>().unwrap().code, "57P01");
    assert!(
        format!("{error:#}").contains("closed the connection"),
        "{error:#}"
    );
}

#[test]
fn a_server_that_hangs_up_during_the_handshake_is_named() {
    let (session, _) = session("postgres://alice@db/shop", auth(0, &[]));
    let text = format!("{:#}", session.err().unwrap());
    assert!(
        text.contains("closed the connection during the handshake"),
        "{text}"
    );
}

const SELECT: &str = "SELECT sum(scratch), count(*) FROM t WHERE key BETWEEN $1 AND $2";

fn keys(first_key: i64) -> [BoundValue; 2] {
    [BoundValue::Int(first_key), BoundValue::Int(first_key + 9)]
}

/// The last column of each answer, read as an integer.
fn values(answered: &[(Answer, std::time::Instant)]) -> Vec<Option<i64>> {
    answered.iter().map(|(answer, _)| answer.value).collect()
}

#[test]
fn a_pipelined_batch_is_answered_together_and_counted() {
    // Batch of 3: parse once, three bind/row/complete, one ReadyForQuery.
    let answers = [
        greeting(1),
        message(b'1', &[]),
        select_answer(10),
        select_answer(10),
        select_answer(9),
        ready(),
    ]
    .concat();
    let (session, sent) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    let start = sent.lock().unwrap().len();
    for key in 0..3 {
        session.queue(0, SELECT, &keys(key)).unwrap();
    }
    session.send_batch().unwrap();
    assert_eq!(session.batches_in_flight(), 1);
    // Sent as one write: one Parse, three Binds and Executes, one Sync.
    let batch = sent.lock().unwrap()[start..].to_vec();
    let syncs = batch
        .windows(5)
        .filter(|w| *w == [b'S', 0, 0, 0, 4])
        .count();
    let executes = batch.windows(1).filter(|w| w[0] == b'E').count();
    assert_eq!(syncs, 1);
    assert!(executes >= 3, "{executes}");
    assert_eq!(
        batch.windows(5).filter(|w| *w == b"cs_0\0").count(),
        4,
        "named in one Parse and three Binds"
    );
    // The keys travel as bound text values.
    assert!(contains(&batch, b"\0\0\0\x0211"));
    let mut answered = Vec::new();
    session.answer_batch(&mut answered).unwrap();
    assert_eq!(values(&answered), [Some(10), Some(10), Some(9)]);
    assert!(
        answered
            .iter()
            .all(|(answer, _)| answer.returned == 1 && answer.changed == 0)
    );
    assert_eq!(session.batches_in_flight(), 0);
}

#[test]
fn an_error_mid_batch_fails_the_batch_with_its_sqlstate_and_the_session_goes_on() {
    let answers = [
        greeting(1),
        message(b'1', &[]),
        select_answer(10),
        error("40P01", "deadlock detected"),
        ready(),
        // The next statement on the same session is answered normally.
        select_answer(10),
        ready(),
    ]
    .concat();
    let (session, sent) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    session.queue(0, SELECT, &keys(0)).unwrap();
    session.queue(0, SELECT, &keys(1)).unwrap();
    session.send_batch().unwrap();
    let mut answered = Vec::new();
    let error = session.answer_batch(&mut answered).unwrap_err();
    let failure = error.refusal().unwrap();
    assert_eq!(failure.code.to_string(), "40P01");
    assert_eq!(format!("{error}"), "deadlock detected (SQLSTATE 40P01)");
    // The statement before the failure was answered.
    assert_eq!(values(&answered), [Some(10)]);
    // Its Parse was answered: the next statement binds it without parsing again.
    let before = sent.lock().unwrap().len();
    let answer = session.execute(0, SELECT, &keys(2)).unwrap();
    assert_eq!(answer.value, Some(10));
    assert!(!contains(&sent.lock().unwrap()[before..], b"SELECT sum"));
}

#[test]
fn a_parse_the_server_refused_is_sent_again() {
    let answers = [
        greeting(1),
        error("42P01", "relation \"t\" does not exist"),
        ready(),
        message(b'1', &[]),
        select_answer(3),
        ready(),
    ]
    .concat();
    let (session, sent) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    let error = session.execute(0, SELECT, &keys(0)).unwrap_err();
    assert_eq!(error.refusal().unwrap().code.to_string(), "42P01");
    let before = sent.lock().unwrap().len();
    assert_eq!(session.execute(0, SELECT, &keys(0)).unwrap().value, Some(3));
    assert!(contains(&sent.lock().unwrap()[before..], b"SELECT sum"));
}

#[test]
fn an_update_counts_the_rows_its_tag_says_it_changed() {
    let answers = [
        greeting(1),
        message(b'1', &[]),
        message(b'2', &[]),
        complete("UPDATE 7"),
        ready(),
    ]
    .concat();
    let (session, _) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    let answer = session
        .execute(
            1,
            "UPDATE t SET scratch = scratch + 1 WHERE key BETWEEN $1 AND $2",
            &keys(0),
        )
        .unwrap();
    assert_eq!(
        answer,
        Answer {
            returned: 0,
            changed: 7,
            value: None
        }
    );
    assert_eq!(answer.rows(), 7);
}

#[test]
fn a_server_that_closes_mid_answer_is_a_clear_failure() {
    let answers = [greeting(1), message(b'1', &[]), select_answer(10)].concat();
    let (session, _) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    // Alone, the statement waits for its ReadyForQuery and meets the closed socket.
    let text = format!("{:#}", session.execute(0, SELECT, &keys(0)).unwrap_err());
    assert_eq!(
        text,
        "postgres://alice@db/shop: the server closed the connection"
    );
}

#[test]
fn a_closed_connection_and_a_stalled_server_are_their_kinds_not_refusals() {
    let answers = [greeting(1), message(b'1', &[]), select_answer(10)].concat();
    let (session, _) = session("postgres://alice@db/shop", answers);
    let closed = session.unwrap().execute(0, SELECT, &keys(0)).unwrap_err();
    assert_eq!(closed.kind(), crate::db::ErrorKind::ConnectionLost);
    assert!(closed.refusal().is_none() && !closed.is_retryable());

    /// A server that answers the handshake, then nothing more: each read waits out its limit.
    struct Stalled(Cursor<Vec<u8>>);
    impl Read for Stalled {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buffer)? {
                0 => Err(std::io::ErrorKind::WouldBlock.into()),
                read => Ok(read),
            }
        }
    }
    impl Write for Stalled {
        fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
            Ok(buffer.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let stalled = Stalled(Cursor::new(greeting(1)));
    let target = target("postgres://alice@db/shop");
    let mut session = WireSession::start(stalled, &target, Transport::default()).unwrap();
    let timed_out = session.execute(0, SELECT, &keys(0)).unwrap_err();
    assert_eq!(timed_out.kind(), crate::db::ErrorKind::Timeout);
    assert!(
        timed_out
            .to_string()
            .contains("the server did not answer within"),
        "{timed_out}"
    );
    assert!(timed_out.refusal().is_none());
}

#[test]
fn the_servers_error_is_a_refusal_alone_and_a_lost_connection_when_it_hung_up() {
    let server = |code: &str| ServerError {
        code: code.to_string(),
        message: "words".to_string(),
    };
    let refused = session_error(anyhow::Error::new(server("40001")));
    assert_eq!(
        refused.code(),
        Some(ServerCode::SqlState(SqlState::SERIALIZATION_FAILURE))
    );
    assert!(refused.is_retryable());
    let hung_up = anyhow::Error::new(server("57P01")).context("the server closed the connection");
    assert!(matches!(
        session_error(hung_up),
        SessionError::ConnectionLost(_)
    ));
    let unreadable = session_error(anyhow::Error::new(server("")));
    assert!(matches!(unreadable, SessionError::Other(_)));
}

#[test]
fn text_queries_bind_values_and_read_nulls() {
    let answers = [
        greeting(1),
        message(b'1', &[]),
        message(b'2', &[]),
        row(&[Some(b"table".to_vec()), None]),
        row(&[Some(b"function".to_vec()), Some(b"x".to_vec())]),
        complete("SELECT 2"),
        ready(),
    ]
    .concat();
    let (session, sent) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    let rows = session
        .query(
            "SELECT kind, name FROM t WHERE name = $1",
            &["o'hara\"; DROP"],
        )
        .unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Some("table".to_string()), None],
            vec![Some("function".to_string()), Some("x".to_string())]
        ]
    );
    // The value travels as a bound parameter, never inside the SQL text.
    let sent = sent.lock().unwrap();
    assert!(contains(
        &sent,
        b"SELECT kind, name FROM t WHERE name = $1\0"
    ));
    assert!(contains(&sent, b"o'hara\"; DROP"));
}

#[test]
fn an_unreadable_answer_fails_its_call_and_the_next_call_reads_its_own() {
    let answers = [
        greeting(1),
        // A text column that is not UTF-8, then the rest of that answer.
        message(b'1', &[]),
        message(b'2', &[]),
        row(&[Some(vec![0xff, 0xfe])]),
        row(&[Some(b"stale".to_vec())]),
        complete("SELECT 2"),
        ready(),
        // The next call's own answer.
        message(b'1', &[]),
        message(b'2', &[]),
        row(&[Some(b"fresh".to_vec())]),
        complete("SELECT 1"),
        ready(),
    ]
    .concat();
    let (session, _) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    let error = session.query("SELECT name FROM t", &[]).unwrap_err();
    assert!(format!("{error}").contains("not UTF-8"), "{error}");
    let value: String = session.query_value("SELECT 'fresh'", &[]).unwrap();
    assert_eq!(value, "fresh");
}

#[test]
fn a_commit_the_server_turned_into_a_rollback_is_an_error() {
    let answers = [
        greeting(1),
        complete("BEGIN"),
        ready(),
        complete("ROLLBACK"),
        ready(),
    ]
    .concat();
    let (session, _) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    let error = session.transaction(|_| Ok(())).unwrap_err();
    assert!(
        format!("{error}").contains("not committed (ROLLBACK)"),
        "{error}"
    );
}

#[test]
fn a_failed_transaction_is_rolled_back() {
    let answers = [
        greeting(1),
        complete("BEGIN"),
        ready(),
        message(b'1', &[]),
        error("42P01", "relation \"corescale_t0\" does not exist"),
        message(b'Z', b"E"),
        complete("ROLLBACK"),
        ready(),
    ]
    .concat();
    let (session, sent) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    let outcome: Result<()> = session.transaction(|session| {
        session.query("DELETE FROM corescale_t0", &[])?;
        Ok(())
    });
    assert!(format!("{}", outcome.unwrap_err()).contains("SQLSTATE 42P01"));
    let sent = sent.lock().unwrap();
    assert!(contains(&sent, b"ROLLBACK\0"));
    assert!(!contains(&sent, b"COMMIT\0"));
}

const UPDATE: &str = "UPDATE t SET scratch = scratch + 1 WHERE key BETWEEN $1 AND $2";

#[test]
fn a_statement_whose_parse_failed_in_a_batch_on_its_way_is_parsed_again() {
    let answers = [
        greeting(1),
        // Batch 1: the select's Parse is answered, then the select fails: the update's Parse
        // after it is skipped.
        message(b'1', &[]),
        error("40P01", "deadlock detected"),
        ready(),
        // Batch 2: the update, parsed again.
        message(b'1', &[]),
        message(b'2', &[]),
        complete("UPDATE 10"),
        ready(),
    ]
    .concat();
    let (session, sent) = session("postgres://alice@db/shop", answers);
    let mut session = session.unwrap();
    session.queue(0, SELECT, &keys(0)).unwrap();
    session.queue(1, UPDATE, &keys(0)).unwrap();
    session.send_batch().unwrap();
    // Queued again while its Parse is on its way: batch 1 is answered first.
    session.queue(1, UPDATE, &keys(5)).unwrap();
    session.send_batch().unwrap();
    assert_eq!(
        session.batches_in_flight(),
        2,
        "batch 1 read early, batch 2"
    );
    let mut answered = Vec::new();
    let refused = session.answer_batch(&mut answered).unwrap_err();
    assert_eq!(refused.refusal().unwrap().code.to_string(), "40P01");
    assert!(answered.is_empty());
    session.answer_batch(&mut answered).unwrap();
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].0.changed, 10);
    assert_eq!(session.batches_in_flight(), 0);
    let sent = sent.lock().unwrap();
    let parses = sent
        .windows(UPDATE.len())
        .filter(|window| *window == UPDATE.as_bytes())
        .count();
    assert_eq!(
        parses, 2,
        "the update parsed in batch 1, and again in batch 2"
    );
}
