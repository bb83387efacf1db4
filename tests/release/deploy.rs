//! The deploy files validate offline: the Kubernetes Job against the API schema
//! (kubernetes-validate, as no cluster runs here) and the systemd timer and service with
//! systemd-analyze. `.ci/run` installs kubernetes-validate and runs this with `--ignored`.

use std::path::Path;
use std::process::Command;

fn passes(program: &str, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
        .unwrap_or_else(|error| panic!("running {program}: {error}"));
    assert!(
        output.status.success(),
        "{program} {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[ignore = "needs kubernetes-validate (pip) and systemd-analyze; .ci/run installs and runs it"]
fn the_kubernetes_job_and_the_systemd_timer_validate() {
    passes(
        "kubernetes-validate",
        &["--strict", "deploy/kubernetes/corescale-job.yaml"],
    );
    let job = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/corescale-job.yaml"),
    )
    .unwrap();
    // Guaranteed QoS with whole CPUs, one pod per node, the document on stdout.
    assert!(job.contains("completionMode: Indexed"));
    assert!(job.contains("requiredDuringSchedulingIgnoredDuringExecution"));
    assert!(
        job.matches("cpu: \"4\"").count() == 2,
        "requests = limits, whole CPUs"
    );
    assert!(job.contains("- \"-\""), "-o - writes the result to the log");
    passes(
        "systemd-analyze",
        &[
            "verify",
            "deploy/systemd/corescale-sweep.service",
            "deploy/systemd/corescale-sweep.timer",
        ],
    );
}
