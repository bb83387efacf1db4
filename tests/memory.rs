//! What a process keeps of a replay: a capture loaded and dropped twice leaves the memory it
//! left after once (issue 76: each load kept its statements and parameters for good). A test
//! binary of its own, as it counts allocations through its global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use corescale::workload::replay::class::Class;
use corescale::workload::replay::file::{self, Line, Statement, Summary, Writer};
use corescale::workload::replay::load::{Choice, load};

/// The system's allocator, counting what each thread holds.
struct Counting;

thread_local! {
    /// Bytes this thread allocated and has not freed: other tests' threads do not change
    /// it (a constant with no destructor: reading it allocates nothing).
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    // Gone only while the thread ends, when nothing is measured.
    let _ = LIVE.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: every call goes to the system allocator as it came; only the sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let made = unsafe { System.alloc(layout) };
        if !made.is_null() {
            count(layout.size() as isize);
        }
        made
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let made = unsafe { System.alloc_zeroed(layout) };
        if !made.is_null() {
            count(layout.size() as isize);
        }
        made
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        moved
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) };
        count(-(layout.size() as isize));
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Bytes the calling thread holds.
fn live() -> isize {
    LIVE.with(Cell::get)
}

const SESSIONS: u32 = 4;
const PER_SESSION: u32 = 50;

/// A capture of `SESSIONS` sessions of `PER_SESSION` statements each, bound with
/// parameters (one NULL) and, every tenth, sent as text.
fn write_capture(path: &Path) {
    let mut writer = Writer::create(path).unwrap();
    writer
        .write(&Line::Header {
            format: file::FORMAT.to_string(),
            version: file::VERSION,
            product: "postgresql".to_string(),
            logs: vec!["postgresql.log".to_string()],
        })
        .unwrap();
    for session in 0..SESSIONS {
        writer
            .write(&Line::Session {
                id: session,
                at_us: 0,
                user: "shop".to_string(),
                database: "shop".to_string(),
            })
            .unwrap();
    }
    for number in 0..SESSIONS * PER_SESSION {
        let as_text = number % 10 == 0;
        let statement = Statement {
            session: number % SESSIONS,
            at_us: i64::from(number) * 1000,
            sql: if as_text {
                format!("SELECT * FROM orders WHERE id = {number}")
            } else {
                "SELECT * FROM orders WHERE customer = $1 AND note = $2".to_string()
            },
            parameters: (!as_text).then(|| vec![Some(format!("customer {number}")), None]),
            took_us: Some(250),
            class: Class::Read,
            failed: None,
            database: None,
            rows: None,
            ends_within_us: None,
        };
        writer.write(&Line::Statement(statement)).unwrap();
    }
    writer
        .write(&Line::Summary(Summary {
            origin: "2024-05-01 10:00:00 UTC".to_string(),
            sessions: u64::from(SESSIONS),
            statements: u64::from(SESSIONS * PER_SESSION),
            with_duration: u64::from(SESSIONS * PER_SESSION),
            ..Summary::default()
        }))
        .unwrap();
    writer.finish().unwrap();
}

#[test]
fn a_capture_loaded_twice_keeps_no_more_than_once() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("shop.capture");
    write_capture(&path);
    let paths = [path];
    let choice = Choice::default();
    let load_and_drop = || {
        let before = live();
        let replay = load(&paths, &choice).unwrap();
        assert_eq!(replay.statements, u64::from(SESSIONS * PER_SESSION));
        let held = live() - before;
        let sent: usize = replay
            .lanes
            .iter()
            .flatten()
            .map(|statement| statement.sql.len())
            .sum();
        // The replay holds its statements while it is kept (so the count sees them).
        assert!(
            held >= sent as isize,
            "the replay holds {held} bytes, less than its statements' {sent}"
        );
        drop(replay);
    };
    // The count sees memory kept past its owner, as each load's statements once were.
    let before = live();
    std::mem::forget(vec![0_u8; 64]);
    assert_eq!(live() - before, 64);
    // The first load may make what a process makes once (its parsers' tables).
    load_and_drop();
    let once = live();
    load_and_drop();
    let twice = live();
    assert_eq!(
        twice - once,
        0,
        "a second load of the same capture kept {} bytes more than the first",
        twice - once
    );
}
