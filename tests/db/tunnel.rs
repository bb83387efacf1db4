//! A server reached through a forwarder listening on this host (what `ssh -L`, pgbouncer or
//! HAProxy are to a run): the target's address is this host's, the server's processes are not
//! corescale's to read. A real TCP forwarder in the test process stands between corescale and
//! the real PostgreSQL and MariaDB; the same run straight to the server reads their CPU time.

use crate::common;

use std::net::{Shutdown, TcpListener, TcpStream};

use common::scratch::Scratch;
use common::{corescale, hold_server, one_db_level, required};

/// Forwards every connection made to the port it returns to `upstream`, byte for byte, for
/// the test's length, as a tunnel does: the server sees the forwarder's port, not the client's.
fn forwarder(upstream: (String, u16)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect((upstream.0.as_str(), upstream.1)) else {
                continue;
            };
            for (mut from, mut to) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(Shutdown::Write);
                });
            }
        }
    });
    port
}

/// Sets up corescale's tables on a database of the test's own on the server `variable` names,
/// then runs one level straight to the server and one through a forwarder.
fn through_a_forwarder(variable: &str) {
    let base = required(variable);
    let _held = hold_server(variable);
    let scratch = Scratch::new(&base, "tunnel");
    let direct = scratch.url().to_string();
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            &direct,
            "--schemas",
            "1",
            "--scale",
            "256",
        ])
        .assert()
        .success();
    let mut url = url::Url::parse(&direct).unwrap();
    let upstream = (
        url.host_str().unwrap().to_string(),
        url.port().unwrap_or(if variable == "CORESCALE_TEST_PG" {
            5432
        } else {
            3306
        }),
    );
    url.set_port(Some(forwarder(upstream))).unwrap();
    for (target, here) in [(direct.as_str(), true), (url.as_str(), false)] {
        let (document, said) = one_db_level(target);
        assert_eq!(
            said.contains("a tunnel or a proxy forwards it"),
            !here,
            "{target}: {said}"
        );
        assert_eq!(
            document["workload"]["server_on_this_host"], here,
            "{target}: {}",
            document["workload"]
        );
        let figures = &document["levels"][0]["workload_figures"];
        let cpu = figures["db_cpu_s"].as_f64();
        if here {
            assert!(
                cpu.is_some_and(|cpu| cpu > 0.0),
                "the server's CPU time is read: {figures}"
            );
        } else {
            // Through the forwarder the statements still run and are counted.
            assert_eq!(
                cpu, None,
                "no CPU time read from processes of another host's: {figures}"
            );
            assert!(figures["statements"].as_f64().unwrap() > 0.0, "{figures}");
        }
    }
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn a_server_behind_a_forwarder_is_not_this_hosts_on_postgresql() {
    through_a_forwarder("CORESCALE_TEST_PG");
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn a_server_behind_a_forwarder_is_not_this_hosts_on_mariadb() {
    through_a_forwarder("CORESCALE_TEST_MYSQL");
}
