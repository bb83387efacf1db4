//! A DBA's script in the syntax a pgbench user reads at once: SQL statements ending in `;`
//! (over several lines if need be) with `:name` variables bound as parameters, never pasted
//! into the text; `\set name expression` with pgbench's functions (random, random_gaussian,
//! random_exponential, random_zipfian, abs, least, greatest, int, double, sqrt, pi, mod) and
//! `\sleep n [us|ms|s]`, and `\startpipeline` ... `\endpipeline` around statements sent
//! together (PostgreSQL). One file is one transaction, as in pgbench. Errors name the file,
//! line and column.

use std::fmt;

/// Where in a script: its file, line and column (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A script that does not parse: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {problem}")]
pub struct ScriptError {
    pub place: Place,
    pub problem: String,
}

/// A variable's number among all the scripts' variables (its slot in a session's values).
pub type Variable = usize;

/// The scripts' variable names, numbered in order of first appearance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Variables(pub Vec<String>);

impl Variables {
    fn number(&mut self, name: &str) -> Variable {
        match self.0.iter().position(|known| known == name) {
            Some(number) => number,
            None => {
                self.0.push(name.to_string());
                self.0.len() - 1
            }
        }
    }

    pub fn name(&self, variable: Variable) -> &str {
        &self.0[variable]
    }

    pub fn find(&self, name: &str) -> Option<Variable> {
        self.0.iter().position(|known| known == name)
    }
}

/// A pgbench expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expression {
    Int(i64),
    Double(f64),
    Variable(Variable),
    Negate(Box<Expression>),
    Binary(Operator, Box<Expression>, Box<Expression>),
    Call(Function, Vec<Expression>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Random,
    RandomGaussian,
    RandomExponential,
    RandomZipfian,
    Abs,
    Least,
    Greatest,
    Int,
    Double,
    Sqrt,
    Pi,
    Mod,
}

impl Function {
    fn named(name: &str) -> Option<(Self, std::ops::RangeInclusive<usize>)> {
        Some(match name {
            "random" => (Self::Random, 2..=2),
            "random_gaussian" => (Self::RandomGaussian, 3..=3),
            "random_exponential" => (Self::RandomExponential, 3..=3),
            "random_zipfian" => (Self::RandomZipfian, 3..=3),
            "abs" => (Self::Abs, 1..=1),
            "least" => (Self::Least, 1..=usize::MAX),
            "greatest" => (Self::Greatest, 1..=usize::MAX),
            "int" => (Self::Int, 1..=1),
            "double" => (Self::Double, 1..=1),
            "sqrt" => (Self::Sqrt, 1..=1),
            "pi" => (Self::Pi, 0..=0),
            "mod" => (Self::Mod, 2..=2),
            _ => return None,
        })
    }
}

/// A part of a statement's text: SQL as written, or a variable bound in its place.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Bound(Variable),
}

/// One step of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Set {
        variable: Variable,
        value: Expression,
        place: Place,
    },
    Sleep {
        length: Expression,
        /// Microseconds per unit.
        unit_us: u64,
        place: Place,
    },
    Statement(Statement),
    /// `\startpipeline`: the statements up to `\endpipeline` are sent without waiting for
    /// answers, under one Sync at its end (as pgbench's pipeline does).
    StartPipeline(Place),
    EndPipeline(Place),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub pieces: Vec<Piece>,
    /// The statement as written, one line, for messages and per-statement figures.
    pub text: String,
    /// Whether it may change data or the session's access mode (`access::may_write`).
    pub writes: bool,
    pub place: Place,
}

/// At most this many characters of a statement are quoted in a message.
const SHOWN_CHARS: usize = 200;

impl Statement {
    /// The statement as a message quotes it: its first 200 characters, controls and
    /// direction marks escaped, and its length when it is longer.
    pub fn shown(&self) -> String {
        let length = self.text.chars().count();
        let head: String = self.text.chars().take(SHOWN_CHARS).collect();
        let head = crate::format::printable(&head);
        if length > SHOWN_CHARS {
            format!("{head}... ({length} characters)")
        } else {
            head
        }
    }

    /// The SQL with each bound variable as the database's placeholder (`$1`, `?`), and the
    /// variables in placeholder order.
    pub fn render(&self, placeholder: fn(usize) -> String) -> (String, Vec<Variable>) {
        let mut sql = String::new();
        let mut bound = Vec::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => sql.push_str(text),
                Piece::Bound(variable) => {
                    bound.push(*variable);
                    sql.push_str(&placeholder(bound.len()));
                }
            }
        }
        (sql.trim().to_string(), bound)
    }
}

/// A parsed file: its name, its commands in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub name: String,
    pub commands: Vec<Command>,
}

impl Script {
    pub fn statements(&self) -> impl Iterator<Item = &Statement> {
        self.commands.iter().filter_map(|command| match command {
            Command::Statement(statement) => Some(statement),
            _ => None,
        })
    }

    pub fn writes(&self) -> bool {
        self.statements().any(|statement| statement.writes)
    }

    /// Where its first pipeline starts, if it has one.
    pub fn first_pipeline(&self) -> Option<&Place> {
        self.commands.iter().find_map(|command| match command {
            Command::StartPipeline(place) => Some(place),
            _ => None,
        })
    }
}

/// Parses one file of a script; `variables` numbers the variables of every file together.
pub fn parse_script(
    name: &str,
    text: &str,
    variables: &mut Variables,
) -> Result<Script, ScriptError> {
    let place = |line: usize, column: usize| Place {
        file: name.to_string(),
        line,
        column,
    };
    let mut commands = Vec::new();
    // A statement over several lines: its pieces so far and where it began.
    let mut open: Option<(Vec<Piece>, String, Place)> = None;
    // Whether a quote (' or ") is open at the end of the statement's text so far.
    let mut quote: Option<char> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if open.is_none() {
            if trimmed.is_empty() || trimmed.starts_with("--") {
                continue;
            }
            if let Some(meta) = trimmed.strip_prefix('\\') {
                commands.push(meta_command(meta, &place(number, indent + 1), variables)?);
                continue;
            }
            open = Some((Vec::new(), String::new(), place(number, indent + 1)));
        }
        let (pieces, written, _) = open.as_mut().expect("a statement is open");
        if !written.is_empty() {
            pieces.push(Piece::Text("\n".to_string()));
            written.push(' ');
        }
        written.push_str(line.trim());
        let ended = sql_line(line, number, &place, pieces, variables, &mut quote)?;
        if ended {
            let (pieces, written, at) = open.take().expect("a statement is open");
            commands.push(statement(pieces, written, at));
        }
    }
    if let Some((pieces, written, at)) = open.take() {
        if let Some(quote) = quote {
            return Err(ScriptError {
                place: at,
                problem: format!("the statement's {quote} quote is never closed"),
            });
        }
        // The last statement may end without its ';', as in pgbench.
        if pieces.iter().any(|piece| {
            matches!(piece, Piece::Text(text) if !text.trim().is_empty())
                || matches!(piece, Piece::Bound(_))
        }) {
            commands.push(statement(pieces, written, at));
        }
    }
    check_pipelines(&commands, &place(text.lines().count().max(1), 1))?;
    if !commands
        .iter()
        .any(|command| matches!(command, Command::Statement(_)))
    {
        return Err(ScriptError {
            place: place(1, 1),
            problem: "no SQL statement: a script runs at least one".to_string(),
        });
    }
    Ok(Script {
        name: name.to_string(),
        commands,
    })
}

/// Pipelines are ended, not nested, and hold no `\sleep` (a pipeline waits for nothing
/// until its end; a pause inside it would hold its statements back unsent).
fn check_pipelines(commands: &[Command], end: &Place) -> Result<(), ScriptError> {
    let mut open: Option<&Place> = None;
    for command in commands {
        let problem = match (command, open) {
            (Command::StartPipeline(place), None) => {
                open = Some(place);
                continue;
            }
            (Command::EndPipeline(_), Some(_)) => {
                open = None;
                continue;
            }
            (Command::StartPipeline(place), Some(first)) => (
                place,
                format!(
                    "\\startpipeline inside the pipeline begun at line {}: end it with \\endpipeline first",
                    first.line
                ),
            ),
            (Command::EndPipeline(place), None) => (
                place,
                "\\endpipeline without a \\startpipeline before it".to_string(),
            ),
            (Command::Sleep { place, .. }, Some(first)) => (
                place,
                format!(
                    "\\sleep inside the pipeline begun at line {}: a pipeline sends its statements together, so pause before \\startpipeline or after \\endpipeline",
                    first.line
                ),
            ),
            _ => continue,
        };
        return Err(ScriptError {
            place: problem.0.clone(),
            problem: problem.1,
        });
    }
    match open {
        Some(first) => Err(ScriptError {
            place: end.clone(),
            problem: format!(
                "the pipeline begun at line {} is never ended: add \\endpipeline",
                first.line
            ),
        }),
        None => Ok(()),
    }
}

fn statement(pieces: Vec<Piece>, written: String, place: Place) -> Command {
    let text = written.trim().trim_end_matches(';').trim().to_string();
    // Judged on the text the server gets (its lines, a placeholder for each variable), not
    // on the one-line text shown, where a `--` comment would run on over the next lines.
    let sent: String = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Text(text) => text.as_str(),
            Piece::Bound(_) => " ? ",
        })
        .collect();
    Command::Statement(Statement {
        writes: super::access::may_write(&sent),
        pieces,
        text,
        place,
    })
}

/// Splits one line of SQL into text and bound variables; true when it ends the statement
/// (a `;` outside quotes, only blanks or a comment after it). The `;` itself is not sent.
fn sql_line(
    line: &str,
    number: usize,
    place: &dyn Fn(usize, usize) -> Place,
    pieces: &mut Vec<Piece>,
    variables: &mut Variables,
    quote: &mut Option<char>,
) -> Result<bool, ScriptError> {
    let chars: Vec<char> = line.chars().collect();
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut text = String::new();
    let mut at = 0;
    let mut ended = false;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if ended {
            if c == '-' && next == Some('-') {
                break;
            }
            if !c.is_whitespace() {
                return Err(ScriptError {
                    place: place(number, at + 1),
                    problem: "text after ';' on the same line: end each statement at a line's end"
                        .to_string(),
                });
            }
            at += 1;
            continue;
        }
        match *quote {
            Some(open) if c == open => *quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => *quote = Some(c),
                '-' if next == Some('-') => {
                    // A comment to the line's end goes as written; nothing in it is bound.
                    text.extend(&chars[at..]);
                    break;
                }
                ';' => {
                    ended = true;
                    at += 1;
                    continue;
                }
                ':' if at.checked_sub(1).map(|before| chars[before]) != Some(':')
                    && next.is_some_and(|c| c.is_ascii_alphabetic() || c == '_') =>
                {
                    let end = (at + 1..chars.len())
                        .find(|end| !is_name(chars[*end]))
                        .unwrap_or(chars.len());
                    let name: String = chars[at + 1..end].iter().collect();
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Bound(variables.number(&name)));
                    at = end;
                    continue;
                }
                _ => {}
            },
        }
        text.push(c);
        at += 1;
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(ended)
}

/// A `\` command: `set` or `sleep`.
fn meta_command(meta: &str, at: &Place, variables: &mut Variables) -> Result<Command, ScriptError> {
    let fail = |column: usize, problem: String| ScriptError {
        place: Place {
            column: at.column + column,
            ..at.clone()
        },
        problem,
    };
    let (word, rest) = meta.split_once(char::is_whitespace).unwrap_or((meta, ""));
    let rest_column = meta.len() - rest.len() + 1;
    match word {
        "set" => {
            let rest = rest.trim_start();
            let (name, expression) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(fail(
                    rest_column,
                    format!("\\set needs a variable name, not '{name}'"),
                ));
            }
            let offset = meta.len() - expression.len() + 1;
            let value = Parser::new(expression, offset, variables)
                .whole()
                .map_err(|(column, problem)| fail(column, problem))?;
            Ok(Command::Set {
                variable: variables.number(name),
                value,
                place: at.clone(),
            })
        }
        "sleep" => {
            let words: Vec<&str> = rest.split_whitespace().collect();
            let unit_us = match words.get(1).copied() {
                None | Some("s") => 1_000_000,
                Some("ms") => 1_000,
                Some("us") => 1,
                Some(other) => {
                    return Err(fail(
                        rest_column,
                        format!("\\sleep's unit is us, ms or s, not '{other}'"),
                    ));
                }
            };
            if words.is_empty() || words.len() > 2 {
                return Err(fail(
                    rest_column,
                    "\\sleep takes a length and a unit: \\sleep 10 ms".to_string(),
                ));
            }
            let length = Parser::new(words[0], rest_column, variables)
                .whole()
                .map_err(|(column, problem)| fail(column, problem))?;
            Ok(Command::Sleep {
                length,
                unit_us,
                place: at.clone(),
            })
        }
        "startpipeline" | "endpipeline" if !rest.trim().is_empty() => Err(fail(
            rest_column,
            format!("\\{word} takes nothing after it"),
        )),
        "startpipeline" => Ok(Command::StartPipeline(at.clone())),
        "endpipeline" => Ok(Command::EndPipeline(at.clone())),
        other => Err(fail(
            1,
            format!(
                "\\{other} is not supported: a script has \\set, \\sleep, \\startpipeline, \\endpipeline and SQL statements"
            ),
        )),
    }
}

/// A recursive-descent parser of one expression; errors carry their column (0-based from
/// the command's start, added to it by the caller).
struct Parser<'a> {
    text: &'a str,
    at: usize,
    offset: usize,
    variables: &'a mut Variables,
    /// Parentheses, signs and calls open around the current point.
    depth: usize,
}

/// The longest expression, and the deepest nesting, a script may hold: evaluation recurses
/// over the expression, on worker threads of ordinary stack size.
const LONGEST_EXPRESSION: usize = 1_000;
const DEEPEST_NESTING: usize = 64;

type Parsed<T> = Result<T, (usize, String)>;

impl<'a> Parser<'a> {
    fn new(text: &'a str, offset: usize, variables: &'a mut Variables) -> Self {
        Self {
            text,
            at: 0,
            offset,
            variables,
            depth: 0,
        }
    }

    /// One level deeper (a parenthesis, a sign, a call), refused past the deepest nesting.
    fn deeper(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > DEEPEST_NESTING {
            return self.fail(format!("nested more than {DEEPEST_NESTING} deep"));
        }
        Ok(())
    }

    fn fail<T>(&self, problem: impl Into<String>) -> Parsed<T> {
        Err((self.offset + self.at, problem.into()))
    }

    fn skip_space(&mut self) {
        while self.text[self.at..].starts_with(char::is_whitespace) {
            self.at += self.text[self.at..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.text[self.at..].chars().next()
    }

    fn whole(mut self) -> Parsed<Expression> {
        if self.peek().is_none() {
            return self.fail("an expression is missing");
        }
        if self.text.len() > LONGEST_EXPRESSION {
            return self.fail(format!(
                "an expression longer than {LONGEST_EXPRESSION} characters (split it over several \\set)"
            ));
        }
        let expression = self.sum()?;
        match self.peek() {
            None => Ok(expression),
            Some(c) => self.fail(format!("unexpected '{c}'")),
        }
    }

    fn sum(&mut self) -> Parsed<Expression> {
        let mut left = self.product()?;
        loop {
            let operator = match self.peek() {
                Some('+') => Operator::Add,
                Some('-') => Operator::Subtract,
                _ => return Ok(left),
            };
            self.at += 1;
            let right = self.product()?;
            left = Expression::Binary(operator, Box::new(left), Box::new(right));
        }
    }

    fn product(&mut self) -> Parsed<Expression> {
        let mut left = self.unary()?;
        loop {
            let operator = match self.peek() {
                Some('*') => Operator::Multiply,
                Some('/') => Operator::Divide,
                Some('%') => Operator::Modulo,
                _ => return Ok(left),
            };
            self.at += 1;
            let right = self.unary()?;
            left = Expression::Binary(operator, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Parsed<Expression> {
        match self.peek() {
            Some('-') => {
                self.at += 1;
                self.deeper()?;
                let inner = self.unary()?;
                self.depth -= 1;
                Ok(Expression::Negate(Box::new(inner)))
            }
            Some('+') => {
                self.at += 1;
                self.deeper()?;
                let inner = self.unary()?;
                self.depth -= 1;
                Ok(inner)
            }
            _ => self.primary(),
        }
    }

    fn word(&mut self) -> &'a str {
        let start = self.at;
        let text: &'a str = self.text;
        let length = text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(text.len() - start);
        self.at += length;
        &text[start..start + length]
    }

    fn primary(&mut self) -> Parsed<Expression> {
        match self.peek() {
            Some('(') => {
                self.at += 1;
                self.deeper()?;
                let inner = self.sum()?;
                self.depth -= 1;
                if self.peek() != Some(')') {
                    return self.fail("')' is missing");
                }
                self.at += 1;
                Ok(inner)
            }
            Some(':') => {
                self.at += 1;
                let start = self.at;
                let name = self.word();
                if name.is_empty() || name.contains('.') {
                    self.at = start;
                    return self.fail("a variable name is missing after ':'");
                }
                Ok(Expression::Variable(self.variables.number(name)))
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.at;
                let mut word = self.word().to_string();
                // An exponent: 1e6, 2.5e-3.
                if word.ends_with(['e', 'E']) && self.text[self.at..].starts_with(['-', '+']) {
                    self.at += 1;
                    word.push_str(&self.text[self.at - 1..self.at]);
                    word.push_str(self.word());
                }
                if let Ok(value) = word.parse::<i64>() {
                    return Ok(Expression::Int(value));
                }
                match word.parse::<f64>() {
                    Ok(value) if value.is_finite() => Ok(Expression::Double(value)),
                    _ => {
                        self.at = start;
                        self.fail(format!("'{word}' is not a number"))
                    }
                }
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.at;
                let name = self.word().to_ascii_lowercase();
                let Some((function, arity)) = Function::named(&name) else {
                    self.at = start;
                    return self.fail(format!(
                        "unknown function '{name}' (random, random_gaussian, random_exponential, random_zipfian, abs, least, greatest, int, double, sqrt, pi, mod)"
                    ));
                };
                if self.peek() != Some('(') {
                    return self.fail(format!("'(' is missing after {name}"));
                }
                self.at += 1;
                self.deeper()?;
                let mut arguments = Vec::new();
                if self.peek() == Some(')') {
                    self.at += 1;
                } else {
                    loop {
                        arguments.push(self.sum()?);
                        match self.peek() {
                            Some(',') => self.at += 1,
                            Some(')') => {
                                self.at += 1;
                                break;
                            }
                            _ => return self.fail("',' or ')' is missing"),
                        }
                    }
                }
                self.depth -= 1;
                if !arity.contains(&arguments.len()) {
                    self.at = start;
                    return self.fail(format!(
                        "{name} takes {} arguments, not {}",
                        if arity.start() == arity.end() {
                            arity.start().to_string()
                        } else {
                            format!("{} or more", arity.start())
                        },
                        arguments.len()
                    ));
                }
                Ok(Expression::Call(function, arguments))
            }
            Some(c) => self.fail(format!("unexpected '{c}'")),
            None => self.fail("the expression ends too soon"),
        }
    }
}

#[cfg(test)]
mod tests;
