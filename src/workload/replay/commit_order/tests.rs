use super::*;

#[test]
fn transaction_words_are_read_from_the_first_words() {
    assert_eq!(word("begin"), Word::Begin);
    assert_eq!(
        word("  START TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
        Word::Begin
    );
    assert_eq!(word("COMMIT;"), Word::Commit);
    assert_eq!(word("end"), Word::Commit);
    assert_eq!(word("ROLLBACK"), Word::Rollback);
    assert_eq!(word("rollback to savepoint a"), Word::Other);
    assert_eq!(word("UPDATE t SET a = 1"), Word::Other);
    assert_eq!(word(""), Word::Other);
}

#[test]
fn a_commit_closes_a_transaction_and_a_write_outside_one_commits_itself() {
    let mut session = Transactions::default();
    let step = |session: &mut Transactions, sql: &str, class: Class| {
        let (commits, within) = session.step(sql, class);
        (commits, within.before, within.after)
    };
    assert_eq!(
        step(&mut session, "TRUNCATE h", Class::Write),
        (true, false, false)
    );
    assert_eq!(
        step(&mut session, "SELECT 1", Class::Read),
        (false, false, false)
    );
    assert_eq!(
        step(&mut session, "BEGIN", Class::Read),
        (false, false, true)
    );
    assert_eq!(
        step(&mut session, "UPDATE t SET a = 1", Class::Write),
        (false, true, true)
    );
    assert_eq!(
        step(&mut session, "COMMIT", Class::Read),
        (true, true, false)
    );
    // A COMMIT outside a transaction commits nothing.
    assert_eq!(
        step(&mut session, "COMMIT", Class::Read),
        (false, false, false)
    );
    assert_eq!(
        step(&mut session, "BEGIN", Class::Read),
        (false, false, true)
    );
    assert_eq!(
        step(&mut session, "ROLLBACK", Class::Read),
        (false, true, false)
    );
    // A transaction that only read publishes nothing.
    assert_eq!(
        step(&mut session, "BEGIN", Class::Read),
        (false, false, true)
    );
    assert_eq!(
        step(&mut session, "SELECT 1", Class::Read),
        (false, true, true)
    );
    assert_eq!(step(&mut session, "END", Class::Read), (false, true, false));
}

#[test]
fn each_statement_outside_a_transaction_waits_for_the_commits_that_ended_before_it() {
    // Lane 0: a TRUNCATE from 0 to 10 us. Lane 1: BEGIN at 5, INSERT at 12, COMMIT 20..30.
    // Lane 2: a SELECT at 25, a SELECT at 31; lane 3: BEGIN at 11, UPDATE at 32.
    let mut planner = Planner::default();
    planner.commit(10, 0, 0);
    planner.commit(30, 1, 2);
    let starts = vec![vec![0], vec![5, 12, 20], vec![25, 31], vec![11, 32]];
    let within = |pairs: &[(bool, bool)]| -> Vec<Within> {
        pairs
            .iter()
            .map(|&(before, after)| Within { before, after })
            .collect()
    };
    let within = vec![
        within(&[(false, false)]),
        within(&[(false, true), (true, true), (true, false)]),
        within(&[(false, false), (false, false)]),
        within(&[(false, true), (true, true)]),
    ];
    let orders = planner.orders(&starts, &within);
    let after: Vec<Vec<u32>> = orders
        .iter()
        .map(|lane| lane.iter().map(|order| order.after).collect())
        .collect();
    // Lane 1's BEGIN began before the TRUNCATE ended; its INSERT, within its transaction,
    // waits for nothing (it may hold locks the commit needs). Lane 3's BEGIN waits for the
    // TRUNCATE; its UPDATE, within the transaction, for nothing, though lane 1's commit
    // ended before it.
    assert_eq!(after, vec![vec![0], vec![0, 0, 0], vec![1, 2], vec![1, 0]]);
    assert_eq!(orders[0][0].commit, Some(0));
    assert_eq!(orders[1][2].commit, Some(1));
    assert_eq!(orders[1][1].commit, None);
    assert!(orders[1][1].open && !orders[1][2].open);
}

#[test]
fn the_watermark_counts_commits_answered_in_a_row_in_one_window() {
    let board = CommitBoard::new(3);
    board.answered(1, 1);
    assert_eq!(board.read(), (1, 0), "the first commit is not answered yet");
    board.answered(1, 0);
    assert_eq!(board.read(), (1, 2));
    assert_eq!(board.wait(1, 2, None), Waited::InOrder);
    // The next window starts from none answered.
    board.answered(2, 2);
    assert_eq!(board.read(), (2, 0));
    let gave_up = board.wait(2, 1, Some(Instant::now()));
    assert_eq!(gave_up, Waited::GaveUp, "the deadline passed");
    // A lane still in window 1 does not wait on window 2's marks.
    assert_eq!(board.wait(1, 3, None), Waited::GaveUp);
}

#[test]
fn a_lane_waits_until_another_thread_answers_the_commit() {
    let board = std::sync::Arc::new(CommitBoard::new(1));
    let waiter = {
        let board = std::sync::Arc::clone(&board);
        std::thread::spawn(move || {
            let began = Instant::now();
            (board.wait(1, 1, None), began.elapsed())
        })
    };
    std::thread::sleep(Duration::from_millis(30));
    board.answered(1, 0);
    let (waited, took) = waiter.join().unwrap();
    assert_eq!(waited, Waited::InOrder);
    assert!(
        took >= Duration::from_millis(25),
        "it went on after {took:?}"
    );
}
