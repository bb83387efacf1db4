//! `corescale host` on fixture trees and on this machine.

use crate::common;

use common::quota_group::QuotaGroup;
use common::{corescale, four_core_guest, rac52_like};
use serde_json::Value;

fn host_json(args: &[&str]) -> Value {
    let output = corescale()
        .args(["host", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn a_two_socket_smt_server_is_described_exactly() {
    let dir = tempfile::tempdir().unwrap();
    rac52_like().write(dir.path());
    let host = host_json(&["--root", dir.path().to_str().unwrap()]);
    let topology = &host["topology"];
    assert_eq!(topology["sockets"], 2);
    assert_eq!(topology["physical_cores"], 20);
    assert_eq!(topology["logical_cpus"], 40);
    assert_eq!(topology["threads_per_core"], 2);
    assert_eq!(topology["nominal_mhz"], 2200.0);
    assert_eq!(topology["hypervisor"], Value::Null);
    let caches = topology["caches"].as_array().unwrap();
    let cache = |name: &str| {
        caches
            .iter()
            .find(|cache| cache["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(cache("L1d")["size_bytes"], 32 * 1024);
    assert_eq!(cache("L1i")["size_bytes"], 32 * 1024);
    assert_eq!(cache("L2")["size_bytes"], 256 * 1024);
    assert_eq!(cache("L2")["instances"], 20);
    assert_eq!(cache("L3")["size_bytes"], 25600 * 1024);
    assert_eq!(cache("L3")["instances"], 2);
    let nodes = topology["numa_nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    let node0: Vec<u64> = nodes[0]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cpu| cpu.as_u64().unwrap())
        .collect();
    assert_eq!(node0, (0..10).chain(20..30).collect::<Vec<u64>>());
    assert_eq!(host["kernel"], "3.10.0-1160.el7.x86_64");
    assert_eq!(host["memory"]["total_bytes"], 512u64 * 1024 * 1024 * 1024);
}

#[test]
fn a_four_core_guest_without_smt_names_its_hypervisor() {
    let dir = tempfile::tempdir().unwrap();
    four_core_guest().write(dir.path());
    let host = host_json(&["--root", dir.path().to_str().unwrap()]);
    let topology = &host["topology"];
    assert_eq!(topology["sockets"], 1);
    assert_eq!(topology["physical_cores"], 4);
    assert_eq!(topology["logical_cpus"], 4);
    assert_eq!(topology["threads_per_core"], 1);
    assert_eq!(topology["hypervisor"], "QEMU");
    assert_eq!(topology["model_name"], "AMD EPYC 7B13");
    assert_eq!(topology["nominal_mhz"], Value::Null);
}

#[test]
fn the_text_form_lists_cores_caches_and_nodes() {
    let dir = tempfile::tempdir().unwrap();
    rac52_like().write(dir.path());
    let output = corescale()
        .args(["host", "--root", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("physical cores     20"), "{text}");
    assert!(text.contains("logical CPUs       40"), "{text}");
    assert!(text.contains("L3                 25 MiB x 2"), "{text}");
    assert!(text.contains("NUMA node 1        10-19,30-39"), "{text}");
    assert!(text.contains("nominal frequency  2200 MHz"), "{text}");
}

#[test]
fn this_machine_matches_what_the_kernel_reports() {
    let host = host_json(&[]);
    let topology = &host["topology"];
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus = online
        .trim()
        .split(',')
        .map(|part| match part.split_once('-') {
            Some((a, b)) => b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap() + 1,
            None => 1,
        })
        .sum::<u64>();
    assert_eq!(topology["logical_cpus"], cpus);
    let physical = topology["physical_cores"].as_u64().unwrap();
    assert!(physical >= 1 && physical <= cpus);
    assert_eq!(
        topology["threads_per_core"].as_u64().unwrap(),
        cpus.div_ceil(physical)
    );
    assert!(host["memory"]["total_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn a_root_without_sysfs_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    corescale()
        .args(["host", "--root", dir.path().to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no CPUs found under"));
}

/// Where neither the model name nor cpufreq gives the nominal frequency (VMs), /proc/cpuinfo's
/// "cpu MHz" does: a guest's tree whose cpuinfo has it (any host can check this).
#[test]
fn the_nominal_frequency_falls_back_to_cpuinfo() {
    let dir = tempfile::tempdir().unwrap();
    four_core_guest().write(dir.path());
    let cpuinfo = dir.path().join("proc/cpuinfo");
    let with_mhz = std::fs::read_to_string(&cpuinfo)
        .unwrap()
        .replace("model name", "cpu MHz\t\t: 2450.000\nmodel name");
    std::fs::write(&cpuinfo, with_mhz).unwrap();
    let host = host_json(&["--root", dir.path().to_str().unwrap()]);
    assert_eq!(host["topology"]["nominal_mhz"], 2450.0);
}

/// Inside a cgroup with a CPU quota of half a CPU (as a container or a Kubernetes pod under
/// a CPU limit is), the host records the quota and the effective CPU count, `--sweep auto`
/// plans around 1 CPU and says so, a throttled level names the quota as its cause (never
/// other processes), and the report's findings name the quota as the limit.
#[test]
#[cfg_attr(
    not(corescale_test_cgroup),
    ignore = "needs a writable cgroup cpu controller (v1 `cpu`, or v2 with cpu enabled) to make a cgroup with a CPU quota"
)]
fn a_run_under_a_cpu_quota_knows_it_is_limited() {
    let group = QuotaGroup::new(50_000, 100_000);
    let host = group.corescale(&["host", "--json"]);
    assert!(host.status.success(), "{:?}", host);
    let host: Value = serde_json::from_slice(&host.stdout).unwrap();
    assert_eq!(host["cpu_limit"]["quota_cpus"], 0.5, "{host}");
    assert_eq!(host["cpu_limit"]["effective_cpus"], 1, "{host}");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("quota.json");
    let run = group.corescale(&[
        "run",
        "--sweep",
        "auto",
        "--job-size",
        "100M",
        "--repeat",
        "3",
        "-q",
        "-o",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("planned around 1 CPU (the cgroup's CPU quota of 0.5 CPU)"),
        "{stderr}"
    );
    let document = common::read_json(&json);
    let levels = document["levels"].as_array().unwrap();
    let workers: Vec<u64> = levels
        .iter()
        .map(|level| level["workers"].as_u64().unwrap())
        .collect();
    assert_eq!(workers, [1, 2]);
    for level in levels {
        let interference = &level["interference"];
        let reasons: Vec<&str> = interference["reasons"]
            .as_array()
            .map(|reasons| reasons.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert!(
            reasons
                .iter()
                .any(|reason| reason.starts_with("the cgroup's CPU quota of 0.5 CPU throttled")),
            "{interference}"
        );
        assert!(
            reasons.iter().all(|reason| !reason.contains("ran on")),
            "{interference}"
        );
        assert!(interference["throttled_pct"].as_f64().unwrap() > 0.0);
    }
    let report = corescale()
        .args(["report", "--include-disturbed"])
        .arg(&json)
        .assert()
        .success();
    let printed = String::from_utf8_lossy(&report.get_output().stdout).into_owned();
    assert!(
        printed.contains("ran under the cgroup's CPU quota of 0.5 CPU"),
        "{printed}"
    );
}
