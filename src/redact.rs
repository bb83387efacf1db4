//! Passwords kept out of sight: every URL shown in a message, a file or `ps` has its
//! password replaced. A leaf module, used wherever text leaves the process.

use anyhow::{Context, Result};
use procfs_core::FromRead;

/// Hides the secrets of every URL in free text: for each `scheme://`, the password between
/// the user and the last `@` of the word (so a raw `/`, `?` or `#` in the password hides too),
/// and the value of any `password=` parameter.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("://") {
        let (before, after) = rest.split_at(start + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ')' | '>'))
            .unwrap_or(after.len());
        out.push_str(&redact_word(&after[..end]));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// [`redact`] for one command-line argument: the whole argument is one URL, spaces and all.
pub fn redact_argument(argument: &str) -> String {
    match argument.find("://") {
        Some(start) => {
            let (before, after) = argument.split_at(start + 3);
            format!("{before}{}", redact_word(after))
        }
        None => argument.to_string(),
    }
}

/// The part of a URL after `://`, its password and `password=` values replaced by `***`.
fn redact_word(word: &str) -> String {
    let mut shown = match word.rfind('@') {
        Some(at) => {
            let userinfo = &word[..at];
            match userinfo.find(':') {
                Some(colon) => format!("{}:***{}", &userinfo[..colon], &word[at..]),
                None => word.to_string(),
            }
        }
        None => word.to_string(),
    };
    let lower = shown.to_ascii_lowercase();
    if let Some(position) = lower.find("password=") {
        let value = position + "password=".len();
        let end = shown[value..]
            .find('&')
            .map_or(shown.len(), |end| value + end);
        shown.replace_range(value..end, "***");
    }
    shown
}

/// Whether an argument carries a password that [`redact_argument`] hides.
pub fn carries_password(argument: &str) -> bool {
    redact_argument(argument) != argument
}

/// The argument with every byte of the password (between the user's `:` and the last `@`
/// of the URL) replaced by `*`: same length, nothing left to read.
fn star_password(argument: &[u8]) -> Vec<u8> {
    let mut starred = argument.to_vec();
    let Some(scheme_end) = argument.windows(3).position(|window| window == b"://") else {
        return starred;
    };
    let authority = scheme_end + 3;
    let Some(at) = argument.iter().rposition(|byte| *byte == b'@') else {
        return starred;
    };
    if let Some(colon) = argument[authority..at]
        .iter()
        .position(|byte| *byte == b':')
    {
        for byte in &mut starred[authority + colon + 1..at] {
            *byte = b'*';
        }
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
        if carries_password(&text) {
            found = true;
            let mut replacement = redact_argument(&text).into_bytes();
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
