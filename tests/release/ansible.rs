//! The Ansible playbook over real ssh: three sshd instances on 127.0.0.1 (own ports, a key
//! the test generates), the playbook copying corescale to each, running a short sweep and
//! fetching the results, then `corescale report results/` showing them as a fleet of three.
//!
//! Needs ansible-core, ansible-lint (pip) and openssh-server, and root (sshd, root login on
//! 127.0.0.1 only): `.ci/run` installs them and runs this with `--ignored`.

use crate::common;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::{corescale, read_json, run_tool as run};

/// The tests share the hosts' /var/tmp, where each checks that nothing is left behind: one
/// playbook at a time.
static ONE_PLAYBOOK_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_PLAYBOOK_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// An sshd on 127.0.0.1:port that lets the test's key in as root; stopped when dropped.
struct Sshd(Child);

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_sshd(dir: &Path, port: u16) -> Sshd {
    let config = dir.join(format!("sshd_{port}.conf"));
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
             AuthorizedKeysFile {dir}/authorized_keys\nPidFile {dir}/sshd_{port}.pid\n\
             PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
             Subsystem sftp internal-sftp\n",
            dir = dir.display()
        ),
    )
    .unwrap();
    std::fs::create_dir_all("/run/sshd").unwrap();
    let child = Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f"])
        .arg(&config)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting sshd");
    let sshd = Sshd(child);
    let began = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "sshd on {port} did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    sshd
}

/// The role's working directories on the hosts (all this machine): in its default
/// `corescale_remote_dir`, /var/tmp.
fn working_directories() -> Vec<PathBuf> {
    std::fs::read_dir("/var/tmp")
        .unwrap()
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("corescale."))
        })
        .collect()
}

/// Three hosts over ssh (sshd instances on 127.0.0.1, the test's key), their inventory and
/// a stripped corescale to copy to them.
struct Hosts {
    _servers: Vec<Sshd>,
    inventory: PathBuf,
    binary: PathBuf,
}

fn three_hosts(path: &Path) -> Hosts {
    let key = path.join("key");
    run(
        "ssh-keygen",
        &["-q", "-t", "ed25519", "-N", "", "-f", key.to_str().unwrap()],
        &[],
    );
    let host_key = path.join("host_key");
    run(
        "ssh-keygen",
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            host_key.to_str().unwrap(),
        ],
        &[],
    );
    std::fs::copy(path.join("key.pub"), path.join("authorized_keys")).unwrap();
    let ports: Vec<u16> = (0..3).map(|_| common::free_port()).collect();
    let servers: Vec<Sshd> = ports.iter().map(|&port| start_sshd(path, port)).collect();

    let mut inventory = String::from("[corescale]\n");
    for (index, port) in ports.iter().enumerate() {
        inventory.push_str(&format!(
            "host{} ansible_host=127.0.0.1 ansible_port={port}\n",
            index + 1
        ));
    }
    inventory.push_str(&format!(
        "[corescale:vars]\nansible_user=root\nansible_ssh_private_key_file={}\n\
         ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n\
         ansible_python_interpreter=/usr/bin/python3\n",
        key.display()
    ));
    let inventory_file = path.join("inventory");
    std::fs::write(&inventory_file, inventory).unwrap();
    // Stripped, as the release is: the test build's symbol tables would add to what the
    // playbook copies to each host.
    let binary = path.join("corescale");
    run(
        "strip",
        &[
            "-o",
            binary.to_str().unwrap(),
            assert_cmd::cargo::cargo_bin("corescale").to_str().unwrap(),
        ],
        &[],
    );
    Hosts {
        _servers: servers,
        inventory: inventory_file,
        binary,
    }
}

#[test]
#[ignore = "needs ansible-core, ansible-lint, openssh-server and root; .ci/run installs them and runs this"]
fn the_playbook_measures_three_hosts_over_ssh_and_report_shows_the_fleet() {
    let _alone = one_at_a_time();
    run("ansible-lint", &["deploy/ansible"], &[]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let hosts = three_hosts(path);
    let (inventory_file, binary) = (&hosts.inventory, &hosts.binary);
    let results = path.join("results");
    let before = working_directories();
    let extra = |name: &str, value: &str| format!("{name}={value}");
    run(
        "ansible-playbook",
        &[
            "-i",
            inventory_file.to_str().unwrap(),
            "deploy/ansible/corescale.yml",
            "-e",
            &extra("corescale_binary", binary.to_str().unwrap()),
            "-e",
            "corescale_sweep=1",
            "-e",
            "corescale_job_size=20M",
            "-e",
            "corescale_require_idle=false",
            "-e",
            "corescale_poll=1",
            "-e",
            "corescale_campaign=ci",
            "-e",
            &extra("corescale_results_dir", results.to_str().unwrap()),
        ],
        &[
            ("ANSIBLE_NOCOLOR", "1"),
            ("ANSIBLE_HOST_KEY_CHECKING", "False"),
        ],
    );

    // One JSON and one CSV per host, under results/<inventory_hostname>/.
    for host in ["host1", "host2", "host3"] {
        let files: Vec<String> = std::fs::read_dir(results.join(host))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files.len(), 2, "{host}: {files:?}");
        assert!(
            files.iter().any(|name| name.ends_with("-cpu.json")),
            "{files:?}"
        );
        assert!(
            files.iter().any(|name| name.ends_with("-cpu.csv")),
            "{files:?}"
        );
    }
    // Nothing left behind on the hosts.
    assert_eq!(working_directories(), before);
    assert_a_failing_run_fails_the_campaign(&hosts, &path.join("failed"));
    assert_eq!(working_directories(), before);
    assert_report_shows_the_fleet(&results, &path.join("analysis.json"));
}

/// A run that fails (here a flag the cpu workload refuses) fails the campaign once every
/// host had its turn, naming the hosts.
fn assert_a_failing_run_fails_the_campaign(hosts: &Hosts, results: &Path) {
    let extra = |name: &str, value: &str| format!("{name}={value}");
    let failed = Command::new("ansible-playbook")
        .args([
            "-i",
            hosts.inventory.to_str().unwrap(),
            "deploy/ansible/corescale.yml",
        ])
        .args([
            "-e",
            &extra("corescale_binary", hosts.binary.to_str().unwrap()),
        ])
        .args([
            "-e",
            "corescale_sweep=1",
            "-e",
            "corescale_require_idle=false",
            // The run ends at once: the default 10 s between polls would be all its time.
            "-e",
            "corescale_poll=1",
        ])
        .args(["-e", "corescale_extra_args=--hotspot 50%"])
        .args([
            "-e",
            &extra("corescale_results_dir", results.to_str().unwrap()),
        ])
        .env("ANSIBLE_NOCOLOR", "1")
        .current_dir(root())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&failed.stdout);
    assert!(!failed.status.success(), "{said}");
    for host in ["host1", "host2", "host3"] {
        assert!(
            said.contains(&format!("corescale failed on {host}")),
            "{said}"
        );
    }
}

/// `report` on the fetched results: a fleet of the three hosts, each series tagged with
/// the campaign and its inventory name.
fn assert_report_shows_the_fleet(results: &Path, analysis: &Path) {
    corescale()
        .arg("report")
        .arg(results)
        .args(["-q", "--include-disturbed", "--json"])
        .arg(analysis)
        .assert()
        .success();
    let analysis = read_json(analysis);
    let hosts: Vec<&str> = analysis["fleet"]["hosts"]
        .as_array()
        .expect("a fleet")
        .iter()
        .map(|host| host["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["host1", "host2", "host3"]);
    for series in analysis["series"].as_array().unwrap() {
        let tags = &series["series"]["provenance"]["tags"];
        assert_eq!(tags["campaign"], "ci");
        assert_eq!(tags["inventory"], series["series"]["name"]);
    }
}

/// Campaign mode: the three hosts are client hosts of one PostgreSQL database (a database of
/// the test's own), each one part, started together at the time the play agrees; `report`
/// merges the fetched parts into one series, exact against the parts' own documents.
#[test]
#[ignore = "needs ansible-core, openssh-server, root and CORESCALE_TEST_PG; .ci/run installs them and runs this"]
fn a_campaign_of_three_client_hosts_is_one_merged_series() {
    let _alone = one_at_a_time();
    let base = common::required("CORESCALE_TEST_PG");
    let _held = common::hold_server("CORESCALE_TEST_PG");
    let scratch = common::scratch::PgScratch::new(&base, "ansible_campaign");
    common::campaign::set_up_tables(&scratch.url, 6, 300);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let hosts = three_hosts(path);
    let results = path.join("results");
    let before = working_directories();
    let extra = |name: &str, value: &str| format!("{name}={value}");
    run(
        "ansible-playbook",
        &[
            "-i",
            hosts.inventory.to_str().unwrap(),
            "deploy/ansible/corescale.yml",
            "-e",
            &extra("corescale_binary", hosts.binary.to_str().unwrap()),
            "-e",
            "corescale_campaign_mode=true",
            "-e",
            "corescale_campaign=three-clients",
            "-e",
            "corescale_workload=db",
            "-e",
            "corescale_sweep=3,6",
            "-e",
            "corescale_duration=1s",
            "-e",
            "corescale_start_lead=20",
            "-e",
            "corescale_require_idle=false",
            "-e",
            "corescale_poll=1",
            // As JSON: `-e name=value` would end the value at its first space.
            "-e",
            &serde_json::json!({
                "corescale_extra_args":
                    format!("--target {} --repeat 1 --level-gap 4s", scratch.url)
            })
            .to_string(),
            "-e",
            &extra("corescale_results_dir", results.to_str().unwrap()),
        ],
        &[
            ("ANSIBLE_NOCOLOR", "1"),
            ("ANSIBLE_HOST_KEY_CHECKING", "False"),
        ],
    );
    assert_eq!(working_directories(), before);
    let documents: Vec<serde_json::Value> = ["host1", "host2", "host3"]
        .iter()
        .map(|host| {
            let json = std::fs::read_dir(results.join(host))
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .find(|file| {
                    file.extension()
                        .is_some_and(|extension| extension == "json")
                })
                .unwrap_or_else(|| panic!("no result from {host}"));
            read_json(&json)
        })
        .collect();
    for (index, document) in documents.iter().enumerate() {
        assert_eq!(document["campaign"]["part"], index + 1);
        assert_eq!(document["campaign"]["parts"], 3);
        assert_eq!(document["complete"], true);
    }
    let analysis = common::campaign::merged_analysis(&[results], path);
    assert_eq!(
        common::campaign::check_merged(&documents, &analysis, "three-clients"),
        [3, 6]
    );
    corescale()
        .args(["db", "teardown", "--target", &scratch.url])
        .assert()
        .success();
}
