//! The powers a role holds beyond its data, read from the target server: a replayed
//! session must have no more of them than the captured user had, since a captured function
//! or statement runs with its session's role, and the role the server checks is the one
//! boundary replayed code cannot lift (a read-only setting or `SET ROLE` it can).

use std::collections::BTreeSet;

use anyhow::{Context, Result};

use crate::db::driver::DbSession;
use crate::db::product::Dialect;

/// PostgreSQL's predefined roles that only watch: membership in any other is a power.
const MONITORING: &[&str] = &[
    "pg_monitor",
    "pg_read_all_settings",
    "pg_read_all_stats",
    "pg_stat_scan_tables",
    "pg_database_owner",
];

/// MySQL's and MariaDB's global privileges an application may hold without power over
/// the server or other accounts.
const PLAIN_GLOBAL: &[&str] = &[
    "USAGE",
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "EXECUTE",
    "CREATE TEMPORARY TABLES",
    "LOCK TABLES",
    "SHOW VIEW",
];

/// A role's powers: everything (a superuser, MySQL's ALL PRIVILEGES on `*.*`), or the
/// named ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Powers {
    pub all: bool,
    pub named: BTreeSet<String>,
}

impl Powers {
    /// Whether these powers include every one of `other`'s.
    pub fn cover(&self, other: &Self) -> bool {
        self.all || (!other.all && other.named.is_subset(&self.named))
    }

    /// `other`'s powers these lack, in words ("SUPERUSER, pg_signal_backend").
    pub fn missing_from(&self, other: &Self) -> String {
        if other.all && !self.all {
            return "every privilege (a superuser)".to_string();
        }
        other
            .named
            .difference(&self.named)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The powers of the role named `role` on the session's server; None when no role of
/// that name exists there.
pub(crate) fn of_role(
    session: &mut dyn DbSession,
    dialect: Dialect,
    role: &str,
) -> Result<Option<Powers>> {
    match dialect {
        Dialect::PostgreSql => postgres(session, role),
        Dialect::MySql => mysql(session, role),
        // No replay reaches Oracle.
        Dialect::Oracle => Ok(Some(Powers::default())),
    }
    .with_context(|| format!("reading the powers of role '{role}' on the target"))
}

/// A PostgreSQL role's powers, with those of every role it can become (`SET ROLE` to a
/// role it is a member of): SUPERUSER, CREATEROLE, BYPASSRLS, REPLICATION, and the
/// predefined roles other than the monitoring ones.
fn postgres(session: &mut dyn DbSession, role: &str) -> Result<Option<Powers>> {
    let rows = session.fetch_text(
        "SELECT pg_catalog.bool_or(m.rolsuper)::text, pg_catalog.bool_or(m.rolcreaterole)::text, \
         pg_catalog.bool_or(m.rolbypassrls)::text, pg_catalog.bool_or(m.rolreplication)::text, \
         pg_catalog.string_agg(CASE WHEN m.rolname OPERATOR(pg_catalog.~~) 'pg\\_%' \
         THEN m.rolname::text END, ',') \
         FROM pg_catalog.pg_roles r JOIN pg_catalog.pg_roles m \
         ON pg_catalog.pg_has_role(r.oid, m.oid, 'MEMBER') \
         WHERE r.rolname OPERATOR(pg_catalog.=) $1",
        &[role],
    )?;
    let Some(row) = rows.first().filter(|row| row[0].is_some()) else {
        return Ok(None);
    };
    let flag = |index: usize| row[index].as_deref() == Some("true");
    if flag(0) {
        return Ok(Some(Powers {
            all: true,
            named: BTreeSet::new(),
        }));
    }
    let mut named: BTreeSet<String> = [(1, "CREATEROLE"), (2, "BYPASSRLS"), (3, "REPLICATION")]
        .into_iter()
        .filter(|(index, _)| flag(*index))
        .map(|(_, name)| name.to_string())
        .collect();
    named.extend(
        row[4]
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .filter(|name| !name.is_empty() && !MONITORING.contains(name))
            .map(str::to_string),
    );
    Ok(Some(Powers { all: false, named }))
}

/// A MySQL or MariaDB user's powers over all its accounts (every host), with those of the
/// roles granted to it: global privileges beyond an application's, any grant on the
/// `mysql` schema, GRANT OPTION and PROXY, from `SHOW GRANTS`, which alone lists every
/// kind on both servers (dynamic privileges, roles). The session's own account is read
/// with `SHOW GRANTS` alone, which needs no privilege; where the grants of the session's
/// own user cannot all be read, it counts as holding every power (so no captured user is
/// replayed as it), and another user's unread grants count as none (its sessions connect
/// as that user, whom the server then checks).
fn mysql(session: &mut dyn DbSession, user: &str) -> Result<Option<Powers>> {
    let current = session
        .fetch_text("SELECT CURRENT_USER()", &[])?
        .into_iter()
        .next()
        .and_then(|mut row| row.remove(0))
        .unwrap_or_default();
    let own = current
        .rsplit_once('@')
        .filter(|(name, _)| *name == user)
        .map(|(name, host)| (name.to_string(), host.to_string()));
    let mut hosts: Vec<String> =
        match session.fetch_text("SELECT Host FROM mysql.user WHERE User = ?", &[user]) {
            Ok(rows) => rows
                .into_iter()
                .filter_map(|mut row| row.remove(0))
                .collect(),
            // mysql.user unreadable: the grants of the account any host may use.
            Err(_) if own.is_none() => vec!["%".to_string()],
            Err(_) => Vec::new(),
        };
    if let Some((_, host)) = &own {
        hosts.retain(|other| other != host);
        hosts.push(host.clone());
    }
    if hosts.is_empty() {
        return Ok(None);
    }
    let mut powers = Powers::default();
    let mut seen = BTreeSet::new();
    let mut accounts: Vec<(String, String)> = hosts
        .into_iter()
        .map(|host| (user.to_string(), host))
        .collect();
    while let Some(account) = accounts.pop() {
        if !seen.insert(account.clone()) || seen.len() > 64 {
            continue;
        }
        let statement = if own.as_ref() == Some(&account) {
            "SHOW GRANTS".to_string()
        } else {
            show_grants(&account)
        };
        let Ok(lines) = session.fetch_text(&statement, &[]) else {
            if own.is_some() {
                powers.all = true;
            }
            continue;
        };
        for line in lines.into_iter().filter_map(|mut row| row.remove(0)) {
            read_grant(&line, &mut powers, &mut accounts);
        }
    }
    Ok(Some(powers))
}

/// `SHOW GRANTS FOR 'user'@'host'`, the names as string literals (quotes doubled,
/// backslashes escaped: one name in either backslash mode, never code).
fn show_grants((user, host): &(String, String)) -> String {
    let literal = |text: &str| format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"));
    if host.is_empty() {
        // A MariaDB role.
        format!("SHOW GRANTS FOR {}", literal(user))
    } else {
        format!("SHOW GRANTS FOR {}@{}", literal(user), literal(host))
    }
}

/// One line of `SHOW GRANTS`: its privileges' powers added to `powers`, a role it grants
/// added to `accounts`.
fn read_grant(line: &str, powers: &mut Powers, accounts: &mut Vec<(String, String)>) {
    let Some(rest) = line.strip_prefix("GRANT ") else {
        return;
    };
    if line.contains(" WITH GRANT OPTION") || line.contains(" WITH ADMIN OPTION") {
        powers.named.insert("GRANT OPTION".to_string());
    }
    let Some((privileges, object)) = split_on(rest) else {
        // A role granted: "GRANT `role` TO `user`@`host`", or several.
        let roles = rest.split(" TO ").next().unwrap_or_default();
        accounts.extend(
            split_outside(roles, ',')
                .into_iter()
                .map(|role| account(&role)),
        );
        return;
    };
    let object = object.split(" TO ").next().unwrap_or_default().trim();
    let privileges = split_outside(privileges, ',');
    if object == "*.*" {
        for privilege in &privileges {
            let name = privilege
                .split('(')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_uppercase();
            if name == "ALL" || name == "ALL PRIVILEGES" {
                powers.all = true;
            } else if !PLAIN_GLOBAL.contains(&name.as_str()) {
                powers.named.insert(name);
            }
        }
    } else if privileges
        .iter()
        .any(|privilege| privilege.trim() == "PROXY")
    {
        powers.named.insert("PROXY".to_string());
    } else if names_mysql_schema(object) {
        powers
            .named
            .insert("grants on the mysql schema".to_string());
    }
}

/// A grant's privileges and object: the text around its first " ON " outside quotes.
fn split_on(rest: &str) -> Option<(&str, &str)> {
    let mut quote = None;
    for (at, c) in rest.char_indices() {
        match (quote, c) {
            (None, '`' | '\'' | '"') => quote = Some(c),
            (Some(open), _) if c == open => quote = None,
            (None, ' ') if rest[at..].starts_with(" ON ") => {
                return Some((&rest[..at], &rest[at + 4..]));
            }
            _ => {}
        }
    }
    None
}

/// `text` split at `separator` outside quotes and brackets, each part trimmed.
fn split_outside(text: &str, separator: char) -> Vec<String> {
    let (mut parts, mut part, mut depth, mut quote) = (Vec::new(), String::new(), 0, None);
    for c in text.chars() {
        match (quote, c) {
            (None, '`' | '\'' | '"') => quote = Some(c),
            (Some(open), _) if c == open => quote = None,
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, _) if c == separator && depth == 0 => {
                parts.push(std::mem::take(&mut part).trim().to_string());
                continue;
            }
            _ => {}
        }
        part.push(c);
    }
    parts.push(part.trim().to_string());
    parts.retain(|part| !part.is_empty());
    parts
}

/// An account as SHOW GRANTS names it: `` `user`@`host` ``, `'user'@'host'` or a role's
/// `` `role` `` alone (host '').
fn account(text: &str) -> (String, String) {
    let unquote = |part: &str| {
        let part = part.trim();
        let quoted = part.len() >= 2
            && (part.starts_with('`') && part.ends_with('`')
                || part.starts_with('\'') && part.ends_with('\''));
        if quoted {
            part[1..part.len() - 1].to_string()
        } else {
            part.to_string()
        }
    };
    match split_outside(text, '@').as_slice() {
        [user, host] => (unquote(user), unquote(host)),
        _ => (unquote(text), String::new()),
    }
}

/// Whether a grant's object (`` `mysql`.* ``, `` `mysql`.`user` ``, `` `my%`.* ``) is in
/// the `mysql` schema, a name pattern's wildcards included.
fn names_mysql_schema(object: &str) -> bool {
    let schema = split_outside(object, '.')
        .into_iter()
        .next()
        .unwrap_or_default();
    let schema = schema.trim_matches('`');
    like("mysql", schema)
}

/// SQL's LIKE: `%` any run, `_` one character, `\` escapes the next.
fn like(text: &str, pattern: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    fn at(text: &[char], pattern: &[char]) -> bool {
        match pattern.first() {
            None => text.is_empty(),
            Some('%') => (0..=text.len()).any(|skip| at(&text[skip..], &pattern[1..])),
            Some('_') => !text.is_empty() && at(&text[1..], &pattern[1..]),
            Some('\\') if pattern.len() > 1 => {
                text.first() == Some(&pattern[1]) && at(&text[1..], &pattern[2..])
            }
            Some(c) => text.first() == Some(c) && at(&text[1..], &pattern[1..]),
        }
    }
    pattern.len() <= 64 && at(&text, &pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[&str]) -> (Powers, Vec<(String, String)>) {
        let mut powers = Powers::default();
        let mut accounts = Vec::new();
        for line in lines {
            read_grant(line, &mut powers, &mut accounts);
        }
        (powers, accounts)
    }

    #[test]
    fn show_grants_lines_give_powers_and_roles() {
        let (powers, roles) = read(&[
            "GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '*ABC'",
            "GRANT SELECT, INSERT, UPDATE, DELETE ON `shop`.* TO `app`@`%`",
            "GRANT `lifter`, `reader` TO `app`@`%`",
        ]);
        assert_eq!(powers, Powers::default());
        assert_eq!(
            roles,
            [
                ("lifter".to_string(), String::new()),
                ("reader".to_string(), String::new())
            ]
        );
        let (powers, _) = read(&[
            "GRANT PROCESS, RELOAD, SELECT ON *.* TO `mallory`@`localhost`",
            "GRANT SELECT ON `mysql`.`user` TO `mallory`@`localhost`",
            "GRANT SELECT (`a`, `b`) ON `shop`.`t` TO `mallory`@`localhost` WITH GRANT OPTION",
            "GRANT BINLOG_ADMIN,CONNECTION_ADMIN ON *.* TO `mallory`@`localhost`",
        ]);
        assert!(!powers.all);
        assert_eq!(
            powers.named.iter().map(String::as_str).collect::<Vec<_>>(),
            [
                "BINLOG_ADMIN",
                "CONNECTION_ADMIN",
                "GRANT OPTION",
                "PROCESS",
                "RELOAD",
                "grants on the mysql schema"
            ]
        );
        let (root, _) =
            read(&["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"]);
        assert!(root.all && root.cover(&powers) && !powers.cover(&root));
        let (pattern, _) = read(&["GRANT SELECT ON `my%`.* TO `x`@`%`"]);
        assert!(pattern.named.contains("grants on the mysql schema"));
        let (escaped, _) = read(&["GRANT SELECT ON `my\\_db`.* TO `x`@`%`"]);
        assert!(escaped.named.is_empty());
    }

    /// A server that answers `SHOW GRANTS` (and CURRENT_USER()) as MariaDB 10.11 answers
    /// `ops`@`127.0.0.1`, which holds SUPER and PROCESS but may read nothing of `mysql`.
    struct Unprivileged {
        role_readable: bool,
    }

    impl DbSession for Unprivileged {
        fn execute(
            &mut self,
            _index: usize,
            _sql: &str,
            _values: &[crate::db::driver::BoundValue],
        ) -> Result<crate::db::driver::Answer, crate::db::SessionError> {
            Err(anyhow::anyhow!("not asked").into())
        }
        fn run_plain(
            &mut self,
            _sql: &str,
        ) -> Result<crate::db::driver::Answer, crate::db::SessionError> {
            Err(anyhow::anyhow!("not asked").into())
        }
        fn fetch_text(&mut self, sql: &str, _values: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
            let lines: &[&str] = match sql {
                "SELECT CURRENT_USER()" => &["ops@127.0.0.1"],
                "SHOW GRANTS" => &[
                    "GRANT PROCESS, SUPER ON *.* TO `ops`@`127.0.0.1`",
                    "GRANT ALL PRIVILEGES ON `shopclone`.* TO `ops`@`127.0.0.1`",
                    "GRANT `helper` TO `ops`@`127.0.0.1`",
                ],
                "SHOW GRANTS FOR 'helper'" if self.role_readable => {
                    &["GRANT SELECT ON *.* TO `helper`"]
                }
                // SELECT command denied for mysql.user; access denied to database 'mysql'.
                _ => anyhow::bail!("access denied"),
            };
            Ok(lines
                .iter()
                .map(|line| vec![Some((*line).to_string())])
                .collect())
        }
    }

    #[test]
    fn an_account_that_may_not_read_mysql_still_reads_its_own_powers() {
        let mut session = Unprivileged {
            role_readable: true,
        };
        let own = of_role(&mut session, Dialect::MySql, "ops")
            .unwrap()
            .unwrap();
        assert_eq!(
            own.named.iter().map(String::as_str).collect::<Vec<_>>(),
            ["PROCESS", "SUPER"]
        );
        assert!(!own.all);
        // Another user's grants, unread, count as none: its sessions connect as it.
        let theirs = of_role(&mut session, Dialect::MySql, "mallory")
            .unwrap()
            .unwrap();
        assert_eq!(theirs, Powers::default());
        assert!(!theirs.cover(&own));
        // Its own grants not all read: every power.
        let mut session = Unprivileged {
            role_readable: false,
        };
        let own = of_role(&mut session, Dialect::MySql, "ops")
            .unwrap()
            .unwrap();
        assert!(own.all);
    }

    #[test]
    fn names_are_literals_whatever_they_hold() {
        assert_eq!(
            show_grants(&("a'b\\".to_string(), "%".to_string())),
            "SHOW GRANTS FOR 'a''b\\\\'@'%'"
        );
        assert_eq!(
            show_grants(&("role".to_string(), String::new())),
            "SHOW GRANTS FOR 'role'"
        );
    }

    #[test]
    fn powers_cover_only_what_they_hold() {
        let of = |names: &[&str]| Powers {
            all: false,
            named: names.iter().map(|name| (*name).to_string()).collect(),
        };
        assert!(of(&["A", "B"]).cover(&of(&["A"])));
        assert!(!of(&["A"]).cover(&of(&["A", "B"])));
        assert_eq!(of(&["A"]).missing_from(&of(&["A", "B", "C"])), "B, C");
        let superuser = Powers {
            all: true,
            named: BTreeSet::new(),
        };
        assert!(!of(&["A"]).cover(&superuser));
        assert_eq!(
            of(&[]).missing_from(&superuser),
            "every privilege (a superuser)"
        );
    }
}
