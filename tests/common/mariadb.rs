//! A private MariaDB for tests that need a server configured otherwise than the shared one
//! (TLS only, a replica): mariadb-install-db in a temporary directory, then mariadbd on its
//! own port and socket with the test's options; killed when dropped.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A program the tests need, from PATH or the sbin directories.
pub fn program(name: &str) -> PathBuf {
    let mut directories: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    directories.extend(["/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"].map(PathBuf::from));
    let found = directories
        .into_iter()
        .map(|directory| directory.join(name))
        .find(|path| path.is_file());
    // Without it the test is ignored (build.rs); run anyway, it fails.
    found.unwrap_or_else(|| panic!("{name} is not installed: this MariaDB test cannot run"))
}

/// Runs a program, failing the test with its output when it fails.
pub fn run(program: &Path, args: &[&str]) {
    let output = Command::new(program).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{} {args:?} failed:\n{}{}",
        program.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A MariaDB in a temporary directory, killed when dropped.
pub struct PrivateMariaDb {
    pub dir: tempfile::TempDir,
    pub port: u16,
    server: Child,
}

impl PrivateMariaDb {
    /// A fresh data directory, then the server on a free port with the options (`--name=value`)
    /// `prepare` answers, given the directory (where it may first write what they name, such
    /// as certificates).
    pub fn start(prefix: &str, prepare: impl FnOnce(&Path) -> Vec<String>) -> Self {
        let install = program("mariadb-install-db");
        let mariadbd = program("mariadbd");
        let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
        let options = prepare(dir.path());
        let path = |name: &str| dir.path().join(name).display().to_string();
        let as_root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
        // Temporary tables of its own: servers sharing /tmp collide on their names (two
        // bootstraps at once fail one time in a few). Small InnoDB files: the server starts
        // in well under a second.
        std::fs::create_dir(path("tmp")).unwrap();
        let common = [
            "--no-defaults".to_string(),
            format!("--datadir={}", path("data")),
            format!("--tmpdir={}", path("tmp")),
            "--innodb-log-file-size=8M".to_string(),
            "--innodb-buffer-pool-size=32M".to_string(),
        ];
        let user: &[&str] = if as_root { &["--user=root"] } else { &[] };
        let mut args: Vec<&str> = common.iter().map(String::as_str).collect();
        args.extend(user);
        args.extend([
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ]);
        run(&install, &args);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = std::fs::File::create(path("server.log")).unwrap();
        let server = Command::new(mariadbd)
            .args(&common)
            .args(user)
            .arg(format!("--socket={}", path("sock")))
            .arg(format!("--port={port}"))
            .arg(format!("--pid-file={}", path("mariadbd.pid")))
            .arg("--skip-name-resolve")
            .args(&options)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        Self { dir, port, server }
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    pub fn socket(&self) -> String {
        self.path("sock")
    }

    /// root over the socket, once the server answers there (within 30 s).
    pub fn admin(&mut self) -> mysql::Conn {
        let options = mysql::OptsBuilder::new()
            .socket(Some(self.socket()))
            .user(Some("root"))
            .prefer_socket(true);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match mysql::Conn::new(options.clone()) {
                Ok(connection) => return connection,
                Err(error) => {
                    let log = std::fs::read_to_string(self.path("server.log")).unwrap_or_default();
                    if let Ok(Some(status)) = self.server.try_wait() {
                        panic!("mariadbd ended ({status}):\n{log}");
                    }
                    assert!(
                        Instant::now() < deadline,
                        "mariadbd did not answer in 30 s ({error}):\n{log}"
                    );
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }
}

impl Drop for PrivateMariaDb {
    fn drop(&mut self) {
        // No assertion here: a panic while unwinding would abort the test run. The data
        // directory is thrown away, so the server need not shut down cleanly.
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}
