//! Passwords holding every ASCII punctuation character and a space never show: not in a
//! message (corescale's or clap's own echo of an argument), not in a file written, not in
//! `ps`. Each password runs the real binary, raw and percent-encoded, with the URL where it
//! belongs, in the wrong place, and next to an invalid value.

use crate::common;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::corescale;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

/// Every ASCII punctuation character, in ASCII order.
const PUNCTUATION: &str = r##"!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"##;

/// A password with every ASCII punctuation character and a space, and three markers (letters
/// and digits, the same raw or percent-encoded) at its start, middle and end: seeing any of
/// them means part of the password leaked.
const PASSWORD: &str = r##"SeKr'et"1)>`x @:/?#[]!$&Mi7d*+,;=%{}|\^~<-(._Wq9z"##;
const MARKERS: [&str; 3] = ["SeKr", "Mi7d", "Wq9z"];

/// The password without `/`, `?` and `#`, so that the URL still parses raw and corescale
/// goes on to connect.
fn parseable() -> String {
    PASSWORD.replace(['/', '?', '#'], "")
}

fn encoded(password: &str) -> String {
    utf8_percent_encode(password, NON_ALPHANUMERIC).to_string()
}

/// The password as typed in a URL: raw, and percent-encoded as URLs require.
fn forms() -> [String; 3] {
    [PASSWORD.to_string(), parseable(), encoded(PASSWORD)]
}

/// Fails when `text` shows a password, whole or in part.
fn assert_hidden(what: &str, text: &str) {
    let encoded_password = encoded(PASSWORD);
    let parseable_password = parseable();
    for secret in [PASSWORD, &parseable_password, &encoded_password]
        .into_iter()
        .chain(MARKERS)
    {
        assert!(!text.contains(secret), "{what} shows {secret:?}:\n{text}");
    }
}

/// Fails when any file below `dir` shows a password.
fn assert_files_hidden(dir: &Path) {
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.unwrap();
        assert_hidden(
            &format!("the name of {}", entry.path().display()),
            &entry.path().to_string_lossy(),
        );
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            assert_hidden(
                &entry.path().display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
        }
    }
}

/// Runs corescale with `args` in `dir` and `envs` set; checks its output shows no password
/// and returns its exit code and standard output and error together.
fn run_hidden(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> (Option<i32>, String) {
    let output = corescale()
        .args(args)
        .env_remove("CORESCALE_DB_PASSWORD")
        .env_remove("PGPASSWORD")
        .envs(envs.iter().copied())
        .current_dir(dir)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_hidden(&format!("corescale {args:?}"), &text);
    assert_files_hidden(dir);
    (output.status.code(), text)
}

#[test]
fn the_password_holds_every_punctuation_character_and_a_space() {
    for c in PUNCTUATION.chars().chain([' ']) {
        assert!(PASSWORD.contains(c), "{c:?}");
    }
    assert_eq!(PUNCTUATION.len(), 32);
}

#[test]
fn a_url_in_the_wrong_place_hides_its_password() {
    let dir = tempfile::tempdir().unwrap();
    for password in forms() {
        for scheme in ["postgres", "mysql"] {
            let url = format!("{scheme}://u:{password}@127.0.0.1:1/db");
            let url = url.as_str();
            for args in [
                &["run", "db", "--sweep", url][..],
                &[
                    "run",
                    "db",
                    "--target",
                    "postgres://u@127.0.0.1:1/db",
                    "--sweep",
                    url,
                ],
                &["run", "cpu", "-w", url],
                &["run", "db", url],
                &["run", url],
                &["run", "--mode", url],
                &["report", "--json", url],
                &["db", "setup", url],
                &["run", "cpu", "--target", url],
                &["host", url],
            ] {
                let (code, text) = run_hidden(dir.path(), args, &[]);
                assert_eq!(code, Some(2), "{args:?}: {text}");
            }
            // A file report cannot find, named in the message without its password.
            let (code, text) = run_hidden(dir.path(), &["report", url], &[]);
            assert_eq!(code, Some(2), "{text}");
            assert!(text.contains("u:***@127.0.0.1:1/db"), "{text}");
        }
    }
}

#[test]
fn an_unreachable_target_hides_its_password() {
    let dir = tempfile::tempdir().unwrap();
    for password in forms() {
        for scheme in ["postgres", "mysql"] {
            let url = format!("{scheme}://u:{password}@127.0.0.1:1/db");
            let url = url.as_str();
            for args in [
                &[
                    "run",
                    "db",
                    "--target",
                    url,
                    "--connect-timeout",
                    "1s",
                    "-w",
                    "1",
                    "-o",
                    "out.json",
                    "-o",
                    "out.csv",
                ][..],
                &[
                    "run",
                    "db",
                    &format!("--target={url}"),
                    "--connect-timeout",
                    "1s",
                    "-w",
                    "1",
                ],
                &["db", "setup", "--target", url, "--connect-timeout", "1s"],
                &["db", "teardown", "--target", url, "--connect-timeout", "1s"],
            ] {
                let (code, text) = run_hidden(dir.path(), args, &[]);
                assert!(matches!(code, Some(1 | 2)), "{args:?}: {text}");
                assert!(text.contains("u:***@127.0.0.1:1/db"), "{text}");
            }
        }
    }
}

#[test]
fn an_invalid_value_next_to_a_url_hides_its_password() {
    let dir = tempfile::tempdir().unwrap();
    for password in forms() {
        let url = format!("postgres://u:{password}@127.0.0.1:1/db");
        let url = url.as_str();
        for args in [
            &["run", "db", "--target", url, "-w", "abc"][..],
            &["run", "db", "--target", url, "--connect-timeout", "soon"],
            &["run", "db", "--target", url, "--sweep", "1,x"],
            &["run", "db", "--target", url, "--no-such-option"],
            &["run", "db", "--target", url, "--scale", "4"],
            &["db", "setup", "--target", url, "--scale", "many"],
            &["run", "db", "--target", url, "--target", url],
        ] {
            let (code, text) = run_hidden(dir.path(), args, &[]);
            assert_eq!(code, Some(2), "{args:?}: {text}");
        }
    }
}

#[test]
fn a_url_stored_in_results_hides_its_password() {
    let dir = tempfile::tempdir().unwrap();
    for password in forms() {
        let url = format!("postgres://u:{password}@h/db");
        let (code, text) = run_hidden(
            dir.path(),
            &[
                "run",
                "cpu",
                "-w",
                "1",
                "--duration",
                "20ms",
                "--repeat",
                "1",
                "-q",
                "--label",
                &url,
                "--tag",
                &format!("source={url}"),
                "-o",
                "out.json",
                "-o",
                "out.csv",
            ],
            &[],
        );
        assert_eq!(code, Some(0), "{text}");
        let stored = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
        assert!(stored.contains("postgres://u:***@h/db"), "{stored}");
        // The report of the stored results shows no password either.
        let (code, text) = run_hidden(
            dir.path(),
            &["report", "out.json", "out.csv", "--html", "report.html"],
            &[],
        );
        assert_eq!(code, Some(0), "{text}");
    }
}

#[test]
fn a_password_from_the_environment_hides_wherever_it_is_echoed() {
    let dir = tempfile::tempdir().unwrap();
    for variable in ["CORESCALE_DB_PASSWORD", "PGPASSWORD"] {
        for password in forms() {
            let envs = [(variable, password.as_str())];
            for args in [
                &[
                    "run",
                    "db",
                    "--target",
                    "postgres://u@127.0.0.1:1/db",
                    "--connect-timeout",
                    "1s",
                    "-w",
                    "1",
                ][..],
                &[
                    "run",
                    "db",
                    "--target",
                    "postgres://u@127.0.0.1:1/db",
                    "--sweep",
                    &password,
                ],
                &["run", "cpu", "-w", &password],
                &["report", &password],
                &[
                    "run",
                    "db",
                    "--target",
                    "postgres://u@127.0.0.1:1/db",
                    &format!("--sweep={password}"),
                ],
            ] {
                let (code, text) = run_hidden(dir.path(), args, &envs);
                assert_ne!(code, Some(0), "{args:?}: {text}");
            }
        }
    }
}

/// While corescale waits for a server that accepts and never answers, `ps` (the process's
/// cmdline) shows the URL without its password.
#[cfg(target_os = "linux")]
#[test]
fn ps_shows_no_password() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for (scheme, password) in [("postgres", encoded(PASSWORD)), ("mysql", parseable())] {
        let url = format!("{scheme}://u:{password}@127.0.0.1:{port}/db");
        let child = StdCommand::new(assert_cmd::cargo::cargo_bin("corescale"))
            .args([
                "run",
                "db",
                "--target",
                &url,
                "--connect-timeout",
                "4s",
                "-w",
                "1",
            ])
            .args(["--label", &url])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(3);
        let shown = loop {
            let cmdline =
                std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap_or_default();
            let shown = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let hidden = MARKERS.iter().all(|marker| !shown.contains(marker));
            if (hidden && shown.contains("u:***@")) || Instant::now() > deadline {
                break shown;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let output = child.wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_hidden("ps", &shown);
        assert!(
            shown.contains(&format!("--target {scheme}://u:***@127.0.0.1:{port}/db ")),
            "ps shows {shown}\n{text}"
        );
        assert_hidden("corescale", &text);
        assert!(text.contains("no answer within 4s"), "{text}");
    }
    drop(listener);
}

/// A `--tag` whose value is (or holds) a password this process knows, from a variable here,
/// is stored masked in the JSON and CSV like every other place, and the command line too.
#[test]
fn a_tag_holding_a_known_password_is_masked() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("tag.json"), dir.path().join("tag.csv"));
    let secret = "Tag-Secret-7";
    corescale()
        .env("CORESCALE_DB_PASSWORD", secret)
        .args([
            "run",
            "cpu",
            "-w",
            "1",
            "--job-size",
            "1M",
            "--repeat",
            "1",
            "-q",
        ])
        .args(["--tag", &format!("note={secret}")])
        .arg(format!("--tag=also=before-{secret}-after"))
        .arg("-o")
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .assert()
        .success();
    for file in [&json, &csv] {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(!text.contains(secret), "{}: {text}", file.display());
    }
    let document = common::read_json(&json);
    assert_eq!(document["tags"]["note"], "***");
    assert_eq!(document["tags"]["also"], "before-***-after");
}

/// A command kept in a result's command line (`--before-level 'PGPASSWORD=... psql ...'`, a
/// tag naming how the data was loaded) has its secrets masked as messages do: environment
/// assignments, libpq's `password = '...'`, mysql's `-p...` and `--password=...`. A tag
/// carries each here, as `run cpu` takes one without a database.
#[test]
fn secrets_of_commands_in_the_stored_command_line_are_masked() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("cmd.json"), dir.path().join("cmd.csv"));
    let commands = [
        (
            "restore=PGPASSWORD=Cmd-Secret-1 psql -h db -f dump.sql",
            "restore=PGPASSWORD=*** psql -h db -f dump.sql",
        ),
        (
            "load=mysql -uroot -pCmd-Secret-2 shop",
            "load=mysql -uroot -p*** shop",
        ),
        (
            "conn=host=db password = 'Cmd Secret 3' dbname=shop",
            "conn=host=db password = *** dbname=shop",
        ),
        (
            "dump=MYSQL_PWD=Cmd-Secret-4 mysqldump --password=Cmd-Secret-5 shop",
            "dump=MYSQL_PWD=*** mysqldump --password=*** shop",
        ),
    ];
    let mut command = corescale();
    command.args([
        "run",
        "cpu",
        "-w",
        "1",
        "--job-size",
        "1M",
        "--repeat",
        "1",
        "-q",
    ]);
    for (tag, _) in commands {
        command.args(["--tag", tag]);
    }
    command
        .arg("-o")
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    for file in [&json, &csv] {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(!text.contains("Cmd-Secret"), "{}: {text}", file.display());
        assert!(!text.contains("Cmd Secret"), "{}: {text}", file.display());
    }
    let document = common::read_json(&json);
    let stored: Vec<&str> = document["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|word| word.as_str().unwrap())
        .collect();
    for (_, shown) in commands {
        assert!(stored.contains(&shown), "{shown}: {stored:?}");
    }
    assert_eq!(
        document["tags"]["restore"],
        "PGPASSWORD=*** psql -h db -f dump.sql"
    );
}
