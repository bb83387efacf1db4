//! Records what `corescale --version` reports: the git commit, the build date and the target.

fn main() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|commit| !commit.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    // Reproducible builds set SOURCE_DATE_EPOCH; otherwise today.
    let date = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|seconds| seconds.parse::<i64>().ok())
        .and_then(|seconds| chrono::DateTime::from_timestamp(seconds, 0))
        .unwrap_or_else(chrono::Utc::now)
        .format("%Y-%m-%d");
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=CORESCALE_COMMIT={commit}");
    println!("cargo:rustc-env=CORESCALE_BUILD_DATE={date}");
    println!("cargo:rustc-env=CORESCALE_TARGET={target}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    test_servers();
}

/// Database tests run where their servers or programs are named or installed; elsewhere
/// they are ignored with the reason (`cargo test` lists them as ignored, never as passed).
/// With CI set they always run, so a missing server fails them.
fn test_servers() {
    let ci = std::env::var_os("CI").is_some();
    println!("cargo:rerun-if-env-changed=CI");
    for (variable, cfg) in [
        ("CORESCALE_TEST_PG", "corescale_test_pg"),
        ("CORESCALE_TEST_MYSQL", "corescale_test_mysql"),
        ("CORESCALE_TEST_PG_BINDIR", "corescale_test_pg_bindir"),
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        println!("cargo:rerun-if-env-changed={variable}");
        if ci || std::env::var(variable).is_ok_and(|value| !value.is_empty()) {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
    // The MariaDB TLS tests start a private server: they need mariadbd, mariadb-install-db
    // and openssl, looked for where tests/servers/mysql_tls.rs looks (PATH and the sbin folders).
    // Installed after the build script ran, they are seen once build.rs changes or after
    // `cargo clean -p corescale`.
    println!("cargo::rustc-check-cfg=cfg(corescale_test_mariadbd)");
    let mut folders: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    folders.extend(["/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"].map(Into::into));
    let installed = ["mariadbd", "mariadb-install-db", "openssl"]
        .iter()
        .all(|program| folders.iter().any(|folder| folder.join(program).is_file()));
    if ci || installed {
        println!("cargo:rustc-cfg=corescale_test_mariadbd");
    }
    // The test that plants a link of another owner needs root to chown it.
    println!("cargo::rustc-check-cfg=cfg(corescale_test_root)");
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    });
    if ci || root {
        println!("cargo:rustc-cfg=corescale_test_root");
    }
    // The importer's sysbench test runs the Debian package's sysbench (.ci/run installs it).
    println!("cargo::rustc-check-cfg=cfg(corescale_test_sysbench)");
    if ci
        || folders
            .iter()
            .any(|folder| folder.join("sysbench").is_file())
    {
        println!("cargo:rustc-cfg=corescale_test_sysbench");
    }
    // The metrics test has a real Prometheus scrape a run and a real Pushgateway receive
    // its levels (Debian's prometheus and prometheus-pushgateway; .ci/run installs them).
    println!("cargo::rustc-check-cfg=cfg(corescale_test_prometheus)");
    let found = |program: &str| folders.iter().any(|folder| folder.join(program).is_file());
    if ci || (found("prometheus") && found("prometheus-pushgateway")) {
        println!("cargo:rustc-cfg=corescale_test_prometheus");
    }
    // The .hlog test reads a run's HdrHistogram log with Python's hdrhistogram package, an
    // independent reader (.ci/run installs it). Installed after the build script ran, it is
    // seen once build.rs changes or after `cargo clean -p corescale`.
    println!("cargo::rustc-check-cfg=cfg(corescale_test_hdrh)");
    let hdrh = std::process::Command::new("python3")
        .args(["-c", "import hdrh"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if ci || hdrh {
        println!("cargo:rustc-cfg=corescale_test_hdrh");
    }
    // The CPU quota test makes a cgroup of its own: it needs a writable cgroup v1 `cpu`
    // controller (or v2 with `cpu` enabled), which a container or an unprivileged user lacks.
    println!("cargo::rustc-check-cfg=cfg(corescale_test_cgroup)");
    let writable = |path: &str| std::fs::OpenOptions::new().write(true).open(path).is_ok();
    let v2_cpu = std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control")
        .is_ok_and(|controllers| controllers.split_whitespace().any(|name| name == "cpu"));
    if ci
        || writable("/sys/fs/cgroup/cpu/cgroup.procs")
        || (v2_cpu && writable("/sys/fs/cgroup/cgroup.procs"))
    {
        println!("cargo:rustc-cfg=corescale_test_cgroup");
    }
}
