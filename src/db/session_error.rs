//! What a session meets when a statement does not go through, as one type: a refusal the
//! session outlives (with the server's code), a lost connection, a timeout, or anything
//! else. Workloads retry, count or give up by matching its kind, as rust-postgres's callers
//! match `SqlState`, never by reading strings out of an error.

use std::fmt;

/// A SQLSTATE: five characters, class and subclass. PostgreSQL's own codes, and the one
/// MySQL and MariaDB send beside their error numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SqlState([u8; 5]);

impl SqlState {
    pub const SERIALIZATION_FAILURE: Self = Self(*b"40001");
    pub const DEADLOCK_DETECTED: Self = Self(*b"40P01");
    pub const READ_ONLY_SQL_TRANSACTION: Self = Self(*b"25006");
    pub const INSUFFICIENT_PRIVILEGE: Self = Self(*b"42501");
    pub const UNDEFINED_TABLE: Self = Self(*b"42P01");
    /// A statement cancelled: `statement_timeout`, or a cancel request.
    pub const QUERY_CANCELED: Self = Self(*b"57014");
    /// A lock not had within `lock_timeout` (or NOWAIT).
    pub const LOCK_NOT_AVAILABLE: Self = Self(*b"55P03");
    pub const ADMIN_SHUTDOWN: Self = Self(*b"57P01");
    pub const CRASH_SHUTDOWN: Self = Self(*b"57P02");
    pub const CANNOT_CONNECT_NOW: Self = Self(*b"57P03");
    pub const IDLE_SESSION_TIMEOUT: Self = Self(*b"57P05");

    /// The code as the server sent it; None unless five ASCII letters and digits.
    pub fn new(text: &str) -> Option<Self> {
        let bytes: [u8; 5] = text.as_bytes().try_into().ok()?;
        bytes
            .iter()
            .all(u8::is_ascii_alphanumeric)
            .then_some(Self(bytes))
    }

    pub fn as_str(&self) -> &str {
        // Checked ASCII on the way in.
        std::str::from_utf8(&self.0).unwrap_or("?????")
    }

    /// The class: its first two characters ("08" is a connection exception).
    pub fn class(&self) -> [u8; 2] {
        [self.0[0], self.0[1]]
    }

    fn kind(self) -> ErrorKind {
        match self {
            Self::SERIALIZATION_FAILURE => ErrorKind::Serialization,
            Self::DEADLOCK_DETECTED => ErrorKind::Deadlock,
            Self::READ_ONLY_SQL_TRANSACTION => ErrorKind::ReadOnly,
            Self::INSUFFICIENT_PRIVILEGE => ErrorKind::Privilege,
            Self::UNDEFINED_TABLE => ErrorKind::MissingTable,
            Self::QUERY_CANCELED | Self::LOCK_NOT_AVAILABLE => ErrorKind::Timeout,
            Self::ADMIN_SHUTDOWN
            | Self::CRASH_SHUTDOWN
            | Self::CANNOT_CONNECT_NOW
            | Self::IDLE_SESSION_TIMEOUT => ErrorKind::ConnectionLost,
            code if code.class() == *b"08" => ErrorKind::ConnectionLost,
            _ => ErrorKind::Other,
        }
    }
}

impl fmt::Display for SqlState {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A MySQL/MariaDB error number: what tells their errors apart (many share SQLSTATE HY000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MySqlCode(pub u16);

impl MySqlCode {
    pub const ER_DBACCESS_DENIED_ERROR: Self = Self(1044);
    pub const ER_TABLEACCESS_DENIED_ERROR: Self = Self(1142);
    pub const ER_COLUMNACCESS_DENIED_ERROR: Self = Self(1143);
    pub const ER_NO_SUCH_TABLE: Self = Self(1146);
    pub const ER_LOCK_WAIT_TIMEOUT: Self = Self(1205);
    pub const ER_LOCK_DEADLOCK: Self = Self(1213);
    pub const ER_SPECIFIC_ACCESS_DENIED_ERROR: Self = Self(1227);
    /// `--read-only` (or another option) prevents the statement.
    pub const ER_OPTION_PREVENTS_STATEMENT: Self = Self(1290);
    pub const ER_PROCACCESS_DENIED_ERROR: Self = Self(1370);
    pub const ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION: Self = Self(1792);
    /// MariaDB's `max_statement_time`.
    pub const ER_STATEMENT_TIMEOUT: Self = Self(1969);
    /// MySQL's `max_execution_time`.
    pub const ER_QUERY_TIMEOUT: Self = Self(3024);

    /// The refusals that say the user lacks a privilege (what a check before running finds).
    pub fn is_privilege(self) -> bool {
        [
            Self::ER_DBACCESS_DENIED_ERROR,
            Self::ER_TABLEACCESS_DENIED_ERROR,
            Self::ER_COLUMNACCESS_DENIED_ERROR,
            Self::ER_SPECIFIC_ACCESS_DENIED_ERROR,
            Self::ER_PROCACCESS_DENIED_ERROR,
        ]
        .contains(&self)
    }

    fn kind(self) -> Option<ErrorKind> {
        Some(match self {
            Self::ER_LOCK_DEADLOCK => ErrorKind::Deadlock,
            Self::ER_LOCK_WAIT_TIMEOUT | Self::ER_STATEMENT_TIMEOUT | Self::ER_QUERY_TIMEOUT => {
                ErrorKind::Timeout
            }
            Self::ER_OPTION_PREVENTS_STATEMENT | Self::ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION => {
                ErrorKind::ReadOnly
            }
            Self::ER_NO_SUCH_TABLE => ErrorKind::MissingTable,
            code if code.is_privilege() => ErrorKind::Privilege,
            _ => return None,
        })
    }
}

/// An Oracle ORA- number (Oracle sends its clients no SQLSTATE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OraCode(pub u32);

impl OraCode {
    pub const ORA_DEADLOCK_DETECTED: Self = Self(60);
    pub const ORA_SESSION_KILLED: Self = Self(28);
    pub const ORA_TABLE_OR_VIEW_MISSING: Self = Self(942);
    pub const ORA_USER_REQUESTED_CANCEL: Self = Self(1013);
    pub const ORA_INSUFFICIENT_PRIVILEGES: Self = Self(1031);
    pub const ORA_END_OF_FILE_ON_CHANNEL: Self = Self(3113);
    pub const ORA_NOT_CONNECTED: Self = Self(3114);
    pub const ORA_CONNECTION_LOST_CONTACT: Self = Self(3135);
    pub const ORA_CANNOT_SERIALIZE: Self = Self(8177);
    pub const ORA_DATABASE_OPEN_READ_ONLY: Self = Self(16000);

    fn kind(self) -> ErrorKind {
        match self {
            Self::ORA_DEADLOCK_DETECTED => ErrorKind::Deadlock,
            Self::ORA_CANNOT_SERIALIZE => ErrorKind::Serialization,
            Self::ORA_INSUFFICIENT_PRIVILEGES => ErrorKind::Privilege,
            Self::ORA_TABLE_OR_VIEW_MISSING => ErrorKind::MissingTable,
            Self::ORA_DATABASE_OPEN_READ_ONLY => ErrorKind::ReadOnly,
            Self::ORA_USER_REQUESTED_CANCEL => ErrorKind::Timeout,
            Self::ORA_SESSION_KILLED
            | Self::ORA_END_OF_FILE_ON_CHANNEL
            | Self::ORA_NOT_CONNECTED
            | Self::ORA_CONNECTION_LOST_CONTACT => ErrorKind::ConnectionLost,
            _ => ErrorKind::Other,
        }
    }
}

/// A server's code for what it refused, as its product names it. Printed as result files
/// count failures: the SQLSTATE (MySQL's too), or `ORA-nnnnn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerCode {
    /// PostgreSQL's SQLSTATE.
    SqlState(SqlState),
    /// MySQL/MariaDB's error number, with the SQLSTATE sent beside it.
    MySql(MySqlCode, SqlState),
    Oracle(OraCode),
}

impl ServerCode {
    /// What the code says happened; MySQL numbers corescale does not know are read by their
    /// SQLSTATE (a 40001 is a serialization failure whatever its number).
    pub fn kind(self) -> ErrorKind {
        match self {
            Self::SqlState(state) => state.kind(),
            Self::MySql(number, state) => number.kind().unwrap_or_else(|| state.kind()),
            Self::Oracle(code) => code.kind(),
        }
    }

    /// Whether the same transaction, run again from its start, may well go through.
    pub fn is_retryable(self) -> bool {
        self.kind().is_retryable()
    }
}

impl fmt::Display for ServerCode {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SqlState(state) | Self::MySql(_, state) => state.fmt(formatter),
            Self::Oracle(OraCode(code)) => write!(formatter, "ORA-{code:05}"),
        }
    }
}

/// What a session's error means for the workload that met it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The transaction could not be serialized with others: run it again.
    Serialization,
    /// The transaction was chosen to break a deadlock: run it again.
    Deadlock,
    /// The server or the session takes no writes.
    ReadOnly,
    /// The user lacks a privilege the statement needs.
    Privilege,
    /// A table the statement names does not exist.
    MissingTable,
    /// The server hung up, or the network failed.
    ConnectionLost,
    /// No answer (or no lock) within a limit: the client's, or the server's own.
    Timeout,
    Other,
}

impl ErrorKind {
    /// Serialization failures and deadlocks: another try of the whole transaction is what
    /// the server asks for.
    pub fn is_retryable(self) -> bool {
        matches!(self, Self::Serialization | Self::Deadlock)
    }
}

/// A statement the server refused: its code and its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (SQLSTATE {code})")]
pub struct Refusal {
    pub code: ServerCode,
    pub message: String,
}

/// What a session's statement met when it did not go through.
#[derive(Debug)]
pub enum SessionError {
    /// The server refused the statement and the session goes on (whatever transaction it
    /// was in is for the workload to roll back); `at` names the target where the driver does.
    Refused {
        refusal: Refusal,
        at: Option<String>,
    },
    /// The connection is gone: the server hung up (having said why, or not) or the network
    /// failed. The session is done.
    ConnectionLost(anyhow::Error),
    /// The server did not answer within the session's limit.
    TimedOut(anyhow::Error),
    /// Anything else: a driver's limit, a statement it could not encode, an answer that is
    /// not what the workload's tables should give, advice about corescale's own tables.
    Other(anyhow::Error),
}

impl SessionError {
    pub fn refused(code: ServerCode, message: impl Into<String>) -> Self {
        Self::Refused {
            refusal: Refusal {
                code,
                message: message.into(),
            },
            at: None,
        }
    }

    /// The same refusal, said to be at `target`.
    pub fn at(self, target: impl fmt::Display) -> Self {
        match self {
            Self::Refused { refusal, .. } => Self::Refused {
                refusal,
                at: Some(target.to_string()),
            },
            other => other,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Refused { refusal, .. } => refusal.code.kind(),
            Self::ConnectionLost(_) => ErrorKind::ConnectionLost,
            Self::TimedOut(_) => ErrorKind::Timeout,
            Self::Other(_) => ErrorKind::Other,
        }
    }

    /// The refusal, where the server refused and the session goes on.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Self::Refused { refusal, .. } => Some(refusal),
            _ => None,
        }
    }

    pub fn code(&self) -> Option<ServerCode> {
        self.refusal().map(|refusal| refusal.code)
    }

    /// A refusal the same session may try again (a lost connection is no such thing).
    pub fn is_retryable(&self) -> bool {
        self.refusal()
            .is_some_and(|refusal| refusal.code.is_retryable())
    }
}

impl From<anyhow::Error> for SessionError {
    fn from(error: anyhow::Error) -> Self {
        Self::Other(error)
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused {
                refusal,
                at: Some(at),
            } => write!(formatter, "{at}: {refusal}"),
            Self::Refused { refusal, at: None } => refusal.fmt(formatter),
            // The words and their causes as the driver gave them (`{:#}` the whole chain).
            Self::ConnectionLost(error) | Self::TimedOut(error) | Self::Other(error) => {
                fmt::Display::fmt(error, formatter)
            }
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Refused { .. } => None,
            Self::ConnectionLost(error) | Self::TimedOut(error) | Self::Other(error) => {
                error.source()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(text: &str) -> SqlState {
        SqlState::new(text).unwrap()
    }

    #[test]
    fn postgres_codes_name_their_kinds_and_only_serialization_and_deadlock_are_retried() {
        let known = [
            ("40001", ErrorKind::Serialization, true),
            ("40P01", ErrorKind::Deadlock, true),
            ("25006", ErrorKind::ReadOnly, false),
            ("42501", ErrorKind::Privilege, false),
            ("42P01", ErrorKind::MissingTable, false),
            ("57014", ErrorKind::Timeout, false),
            ("55P03", ErrorKind::Timeout, false),
            ("57P01", ErrorKind::ConnectionLost, false),
            ("08006", ErrorKind::ConnectionLost, false),
            ("23505", ErrorKind::Other, false),
            ("22012", ErrorKind::Other, false),
        ];
        for (text, kind, retried) in known {
            let code = ServerCode::SqlState(state(text));
            assert_eq!(
                (code.kind(), code.is_retryable()),
                (kind, retried),
                "{text}"
            );
            assert_eq!(code.to_string(), text);
        }
    }

    #[test]
    fn mysql_errors_are_told_apart_by_number_and_print_their_sqlstate() {
        let known = [
            (1213, "40001", ErrorKind::Deadlock, true),
            (1205, "HY000", ErrorKind::Timeout, false),
            (1290, "HY000", ErrorKind::ReadOnly, false),
            (1792, "25006", ErrorKind::ReadOnly, false),
            (1142, "42000", ErrorKind::Privilege, false),
            (1044, "42000", ErrorKind::Privilege, false),
            (1146, "42S02", ErrorKind::MissingTable, false),
            (1062, "23000", ErrorKind::Other, false),
            // A number corescale does not know, read by its SQLSTATE.
            (9999, "40001", ErrorKind::Serialization, true),
        ];
        for (number, text, kind, retried) in known {
            let code = ServerCode::MySql(MySqlCode(number), state(text));
            assert_eq!(
                (code.kind(), code.is_retryable()),
                (kind, retried),
                "{number}"
            );
            assert_eq!(code.to_string(), text);
        }
        assert_eq!(MySqlCode::ER_LOCK_DEADLOCK, MySqlCode(1213));
        assert_eq!(MySqlCode::ER_LOCK_WAIT_TIMEOUT, MySqlCode(1205));
    }

    #[test]
    fn oracle_codes_print_as_ora_numbers_and_name_their_kinds() {
        let known = [
            (60, "ORA-00060", ErrorKind::Deadlock, true),
            (8177, "ORA-08177", ErrorKind::Serialization, true),
            (1031, "ORA-01031", ErrorKind::Privilege, false),
            (942, "ORA-00942", ErrorKind::MissingTable, false),
            (3113, "ORA-03113", ErrorKind::ConnectionLost, false),
            (1, "ORA-00001", ErrorKind::Other, false),
        ];
        for (number, text, kind, retried) in known {
            let code = ServerCode::Oracle(OraCode(number));
            assert_eq!(
                (code.kind(), code.is_retryable()),
                (kind, retried),
                "{number}"
            );
            assert_eq!(code.to_string(), text);
        }
    }

    #[test]
    fn a_sqlstate_is_five_letters_or_digits() {
        assert_eq!(SqlState::new("40P01"), Some(SqlState::DEADLOCK_DETECTED));
        for malformed in ["", "4000", "400011", "40 01", "4000é"] {
            assert_eq!(SqlState::new(malformed), None, "{malformed:?}");
        }
    }

    #[test]
    fn only_a_refusal_is_retried_and_its_words_keep_the_code_and_target() {
        let deadlock = SessionError::refused(
            ServerCode::SqlState(SqlState::DEADLOCK_DETECTED),
            "deadlock detected",
        );
        assert!(deadlock.is_retryable());
        assert_eq!(deadlock.to_string(), "deadlock detected (SQLSTATE 40P01)");
        let at = deadlock.at("postgres://u@db/test");
        assert_eq!(
            format!("{:#}", anyhow::Error::new(at)),
            "postgres://u@db/test: deadlock detected (SQLSTATE 40P01)"
        );
        let lost = SessionError::ConnectionLost(
            anyhow::anyhow!("the server closed the connection").context("postgres://u@db/test"),
        );
        assert_eq!(lost.kind(), ErrorKind::ConnectionLost);
        assert!(!lost.is_retryable() && lost.code().is_none());
        assert_eq!(
            format!("{:#}", anyhow::Error::new(lost)),
            "postgres://u@db/test: the server closed the connection"
        );
        let other = SessionError::from(anyhow::anyhow!("no such thing"));
        assert_eq!(other.kind(), ErrorKind::Other);
    }
}
