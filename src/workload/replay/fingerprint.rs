//! What a captured statement is without its values: its fingerprint (literals, parameters
//! and lists of them normalised away, as pg_stat_statements and pt-query-digest group
//! statements), and its class, which decides whether it is kept, skipped or never stored.

/// What a statement does, as far as its text tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Reads, or session housekeeping (BEGIN, SET, SHOW, ...).
    Read,
    /// Changes rows: INSERT, UPDATE, DELETE, MERGE, COPY ... FROM, TRUNCATE, ... FOR UPDATE.
    Write,
    /// Data definition (log_statement's `ddl` class): CREATE, ALTER, DROP, GRANT, ...
    Ddl,
    /// Changes the role or the whole server: ALTER SYSTEM, SET ROLE, SET SESSION
    /// AUTHORIZATION, CREATE/DROP DATABASE, CHECKPOINT.
    ServerWide,
    /// Sets a password: never stored, never replayed.
    Password,
}

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

/// The leading words of a statement, upper-cased, past comments and parentheses.
fn words(sql: &str, quoting: Quoting, count: usize) -> Vec<String> {
    let mut words = Vec::with_capacity(count);
    for token in Lexer::new(sql, quoting) {
        if let Token::Word(word) = token {
            words.push(word.to_ascii_uppercase());
            if words.len() == count {
                break;
            }
        }
    }
    words
}

/// The class of `sql`: password-setting statements first (whatever else they are), then
/// server-wide ones, DDL, writes; the rest reads.
pub fn classify(sql: &str, quoting: Quoting) -> Class {
    if sql.contains(';') {
        // Several statements in one: the most sensitive part's class.
        let parts: Vec<Class> = sql
            .split(';')
            .filter(|part| !part.trim().is_empty())
            .map(|part| classify_one(part, quoting))
            .collect();
        if parts.len() > 1 {
            return [Class::Password, Class::ServerWide, Class::Ddl, Class::Write]
                .into_iter()
                .find(|class| parts.contains(class))
                .unwrap_or(Class::Read);
        }
    }
    classify_one(sql, quoting)
}

/// [`classify`] of one statement.
fn classify_one(sql: &str, quoting: Quoting) -> Class {
    let lead: Vec<String> = words(sql, quoting, 6)
        .into_iter()
        .filter(|word| !matches!(word.as_str(), "OR" | "REPLACE" | "IF" | "NOT" | "EXISTS"))
        .collect();
    let first = lead.first().map_or("", String::as_str);
    let second = lead.get(1).map_or("", String::as_str);
    let third = lead.get(2).map_or("", String::as_str);
    if sets_password(sql, quoting, first) {
        return Class::Password;
    }
    match (first, second) {
        ("ALTER", "SYSTEM")
        | ("SET" | "RESET", "ROLE" | "SESSION")
        | ("CREATE" | "DROP" | "ALTER", "DATABASE" | "TABLESPACE" | "ROLE" | "USER")
        | ("CHECKPOINT" | "SHUTDOWN" | "KILL" | "FLUSH" | "INSTALL" | "UNINSTALL", _)
        | ("SET", "GLOBAL" | "PERSIST") => return Class::ServerWide,
        ("SET", "LOCAL") if third == "ROLE" || third == "SESSION" => return Class::ServerWide,
        _ => {}
    }
    match first {
        "CREATE" | "ALTER" | "DROP" | "GRANT" | "REVOKE" | "COMMENT" | "RENAME" | "REINDEX"
        | "CLUSTER" | "SECURITY" | "IMPORT" => Class::Ddl,
        "INSERT" | "UPDATE" | "DELETE" | "MERGE" | "TRUNCATE" | "REPLACE" | "LOAD" | "CALL"
        | "DO" | "VACUUM" | "ANALYZE" | "REFRESH" | "LOCK" | "NOTIFY" => Class::Write,
        // COPY FROM, and COPY TO a file or a program (run by the server).
        "COPY" if !upper(sql).contains("STDOUT") => Class::Write,
        // A query that locks rows for an update, or writes through a CTE.
        "SELECT" | "WITH" if locks_or_writes(sql, quoting) => Class::Write,
        _ => Class::Read,
    }
}

fn upper(sql: &str) -> String {
    sql.to_ascii_uppercase()
}

/// Anything that carries a password in its text: ALTER/CREATE ROLE|USER ... PASSWORD or
/// IDENTIFIED BY, SET PASSWORD, GRANT ... IDENTIFIED BY, CHANGE MASTER ... MASTER_PASSWORD,
/// CREATE SERVER/USER MAPPING/SUBSCRIPTION with a password option or a connection string
/// holding `password=`.
fn sets_password(sql: &str, quoting: Quoting, first: &str) -> bool {
    let words: Vec<String> = Lexer::new(sql, quoting)
        .filter_map(|token| match token {
            Token::Word(word) => Some(word.to_ascii_uppercase()),
            _ => None,
        })
        .collect();
    let configures = matches!(
        first,
        "ALTER" | "CREATE" | "SET" | "GRANT" | "CHANGE" | "START" | "IMPORT"
    );
    let names_one = words.iter().enumerate().any(|(index, word)| {
        word.contains("PASSWORD")
            || (word == "IDENTIFIED" && words.get(index + 1).is_some_and(|next| next == "BY"))
    });
    configures && names_one || sql.to_ascii_lowercase().contains("password=")
}

/// SELECT ... FOR UPDATE/SHARE, or a WITH whose parts insert, update or delete.
fn locks_or_writes(sql: &str, quoting: Quoting) -> bool {
    let words: Vec<String> = Lexer::new(sql, quoting)
        .filter_map(|token| match token {
            Token::Word(word) => Some(word.to_ascii_uppercase()),
            _ => None,
        })
        .collect();
    words.windows(2).any(|pair| {
        pair[0] == "FOR" && matches!(pair[1].as_str(), "UPDATE" | "SHARE" | "NO" | "KEY")
    }) || words
        .iter()
        .skip(1)
        .any(|word| matches!(word.as_str(), "INSERT" | "UPDATE" | "DELETE" | "MERGE"))
}

/// `sql` without its values: each literal (string, number, dollar-quoted, E'', B'', X'')
/// and each parameter ($1, ?, :name) becomes `?`, a list of them `(?, ...)`, comments go,
/// whitespace collapses and words are upper-cased outside quotes. Two executions of one
/// statement with other values have one fingerprint.
pub fn fingerprint(sql: &str, quoting: Quoting) -> String {
    let mut out = String::with_capacity(sql.len().min(1024));
    let mut last_was_value = false;
    // The output length before the last "(" and whether everything since it was values.
    let mut list: Option<(usize, bool)> = None;
    let mut lexer = Lexer::new(sql, quoting);
    while let Some(token) = lexer.next() {
        let piece: std::borrow::Cow<'_, str> = match token {
            Token::Value => "?".into(),
            Token::Word(word) => word.to_ascii_uppercase().into(),
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
    fn passwords_are_found_in_every_form_and_part() {
        for sql in [
            "CREATE OR REPLACE USER u IDENTIFIED BY 'pw'",
            "BEGIN; ALTER ROLE app PASSWORD 'x'; COMMIT",
            "CREATE SUBSCRIPTION s CONNECTION 'host=a password=pw' PUBLICATION p",
            "CHANGE MASTER TO MASTER_HOST='a', MASTER_PASSWORD='pw'",
            "CREATE USER MAPPING FOR app SERVER s OPTIONS (user 'a', password 'pw')",
        ] {
            assert_eq!(classify(sql, Quoting::Mysql), Class::Password, "{sql}");
        }
        // A column named password is read, not set.
        assert_eq!(
            classify("SELECT password FROM users WHERE id = 1", Quoting::Postgres),
            Class::Read
        );
        assert_eq!(
            classify("COPY t TO '/tmp/x'", Quoting::Postgres),
            Class::Write
        );
        assert_eq!(
            classify("COPY (SELECT 1) TO PROGRAM 'id'", Quoting::Postgres),
            Class::Write
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
            let _ = classify(text, Quoting::Mysql);
            let _ = fingerprint(text, Quoting::Mysql);
        }
    }

    #[test]
    fn classes_follow_the_statements_words() {
        let cases = [
            ("SELECT 1", Class::Read),
            ("BEGIN", Class::Read),
            ("SET search_path = x", Class::Read),
            ("SELECT * FROM t FOR UPDATE", Class::Write),
            (
                "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
                Class::Write,
            ),
            ("update t set a = 1", Class::Write),
            ("/* app */ INSERT INTO t VALUES (1)", Class::Write),
            ("COPY t FROM STDIN", Class::Write),
            ("COPY t TO STDOUT", Class::Read),
            ("CREATE INDEX i ON t (a)", Class::Ddl),
            ("drop table t", Class::Ddl),
            ("ALTER SYSTEM SET work_mem = '1GB'", Class::ServerWide),
            ("SET ROLE admin", Class::ServerWide),
            ("set session authorization bob", Class::ServerWide),
            ("CREATE DATABASE x", Class::ServerWide),
            ("alter role postgres password 'sekret'", Class::Password),
            (
                "ALTER USER bob WITH ENCRYPTED PASSWORD 'md5abc'",
                Class::Password,
            ),
            ("CREATE USER 'a'@'%' IDENTIFIED BY 'pw'", Class::Password),
            ("SET PASSWORD FOR 'a'@'%' = PASSWORD('x')", Class::Password),
            (
                "GRANT ALL ON db.* TO 'a'@'%' IDENTIFIED BY 'pw'",
                Class::Password,
            ),
            ("CREATE ROLE reader", Class::ServerWide),
        ];
        for (sql, class) in cases {
            assert_eq!(classify(sql, Quoting::Postgres), class, "{sql}");
        }
    }
}
