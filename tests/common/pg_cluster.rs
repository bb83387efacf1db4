//! A private PostgreSQL cluster for tests that need a server configured otherwise than the
//! shared one (password methods, TLS only, client certificates): initdb in a temporary
//! directory, the test's own pg_hba.conf and settings, its own port and socket directory;
//! stopped when dropped. Started from the binaries in CORESCALE_TEST_PG_BINDIR.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A PostgreSQL cluster in a temporary directory, stopped when dropped.
pub struct PrivateCluster {
    bindir: PathBuf,
    pub dir: tempfile::TempDir,
    pub port: u16,
    as_root: bool,
}

impl PrivateCluster {
    /// initdb, then `hba` as pg_hba.conf, `files` copied into the data directory (owned by
    /// the server, mode 0600: certificates and keys), started with `settings` (`-c` options),
    /// then `sql` run as the superuser over the socket.
    pub fn start(
        bindir: &str,
        hba: &str,
        files: &[(&str, &Path)],
        settings: &str,
        sql: &str,
    ) -> Self {
        let cluster = Self::empty(bindir);
        cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
            ],
        );
        std::fs::write(
            Path::new(&cluster.data()).join("pg_hba.conf"),
            format!("local all postgres trust\n{hba}"),
        )
        .unwrap();
        for (name, source) in files {
            let target = Path::new(&cluster.data()).join(name);
            std::fs::copy(source, &target).unwrap();
            std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .unwrap();
            if cluster.as_root {
                let status = Command::new("chown")
                    .arg("postgres:")
                    .arg(&target)
                    .status()
                    .unwrap();
                assert!(status.success());
            }
        }
        cluster.launch(settings);
        if !sql.is_empty() {
            cluster.psql(sql);
        }
        cluster
    }

    /// A streaming replica of this cluster (`pg_basebackup -R`), on its own port and socket
    /// directory, started with `settings`. This cluster must allow replication connections
    /// from the superuser over its socket (`local replication postgres trust`).
    pub fn replica(&self, settings: &str) -> Self {
        let replica = Self::empty(&self.bindir.display().to_string());
        replica.run(
            "pg_basebackup",
            &[
                "-h",
                &self.dir.path().display().to_string(),
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-D",
                &replica.data(),
                "-R",
                "-X",
                "stream",
                "--no-sync",
                // Not a spread checkpoint: after a load, that waits most of a minute.
                "--checkpoint=fast",
            ],
        );
        replica.launch(settings);
        replica
    }

    /// Stops the server (fast) and starts it again with `settings`: a restarted instance.
    pub fn restart(&self, settings: &str) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
        self.launch(settings);
    }

    /// Stops the server (fast), leaving its data for `start_again`.
    pub fn stop(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
    }

    /// Starts a stopped server again with `settings`.
    pub fn start_again(&self, settings: &str) {
        self.launch(settings);
    }

    /// The server's main process (the first line of postmaster.pid).
    pub fn postmaster_pid(&self) -> u32 {
        std::fs::read_to_string(format!("{}/postmaster.pid", self.data()))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// A temporary directory the server may own, and a free port; nothing in it yet.
    fn empty(bindir: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let as_root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
        if as_root {
            // The server refuses to run as root: the cluster belongs to the postgres user.
            let status = Command::new("chown")
                .args(["postgres:"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown postgres: {}", dir.path().display());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self {
            bindir: PathBuf::from(bindir),
            dir,
            port,
            as_root,
        }
    }

    /// Starts the server on its port and socket directory, with `settings` (`-c` options).
    fn launch(&self, settings: &str) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB {settings}",
            self.port,
            self.dir.path().display()
        );
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-o",
                &options,
                "-l",
                &format!("{}/log", self.dir.path().display()),
                "-w",
                "start",
            ],
        );
    }

    /// Runs SQL as the superuser over the cluster's socket.
    pub fn psql(&self, sql: &str) {
        self.run(
            "psql",
            &[
                "-h",
                &self.dir.path().display().to_string(),
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-c",
                sql,
            ],
        );
    }

    pub fn data(&self) -> String {
        format!("{}/data", self.dir.path().display())
    }

    /// A command running one of the cluster's programs as the cluster's owner.
    fn command(&self, program: &str) -> Command {
        let binary = self.bindir.join(program);
        if self.as_root {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(binary);
            command
        } else {
            Command::new(binary)
        }
    }

    pub fn run(&self, program: &str, args: &[&str]) {
        let output = self.command(program).args(args).output().unwrap();
        assert!(
            output.status.success(),
            "{program} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The role's URL, its password percent-encoded as URLs require.
    pub fn url(&self, role: &str, password: &str) -> String {
        let encoded =
            percent_encoding::utf8_percent_encode(password, percent_encoding::NON_ALPHANUMERIC);
        format!(
            "postgres://{role}:{encoded}@127.0.0.1:{}/postgres",
            self.port
        )
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        // No assertion here: a panic while unwinding would abort the test run.
        let _ = self
            .command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
    }
}
