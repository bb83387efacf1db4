//! What a captured statement is without its values: its fingerprint (literals, parameters
//! and lists of them normalised away, as pg_stat_statements and pt-query-digest group
//! statements).

/// How a server reads quotes: PostgreSQL's `"name"` and standard strings, or MySQL's and
/// MariaDB's `"string"` and backslash escapes in every string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Quoting {
    #[default]
    Postgres,
    Mysql,
}

impl Quoting {
    /// The quoting of a capture's product ("postgresql", "mysql").
    pub fn of_product(product: &str) -> Self {
        if product == "mysql" {
            Self::Mysql
        } else {
            Self::Postgres
        }
    }
}

/// `sql` without its values: each literal (string, number, dollar-quoted, E'', B'', X'')
/// and each parameter ($1, ?, :name) becomes `?`, a list of them `(?, ...)`, comments go,
/// whitespace collapses and words are upper-cased outside quotes. Two executions of one
/// statement with other values have one fingerprint.
pub fn fingerprint(sql: &str, quoting: Quoting) -> String {
    made(sql, quoting, true)
}

/// The fingerprint as the statement was written: its words in their own case, as the
/// server's log and a DBA's eye have them; what a report shows of the statements that share
/// one [`fingerprint`].
pub fn as_written(sql: &str, quoting: Quoting) -> String {
    made(sql, quoting, false)
}

fn made(sql: &str, quoting: Quoting, upper: bool) -> String {
    let mut out = String::with_capacity(sql.len().min(1024));
    let mut last_was_value = false;
    // The output length before the last "(" and whether everything since it was values.
    let mut list: Option<(usize, bool)> = None;
    let mut lexer = Lexer::new(sql, quoting);
    while let Some(token) = lexer.next() {
        let piece: std::borrow::Cow<'_, str> = match token {
            Token::Value => "?".into(),
            Token::Word(word) if upper => word.to_ascii_uppercase().into(),
            Token::Word(word) => word.into(),
            Token::Quoted(name) => name.into(),
            Token::Punct(punct) => punct.into(),
        };
        let is_value = matches!(token, Token::Value);
        // A value after a sign that follows an operator or a bracket is one value: "-1".
        if is_value && last_was_value {
            continue;
        }
        // A bracket keeps its side of the space as written: sum(k), but IN (...).
        let needs_space = !out.is_empty()
            && !out.ends_with(['(', '.'])
            && !matches!(piece.as_ref(), ")" | "," | "." | ";" | "::")
            && (piece != "(" || lexer.spaced)
            && !out.ends_with("::");
        if needs_space {
            out.push(' ');
        }
        match piece.as_ref() {
            "(" => list = Some((out.len(), true)),
            ")" => {
                if let Some((start, true)) = list {
                    // "(?, ?, ?)" and "(?)" alike: an IN list of any length.
                    if out[start..].contains('?') {
                        out.truncate(start);
                        out.push_str("(?...");
                    }
                }
                list = None;
            }
            "," => {}
            _ if is_value => {}
            _ => {
                if let Some((_, values_only)) = list.as_mut() {
                    *values_only = false;
                }
            }
        }
        out.push_str(&piece);
        last_was_value = is_value;
    }
    while out.ends_with(';') || out.ends_with(' ') {
        out.pop();
    }
    out
}

/// One token of a statement, as the fingerprint sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token<'a> {
    /// A keyword or an unquoted name.
    Word(&'a str),
    /// A quoted name ("x" or `x`), kept as written.
    Quoted(&'a str),
    /// A literal or a parameter.
    Value,
    Punct(&'a str),
}

/// A small SQL lexer for PostgreSQL's and MySQL's syntax: enough to tell words, names,
/// literals, parameters, comments and punctuation apart, never failing on any input.
struct Lexer<'a> {
    text: &'a str,
    quoting: Quoting,
    at: usize,
    /// Whether whitespace or a comment came before the token last read.
    spaced: bool,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str, quoting: Quoting) -> Self {
        Self {
            text,
            quoting,
            at: 0,
            spaced: false,
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    /// Skips to just past `end` (or to the end of the text), from `from` bytes in.
    fn skip_past(&mut self, from: usize, end: &str) {
        let rest = &self.text[self.at + from..];
        self.at = match rest.find(end) {
            Some(found) => self.at + from + found + end.len(),
            None => self.text.len(),
        };
    }

    /// Skips a quoted run starting at the quote `quote`: doubled quotes and (for '...' with
    /// backslash escapes, as MySQL and E'' take them) backslashed characters stay inside.
    fn skip_quoted(&mut self, quote: char, backslashes: bool) {
        let bytes = self.text.as_bytes();
        let mut index = self.at + quote.len_utf8();
        while index < bytes.len() {
            let byte = bytes[index];
            if backslashes && byte == b'\\' {
                index += 2;
                continue;
            }
            if byte == quote as u8 {
                if bytes.get(index + 1) == Some(&(quote as u8)) {
                    index += 2;
                    continue;
                }
                self.at = index + 1;
                return;
            }
            index += 1;
        }
        self.at = bytes.len();
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let start = self.at;
        let token = self.token();
        self.spaced = self.text[start..self.at]
            .chars()
            .next()
            .is_some_and(|c| c.is_whitespace() || c == '-' || c == '/' || c == '#');
        token
    }
}

impl<'a> Lexer<'a> {
    /// The next token, past whitespace and comments.
    fn token(&mut self) -> Option<Token<'a>> {
        loop {
            let rest = self.rest();
            let first = rest.chars().next()?;
            if first.is_whitespace() {
                self.at += first.len_utf8();
                continue;
            }
            if rest.starts_with("--") || (first == '#' && !rest.starts_with("#>")) {
                self.skip_past(0, "\n");
                continue;
            }
            if rest.starts_with("/*") {
                self.skip_past(2, "*/");
                continue;
            }
            let start = self.at;
            return Some(match first {
                '\'' => {
                    // E'...' takes backslash escapes; standard strings do not.
                    let before = &self.text[..start];
                    let escapes = self.quoting == Quoting::Mysql
                        || before.ends_with(['E', 'e'])
                            && !before[..before.len() - 1]
                                .ends_with(|c: char| c.is_alphanumeric() || c == '_');
                    self.skip_quoted('\'', escapes);
                    Token::Value
                }
                // MySQL's double quotes hold a string, PostgreSQL's a name.
                '"' if self.quoting == Quoting::Mysql => {
                    self.skip_quoted('"', true);
                    Token::Value
                }
                '"' | '`' => {
                    self.skip_quoted(first, false);
                    Token::Quoted(&self.text[start..self.at])
                }
                '$' => self.dollar(),
                '?' => {
                    self.at += 1;
                    Token::Value
                }
                ':' if rest.starts_with("::") => {
                    self.at += 2;
                    Token::Punct("::")
                }
                ':' if rest[1..]
                    .starts_with(|next: char| next.is_ascii_alphabetic() || next == '_') =>
                {
                    self.at += 1 + name_length(&rest[1..]);
                    Token::Value
                }
                '0'..='9' => {
                    let len = rest
                        .bytes()
                        .take_while(|byte| byte.is_ascii_alphanumeric() || *byte == b'.')
                        .count();
                    self.at += len;
                    Token::Value
                }
                '.' if rest[1..].starts_with(|next: char| next.is_ascii_digit()) => {
                    let len = 1 + rest[1..]
                        .bytes()
                        .take_while(|byte| byte.is_ascii_alphanumeric())
                        .count();
                    self.at += len;
                    Token::Value
                }
                '-' | '+'
                    if rest[1..].starts_with(|next: char| next.is_ascii_digit())
                        && self.follows_operator() =>
                {
                    self.at += 1;
                    continue;
                }
                _ if first.is_alphabetic() || first == '_' => {
                    let len = rest
                        .char_indices()
                        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
                        .map_or(rest.len(), |(at, _)| at);
                    self.at += len;
                    let word = &self.text[start..self.at];
                    // E'..', B'..', X'..', N'..': one literal.
                    if len == 1 && self.rest().starts_with('\'') {
                        continue;
                    }
                    Token::Word(word)
                }
                _ => {
                    self.at += first.len_utf8();
                    Token::Punct(&self.text[start..self.at])
                }
            });
        }
    }
}

/// The length of a name's ASCII letters, digits and underscores at the start of `text`.
fn name_length(text: &str) -> usize {
    text.bytes()
        .take_while(|byte| byte.is_ascii_alphanumeric() || *byte == b'_')
        .count()
}

impl<'a> Lexer<'a> {
    /// At a '$': a parameter ($1), a dollar-quoted literal ($$...$$, $tag$...$tag$), or
    /// the sign alone.
    fn dollar(&mut self) -> Token<'a> {
        let rest = self.rest();
        let tail = &rest[1..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            self.at += 1 + digits;
            return Token::Value;
        }
        let tag_len = name_length(tail);
        if tail.as_bytes().get(tag_len) == Some(&b'$') {
            let tag = &rest[..tag_len + 2];
            self.skip_past(tag.len(), tag);
            Token::Value
        } else {
            self.at += 1;
            Token::Punct("$")
        }
    }
}

impl Lexer<'_> {
    /// Whether the text before the current position ends with an operator, a comma or an
    /// opening bracket (or nothing): then a sign starts a number, not a subtraction.
    fn follows_operator(&self) -> bool {
        let before = self.text[..self.at].trim_end();
        before.is_empty()
            || before.ends_with(['(', ',', '=', '<', '>', '*', '/', '+', '-'])
            || before
                .rsplit(|c: char| !c.is_alphanumeric())
                .next()
                .is_some_and(|word| {
                    matches!(
                        word.to_ascii_uppercase().as_str(),
                        "SELECT"
                            | "BY"
                            | "AND"
                            | "OR"
                            | "THEN"
                            | "ELSE"
                            | "WHEN"
                            | "VALUES"
                            | "RETURN"
                            | "LIMIT"
                            | "OFFSET"
                            | "BETWEEN"
                            | "IN"
                            | "SET"
                    )
                })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(sql: &str) -> String {
        fingerprint(sql, Quoting::Postgres)
    }

    #[test]
    fn mysql_strings_leave_no_literal_in_a_fingerprint() {
        let mysql = |sql| fingerprint(sql, Quoting::Mysql);
        assert_eq!(
            mysql(r#"SELECT id FROM users WHERE email = "alice@x.com" AND name = 'O\'Brien'"#),
            "SELECT ID FROM USERS WHERE EMAIL = ? AND NAME = ?"
        );
        assert_eq!(
            mysql(r"SELECT 'a\\', `col` FROM t"),
            "SELECT ?, `col` FROM T"
        );
    }

    #[test]
    fn values_of_every_kind_leave_one_fingerprint() {
        assert_eq!(
            pg("UPDATE pgbench_accounts SET abalance = abalance + -2641 WHERE aid = 72565;"),
            "UPDATE PGBENCH_ACCOUNTS SET ABALANCE = ABALANCE + ? WHERE AID = ?"
        );
        assert_eq!(
            pg("update pgbench_accounts set abalance = abalance + $1 where aid = $2"),
            pg("UPDATE pgbench_accounts SET abalance = abalance + 5 WHERE aid = 9;")
        );
        assert_eq!(
            pg("SELECT * FROM t WHERE id IN (1, 2, 3) AND name = 'it''s'"),
            pg("select * from t where id in (7) and name = E'x\\'y'")
        );
        assert_eq!(
            pg("SELECT * FROM t WHERE id IN (1, 2, 3)"),
            "SELECT * FROM T WHERE ID IN (?...)"
        );
        assert_eq!(
            pg("select $tag$a;b$tag$, 1.5e3, x'ff', -- note\n 2 /* c */"),
            "SELECT ?, ?, ?, ?"
        );
        assert_eq!(
            pg("INSERT INTO h (tid, bid) VALUES (1, 2);"),
            pg("insert into h (tid, bid) values ($1, $2)")
        );
        // Names stay: quoted ones as written, others upper-cased; a subtraction stays.
        assert_eq!(
            pg("SELECT \"Col\", a - 1 FROM `T`"),
            "SELECT \"Col\", A - ? FROM `T`"
        );
        assert_eq!(pg("select :id, ?::int"), "SELECT ?, ?::INT");
        // A function's bracket stays on its name, a list's stays apart.
        assert_eq!(
            pg("SELECT SUM(k) FROM t WHERE id IN (1,2)"),
            "SELECT SUM(K) FROM T WHERE ID IN (?...)"
        );
    }

    #[test]
    fn statements_are_shown_in_their_own_case_and_grouped_in_any() {
        let lower = "select abalance from pgbench_accounts where aid = 72565";
        assert_eq!(
            as_written(lower, Quoting::Postgres),
            "select abalance from pgbench_accounts where aid = ?"
        );
        assert_eq!(
            pg(lower),
            pg("SELECT abalance FROM pgbench_accounts WHERE aid = $1")
        );
    }

    #[test]
    fn no_input_breaks_the_lexer() {
        for text in [
            "'",
            "\"",
            "$$",
            "$a$",
            "/*",
            "E'\\",
            "--",
            "x'",
            "$",
            "(((",
            ")",
            "\u{0}\u{FFFD}",
        ] {
            let _ = pg(text);
            let _ = fingerprint(text, Quoting::Mysql);
        }
    }
}
