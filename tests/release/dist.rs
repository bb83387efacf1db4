//! The release: `scripts/dist.sh` builds the portable binary (glibc 2.17), the bundle and the
//! packages; this checks what it made, and installs the .deb here.
//!
//! It builds a release with Zig (minutes) and needs `rpm` and `dpkg`: `.ci/run` installs what
//! is missing and runs it with `cargo test --test release -- --ignored dist::`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::run_tool;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(program: &str, args: &[&str]) -> String {
    run_tool(program, args, &[])
}

fn only(pattern: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(root().join("dist"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            let (start, end) = pattern.split_once('*').unwrap();
            name.starts_with(start) && name.ends_with(end)
        })
        .collect();
    assert_eq!(found.len(), 1, "{pattern}: {found:?}");
    found[0].clone()
}

/// Where each package puts its files.
const INSTALLED: [&str; 6] = [
    "/usr/bin/corescale",
    "/usr/share/man/man1/corescale.1",
    "/usr/share/man/man1/corescale-run.1",
    "/usr/share/man/man1/corescale-db-setup.1",
    "/usr/share/bash-completion/completions/corescale",
    "/usr/share/fish/vendor_completions.d/corescale.fish",
];

#[test]
#[ignore = "needs Zig, rpm and dpkg, and minutes to build the portable release; .ci/run runs it"]
fn the_portable_release_runs_on_glibc_2_17_and_installs_as_packages() {
    run("bash", &["scripts/dist.sh"]);
    assert_the_binary_is_portable();
    assert_the_bundle_is_whole();
    assert_the_packages_install();
}

/// The binary: glibc bound, size, self-description.
fn assert_the_binary_is_portable() {
    let version = env!("CARGO_PKG_VERSION");
    let binary = root().join("target/x86_64-unknown-linux-gnu/release/corescale");
    let symbols = run("objdump", &["-T", binary.to_str().unwrap()]);
    let newest = symbols
        .split("GLIBC_")
        .skip(1)
        .filter_map(|rest| {
            let version: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let mut parts = version
                .split('.')
                .map(|part| part.parse::<u32>().unwrap_or(0));
            Some((parts.next()?, parts.next().unwrap_or(0)))
        })
        .max()
        .unwrap();
    assert!(newest <= (2, 17), "needs glibc {newest:?}");
    let size = std::fs::metadata(&binary).unwrap().len();
    assert!(size < 16 * 1024 * 1024, "{size} bytes");
    // The Oracle workload is in it; without Instant Client an Oracle target is one line.
    let oracle = Command::new(&binary)
        .args([
            "db",
            "check",
            "--target",
            "oracle://scott@db.example:1521/orcl",
        ])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&oracle.stderr);
    assert_eq!(oracle.status.code(), Some(1), "{said}");
    assert!(
        said.contains("Oracle's client library could not be loaded") && said.lines().count() == 1,
        "{said}"
    );
    // TLS is rustls, inside the binary: no OpenSSL needed on the server.
    let libraries = run("ldd", &[binary.to_str().unwrap()]);
    assert!(
        !libraries.contains("libssl") && !libraries.contains("libcrypto"),
        "links OpenSSL:\n{libraries}"
    );
    let line = run(binary.to_str().unwrap(), &["--version"]);
    assert!(
        line.starts_with(&format!("corescale {version} (commit ")),
        "{line}"
    );
    assert!(line.contains("x86_64-unknown-linux-gnu"), "{line}");
}

/// The bundle and its checksum.
fn assert_the_bundle_is_whole() {
    let version = env!("CARGO_PKG_VERSION");
    let bundle = format!("corescale-{version}-x86_64-linux");
    let listing = run("tar", &["-tzf", &format!("dist/{bundle}.tar.gz")]);
    for file in [
        "corescale",
        "README.md",
        "LICENSE",
        "man/corescale.1",
        "man/corescale-report.1",
        "completions/corescale.bash",
        "completions/_corescale",
        "completions/corescale.fish",
    ] {
        assert!(
            listing
                .lines()
                .any(|line| line == format!("{bundle}/{file}")),
            "{file} not in the bundle:\n{listing}"
        );
    }
    let check = Command::new("sha256sum")
        .args(["-c", &format!("{bundle}.tar.gz.sha256")])
        .current_dir(root().join("dist"))
        .output()
        .unwrap();
    assert!(check.status.success(), "the checksum does not match");
}

/// The packages' file lists and dependencies; the .deb installed here runs, removed it is
/// gone; the completions parse.
fn assert_the_packages_install() {
    let version = env!("CARGO_PKG_VERSION");
    let rpm = only("corescale-*.rpm");
    let rpm_files = run("rpm", &["-qlp", rpm.to_str().unwrap()]);
    let deb = only("corescale_*.deb");
    let deb_files = run("dpkg-deb", &["-c", deb.to_str().unwrap()]);
    for file in INSTALLED {
        assert!(
            rpm_files.lines().any(|line| line == file),
            "{file} not in the RPM:\n{rpm_files}"
        );
        // Debian policy: man pages are gzipped.
        assert!(
            deb_files
                .lines()
                .any(|line| line.ends_with(&format!(".{file}"))
                    || line.ends_with(&format!(".{file}.gz"))),
            "{file} not in the .deb:\n{deb_files}"
        );
    }
    assert!(rpm_files.contains("/usr/share/zsh/site-functions/_corescale"));
    assert!(deb_files.contains("/usr/share/zsh/vendor-completions/_corescale"));
    // Oracle's client library is recommended, not required: loaded only for oracle://.
    let rpm_recommends = run("rpm", &["-qp", "--recommends", rpm.to_str().unwrap()]);
    assert!(
        rpm_recommends.contains("oracle-instantclient-basic"),
        "{rpm_recommends}"
    );
    let rpm_requires = run("rpm", &["-qp", "--requires", rpm.to_str().unwrap()]);
    assert!(!rpm_requires.contains("oracle"), "{rpm_requires}");
    let deb_recommends = run("dpkg-deb", &["-f", deb.to_str().unwrap(), "Recommends"]);
    assert!(
        deb_recommends.contains("oracle-instantclient-basic"),
        "{deb_recommends}"
    );
    let deb_depends = run("dpkg-deb", &["-f", deb.to_str().unwrap(), "Depends"]);
    assert!(!deb_depends.contains("oracle"), "{deb_depends}");

    // Installed here, it runs; removed, it is gone.
    run("dpkg", &["-i", deb.to_str().unwrap()]);
    let installed = run("/usr/bin/corescale", &["version", "--json"]);
    let removed = Command::new("dpkg").args(["-r", "corescale"]).output();
    assert!(
        installed.contains(&format!("\"version\": \"{version}\"")),
        "{installed}"
    );
    assert!(removed.unwrap().status.success());
    assert!(!Path::new("/usr/bin/corescale").exists());

    // The completions parse, in each shell that is here (.ci/run installs all three).
    run("bash", &["-n", "target/dist/completions/corescale.bash"]);
    for (shell, check, file) in [
        ("zsh", "-n", "target/dist/completions/_corescale"),
        (
            "fish",
            "--no-execute",
            "target/dist/completions/corescale.fish",
        ),
    ] {
        if Command::new(shell).arg("--version").output().is_ok() {
            run(shell, &[check, file]);
        }
    }
}
