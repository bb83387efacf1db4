//! A cgroup of a test's own with a CPU quota: a container's or a Kubernetes pod's limit.

/// A cgroup of the test's own with a CPU quota (v1 `cpu` controller, else v2), removed when
/// dropped (its processes have ended by then). Its CPU weight is the highest the kernel takes,
/// so only the quota limits it. Otherwise, on a busy host, other sessions (each a scheduling
/// group of its own where the kernel groups tasks by session) hold its workers below the
/// quota: beside six `yes` hogs, each started with `setsid`, this test failed 5 of 5 times;
/// it now passes 5 of 5 beside them.
pub struct QuotaGroup {
    directory: std::path::PathBuf,
}

impl QuotaGroup {
    pub fn new(quota_us: u64, period_us: u64) -> Self {
        let name = format!("corescale-test-{}", std::process::id());
        let v1 = std::path::Path::new("/sys/fs/cgroup/cpu");
        if v1.join("cpu.cfs_quota_us").exists() {
            let directory = v1.join(name);
            std::fs::create_dir(&directory).unwrap();
            let group = Self { directory };
            std::fs::write(
                group.directory.join("cpu.cfs_period_us"),
                period_us.to_string(),
            )
            .unwrap();
            std::fs::write(
                group.directory.join("cpu.cfs_quota_us"),
                quota_us.to_string(),
            )
            .unwrap();
            std::fs::write(group.directory.join("cpu.shares"), "262144").unwrap();
            return group;
        }
        let directory = std::path::Path::new("/sys/fs/cgroup").join(name);
        std::fs::create_dir(&directory).unwrap();
        let group = Self { directory };
        std::fs::write(
            group.directory.join("cpu.max"),
            format!("{quota_us} {period_us}"),
        )
        .unwrap();
        std::fs::write(group.directory.join("cpu.weight"), "10000").unwrap();
        group
    }

    /// corescale with `args`, started inside the group.
    pub fn corescale(&self, args: &[&str]) -> std::process::Output {
        let procs = self.directory.join("cgroup.procs");
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > '{}' && exec \"$0\" \"$@\"",
                procs.display()
            ))
            .arg(assert_cmd::cargo::cargo_bin("corescale"))
            .args(args)
            .env("CORESCALE_TEST_PREFLIGHT", "100ms")
            .output()
            .unwrap()
    }
}

impl Drop for QuotaGroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.directory);
    }
}
