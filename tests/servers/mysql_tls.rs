//! corescale's MySQL/MariaDB connections against a private MariaDB configured as production
//! servers are: `require_secure_transport=ON`, a server certificate from a private CA (made
//! here with `openssl`), a user with a password allowed from 127.0.0.1 and localhost. Each
//! test starts its own server (own port, socket and data directory in a temporary directory)
//! and kills it when it ends, failed or not. Without `mariadbd`, `mariadb-install-db` or
//! `openssl` the tests print a notice and check nothing, unless CI is set: then they fail.

use crate::common;

use std::path::Path;

use common::mariadb::{self, program, run};

use mysql::prelude::Queryable;
use predicates::prelude::*;
use predicates::str::contains;

const DATABASE: &str = "corescale_tls";
const USER: &str = "corescale_tls";
const PASSWORD: &str = "tls-Secret-1";
/// A second user whose password holds every ASCII punctuation character and a space.
const PUNCTUATION_USER: &str = "corescale_punct";
/// The punctuation user's own database: an account that may drop tables where
/// corescale's are is refused (it could swap them under a run).
const PUNCTUATION_DATABASE: &str = "corescale_punct";

/// Each user's own database.
fn database_of(user: &str) -> &'static str {
    if user == PUNCTUATION_USER {
        PUNCTUATION_DATABASE
    } else {
        DATABASE
    }
}
const PUNCTUATION_PASSWORD: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ Z9";
/// Where the server also listens: an address its certificate does not name.
const UNNAMED_ADDRESS: &str = "127.0.0.2";

/// The private MariaDB of these tests: TLS required, with a certificate from a private CA.
struct PrivateMariaDb(mariadb::PrivateMariaDb);

impl std::ops::Deref for PrivateMariaDb {
    type Target = mariadb::PrivateMariaDb;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for PrivateMariaDb {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl PrivateMariaDb {
    /// Starts a server (the test is ignored where a program it needs is missing: build.rs).
    fn start() -> Self {
        let openssl = program("openssl");
        let server = mariadb::PrivateMariaDb::start("corescale-mytls", |dir| {
            make_certificates(&openssl, dir);
            let path = |name: &str| dir.join(name).display().to_string();
            vec![
                format!("--bind-address=127.0.0.1,{UNNAMED_ADDRESS}"),
                "--require-secure-transport=ON".to_string(),
                format!("--ssl-ca={}", path("ca.pem")),
                format!("--ssl-cert={}", path("server.pem")),
                format!("--ssl-key={}", path("server.key")),
            ]
        });
        let mut private = Self(server);
        private.create_users();
        private
    }

    /// The database and both users, each allowed from 127.0.0.1 (TCP) and localhost (the
    /// socket); the passwords are checked over the socket, so a failure later is corescale's.
    fn create_users(&mut self) {
        let mut admin = self.admin();
        for database in [DATABASE, PUNCTUATION_DATABASE] {
            admin
                .query_drop(format!("CREATE DATABASE {database}"))
                .unwrap();
        }
        for (user, password) in [(USER, PASSWORD), (PUNCTUATION_USER, PUNCTUATION_PASSWORD)] {
            let literal = password.replace('\\', "\\\\").replace('\'', "\\'");
            for host in ["127.0.0.1", "localhost"] {
                admin
                    .query_drop(format!(
                        "CREATE USER '{user}'@'{host}' IDENTIFIED BY '{literal}'"
                    ))
                    .unwrap();
                admin
                    .query_drop(format!(
                        "GRANT ALL ON {}.* TO '{user}'@'{host}'",
                        database_of(user)
                    ))
                    .unwrap();
                // Teardown proves ownership from table ids and the grant tables.
                admin
                    .query_drop(format!("GRANT PROCESS ON *.* TO '{user}'@'{host}'"))
                    .unwrap();
                admin
                    .query_drop(format!("GRANT SELECT ON mysql.* TO '{user}'@'{host}'"))
                    .unwrap();
            }
            let options = mysql::OptsBuilder::new()
                .socket(Some(self.socket()))
                .user(Some(user))
                .pass(Some(password))
                .prefer_socket(true);
            mysql::Conn::new(options).unwrap_or_else(|error| {
                panic!("{user} cannot log in with its password over the socket: {error}")
            });
        }
    }

    /// A global status counter, read as root over the socket (which carries no TLS).
    fn status(&mut self, name: &str) -> u64 {
        let value: Option<(String, String)> = self
            .admin()
            .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
            .unwrap();
        value.unwrap().1.parse().unwrap()
    }

    /// `mysql://USER@HOST:PORT/DATABASE?ssl-mode=MODE&ssl-ca=CA`, the user's own database.
    fn url(&self, user: &str, host: &str, mode: &str, ca: &str) -> String {
        format!(
            "mysql://{user}@{host}:{}/{}?ssl-mode={mode}&ssl-ca={}",
            self.port,
            database_of(user),
            self.path(ca)
        )
    }
}

/// ca.pem signed server.pem (subjectAltName DNS:localhost, IP:127.0.0.1); other-ca.pem is a
/// CA that signed nothing here.
fn make_certificates(openssl: &Path, dir: &Path) {
    let path = |name: &str| dir.join(name).display().to_string();
    let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    for (name, subject) in [
        ("ca", "/CN=corescale test CA"),
        ("other-ca", "/CN=an unrelated CA"),
    ] {
        let (certificate, private_key) =
            (path(&format!("{name}.pem")), path(&format!("{name}.key")));
        let mut args = vec!["req", "-x509", "-nodes", "-days", "2", "-subj", subject];
        args.extend(key);
        args.extend(["-keyout", &private_key, "-out", &certificate]);
        run(openssl, &args);
    }
    let (request, extensions) = (path("server.csr"), path("server.ext"));
    std::fs::write(
        &extensions,
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let (server_key, server_certificate) = (path("server.key"), path("server.pem"));
    let mut args = vec!["req", "-nodes", "-subj", "/CN=localhost"];
    args.extend(key);
    args.extend(["-keyout", &server_key, "-out", &request]);
    run(openssl, &args);
    let (ca, ca_key) = (path("ca.pem"), path("ca.key"));
    run(
        openssl,
        &[
            "x509",
            "-req",
            "-in",
            &request,
            "-CA",
            &ca,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &extensions,
            "-out",
            &server_certificate,
        ],
    );
}

/// corescale with none of the variables that would give it a password or a server.
fn corescale() -> assert_cmd::Command {
    let mut command = common::corescale();
    for variable in [
        "CORESCALE_DB_PASSWORD",
        "MYSQL_PWD",
        "MYSQL_HOST",
        "MYSQL_TCP_PORT",
        "MYSQL_UNIX_PORT",
    ] {
        command.env_remove(variable);
    }
    command
}

/// What a command printed, both streams.
fn printed(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The error corescale printed for a failed command: exit 1, and its one line.
fn one_line_error(command: &mut assert_cmd::Command) -> String {
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{}", printed(&output));
    // Warnings about the settings come before it, each on its own line.
    assert_eq!(
        stderr
            .trim_end()
            .lines()
            .filter(|line| !line.starts_with("corescale: warning: "))
            .count(),
        1,
        "not one line: {stderr}"
    );
    stderr
}

#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd installed, to start a private server"
)]
fn verified_tls_sets_up_runs_and_tears_down() {
    let mut server = PrivateMariaDb::start();
    let url = server.url(USER, "127.0.0.1", "VERIFY_IDENTITY", "ca.pem");
    let handshakes = server.status("Ssl_accepts");
    let output = corescale()
        .args(["db", "setup", "--target", &url])
        .args(["--scale", "256", "--schemas", "1"])
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", printed(&output));
    assert!(!printed(&output).contains(PASSWORD));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let output = corescale()
        .args(["run", "db", "--target", &url, "-w", "1", "--duration", "1s"])
        .args(["--repeat", "1", "-q", "-o"])
        .arg(&json)
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", printed(&output));
    assert!(!printed(&output).contains(PASSWORD));
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(!text.contains(PASSWORD), "password stored");
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    let level = &document["levels"][0];
    assert!(
        level["workload_figures"]["statements"].as_f64().unwrap() > 0.0,
        "no statements ran: {level}"
    );
    // Each session's TLS as the server reported it (Ssl_version, Ssl_cipher).
    let connections = level["connections"].as_array().unwrap();
    assert_eq!(connections.len(), 1, "{level}");
    for connection in connections {
        assert_eq!(connection["tls"], true, "{connection}");
        assert!(
            connection["protocol"]
                .as_str()
                .unwrap()
                .starts_with("TLSv1."),
            "{connection}"
        );
        assert!(!connection["cipher"].as_str().unwrap().is_empty());
    }
    // The server refuses TCP without TLS (require_secure_transport), so these sessions were
    // encrypted; the server counted their handshakes too.
    assert!(
        server.status("Ssl_accepts") > handshakes,
        "no TLS handshake reached the server"
    );
    corescale()
        .args(["db", "teardown", "--target", &url])
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .assert()
        .success()
        .stdout(contains("corescale_t0"));
}

#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd installed, to start a private server"
)]
fn refused_tls_names_the_setting_to_change() {
    let server = PrivateMariaDb::start();
    // A CA that did not sign the server's certificate.
    let error = one_line_error(
        corescale()
            .args(["run", "db", "-w", "1", "--duration", "1s", "--target"])
            .arg(server.url(USER, "127.0.0.1", "VERIFY_IDENTITY", "other-ca.pem"))
            .env("CORESCALE_DB_PASSWORD", PASSWORD),
    );
    assert!(error.contains("not trusted"), "{error}");
    assert!(error.contains("ssl-ca"), "{error}");
    assert!(error.contains("other-ca.pem"), "{error}");
    // REQUIRED checks the chain because ssl-ca is given: the way out is to drop ssl-ca.
    let error = one_line_error(
        corescale()
            .args(["run", "db", "-w", "1", "--duration", "1s", "--target"])
            .arg(server.url(USER, "127.0.0.1", "REQUIRED", "other-ca.pem"))
            .env("CORESCALE_DB_PASSWORD", PASSWORD),
    );
    assert!(error.contains("not trusted by ssl-ca="), "{error}");
    assert!(error.contains("drop ssl-ca"), "{error}");
    // The driver trusts the public web CAs too: said, since REQUIRED with ssl-ca is no pin.
    assert!(error.contains("trusts the public web CAs"), "{error}");
    assert!(!error.contains("use ssl-mode=REQUIRED"), "{error}");
    // In clear text the server refuses; corescale says it did not use TLS, and how to.
    let error = one_line_error(
        corescale()
            .args(["run", "db", "-w", "1", "--duration", "1s", "--target"])
            .arg(server.url(USER, "127.0.0.1", "DISABLED", "ca.pem"))
            .env("CORESCALE_DB_PASSWORD", PASSWORD),
    );
    assert!(error.contains("ssl-mode"), "{error}");
    assert!(error.contains("without TLS"), "{error}");
    assert!(!error.contains(PASSWORD), "{error}");
    // An address the certificate does not name: VERIFY_IDENTITY refuses it...
    let error = one_line_error(
        corescale()
            .args(["run", "db", "-w", "1", "--duration", "1s", "--target"])
            .arg(server.url(USER, UNNAMED_ADDRESS, "VERIFY_IDENTITY", "ca.pem"))
            .env("CORESCALE_DB_PASSWORD", PASSWORD),
    );
    assert!(error.contains("host name"), "{error}");
    assert!(error.contains(UNNAMED_ADDRESS), "{error}");
    assert!(error.contains("VERIFY_CA"), "{error}");
    // ...VERIFY_CA, which checks the chain only, connects (teardown finds nothing to drop).
    let output = corescale()
        .args(["db", "teardown", "--target"])
        .arg(server.url(USER, UNNAMED_ADDRESS, "VERIFY_CA", "ca.pem"))
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", printed(&output));
}

/// `~/.my.cnf` gives the user, the password (quoted, as MySQL reads it), the host, the
/// port and the TLS settings: the target names only the database.
#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd installed, to start a private server"
)]
fn the_option_file_gives_everything_but_the_database() {
    let server = PrivateMariaDb::start();
    let home = tempfile::tempdir().unwrap();
    // As MySQL's and MariaDB's clients read option files: in quotes `#` and `;` are the
    // value's, `\` and the quote are escaped with `\`; outside quotes `#` starts a comment.
    let double_quoted = |password: &str| {
        format!(
            "\"{}\"",
            password.replace('\\', "\\\\").replace('"', "\\\"")
        )
    };
    let single_quoted =
        |password: &str| format!("'{}'", password.replace('\\', "\\\\").replace('\'', "\\'"));
    for (user, password, quoted) in [
        (USER, PASSWORD, PASSWORD.to_string()),
        (
            PUNCTUATION_USER,
            PUNCTUATION_PASSWORD,
            double_quoted(PUNCTUATION_PASSWORD),
        ),
        (
            PUNCTUATION_USER,
            PUNCTUATION_PASSWORD,
            single_quoted(PUNCTUATION_PASSWORD),
        ),
    ] {
        std::fs::write(
            home.path().join(".my.cnf"),
            format!(
                "# corescale's test server\n[client]\nuser = {user}\npassword = {quoted}  # keep this file private\nhost = 127.0.0.1\nport = {}  # the private server\nssl-mode = VERIFY_IDENTITY\nssl-ca = {}\n",
                server.port,
                server.path("ca.pem")
            ),
        )
        .unwrap();
        let database = database_of(user);
        for target in [
            format!("mysql:///{database}"),
            format!("mysql://127.0.0.1/{database}"),
        ] {
            let output = corescale()
                .args(["db", "teardown", "--target", &target])
                .env("HOME", home.path())
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "{user} {target}: {}",
                printed(&output)
            );
            assert!(
                !printed(&output).contains(password),
                "{user}: password shown"
            );
        }
    }
}

/// Every punctuation character and a space: from CORESCALE_DB_PASSWORD as it is, and
/// percent-encoded in the URL; shown nowhere.
#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd installed, to start a private server"
)]
fn punctuation_passwords_connect_and_never_show() {
    let server = PrivateMariaDb::start();
    let url = server.url(PUNCTUATION_USER, "127.0.0.1", "VERIFY_IDENTITY", "ca.pem");
    let output = corescale()
        .args(["db", "setup", "--target", &url])
        .args(["--scale", "256", "--schemas", "1"])
        .env("CORESCALE_DB_PASSWORD", PUNCTUATION_PASSWORD)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", printed(&output));
    assert!(!printed(&output).contains(PUNCTUATION_PASSWORD));
    let encoded = percent_encoding::utf8_percent_encode(
        PUNCTUATION_PASSWORD,
        percent_encoding::NON_ALPHANUMERIC,
    )
    .to_string();
    let with_password = url.replacen(
        &format!("{PUNCTUATION_USER}@"),
        &format!("{PUNCTUATION_USER}:{encoded}@"),
        1,
    );
    let output = corescale()
        .args(["run", "db", "--target", &with_password, "-w", "1"])
        .args(["--duration", "200ms", "--repeat", "1", "-q"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", printed(&output));
    let shown = printed(&output);
    assert!(!shown.contains(PUNCTUATION_PASSWORD), "{shown}");
    assert!(!shown.contains(&encoded), "{shown}");
    // A wrong password is refused and not shown either.
    let error = one_line_error(
        corescale()
            .args(["run", "db", "-w", "1", "--target", &url])
            .env("CORESCALE_DB_PASSWORD", "Wrong-Guess-9"),
    );
    assert!(error.contains("access denied"), "{error}");
    assert!(!error.contains("Wrong-Guess-9"), "{error}");
    corescale()
        .args(["db", "teardown", "--target", &url])
        .env("CORESCALE_DB_PASSWORD", PUNCTUATION_PASSWORD)
        .assert()
        .success()
        .stdout(contains("corescale_t0"))
        .stdout(contains(PUNCTUATION_PASSWORD).not());
}

/// The private server's Unix socket (which MariaDB counts as secure transport) reaches it
/// as `localhost`; a mode that demands TLS is refused there before connecting.
#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd installed, to start a private server"
)]
fn a_unix_socket_reaches_the_server() {
    let server = PrivateMariaDb::start();
    let url = format!(
        "mysql://{USER}@localhost/{DATABASE}?socket={}",
        server.socket()
    );
    let output = corescale()
        .args(["db", "setup", "--target", &url])
        .args(["--scale", "256", "--schemas", "1"])
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", printed(&output));
    corescale()
        .args(["db", "teardown", "--target", &url])
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .assert()
        .success()
        .stdout(contains("corescale_t0"));
    corescale()
        .args(["db", "teardown", "--target"])
        .arg(format!("{url}&ssl-mode=VERIFY_IDENTITY"))
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .assert()
        .code(2)
        .stderr(contains("Unix socket"));
}

/// A port written in the URL means TCP to that port, even for `localhost` where the machine's
/// option file names the default server's socket (`/etc/mysql/my.cnf` here): setup reaches
/// the private server, checked by its own `@@port` and by the table it now holds. Without the
/// port, `localhost` means that socket, and a mode that demands TLS is refused naming the
/// socket and the file it came from.
#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd installed, to start a private server"
)]
fn an_explicit_port_means_tcp_even_for_localhost() {
    let mut server = PrivateMariaDb::start();
    let url = server.url(USER, "localhost", "VERIFY_IDENTITY", "ca.pem");
    let output = corescale()
        .args(["db", "setup", "--target", &url])
        .args(["--scale", "256", "--schemas", "1"])
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", printed(&output));
    let mut admin = server.admin();
    let port: Option<u16> = admin.query_first("SELECT @@port").unwrap();
    assert_eq!(port, Some(server.port));
    let tables: Option<u64> = admin
        .query_first(format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{DATABASE}' AND table_name = 'corescale_t0'"
        ))
        .unwrap();
    assert_eq!(tables, Some(1), "setup did not reach the private server");
    corescale()
        .args(["db", "teardown", "--target", &url])
        .env("CORESCALE_DB_PASSWORD", PASSWORD)
        .assert()
        .success()
        .stdout(contains("corescale_t0"));
    let socket_file = ["/etc/my.cnf", "/etc/mysql/my.cnf"]
        .into_iter()
        .find(|file| {
            std::fs::read_to_string(file).is_ok_and(|text| {
                text.lines()
                    .any(|line| line.trim_start().starts_with("socket"))
            })
        });
    if let Some(file) = socket_file {
        let without_port = format!(
            "mysql://{USER}@localhost/{DATABASE}?ssl-mode=VERIFY_IDENTITY&ssl-ca={}",
            server.path("ca.pem")
        );
        corescale()
            .args(["db", "check", "--target", &without_port])
            .env("CORESCALE_DB_PASSWORD", PASSWORD)
            .assert()
            .code(2)
            .stderr(contains(format!("(from {file})")))
            .stderr(contains("Unix socket"));
    }
}
