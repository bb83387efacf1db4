//! Whether a server reached at this host's own address runs on this host. A tunnel or a proxy
//! listening here (`ssh -L`, pgbouncer, HAProxy) forwards to a server elsewhere, whose
//! process ids and CPU times mean nothing here: read from /proc, they would be another
//! process's. The server names the port it sees a connection come from; only a direct
//! connection comes from one of this process's own sockets.

use std::os::fd::RawFd;

use anyhow::Result;
use nix::sys::socket::{SockaddrStorage, getpeername, getsockname};

use super::settings::Endpoint;
use super::target::Target;

/// Whether the server `target` reaches runs on this host: through a socket, or at this
/// host's address from one of this process's own sockets. `client_port` asks the server
/// which port it saw the connection come from (None: it cannot say).
pub fn serves_here(
    target: &Target,
    client_port: impl FnOnce() -> Result<Option<u16>>,
) -> Result<bool> {
    match &target.settings().endpoint {
        Endpoint::Socket(_) => Ok(true),
        Endpoint::Tcp { port, .. } if target.is_local() => {
            Ok(client_port()?.is_some_and(|seen| own_connection(seen, *port)))
        }
        Endpoint::Tcp { .. } => Ok(false),
    }
}

/// Whether one of this process's TCP sockets has local port `client_port` and is connected
/// to port `server_port`: the connection the server saw come from `client_port` is this
/// process's own, not a forwarder's.
fn own_connection(client_port: u16, server_port: u16) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return false;
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<RawFd>().ok())
        .any(|fd| {
            port(getsockname(fd)) == Some(client_port) && port(getpeername(fd)) == Some(server_port)
        })
}

/// The port of an IPv4 or IPv6 address; None for other sockets and for descriptors that are
/// not sockets (or were closed since the directory was read).
fn port(address: nix::Result<SockaddrStorage>) -> Option<u16> {
    let address = address.ok()?;
    address
        .as_sockaddr_in()
        .map(|inet| inet.port())
        .or_else(|| address.as_sockaddr_in6().map(|inet| inet.port()))
}

/// The client port in the way MySQL's process list shows a TCP client: `host:port`
/// (`[v6]:port` too); None for a socket client (`localhost`).
pub fn port_in_host(host: &str) -> Option<u16> {
    host.rsplit_once(':')?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_connection_of_this_process_is_its_own_and_a_forwarders_is_not() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server_port = listener.local_addr().unwrap().port();
        let client = TcpStream::connect(("127.0.0.1", server_port)).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let client_port = client.local_addr().unwrap().port();
        assert!(own_connection(client_port, server_port));
        // A port of this process's that is not the client's: a forwarder's, as the server
        // would see it through a tunnel.
        let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
        let forwarder_port = elsewhere.local_addr().unwrap().port();
        assert!(!own_connection(forwarder_port, server_port));
        drop((client, accepted));
        assert!(!own_connection(client_port, server_port), "closed");
        assert_eq!(port_in_host("127.0.0.1:54321"), Some(54321));
        assert_eq!(port_in_host("[::1]:5433"), Some(5433));
        assert_eq!(port_in_host("localhost"), None);
    }
}
