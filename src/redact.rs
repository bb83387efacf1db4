//! Passwords kept out of sight: every URL shown in a message, a file or `ps` has its
//! password replaced. A leaf module, used wherever text leaves the process.
//!
//! Two layers: a registry of the passwords this process was given (from its arguments, the
//! password variables, a prompt or a password file), replaced wherever they appear whatever
//! surrounds them; and rules on URL shapes for passwords it was never told about (e.g. in a
//! file `report` reads).

use std::cmp::Reverse;
use std::ffi::OsString;
use std::ops::Range;
use std::sync::{PoisonError, RwLock};

use anyhow::{Context, Result};
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use procfs_core::FromRead;

/// What replaces a password.
const HIDDEN: &str = "***";

/// Registered passwords shorter than this are left to the URL rules: replacing every "a" or
/// "12" in every message would blot out the text and hide nothing worth hiding.
const MIN_SECRET_CHARS: usize = 4;

/// The passwords this process knows, in every form they may be written in; longest first,
/// so a form containing another is replaced whole.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// What the `url` crate percent-encodes in a URL's userinfo: a password parsed raw is shown
/// (e.g. in a driver's message) with exactly these characters encoded.
const USERINFO: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b':')
    .add(b';')
    .add(b'=')
    .add(b'@')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'|');

/// Registers a password so that [`redact`] and [`redact_argument`] hide it wherever it
/// appears: as given, percent-decoded and percent-encoded (a URL may carry it either way),
/// and escaped as JSON, `{:?}` and CSV write it. Empty and very short ones are ignored.
pub fn register_secret(secret: impl AsRef<str>) {
    let given = secret.as_ref();
    let decoded = percent_decode(given);
    let mut forms = Vec::new();
    for base in [given, decoded.as_str()] {
        forms.push(base.to_string());
        forms.push(utf8_percent_encode(base, NON_ALPHANUMERIC).to_string());
        forms.push(utf8_percent_encode(base, USERINFO).to_string());
        forms.push(base.replace('\\', "\\\\").replace('"', "\\\""));
        forms.push(base.replace('"', "\"\""));
    }
    // A panic elsewhere while holding the lock leaves a list that is still valid.
    let mut secrets = SECRETS.write().unwrap_or_else(PoisonError::into_inner);
    for form in forms {
        if form.chars().count() >= MIN_SECRET_CHARS && !secrets.contains(&form) {
            secrets.push(form);
        }
    }
    secrets.sort_by_key(|secret| Reverse(secret.len()));
}

/// Registers the password of every argument that is (or ends in) a URL with one, and the
/// value of every `password=` parameter: called first thing, before anything may echo an
/// argument (clap's own errors included).
pub fn register_argument_secrets(arguments: &[OsString]) {
    for argument in arguments {
        let text = argument.to_string_lossy();
        if let Some(span) = password_span(text.as_bytes()) {
            register_secret(&text[span]);
        }
        if let Some(span) = password_parameter(&text).filter(|_| text.contains("://")) {
            register_secret(&text[span]);
        }
    }
}

/// Registers the value of each environment variable that holds a password.
pub fn register_variable_secrets(variables: &[&str]) {
    for variable in variables {
        if let Some(value) = std::env::var_os(variable) {
            register_secret(value.to_string_lossy());
        }
    }
}

/// The arguments with each password that is not in the value of `url_option` replaced: a
/// URL given to another option (`--label`, `--tag`, `-o`) or in a workload's or file's place,
/// or a password given as a value of its own, would otherwise be stored in results or echoed
/// in a message as typed, or in part (a list option quotes the item it cannot read).
pub fn redact_misplaced(arguments: Vec<OsString>, url_option: &str) -> Vec<OsString> {
    let inline = format!("{url_option}=");
    let mut previous_is_option = false;
    arguments
        .into_iter()
        .map(|argument| {
            let text = argument.to_string_lossy();
            let placed = previous_is_option || text.starts_with(&inline);
            previous_is_option = text == url_option;
            if placed {
                argument
            } else if carries_password(&text) {
                redact_url_argument(&text).into()
            } else if is_registered(&text) {
                HIDDEN.into()
            } else if let Some((option, value)) = text.split_once('=')
                && option.starts_with('-')
                && is_registered(value)
            {
                format!("{option}={HIDDEN}").into()
            } else {
                argument
            }
        })
        .collect()
}

/// Whether `text` is, as a whole, a registered password.
fn is_registered(text: &str) -> bool {
    SECRETS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|secret| secret == text)
}

/// Replaces every registered password in `text`.
fn hide_registered(text: &str) -> String {
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    let mut shown = text.to_string();
    for secret in secrets.iter() {
        if shown.contains(secret.as_str()) {
            shown = shown.replace(secret.as_str(), HIDDEN);
        }
    }
    shown
}

/// Hides the secrets in free text: every registered password, then for each `scheme://` the
/// password between the user's `:` and the `@` before the host (see [`url_password`]), and
/// the value of any `password=` parameter.
pub fn redact(text: &str) -> String {
    hide_command_secrets(&redact_urls(&hide_registered(text)))
}

/// [`redact_argument`] for a word of a command line stored in a result, which may itself be
/// a command (`--before-level 'PGPASSWORD=... psql ...'`): also the secrets of
/// [`hide_command_secrets`].
pub fn redact_command_word(word: &str) -> String {
    hide_command_secrets(&redact_argument(word))
}

/// Whether a name's value is a secret: an environment variable (`PGPASSWORD`, `MYSQL_PWD`,
/// `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`), a libpq keyword (`password`, `sslpassword`),
/// an option (`--password`). `PWD` and `OLDPWD` are the shell's directories.
fn names_a_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    !matches!(name.as_str(), "PWD" | "OLDPWD")
        && ["PASSWORD", "PASSWD", "PWD", "SECRET", "TOKEN"]
            .iter()
            .any(|secret| name.contains(secret))
}

/// Where a value starting at `start` ends: after its closing quote when it is quoted (a
/// backslash escaping the next character), else at white space, a shell's `;`, `&` or `|`,
/// or a quote (the one closing a libpq string given within quotes).
fn value_end(text: &[u8], start: usize) -> usize {
    match text.get(start) {
        Some(&quote @ (b'\'' | b'"')) => {
            let mut at = start + 1;
            while at < text.len() && text[at] != quote {
                at += if text[at] == b'\\' { 2 } else { 1 };
            }
            (at + 1).min(text.len())
        }
        _ => {
            start
                + text[start..]
                    .iter()
                    .take_while(|byte| {
                        !byte.is_ascii_whitespace()
                            && !matches!(byte, b';' | b'&' | b'|' | b'\'' | b'"' | b'`')
                    })
                    .count()
        }
    }
}

/// Hides secrets a command or connection string holds outside URLs: the value of each
/// assignment to a name that holds one (`PGPASSWORD=...`, `MYSQL_PWD=...`, libpq's
/// `password = '...'` with or without spaces around `=`, `--password=...`), and in a text
/// naming a MySQL or MariaDB client, each `-p<password>`.
pub fn hide_command_secrets(text: &str) -> String {
    let bytes = text.as_bytes();
    let is_name = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let mut hidden: Vec<std::ops::Range<usize>> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !is_name(bytes[at]) || at > 0 && is_name(bytes[at - 1]) {
            at += 1;
            continue;
        }
        let name_end = at
            + bytes[at..]
                .iter()
                .take_while(|byte| is_name(**byte))
                .count();
        let spaces = |from: usize| from + bytes[from..].iter().take_while(|b| **b == b' ').count();
        let equals = spaces(name_end);
        if bytes.get(equals) == Some(&b'=')
            && bytes.get(equals + 1) != Some(&b'=')
            && names_a_secret(&text[at..name_end])
        {
            let start = spaces(equals + 1);
            let end = value_end(bytes, start);
            if end > start {
                hidden.push(start..end);
            }
            at = end.max(name_end);
            continue;
        }
        at = name_end;
    }
    let lower = text.to_ascii_lowercase();
    if lower.contains("mysql") || lower.contains("mariadb") {
        for (option, _) in text.match_indices("-p") {
            let word_start = option == 0
                || bytes[option - 1].is_ascii_whitespace()
                || matches!(bytes[option - 1], b'\'' | b'"');
            let start = option + 2;
            let end = value_end(bytes, start);
            if word_start && end > start && !hidden.iter().any(|span| span.contains(&start)) {
                hidden.push(start..end);
            }
        }
    }
    if hidden.is_empty() {
        return text.to_string();
    }
    hidden.sort_by_key(|span| span.start);
    let mut shown = String::with_capacity(text.len());
    let mut copied = 0;
    for span in hidden {
        if span.start < copied {
            continue;
        }
        shown.push_str(&text[copied..span.start]);
        shown.push_str(HIDDEN);
        copied = span.end;
    }
    shown.push_str(&text[copied..]);
    shown
}

/// Whether `c` ends a URL in free text when no password is involved: a URL's host, path and
/// query have no raw space or quote, so these are the text around it.
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ')' | '>')
}

/// The URL rules of [`redact`], without the registry.
fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("://") {
        let (before, after) = rest.split_at(start + 3);
        out.push_str(before);
        let host_start = match url_password(after) {
            Some(span) => {
                out.push_str(&after[..span.start]);
                out.push_str(HIDDEN);
                span.end
            }
            None => 0,
        };
        let word = &after[host_start..];
        let end = word.find(ends_url).unwrap_or(word.len());
        out.push_str(&hide_password_parameter(&word[..end]));
        rest = &word[end..];
    }
    out.push_str(rest);
    out
}

/// Where the password lies in free text following a `scheme://`: from the `:` after the user
/// to the last `@` on the line (and before the next URL) that a host may follow. A password
/// may hold quotes, brackets, spaces, `@` and `:`, so none of these ends it; an `@` followed
/// by a quote (MySQL's `'root'@'host'`) is not a URL's. When no such `@` is found, the last
/// `@` of the word, as a quoted `'scheme://u:pw@'` has it.
fn url_password(after: &str) -> Option<Range<usize>> {
    let user_end =
        after.find(|c: char| c.is_whitespace() || matches!(c, ':' | '@' | '/' | '?' | '#'))?;
    if !after[user_end..].starts_with(':') || after.starts_with('[') {
        return None;
    }
    let start = user_end + 1;
    let line = &after[start..];
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    let line = &line[..next_url(line).unwrap_or(line.len())];
    let host_follows = |at: usize| {
        line[at + 1..].chars().next().is_none_or(|c| {
            c.is_alphanumeric()
                // `(`: an Oracle descriptor, oracle://u:p@(DESCRIPTION=...).
                || matches!(c, '[' | '(' | '/' | '?' | '#' | ':' | '%' | '.' | '_' | '-' | '~')
        })
    };
    let at = line
        .rmatch_indices('@')
        .map(|(at, _)| at)
        .find(|at| host_follows(*at))
        .or_else(|| {
            let word = &line[..line.find(ends_url).unwrap_or(line.len())];
            word.rfind('@')
        })?;
    Some(start..start + at)
}

/// Where the next URL starts in `text`: at the scheme (two or more letters, digits, `+`, `-`
/// or `.`, starting with a letter) of a `scheme://` that begins a word.
fn next_url(text: &str) -> Option<usize> {
    let is_scheme = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.');
    text.match_indices("://").find_map(|(colon, _)| {
        let scheme_start = text[..colon]
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_scheme(*c))
            .last()
            .map(|(index, _)| index)?;
        let scheme = &text[scheme_start..colon];
        let word_start = text[..scheme_start].chars().next_back().is_none_or(|c| {
            c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '(' | '<' | '[' | '=' | ',' | ';')
        });
        (scheme.len() >= 2 && scheme.starts_with(|c: char| c.is_ascii_alphabetic()) && word_start)
            .then_some(scheme_start)
    })
}

/// [`redact`] for one command-line argument: the whole argument is one URL, spaces and all.
pub fn redact_argument(argument: &str) -> String {
    redact_url_argument(&hide_registered(argument))
}

/// The URL rules of [`redact_argument`], without the registry.
fn redact_url_argument(argument: &str) -> String {
    let mut shown = match password_span(argument.as_bytes()) {
        Some(span) => format!(
            "{}{HIDDEN}{}",
            &argument[..span.start],
            &argument[span.end..]
        ),
        None => argument.to_string(),
    };
    if shown.contains("://") {
        shown = hide_password_parameter(&shown);
    }
    shown
}

/// The text with the value of its first `password=` parameter replaced.
fn hide_password_parameter(text: &str) -> String {
    let mut shown = text.to_string();
    if let Some(span) = password_parameter(text) {
        shown.replace_range(span, HIDDEN);
    }
    shown
}

/// Where the value of a URL's `password=` parameter lies: up to the next `&` or the end.
fn password_parameter(text: &str) -> Option<Range<usize>> {
    let value = text.to_ascii_lowercase().find("password=")? + "password=".len();
    let end = text[value..]
        .find('&')
        .map_or(text.len(), |end| value + end);
    Some(value..end)
}

/// Where the password lies in an argument that is one whole URL (perhaps after `--option=`):
/// between the first `:` after `scheme://` and the argument's last `@`, whatever the bytes
/// between them (an argument is one string, spaces and quotes included).
fn password_span(argument: &[u8]) -> Option<Range<usize>> {
    let authority = argument.windows(3).position(|window| window == b"://")? + 3;
    let at = argument.iter().rposition(|byte| *byte == b'@')?;
    let colon = argument
        .get(authority..at)?
        .iter()
        .position(|byte| *byte == b':')?;
    Some(authority + colon + 1..at)
}

/// Whether an argument is a URL carrying a password, the kind the command line should not
/// hold (so the user is warned).
pub fn carries_password(argument: &str) -> bool {
    redact_url_argument(argument) != argument
}

/// The argument with every byte of its URL password and of every registered password
/// replaced by `*`: same length, nothing left to read.
fn star_password(argument: &[u8]) -> Vec<u8> {
    let mut starred = argument.to_vec();
    let mut star = |span: Range<usize>| {
        for byte in &mut starred[span] {
            *byte = b'*';
        }
    };
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    for secret in secrets.iter().map(String::as_bytes) {
        let mut from = 0;
        while let Some(found) = argument.get(from..).and_then(|rest| {
            rest.windows(secret.len())
                .position(|window| window == secret)
        }) {
            star(from + found..from + found + secret.len());
            from += found + 1;
        }
    }
    if let Some(span) = password_span(argument) {
        star(span);
    }
    starred
}

/// Overwrites passwords in this process's own argument memory (what `ps` and
/// /proc/PID/cmdline show), as the mysql and psql clients do: each argument that carries one
/// is rewritten redacted, padded with NULs to its old length. Returns whether any was found.
/// Best effort: a kernel that refuses writes to /proc/self/mem leaves the arguments as they
/// were, and the error says so.
pub fn hide_passwords_from_ps() -> Result<bool> {
    use std::io::{Seek, SeekFrom, Write};
    let cmdline = std::fs::read("/proc/self/cmdline").context("reading /proc/self/cmdline")?;
    let stat = std::fs::read_to_string("/proc/self/stat").context("reading /proc/self/stat")?;
    let arg_start = procfs_core::process::Stat::from_read(stat.as_bytes())
        .ok()
        .and_then(|stat| stat.arg_start)
        .context("no arg_start in /proc/self/stat")?;
    let mut found = false;
    let mut memory = None;
    let mut offset = 0u64;
    for argument in cmdline.split(|byte| *byte == 0) {
        let text = String::from_utf8_lossy(argument);
        let redacted = redact_argument(&text);
        if redacted != text {
            found = true;
            let mut replacement = redacted.into_bytes();
            if replacement.len() > argument.len() {
                // A password shorter than "***": star its own bytes instead.
                replacement = star_password(argument);
            }
            replacement.resize(argument.len(), 0);
            if memory.is_none() {
                memory = Some(
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open("/proc/self/mem")
                        .context("opening /proc/self/mem to hide the password")?,
                );
            }
            let file = memory.as_mut().expect("opened just now");
            file.seek(SeekFrom::Start(arg_start + offset))
                .and_then(|_| file.write_all(&replacement))
                .context("hiding the password in the process's arguments")?;
        }
        offset += argument.len() as u64 + 1;
    }
    Ok(found)
}

/// RFC 3986 percent-decoding, as a URL's password is read.
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ASCII punctuation character and a space.
    fn punctuation() -> Vec<char> {
        (' '..='~')
            .filter(|c| *c == ' ' || c.is_ascii_punctuation())
            .collect()
    }

    /// The passwords to hide: each character alone, between letters, and all together.
    fn passwords() -> Vec<String> {
        let all: String = punctuation().into_iter().collect();
        let mut passwords: Vec<String> = punctuation()
            .into_iter()
            .flat_map(|c| [c.to_string(), format!("Pa{c}ss"), format!("{c}{c}x{c}")])
            .collect();
        passwords.push(all.clone());
        passwords.push(format!("SeKr'et\"1)>`x @:/?#[]!$&*+,;=%{{}}|\\^~<-{all}"));
        passwords
    }

    /// The places a URL lands in a message: quoted every way, bare, twice on a line, beside
    /// MySQL's `'user'@'host'` and an e-mail address.
    fn messages(url: &str) -> Vec<String> {
        vec![
            format!("error: '{url}' is bad"),
            format!("error: \"{url}\" is bad"),
            format!("error: `{url}`: no"),
            format!("({url})"),
            format!("<{url}>"),
            format!("{url}"),
            format!("cannot connect to {url}: refused"),
            format!("invalid value '{url}' for '--sweep <LIST|auto>': '{url}' is not a count"),
            format!("{url} and {url}\n{url}"),
            format!("--target={url} -w 1"),
            format!("{url}: Access denied for user 'u'@'10.0.0.1' (using password: YES)"),
        ]
    }

    #[test]
    fn url_rules_hide_every_punctuation_character_in_free_text() {
        for password in passwords() {
            for url in [
                "postgres://u:{}@h:5432/db",
                "mysql://root:{}@127.0.0.1/test?ssl=1",
                "postgres://:{}@/db?host=/run/postgresql",
            ] {
                let expected = messages(&url.replace("{}", "***"));
                for (message, expected) in
                    messages(&url.replace("{}", &password)).iter().zip(expected)
                {
                    assert_eq!(
                        redact_urls(message),
                        expected,
                        "{password:?} in {message:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn url_rules_hide_every_punctuation_character_in_an_argument() {
        for password in passwords() {
            for argument in [
                format!("postgres://u:{password}@h:5432/db"),
                format!("--target=mysql://u:{password}@h/db"),
            ] {
                let hidden = argument.replacen(&format!(":{password}@"), ":***@", 1);
                assert_eq!(redact_url_argument(&argument), hidden);
                assert!(carries_password(&argument), "{argument}");
                let starred = star_password(argument.as_bytes());
                assert_eq!(starred.len(), argument.len());
                assert!(
                    String::from_utf8_lossy(&starred)
                        .contains(&format!(":{}@", "*".repeat(password.len()))),
                    "{argument}"
                );
            }
        }
    }

    /// A quoted string without its outer quotes.
    fn unquoted(quoted: &str) -> String {
        quoted[1..quoted.len() - 1].to_string()
    }

    #[test]
    fn registered_passwords_hide_wherever_they_appear() {
        let all: String = punctuation().into_iter().collect();
        // Distinct from every other test's text, as the registry is shared.
        let passwords = [
            format!("RegA{all}"),
            "RegB'quote".to_string(),
            "RegC wi th \"spaces\"".to_string(),
            "RegD%27%20encoded".to_string(),
        ];
        for password in &passwords {
            register_secret(password);
        }
        for password in &passwords {
            let decoded = percent_decode(password);
            let forms = [
                password.clone(),
                decoded.clone(),
                utf8_percent_encode(&decoded, NON_ALPHANUMERIC).to_string(),
                utf8_percent_encode(&decoded, USERINFO).to_string(),
                unquoted(&format!("{decoded:?}")),
                unquoted(&serde_json::to_string(&decoded).unwrap()),
            ];
            for form in forms {
                for text in [
                    format!("error: '{form}' is not a worker count"),
                    format!("postgres://u:{form}@h/db"),
                    format!("\"{form}\"\n{form}{form}"),
                ] {
                    let shown = redact(&text);
                    assert!(!shown.contains(&form), "{form:?}: {shown:?}");
                    assert!(!shown.contains("Reg"), "{form:?}: {shown:?}");
                    assert!(!redact_argument(&text).contains("Reg"), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn short_and_empty_secrets_are_not_registered() {
        register_secret("");
        register_secret("z");
        register_secret("%7A");
        assert_eq!(redact("zoo %7A"), "zoo %7A");
    }

    #[test]
    fn argument_secrets_are_registered_and_misplaced_urls_hidden() {
        let arguments: Vec<OsString> = [
            "corescale",
            "run",
            "db",
            "--target",
            "postgres://u:ArgA' \"x@y@h/db",
            "--label",
            "mysql://u:ArgB)>`@h/db",
            "--target=postgres://u@h/db?password=ArgC&x=1",
            "-o",
            "out.json",
        ]
        .map(OsString::from)
        .to_vec();
        register_argument_secrets(&arguments);
        for secret in ["ArgA' \"x@y", "ArgB)>`", "ArgC"] {
            assert_eq!(redact(&format!("[{secret}]")), "[***]");
        }
        let mut arguments = arguments;
        arguments.extend(["ArgA' \"x@y", "--sweep=ArgB)>`", "ArgA"].map(OsString::from));
        let placed = redact_misplaced(arguments.clone(), "--target");
        assert_eq!(placed[4], arguments[4]);
        assert_eq!(placed[6], OsString::from("mysql://u:***@h/db"));
        assert_eq!(placed[7], arguments[7]);
        assert_eq!(placed[9], arguments[9]);
        // A password given as a value of its own hides; text merely containing one does not.
        assert_eq!(placed[10], OsString::from("***"));
        assert_eq!(placed[11], OsString::from("--sweep=***"));
        assert_eq!(placed[12], arguments[12]);
    }

    #[test]
    fn commands_hide_their_secrets() {
        for (command, shown) in [
            (
                "PGPASSWORD=Cmd1 psql -h db -c 'select 1'",
                "PGPASSWORD=*** psql -h db -c 'select 1'",
            ),
            (
                "env MYSQL_PWD='Cmd 2' mysql -e x",
                "env MYSQL_PWD=*** mysql -e x",
            ),
            (
                "export AWS_SECRET_ACCESS_KEY=\"Cmd\\\"3\"; GH_TOKEN=Cmd4 x",
                "export AWS_SECRET_ACCESS_KEY=***; GH_TOKEN=*** x",
            ),
            (
                "psql \"host=db password = Cmd5 dbname=shop\"",
                "psql \"host=db password = *** dbname=shop\"",
            ),
            (
                "psql \"host=db password='Cmd 6\\' x' user=u\"",
                "psql \"host=db password=*** user=u\"",
            ),
            (
                "psql \"sslpassword=Cmd7\" -p 5432",
                "psql \"sslpassword=***\" -p 5432",
            ),
            (
                "mysql -uroot -pCmd8 shop < restore.sql && mysqladmin --password=Cmd9 x",
                "mysql -uroot -p*** shop < restore.sql && mysqladmin --password=*** x",
            ),
            ("mariadb -p'Cmd 10' -e x", "mariadb -p*** -e x"),
            (
                "./restore.sh postgres://u:Cmd11@h/db",
                "./restore.sh postgres://u:***@h/db",
            ),
        ] {
            assert_eq!(redact(command), shown, "{command}");
            assert_eq!(redact_command_word(command), shown, "{command}");
        }
        // Left alone: no secret's name, an option -p of another client, the shell's PWD.
        for text in [
            "psql -p5432 -c 'select 1'",
            "PWD=/tmp OLDPWD=/ ./x",
            "password authentication failed for user \"u\"",
            "a == PASSWORD",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn text_without_passwords_is_left_alone() {
        for text in [
            "mysql://root@h/x and postgres://h:5432/db",
            "mysql://127.0.0.1:3306/test: Access denied for user 'root'@'localhost'",
            "http://[::1]:8080/x@y",
            "no URL: a:b@c",
        ] {
            assert_eq!(redact_urls(text), text);
        }
    }

    #[test]
    fn urls_on_one_line_keep_their_own_hosts() {
        assert_eq!(
            redact_urls("postgres://a:p'1@h1/db and mysql://b:p 2@h2/db, 'oracle://c:\"3@h3/s'"),
            "postgres://a:***@h1/db and mysql://b:***@h2/db, 'oracle://c:***@h3/s'"
        );
        assert_eq!(redact_urls("'postgres://u:pw@'"), "'postgres://u:***@'");
    }

    #[test]
    fn short_passwords_are_starred_in_place() {
        assert_eq!(
            star_password(b"--target=postgres://u:pw@h/db"),
            b"--target=postgres://u:**@h/db".to_vec()
        );
        assert_eq!(
            star_password(b"postgres://u@h/db"),
            b"postgres://u@h/db".to_vec()
        );
    }

    #[test]
    fn an_oracle_descriptor_keeps_its_password_hidden() {
        assert_eq!(
            redact("cannot connect to oracle://u:a@b@(DESCRIPTION=(HOST=h)): ORA-12154"),
            "cannot connect to oracle://u:***@(DESCRIPTION=(HOST=h)): ORA-12154"
        );
    }
}
