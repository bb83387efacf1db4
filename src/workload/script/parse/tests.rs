use super::*;
use crate::rng::SessionRng;
use crate::workload::script::eval::{Value, evaluate};

fn parsed(text: &str) -> (Script, Variables) {
    let mut variables = Variables::default();
    let script = parse_script("t.sql", text, &mut variables).unwrap();
    (script, variables)
}

fn error(text: &str) -> String {
    parse_script("t.sql", text, &mut Variables::default())
        .unwrap_err()
        .to_string()
}

/// The expression of `\set x <text>`, and the script's variables.
fn set_expression(text: &str) -> (Expression, Variables) {
    let (script, variables) = parsed(&format!("\\set x {text}\nSELECT 1"));
    match script.commands.into_iter().next() {
        Some(Command::Set { value, .. }) => (value, variables),
        other => panic!("not a \\set: {other:?}"),
    }
}

fn dollar(n: usize) -> String {
    format!("${n}")
}

fn question(_: usize) -> String {
    "?".to_string()
}

#[test]
fn pgbench_builtin_select_only_parses_and_binds_its_variable() {
    let (script, variables) = parsed(
        "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    );
    assert_eq!(script.commands.len(), 2);
    let statement = script.statements().next().unwrap();
    assert_eq!(
        statement.render(dollar),
        (
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1".to_string(),
            vec![variables.find("aid").unwrap()]
        )
    );
    assert_eq!(
        statement.render(question).0,
        "SELECT abalance FROM pgbench_accounts WHERE aid = ?"
    );
    assert!(!script.writes());
    assert_eq!(statement.place.line, 2);
}

#[test]
fn statements_span_lines_keep_casts_quotes_and_comments_unbound() {
    let (script, variables) = parsed(
        "-- a comment line\nBEGIN;\nUPDATE t\n   SET v = v + :delta::int, note = ':not_bound' -- :nor_this\n WHERE id = :id;\nEND;\n",
    );
    let statements: Vec<&Statement> = script.statements().collect();
    assert_eq!(statements.len(), 3);
    let (sql, bound) = statements[1].render(dollar);
    assert!(
        sql.starts_with(
            "UPDATE t\n   SET v = v + $1::int, note = ':not_bound' -- :nor_this\n WHERE id = $2"
        ),
        "{sql}"
    );
    assert_eq!(
        bound,
        vec![
            variables.find("delta").unwrap(),
            variables.find("id").unwrap()
        ]
    );
    assert!(variables.find("not_bound").is_none() && variables.find("nor_this").is_none());
    assert!(statements[1].writes && !statements[0].writes && !statements[2].writes);
    assert_eq!(
        statements[1].text,
        "UPDATE t SET v = v + :delta::int, note = ':not_bound' -- :nor_this WHERE id = :id"
    );
}

#[test]
fn the_last_statement_may_end_without_its_semicolon_and_sleep_takes_units() {
    let (script, _) = parsed("\\sleep 10 ms\n\\sleep :wait us\n\\sleep 2\nSELECT 1");
    assert!(matches!(
        script.commands[0],
        Command::Sleep { unit_us: 1_000, .. }
    ));
    assert!(matches!(
        script.commands[1],
        Command::Sleep { unit_us: 1, .. }
    ));
    assert!(matches!(
        script.commands[2],
        Command::Sleep {
            unit_us: 1_000_000,
            ..
        }
    ));
    assert_eq!(script.statements().count(), 1);
}

#[test]
fn expressions_evaluate_as_pgbench_does() {
    let mut variables = Variables::default();
    let script = parse_script(
        "e.sql",
        "\\set a 7 / 2\n\\set b -7 % 3\n\\set c 2 * (1 + 0.5)\n\\set d least(3, :a, 9)\n\\set e greatest(1, 2.5)\n\\set f abs(-4) + int(3.9) + mod(10, 4)\n\\set g sqrt(16) + pi() - pi()\n\\set h double(1) / 4\n\\set i 1e3\nSELECT 1;\n",
        &mut variables,
    )
    .unwrap();
    let mut values: Vec<Option<Value>> = vec![None; variables.0.len()];
    let mut random = SessionRng::for_worker(0, 1);
    for command in &script.commands {
        if let Command::Set {
            variable, value, ..
        } = command
        {
            values[*variable] = Some(evaluate(value, &values, &variables, &mut random).unwrap());
        }
    }
    let get = |name: &str| values[variables.find(name).unwrap()].unwrap();
    assert_eq!(get("a"), Value::Int(3));
    assert_eq!(get("b"), Value::Int(-1));
    assert_eq!(get("c"), Value::Double(3.0));
    assert_eq!(get("d"), Value::Int(3));
    assert_eq!(get("e"), Value::Double(2.5));
    assert_eq!(get("f"), Value::Int(4 + 3 + 2));
    assert_eq!(get("g"), Value::Double(4.0));
    assert_eq!(get("h"), Value::Double(0.25));
    assert_eq!(get("i"), Value::Double(1000.0));
}

/// Each distribution's draws stay in range and have pgbench's shape: uniform's mean is the
/// middle, the exponential and zipfian ones favour the low end, the gaussian the middle.
#[test]
fn random_functions_stay_in_range_with_their_shape() {
    let mut random = SessionRng::for_worker(3, 9);
    let draw = |text: &str, random: &mut SessionRng| -> Vec<i64> {
        let (value, variables) = set_expression(text);
        let value = &value;
        (0..20_000)
            .map(
                |_| match evaluate(value, &[], &variables, random).unwrap() {
                    Value::Int(value) => value,
                    Value::Double(_) => panic!("an integer"),
                },
            )
            .collect()
    };
    let mean = |values: &[i64]| values.iter().sum::<i64>() as f64 / values.len() as f64;
    let uniform = draw("random(1, 100)", &mut random);
    assert!(uniform.iter().all(|v| (1..=100).contains(v)));
    assert!((mean(&uniform) - 50.5).abs() < 1.5, "{}", mean(&uniform));
    let exponential = draw("random_exponential(1, 100, 5)", &mut random);
    assert!(exponential.iter().all(|v| (1..=100).contains(v)));
    assert!(mean(&exponential) < 25.0, "{}", mean(&exponential));
    let gaussian = draw("random_gaussian(1, 100, 4)", &mut random);
    assert!(gaussian.iter().all(|v| (1..=100).contains(v)));
    let middle = gaussian.iter().filter(|v| (38..=63).contains(*v)).count();
    assert!(middle > gaussian.len() / 2, "{middle}");
    let zipfian = draw("random_zipfian(1, 1000, 1.5)", &mut random);
    assert!(zipfian.iter().all(|v| (1..=1000).contains(v)));
    let ones = zipfian.iter().filter(|v| **v == 1).count() as f64 / zipfian.len() as f64;
    // P(1) = 1 / zeta(1.5) over 1..1000, about 0.39.
    assert!((0.35..0.43).contains(&ones), "{ones}");
}

#[test]
fn runtime_errors_are_messages_not_panics() {
    let mut random = SessionRng::for_worker(0, 1);
    for (text, expected) in [
        ("1 / 0", "division by zero"),
        ("random(5, 1)", "empty range"),
        ("9223372036854775807 + 1", "integer out of range"),
        ("random_gaussian(1, 10, 1)", "from 2 to 1000000"),
        ("random_exponential(1, 10, 0)", "greater than 0"),
        ("random_zipfian(1, 10, 1)", "from 1.001 to 1000"),
        ("random_zipfian(1, 10, 1.0000001)", "from 1.001 to 1000"),
        ("sqrt(-1)", "negative"),
        ("2.5 % 2", "integers"),
        (":unset + 1", ":unset is used before it is set"),
    ] {
        let (value, variables) = set_expression(text);
        let values = vec![None; variables.0.len()];
        let problem = evaluate(&value, &values, &variables, &mut random).unwrap_err();
        assert!(problem.contains(expected), "{text}: {problem}");
    }
}

#[test]
fn a_pipeline_holds_statements_and_sets_between_its_marks() {
    let (script, _) = parsed(
        "\\set id random(1, 10)\n\\startpipeline\nBEGIN;\nSELECT :id;\n\\set id :id + 1\nUPDATE t SET v = v + 1 WHERE id = :id;\nCOMMIT;\n\\endpipeline\n",
    );
    let kinds: Vec<&str> = script
        .commands
        .iter()
        .map(|command| match command {
            Command::Set { .. } => "set",
            Command::Sleep { .. } => "sleep",
            Command::Statement(_) => "statement",
            Command::StartPipeline(_) => "start",
            Command::EndPipeline(_) => "end",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "set",
            "start",
            "statement",
            "statement",
            "set",
            "statement",
            "statement",
            "end"
        ]
    );
    assert_eq!(script.first_pipeline().map(|place| place.line), Some(2));
    assert_eq!(parsed("SELECT 1").0.first_pipeline(), None);
}

#[test]
fn parse_errors_name_the_file_line_and_column() {
    for (text, expected) in [
        ("\\set x random(1,\nSELECT 1", "t.sql:1:"),
        ("SELECT 1;\n\\set x 1 +\n", "t.sql:2:"),
        ("\\set x foo(1)\nSELECT 1", "unknown function 'foo'"),
        (
            "\\set x random(1)\nSELECT 1",
            "random takes 2 arguments, not 1",
        ),
        ("\\set x (1 + 2\nSELECT 1", "')' is missing"),
        ("\\set 9$ 1\nSELECT 1", "\\set needs a variable name"),
        ("\\set x\nSELECT 1", "an expression is missing"),
        ("\\set x 1 2\nSELECT 1", "unexpected '2'"),
        ("\\set x :\nSELECT 1", "a variable name is missing"),
        ("\\set x 1.2.3\nSELECT 1", "'1.2.3' is not a number"),
        ("\\sleep 1 hour\nSELECT 1", "us, ms or s"),
        ("\\sleep\nSELECT 1", "a length and a unit"),
        ("\\gset\nSELECT 1", "\\gset is not supported"),
        ("SELECT 1; SELECT 2;", "text after ';'"),
        (
            "\\startpipeline\nSELECT 1;\n\\startpipeline\nSELECT 2;\n\\endpipeline\n",
            "t.sql:3:1: \\startpipeline inside the pipeline begun at line 1",
        ),
        (
            "SELECT 1;\n\\endpipeline\n",
            "t.sql:2:1: \\endpipeline without a \\startpipeline",
        ),
        (
            "\\startpipeline\nSELECT 1;\nSELECT 2;\n",
            "t.sql:3:1: the pipeline begun at line 1 is never ended",
        ),
        (
            "\\startpipeline\nSELECT 1;\n\\sleep 1 ms\n\\endpipeline\n",
            "t.sql:3:1: \\sleep inside the pipeline begun at line 1",
        ),
        (
            "\\startpipeline now\nSELECT 1;\n\\endpipeline\n",
            "\\startpipeline takes nothing after it",
        ),
        ("SELECT 'open\n", "quote is never closed"),
        ("\\set x 1\n", "no SQL statement"),
        ("", "no SQL statement"),
        (
            &format!("\\set x {}1\nSELECT 1", "(".repeat(100)),
            "nested more than 64 deep",
        ),
        (
            &format!("\\set x {}1\nSELECT 1", "-".repeat(100)),
            "nested more than 64 deep",
        ),
        (
            &format!("\\set x 1{}\nSELECT 1", "+1".repeat(600)),
            "longer than 1000 characters",
        ),
    ] {
        let problem = error(text);
        assert!(problem.contains(expected), "{text:?}: {problem}");
        assert!(problem.starts_with("t.sql:"), "{problem}");
    }
    // The column points at the problem.
    assert!(
        error("\\set x 1 + foo(2)\nSELECT 1").starts_with("t.sql:1:12:"),
        "{}",
        error("\\set x 1 + foo(2)\nSELECT 1")
    );
}
