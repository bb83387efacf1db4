//! SQL text as a server reads it: its words, quoted names, string literals and punctuation,
//! with comments skipped as PostgreSQL or MySQL/MariaDB skip them. A statement's text
//! comes from other people (a DBA's script, an application's log), so what it does is
//! judged under every reading its server could give it (`READINGS`): a comment one server
//! skips may be code to another (`/*! ... */`), a backslash may or may not end a string.

/// How one server reads comments and quotes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reading {
    /// `/* /* */ */` is one comment (PostgreSQL), or ends at the first `*/` (MySQL).
    nested: bool,
    /// `#` starts a comment to the line's end (MySQL, MariaDB).
    hash: bool,
    /// `--` starts a comment only before a blank (MySQL, MariaDB).
    dash_needs_blank: bool,
    /// `/*! ... */` and `/*M! ... */` are code (MySQL, MariaDB).
    executable: bool,
    /// A backslash escapes the next character in a quoted string (MySQL's default; on
    /// PostgreSQL only in `E'...'`, which this reading takes as it takes any string).
    backslash: bool,
    /// `$tag$ ... $tag$` is a string (PostgreSQL).
    dollar_quotes: bool,
    /// `"..."` is a name (PostgreSQL, MySQL's ANSI_QUOTES), or a string (MySQL's default).
    double_quotes_name: bool,
}

/// PostgreSQL's readings (standard_conforming_strings on, and off).
pub(crate) const POSTGRES_READINGS: [Reading; 2] = [
    Reading {
        nested: true,
        hash: false,
        dash_needs_blank: false,
        executable: false,
        backslash: false,
        dollar_quotes: true,
        double_quotes_name: true,
    },
    Reading {
        nested: true,
        hash: false,
        dash_needs_blank: false,
        executable: false,
        backslash: true,
        dollar_quotes: true,
        double_quotes_name: true,
    },
];

/// MySQL's and MariaDB's readings (with and without NO_BACKSLASH_ESCAPES).
pub(crate) const MYSQL_READINGS: [Reading; 2] = [
    Reading {
        nested: false,
        hash: true,
        dash_needs_blank: true,
        executable: true,
        backslash: true,
        dollar_quotes: false,
        double_quotes_name: false,
    },
    Reading {
        nested: false,
        hash: true,
        dash_needs_blank: true,
        executable: true,
        backslash: false,
        dollar_quotes: false,
        double_quotes_name: false,
    },
];

/// Every reading: PostgreSQL's, then MySQL's and MariaDB's.
pub(crate) const READINGS: [Reading; 4] = [
    POSTGRES_READINGS[0],
    POSTGRES_READINGS[1],
    MYSQL_READINGS[0],
    MYSQL_READINGS[1],
];

/// One piece of a statement's text, as a reading sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CodeToken {
    /// A keyword, an unquoted name, a number or a `$1` parameter, in lower case.
    Word(String),
    /// A quoted name (`"x"`, `` `x` ``), without its quotes, in lower case.
    Name(String),
    /// A string literal's content (`'...'`, `$$...$$`, MySQL's `"..."`), escapes undone
    /// as far as telling what it holds needs.
    Text(String),
    /// Any other character: `;`, `(`, `.`, `@`, `=` ...
    Punct(char),
}

/// The statement's words outside quotes and comments, in lower case, as `reading` sees them.
pub(crate) fn code_words(sql: &str, reading: &Reading) -> Vec<String> {
    code_tokens(sql, reading)
        .into_iter()
        .filter_map(|token| match token {
            CodeToken::Word(word) => Some(word),
            _ => None,
        })
        .collect()
}

/// The statement's tokens, as `reading` sees them, words and names in lower case; never
/// fails, whatever the text.
pub(crate) fn code_tokens(sql: &str, reading: &Reading) -> Vec<CodeToken> {
    tokens_in_case(sql, reading, false)
}

/// [`code_tokens`] with words and names as written (a database's name may be
/// case-sensitive).
pub(crate) fn code_tokens_as_written(sql: &str, reading: &Reading) -> Vec<CodeToken> {
    tokens_in_case(sql, reading, true)
}

fn tokens_in_case(sql: &str, reading: &Reading, as_written: bool) -> Vec<CodeToken> {
    let case = |text: String| {
        if as_written {
            text
        } else {
            text.to_lowercase()
        }
    };
    let chars: Vec<char> = sql.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut at = 0;
    let mut executable_open = false;
    let end_word = |word: &mut String, tokens: &mut Vec<CodeToken>| {
        if !word.is_empty() {
            tokens.push(CodeToken::Word(case(std::mem::take(word))));
        }
    };
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        let starts = |text: &str| {
            chars[at..]
                .iter()
                .take(text.len())
                .copied()
                .eq(text.chars())
        };
        if c == '\'' || c == '"' || c == '`' {
            end_word(&mut word, &mut tokens);
            let (content, end) = quoted(&chars, at, reading.backslash && c != '`');
            at = end;
            tokens.push(if c == '`' || (c == '"' && reading.double_quotes_name) {
                CodeToken::Name(case(content))
            } else {
                CodeToken::Text(content)
            });
            continue;
        }
        if reading.dollar_quotes
            && c == '$'
            && word.is_empty()
            && let Some(tag_end) = dollar_tag_end(&chars, at)
        {
            let tag: String = chars[at..=tag_end].iter().collect();
            let body = tag_end + 1;
            let close = (body..chars.len()).find(|&index| {
                chars[index..]
                    .iter()
                    .take(tag.len())
                    .copied()
                    .eq(tag.chars())
            });
            let end = close.unwrap_or(chars.len());
            tokens.push(CodeToken::Text(chars[body..end].iter().collect()));
            at = close.map_or(chars.len(), |close| close + tag.len());
            continue;
        }
        if reading.executable && (starts("/*!") || starts("/*M!")) {
            end_word(&mut word, &mut tokens);
            at += if starts("/*!") { 3 } else { 4 };
            while at < chars.len() && chars[at].is_ascii_digit() {
                at += 1;
            }
            executable_open = true;
            continue;
        }
        if executable_open && starts("*/") {
            end_word(&mut word, &mut tokens);
            executable_open = false;
            at += 2;
            continue;
        }
        if starts("/*") {
            end_word(&mut word, &mut tokens);
            at = comment_end(&chars, at, reading.nested);
            continue;
        }
        let dash = c == '-'
            && next == Some('-')
            && (!reading.dash_needs_blank
                || chars.get(at + 2).is_none_or(|after| after.is_whitespace()));
        if dash || (reading.hash && c == '#') {
            end_word(&mut word, &mut tokens);
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' || c == '$' {
            word.push(c);
        } else {
            end_word(&mut word, &mut tokens);
            if !c.is_whitespace() {
                tokens.push(CodeToken::Punct(c));
            }
        }
        at += 1;
    }
    end_word(&mut word, &mut tokens);
    tokens
}

/// The content of the quoted run opening at `start` and the index just past it: a doubled
/// quote is one quote, and with `backslash` a backslashed character stands for itself.
fn quoted(chars: &[char], start: usize, backslash: bool) -> (String, usize) {
    let quote = chars[start];
    let mut content = String::new();
    let mut at = start + 1;
    while at < chars.len() {
        if chars[at] == quote {
            if chars.get(at + 1) == Some(&quote) {
                content.push(quote);
                at += 2;
                continue;
            }
            return (content, at + 1);
        }
        if backslash && chars[at] == '\\' {
            at += 1;
            if let Some(escaped) = chars.get(at) {
                content.push(*escaped);
            }
            at += 1;
            continue;
        }
        content.push(chars[at]);
        at += 1;
    }
    (content, chars.len())
}

/// Where the opening tag of a dollar quote at `start` (`$$`, `$tag$`) ends: the index of its
/// second `$`; None when `$` starts no tag (a placeholder `$1`).
fn dollar_tag_end(chars: &[char], start: usize) -> Option<usize> {
    let mut at = start + 1;
    while at < chars.len() && (chars[at].is_alphanumeric() || chars[at] == '_') {
        if at == start + 1 && chars[at].is_ascii_digit() {
            return None;
        }
        at += 1;
    }
    (chars.get(at) == Some(&'$')).then_some(at)
}

/// Where the block comment opening at `start` ends (just past its `*/`, or the text's end).
fn comment_end(chars: &[char], start: usize, nested: bool) -> usize {
    let mut depth = 0;
    let mut at = start;
    while at + 1 < chars.len() {
        match (chars[at], chars[at + 1]) {
            ('/', '*') if nested || depth == 0 => {
                depth += 1;
                at += 2;
            }
            ('*', '/') => {
                depth -= 1;
                at += 2;
                if depth == 0 {
                    return at;
                }
            }
            _ => at += 1,
        }
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reading_tells_names_strings_and_code_apart() {
        let pg = code_tokens(
            r#"SET "Role" = 'a''b' /* x */ -- y
            ; SELECT $t$in$t$"#,
            &POSTGRES_READINGS[0],
        );
        assert_eq!(
            pg,
            [
                CodeToken::Word("set".into()),
                CodeToken::Name("role".into()),
                CodeToken::Punct('='),
                CodeToken::Text("a'b".into()),
                CodeToken::Punct(';'),
                CodeToken::Word("select".into()),
                CodeToken::Text("in".into()),
            ]
        );
        // MySQL runs an executable comment, and its double quotes hold a string.
        let mysql = code_tokens(r#"/*!50000 SET GLOBAL x = "it\"s" */"#, &MYSQL_READINGS[0]);
        assert_eq!(
            mysql,
            [
                CodeToken::Word("set".into()),
                CodeToken::Word("global".into()),
                CodeToken::Word("x".into()),
                CodeToken::Punct('='),
                CodeToken::Text("it\"s".into()),
            ]
        );
    }
}
