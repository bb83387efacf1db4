//! What a captured statement does, read from its text as its server reads it, under every
//! reading it could be given (`sql_text`): it decides whether the statement is replayed,
//! skipped or never stored. A capture's statements are other people's code, so the words
//! that reach beyond the data (the server, its files, roles, replication, other sessions)
//! are looked for in every statement of a multi-statement string, in executable comments,
//! quoted names and the bodies of `DO` blocks, and a statement of a kind this module does
//! not know counts as a write. The role the server checks is the boundary
//! (`replay::powers`); this class is the second wall, and what keeps a replay's figures
//! to the application's own work.

use super::fingerprint::Quoting;
use crate::workload::sql_text::{
    CodeToken, MYSQL_READINGS, POSTGRES_READINGS, Reading, code_tokens, code_tokens_as_written,
};

/// What a statement does, as far as its text tells.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Reads, or session housekeeping (BEGIN, SET, SHOW, ...).
    Read,
    /// Changes rows: INSERT, UPDATE, DELETE, MERGE, TRUNCATE, ... FOR UPDATE; and any
    /// statement of a kind not known here.
    Write,
    /// Data definition (log_statement's `ddl` class): CREATE, ALTER, DROP, COMMENT, ...
    Ddl,
    /// Reaches beyond the database's data: the server (ALTER SYSTEM, SET GLOBAL,
    /// replication, KILL, FLUSH), its files and programs (COPY TO PROGRAM, INTO OUTFILE,
    /// pg_read_file), roles and grants, other databases' creation.
    ServerWide,
    /// Sets or carries a password: never stored, never replayed.
    Password,
}

/// How deep string literals are read as code (a `DO` block's `EXECUTE '...'`).
const DEPTH: usize = 3;

/// Server functions that signal other sessions, read or write the server's files, reload
/// or change replication, or reach another server.
const SERVER_FUNCTIONS: &[&str] = &[
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_switch_wal",
    "pg_switch_xlog",
    "pg_create_restore_point",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_wal_replay_pause",
    "pg_wal_replay_resume",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "pg_ls_logdir",
    "pg_ls_waldir",
    "pg_ls_tmpdir",
    "pg_ls_archive_statusdir",
    "pg_stat_file",
    "pg_file_write",
    "pg_file_rename",
    "pg_file_unlink",
    "pg_file_sync",
    "pg_logdir_ls",
    "pg_log_backend_memory_contexts",
    "pg_create_physical_replication_slot",
    "pg_create_logical_replication_slot",
    "pg_drop_replication_slot",
    "pg_copy_physical_replication_slot",
    "pg_copy_logical_replication_slot",
    "pg_replication_origin_create",
    "pg_replication_origin_drop",
    "pg_replication_origin_advance",
    "pg_logical_emit_message",
    "pg_import_system_collations",
    "pg_checkpoint",
    "lo_import",
    "lo_export",
    "dblink",
    "dblink_exec",
    "dblink_connect",
    "dblink_connect_u",
    "dblink_open",
    "dblink_send_query",
    "load_file",
    "sys_exec",
    "sys_eval",
];

/// The statement starters after which a string holds code: `DO $$...$$`, `PREPARE s FROM
/// '...'`, `EXECUTE '...'` in a block, a function's body.
const CODE_IN_STRINGS: &[&str] = &[
    "do", "prepare", "execute", "exec", "create", "alter", "call", "begin", "declare", "set",
    "copy", "perform", "return",
];

/// The readings of a capture's product.
fn readings(quoting: Quoting) -> &'static [Reading] {
    match quoting {
        Quoting::Postgres => &POSTGRES_READINGS,
        Quoting::Mysql => &MYSQL_READINGS,
    }
}

/// The class of `sql`: the most sensitive class any reading of any of its statements gives.
pub fn classify(sql: &str, quoting: Quoting) -> Class {
    readings(quoting)
        .iter()
        .map(|reading| of_text(sql, reading, 0))
        .max()
        .unwrap_or(Class::Read)
}

/// The class of a text under one reading: each of its statements', the most sensitive.
fn of_text(sql: &str, reading: &Reading, depth: usize) -> Class {
    let tokens = code_tokens(sql, reading);
    tokens
        .split(|token| *token == CodeToken::Punct(';'))
        .filter(|statement| !statement.is_empty())
        .map(|statement| of_statement(statement, reading, depth))
        .max()
        .unwrap_or(Class::Read)
}

/// A token's word: a keyword, a name or a quoted name, in lower case.
fn word(token: &CodeToken) -> Option<&str> {
    match token {
        CodeToken::Word(word) | CodeToken::Name(word) => Some(word),
        _ => None,
    }
}

/// The class of one statement's tokens.
fn of_statement(tokens: &[CodeToken], reading: &Reading, depth: usize) -> Class {
    let words: Vec<&str> = tokens.iter().filter_map(word).collect();
    if carries_password(tokens, &words) {
        return Class::Password;
    }
    let lead: Vec<&str> = words
        .iter()
        .copied()
        .filter(|word| !matches!(*word, "or" | "replace" | "if" | "not" | "exists"))
        .take(4)
        .collect();
    let first = lead.first().copied().unwrap_or("");
    let inner = if depth < DEPTH && CODE_IN_STRINGS.contains(&first) {
        tokens
            .iter()
            .filter_map(|token| match token {
                CodeToken::Text(text) => Some(of_text(text, reading, depth + 1)),
                _ => None,
            })
            .filter(|class| *class >= Class::ServerWide)
            .max()
    } else {
        None
    };
    if let Some(class) = inner {
        return class;
    }
    if reaches_beyond(tokens, &words, &lead) {
        return Class::ServerWide;
    }
    by_first_words(tokens, &words, &lead, reading, depth)
}

/// Whether the statement sets or holds a password: IDENTIFIED BY/WITH/VIA/USING, a
/// password named in a role, user, replication or server statement (anywhere in it, so
/// `ALTER ROLE` inside a block counts), MySQL's `PASSWORD(...)`, or a connection string
/// with `password=` in any string.
fn carries_password(tokens: &[CodeToken], words: &[&str]) -> bool {
    let identified = words
        .windows(2)
        .any(|pair| pair[0] == "identified" && matches!(pair[1], "by" | "with" | "via" | "using"));
    let names_password = words.iter().any(|word| word.contains("password"));
    let configures = words.first().is_some_and(|first| {
        matches!(
            *first,
            "alter" | "create" | "set" | "grant" | "change" | "start" | "import"
        )
    }) || words.windows(2).any(|pair| {
        matches!(pair[0], "alter" | "create" | "change")
            && matches!(
                pair[1],
                "role" | "user" | "group" | "subscription" | "server" | "master" | "replication"
            )
            || pair == ["user", "mapping"]
            || pair[0] == "mysql" && matches!(pair[1], "user" | "global_priv")
    });
    let password_function = tokens
        .windows(2)
        .any(|pair| word(&pair[0]) == Some("password") && pair[1] == CodeToken::Punct('('));
    let in_text = tokens.iter().any(|token| match token {
        CodeToken::Text(text) => connection_password(text),
        _ => false,
    });
    identified || (names_password && configures) || password_function || in_text
}

/// Whether any of a statement's parameters carries a password (a connection string bound
/// as a value: `SELECT dblink_connect($1)`).
pub fn parameters_hold_password(parameters: Option<&[Option<String>]>) -> bool {
    parameters
        .into_iter()
        .flatten()
        .flatten()
        .any(|value| connection_password(value))
}

/// `password=...` in a libpq keyword string or a URL's query, with or without blanks
/// around `=`; and a URL with a password (`user:secret@host`).
fn connection_password(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let keyword = lower
        .match_indices("password")
        .any(|(at, found)| lower[at + found.len()..].trim_start().starts_with('='));
    let url = lower.find("://").is_some_and(|scheme| {
        let rest = &lower[scheme + 3..];
        let authority = rest.split(['/', '?']).next().unwrap_or_default();
        authority
            .split_once('@')
            .is_some_and(|(credentials, _)| credentials.contains(':'))
    });
    keyword || url
}

/// Whether the statement reaches beyond the data: the server's settings, files and
/// programs, other sessions, replication, roles and grants, databases.
fn reaches_beyond(tokens: &[CodeToken], words: &[&str], lead: &[&str]) -> bool {
    let first = lead.first().copied().unwrap_or("");
    let second = lead.get(1).copied().unwrap_or("");
    let has = |wanted: &str| words.contains(&wanted);
    let pair = |a: &str, b: &[&str]| {
        words
            .windows(2)
            .any(|pair| pair[0] == a && b.contains(&pair[1]))
    };
    let server_statement = match first {
        "checkpoint" | "shutdown" | "kill" | "flush" | "install" | "uninstall" | "purge"
        | "binlog" | "restart" | "clone" | "grant" | "revoke" | "reassign" | "load" | "change"
        | "cache" => true,
        "set" => {
            has("global")
                || has("persist")
                || has("persist_only")
                || has("role")
                || has("authorization")
                || has("session_authorization")
        }
        "reset" => matches!(
            second,
            "all"
                | "role"
                | "session"
                | "session_authorization"
                | "master"
                | "slave"
                | "replica"
                | "binary"
                | "persist"
                | "query"
        ),
        "start" | "stop" => matches!(second, "slave" | "replica" | "all" | "group_replication"),
        "create" | "alter" | "drop" | "rename" => matches!(
            second,
            "database"
                | "tablespace"
                | "role"
                | "user"
                | "group"
                | "server"
                | "subscription"
                | "extension"
                | "foreign"
                | "instance"
                | "logfile"
                | "event"
                | "resource"
                | "language"
                | "default"
                | "owned"
                | "system"
        ),
        _ => false,
    };
    let files = pair("into", &["outfile", "dumpfile"]) || copies_with_server(tokens);
    let functions = tokens.windows(2).any(|pair| {
        word(&pair[0]).is_some_and(|name| SERVER_FUNCTIONS.contains(&name))
            && pair[1] == CodeToken::Punct('(')
    });
    server_statement || files || functions || pair("alter", &["system"])
}

/// COPY with a file or a program of the server's, anywhere in the statement: `PROGRAM`,
/// or `TO`/`FROM` followed by a file's name.
fn copies_with_server(tokens: &[CodeToken]) -> bool {
    let Some(copy) = tokens.iter().position(|token| word(token) == Some("copy")) else {
        return false;
    };
    let rest = &tokens[copy..];
    rest.iter().any(|token| word(token) == Some("program"))
        || rest.windows(2).any(|pair| {
            matches!(word(&pair[0]), Some("to" | "from")) && matches!(pair[1], CodeToken::Text(_))
        })
}

/// The class the statement's leading words give; an unknown kind is a write.
fn by_first_words(
    tokens: &[CodeToken],
    words: &[&str],
    lead: &[&str],
    reading: &Reading,
    depth: usize,
) -> Class {
    let first = lead.first().copied().unwrap_or("");
    let second = lead.get(1).copied().unwrap_or("");
    match first {
        "" => Class::Read,
        "create" | "alter" | "drop" | "comment" | "rename" | "reindex" | "cluster" | "security"
        | "import" => Class::Ddl,
        "insert" | "update" | "delete" | "merge" | "upsert" | "truncate" | "replace" | "call"
        | "do" | "vacuum" | "analyze" | "refresh" | "lock" | "notify" | "execute" | "exec"
        | "handler" => Class::Write,
        "copy" if words.contains(&"stdout") => Class::Read,
        "select" | "with" | "values" | "table" | "declare" => {
            if locks_or_writes(words) {
                Class::Write
            } else {
                Class::Read
            }
        }
        "explain" | "prepare" | "begin" => inner_statement(tokens, first, second, reading, depth),
        "show" | "describe" | "desc" | "start" | "commit" | "rollback" | "end" | "abort"
        | "savepoint" | "release" | "set" | "reset" | "deallocate" | "fetch" | "move" | "close"
        | "listen" | "unlisten" | "discard" | "help" | "use" | "checksum" => Class::Read,
        _ => Class::Write,
    }
}

/// The class of the statement inside `EXPLAIN ANALYZE ...`, `PREPARE name AS ...` or a
/// block's `BEGIN ...` (MariaDB's `BEGIN NOT ATOMIC`); `BEGIN` of a transaction and a
/// plain EXPLAIN read.
fn inner_statement(
    tokens: &[CodeToken],
    first: &str,
    second: &str,
    reading: &Reading,
    depth: usize,
) -> Class {
    const STARTS: &[&str] = &[
        "select", "insert", "update", "delete", "merge", "with", "values", "table", "execute",
        "create", "declare", "alter", "drop", "set", "call", "do", "copy", "grant", "revoke",
        "truncate", "replace", "lock", "perform", "kill", "flush",
    ];
    let analyze = tokens.iter().any(|token| word(token) == Some("analyze"));
    let transaction = first == "begin"
        && (second.is_empty()
            || matches!(
                second,
                "work" | "transaction" | "isolation" | "read" | "deferrable"
            ));
    if transaction || (first == "explain" && !analyze) {
        return Class::Read;
    }
    let inner = tokens
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, token)| word(token).is_some_and(|word| STARTS.contains(&word)));
    match inner {
        Some((at, _)) => of_statement(&tokens[at..], reading, depth),
        None if first == "prepare" => Class::Write,
        None => Class::Read,
    }
}

/// SELECT ... FOR UPDATE/SHARE, or a WITH whose parts insert, update or delete.
fn locks_or_writes(words: &[&str]) -> bool {
    words
        .windows(2)
        .any(|pair| pair[0] == "for" && matches!(pair[1], "update" | "share" | "no" | "key"))
        || words
            .iter()
            .skip(1)
            .any(|word| matches!(*word, "insert" | "update" | "delete" | "merge"))
}

/// The database a `USE name` statement moves its session to (MySQL, MariaDB).
pub fn used_database(sql: &str, quoting: Quoting) -> Option<String> {
    if quoting != Quoting::Mysql {
        return None;
    }
    let tokens = code_tokens_as_written(sql, &MYSQL_READINGS[0]);
    match tokens.as_slice() {
        [CodeToken::Word(first), name, ..] if first.eq_ignore_ascii_case("use") => {
            word(name).map(str::to_string)
        }
        _ => None,
    }
}

/// Words after which a qualified name is a table (or a routine): `FROM db.t`, `JOIN`,
/// `INTO`, `UPDATE`, `TABLE`, `LOCK TABLES`, `CALL db.p()`, `DESCRIBE`.
const BEFORE_TABLES: &[&str] = &[
    "from",
    "join",
    "into",
    "update",
    "table",
    "tables",
    "call",
    "describe",
    "desc",
    "insert",
    "replace",
    "delete",
    "truncate",
    "straight_join",
    "using",
    "exists",
];

/// The databases a MySQL or MariaDB statement names beside its session's: the first part
/// of `db.table.column`, of `db.table` where a table is named (after FROM, JOIN, INTO ...,
/// and in the comma-separated lists those start), and of `db.routine(...)`. As written;
/// none on PostgreSQL, whose statements reach no other database.
pub fn databases_named(sql: &str, quoting: Quoting) -> Vec<String> {
    if quoting != Quoting::Mysql {
        return Vec::new();
    }
    let mut named = Vec::new();
    for reading in &MYSQL_READINGS {
        let tokens = code_tokens_as_written(sql, reading);
        let mut in_tables = false;
        let mut at = 0;
        while at < tokens.len() {
            let chain = dotted(&tokens[at..]);
            if chain.len() >= 2 {
                let before = at.checked_sub(1).map(|index| &tokens[index]);
                let after = tokens.get(at + chain.len() * 2 - 1);
                let table = in_tables
                    && before.is_some_and(|token| {
                        *token == CodeToken::Punct(',')
                            || word(token).is_some_and(|word| {
                                BEFORE_TABLES.contains(&word.to_ascii_lowercase().as_str())
                            })
                    });
                let routine = chain.len() == 2 && after == Some(&CodeToken::Punct('('));
                if chain.len() >= 3 || table || routine {
                    named.push(chain[0].to_string());
                }
                at += chain.len() * 2 - 1;
                continue;
            }
            if let Some(word) = word(&tokens[at]).map(str::to_ascii_lowercase) {
                let word = word.as_str();
                if BEFORE_TABLES.contains(&word) {
                    in_tables = true;
                } else if matches!(
                    word,
                    "where"
                        | "set"
                        | "on"
                        | "group"
                        | "order"
                        | "limit"
                        | "having"
                        | "values"
                        | "select"
                        | "union"
                        | "window"
                        | "for"
                        | "partition"
                ) {
                    in_tables = false;
                }
            }
            at += 1;
        }
    }
    named.sort();
    named.dedup();
    named
}

/// The names of a dotted chain starting at `tokens[0]` (`a.b.c`: a, b, c); one name when
/// no dot follows.
fn dotted(tokens: &[CodeToken]) -> Vec<&str> {
    let mut names = Vec::new();
    let mut at = 0;
    while let Some(name) = tokens.get(at).and_then(word) {
        names.push(name);
        if tokens.get(at + 1) != Some(&CodeToken::Punct('.')) {
            break;
        }
        at += 2;
    }
    names
}

#[cfg(test)]
mod tests;
