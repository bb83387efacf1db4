//! corescale against a PostgreSQL configured as production ones are: TLS only (`hostssl`
//! with scram-sha-256 or client certificates, `hostnossl ... reject`), a CA and a server
//! certificate made by openssl here, and the credentials DBAs keep (.pgpass, a service file,
//! PG* variables). A private cluster from CORESCALE_TEST_PG_BINDIR, as tests/servers/pg_auth.rs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::pg_cluster::PrivateCluster;
use common::{corescale, read_json, required};
use predicates::prelude::*;
use predicates::str::{contains, is_match};

const TLS_ROLE: (&str, &str) = ("corescale_tls", "tls-Secret-1");
/// May log in without TLS (scram), to show channel_binding=require refusing clear text.
const CLEAR_ROLE: (&str, &str) = ("corescale_clear", "clear-Secret-2");
/// Logs in with a client certificate whose CN is its name.
const CERT_ROLE: &str = "corescale_cert";

/// Certificates made by openssl: a CA, a server certificate for the name `localhost` only
/// (so 127.0.0.1 fails a host-name check), a client certificate, and an unrelated CA.
struct Certificates {
    dir: tempfile::TempDir,
}

impl Certificates {
    fn make() -> Self {
        let certificates = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        for ca in ["ca", "other-ca"] {
            certificates.openssl(&[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=corescale test {ca}"),
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.crt"),
            ]);
        }
        certificates.signed("server", "/CN=localhost", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n");
        certificates.signed(
            "client",
            &format!("/CN={CERT_ROLE}"),
            "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n",
        );
        std::fs::set_permissions(
            certificates.path("client.key"),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        certificates
    }

    /// A key and a certificate for `subject`, signed by `ca`, with the given extensions.
    fn signed(&self, name: &str, subject: &str, extensions: &str) {
        std::fs::write(self.path(&format!("{name}.ext")), extensions).unwrap();
        self.openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            subject,
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
        ]);
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &format!("{name}.ext"),
            "-out",
            &format!("{name}.crt"),
        ]);
    }

    fn openssl(&self, args: &[&str]) {
        let output = Command::new("openssl")
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("openssl runs");
        assert!(
            output.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn text(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}

/// The TLS-only cluster and its certificates.
fn start() -> (PrivateCluster, Certificates) {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let certificates = Certificates::make();
    let hba = format!(
        "hostssl all {} 127.0.0.1/32 scram-sha-256\nhostssl all {CERT_ROLE} 127.0.0.1/32 cert\nhostnossl all {} 127.0.0.1/32 scram-sha-256\nhostnossl all all 127.0.0.1/32 reject\n",
        TLS_ROLE.0, CLEAR_ROLE.0
    );
    let files: [(&str, &Path); 3] = [
        ("server.crt", &certificates.path("server.crt")),
        ("server.key", &certificates.path("server.key")),
        ("ca.crt", &certificates.path("ca.crt")),
    ];
    let sql = format!(
        "SET password_encryption = 'scram-sha-256'; CREATE ROLE {} LOGIN PASSWORD '{}'; CREATE SCHEMA AUTHORIZATION {}; CREATE ROLE {} LOGIN PASSWORD '{}'; CREATE ROLE {CERT_ROLE} LOGIN; CREATE SCHEMA AUTHORIZATION {CERT_ROLE};",
        TLS_ROLE.0, TLS_ROLE.1, TLS_ROLE.0, CLEAR_ROLE.0, CLEAR_ROLE.1
    );
    let cluster = PrivateCluster::start(
        &bindir,
        &hba,
        &files,
        "-c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key -c ssl_ca_file=ca.crt",
        &sql,
    );
    (cluster, certificates)
}

/// A URL of the TLS role at `host`, its password left to CORESCALE_DB_PASSWORD.
fn url(cluster: &PrivateCluster, host: &str, parameters: &str) -> String {
    format!(
        "postgres://{}@{host}:{}/postgres?{parameters}",
        TLS_ROLE.0, cluster.port
    )
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn verify_full_sets_up_runs_and_tears_down_over_tls_and_records_it() {
    let (cluster, certificates) = start();
    let target = url(
        &cluster,
        "localhost",
        &format!(
            "sslmode=verify-full&sslrootcert={}",
            certificates.text("ca.crt")
        ),
    );
    let run = |args: &[&str]| {
        corescale()
            .args(args)
            .args(["--target", &target])
            .env("CORESCALE_DB_PASSWORD", TLS_ROLE.1)
            .assert()
            .success()
            .stderr(contains(TLS_ROLE.1).not())
    };
    run(&["db", "setup", "--schemas", "1", "--scale", "256"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("tls.json");
    run(&[
        "run",
        "db",
        "--sweep",
        "1,2",
        "--duration",
        "200ms",
        "--repeat",
        "1",
        "-q",
        "-o",
        json.to_str().unwrap(),
    ]);
    let document = read_json(&json);
    for level in document["levels"].as_array().unwrap() {
        let connections = level["connections"].as_array().unwrap();
        assert_eq!(connections.len() as u64, level["workers"].as_u64().unwrap());
        for connection in connections {
            assert_eq!(connection["tls"], true, "{connection}");
            let protocol = connection["protocol"].as_str().unwrap();
            assert!(matches!(protocol, "TLSv1.3" | "TLSv1.2"), "{protocol}");
            assert!(connection["cipher"].as_str().unwrap().starts_with("TLS_"));
        }
    }
    assert!(!std::fs::read_to_string(&json).unwrap().contains(TLS_ROLE.1));
    // db check says what it reached, and pg_stat_ssl agreed with the client (checked inside).
    run(&["db", "check"])
        .stdout(contains("TLSv1.3").or(contains("TLSv1.2")))
        .stdout(is_match(r"sslmode +verify-full +\(from the URL\)").unwrap())
        .stdout(contains("(from $CORESCALE_DB_PASSWORD)"));
    run(&["db", "teardown"]).stdout(contains("dropped"));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn each_tls_failure_has_its_own_message() {
    let (cluster, certificates) = start();
    let fails = |target: String, expected: &str| {
        corescale()
            .args(["db", "check", "--target", &target])
            .env("CORESCALE_DB_PASSWORD", TLS_ROLE.1)
            .assert()
            .code(1)
            .stderr(contains(expected))
            .stderr(contains(TLS_ROLE.1).not());
    };
    let ca = certificates.text("ca.crt");
    fails(
        url(
            &cluster,
            "localhost",
            &format!(
                "sslmode=verify-full&sslrootcert={}",
                certificates.text("other-ca.crt")
            ),
        ),
        "not trusted by sslrootcert",
    );
    fails(
        url(
            &cluster,
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        "does not match the server's certificate",
    );
    fails(
        url(&cluster, "127.0.0.1", "sslmode=disable"),
        "corescale connected without TLS (sslmode=disable)",
    );
    fails(
        url(&cluster, "127.0.0.1", "sslmode=verify-ca"),
        "no root certificate is given",
    );
    // The host name is not checked by verify-ca, nor anything by require.
    for parameters in [
        format!("sslmode=verify-ca&sslrootcert={ca}"),
        "sslmode=require".to_string(),
    ] {
        corescale()
            .args([
                "db",
                "check",
                "--target",
                &url(&cluster, "127.0.0.1", &parameters),
            ])
            .env("CORESCALE_DB_PASSWORD", TLS_ROLE.1)
            .assert()
            .success();
    }
    // sslmode=prefer with a root certificate given checks the chain, as libpq does; a chain
    // it does not trust is said, not passed over, before the connection goes on in clear
    // text (which the clear-text role may use, and the TLS role may not).
    let untrusted = format!(
        "sslmode=prefer&sslrootcert={}",
        certificates.text("other-ca.crt")
    );
    let clear = format!(
        "postgres://{}@127.0.0.1:{}/postgres?{untrusted}",
        CLEAR_ROLE.0, cluster.port
    );
    corescale()
        .args(["db", "check", "--target", &clear])
        .env("CORESCALE_DB_PASSWORD", CLEAR_ROLE.1)
        .assert()
        // Connected (the role lacks setup's privileges, which db check then reports).
        .stdout(contains("the connection is not encrypted"))
        .stderr(contains("not trusted by sslrootcert"))
        .stderr(contains("connecting in clear text"));
    corescale()
        .args([
            "db",
            "check",
            "--target",
            &url(&cluster, "127.0.0.1", &untrusted),
        ])
        .env("CORESCALE_DB_PASSWORD", TLS_ROLE.1)
        .assert()
        .code(1)
        .stderr(contains("not trusted by sslrootcert"));
    // An unknown mode is a usage error.
    corescale()
        .args([
            "db",
            "check",
            "--target",
            &url(&cluster, "127.0.0.1", "sslmode=on"),
        ])
        .assert()
        .code(2)
        .stderr(contains("verify-full"));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn channel_binding_and_client_certificates() {
    let (cluster, certificates) = start();
    corescale()
        .args(["db", "check", "--target"])
        .arg(url(
            &cluster,
            "127.0.0.1",
            "sslmode=require&channel_binding=require",
        ))
        .env("CORESCALE_DB_PASSWORD", TLS_ROLE.1)
        .assert()
        .success();
    corescale()
        .args(["db", "check", "--target"])
        .arg(format!(
            "postgres://{}@127.0.0.1:{}/postgres?sslmode=disable&channel_binding=require",
            CLEAR_ROLE.0, cluster.port
        ))
        .env("CORESCALE_DB_PASSWORD", CLEAR_ROLE.1)
        .assert()
        .code(1)
        .stderr(contains(
            "channel_binding=require, but this connection has no TLS",
        ));
    let client = format!(
        "sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
        certificates.text("ca.crt"),
        certificates.text("client.crt"),
        certificates.text("client.key")
    );
    let target = format!(
        "postgres://{CERT_ROLE}@localhost:{}/postgres?{client}",
        cluster.port
    );
    corescale()
        .args([
            "db",
            "setup",
            "--schemas",
            "1",
            "--scale",
            "128",
            "--target",
            &target,
        ])
        .env_remove("CORESCALE_DB_PASSWORD")
        .assert()
        .success();
    corescale()
        .args(["db", "teardown", "--target", &target])
        .assert()
        .success();
    // A key others may read is refused, as libpq refuses it.
    std::fs::set_permissions(
        certificates.path("client.key"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    corescale()
        .args(["db", "check", "--target", &target])
        .assert()
        .code(1)
        .stderr(contains("group or world access"));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn pgpass_service_file_and_variables_reach_the_server() {
    let (cluster, certificates) = start();
    let home = tempfile::tempdir().unwrap();
    let pgpass = home.path().join(".pgpass");
    std::fs::write(
        &pgpass,
        format!(
            "localhost:{}:postgres:{}:{}\n",
            cluster.port, TLS_ROLE.0, TLS_ROLE.1
        ),
    )
    .unwrap();
    let chmod = |mode: u32| {
        std::fs::set_permissions(&pgpass, std::os::unix::fs::PermissionsExt::from_mode(mode))
            .unwrap()
    };
    chmod(0o600);
    let services = home.path().join("services.conf");
    std::fs::write(
        &services,
        format!(
            "[prod]\nhost=localhost\nport={}\ndbname=postgres\nuser={}\nsslmode=verify-full\nsslrootcert={}\n",
            cluster.port,
            TLS_ROLE.0,
            certificates.text("ca.crt")
        ),
    )
    .unwrap();
    let check = |target: &str, variables: &[(&str, String)]| {
        let mut command = corescale();
        command
            .args(["db", "check", "--target", target])
            .env("HOME", home.path())
            .env("PGSERVICEFILE", &services)
            .env_remove("CORESCALE_DB_PASSWORD")
            .env_remove("PGPASSWORD");
        for (name, value) in variables {
            command.env(name, value);
        }
        command.assert()
    };
    // The service gives host, port, database, user and sslmode; .pgpass the password.
    check("postgres:///?service=prod", &[])
        .success()
        .stdout(is_match(r"sslmode +verify-full +\(from .*services.conf\)").unwrap())
        .stdout(contains(format!("(from {})", pgpass.display())))
        .stdout(contains(TLS_ROLE.1).not());
    // PG* variables alone.
    check(
        "postgres://",
        &[
            ("PGHOST", "localhost".to_string()),
            ("PGPORT", cluster.port.to_string()),
            ("PGUSER", TLS_ROLE.0.to_string()),
            ("PGDATABASE", "postgres".to_string()),
            ("PGSSLMODE", "verify-full".to_string()),
            ("PGSSLROOTCERT", certificates.text("ca.crt")),
        ],
    )
    .success()
    .stdout(contains("(from $PGSSLMODE)"));
    // A .pgpass others may read is ignored, with the warning, so no password is found.
    chmod(0o644);
    check("postgres:///?service=prod", &[])
        .code(1)
        .stderr(contains("has group or world access and is ignored"));
}
