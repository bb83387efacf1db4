//! A cluster's nodes as `corescale host --json` (or a run's JSON) on each describes it: a
//! cluster's cores are the sums of its nodes', since the client that loaded it only knows
//! its own.

use std::io::Read;

use super::*;

/// One node's cores, and its name for messages.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeCores {
    pub label: String,
    pub physical_cores: usize,
    pub logical_cpus: usize,
}

/// A host description is a few KiB; anything far larger is not one.
const MOST_BYTES: u64 = 16 << 20;
/// More CPUs than any one node has: a number beyond it is not a core count.
const MOST_CPUS: u64 = 1 << 20;

/// The node `path` describes: `corescale host --json` output (`topology` at the top) or a
/// run's JSON (`host.topology`).
pub fn node_cores(path: &Path) -> Result<NodeCores> {
    let cannot_read = || format!("cannot read '{}'", path.display());
    let file = crate::input_file::open_regular(path, &format!("'{}'", path.display()))?;
    let mut text = String::new();
    file.take(MOST_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(cannot_read)?;
    let not_a_host = |why: &str| {
        anyhow::anyhow!(
            "'{}' {why}: give each node's `corescale host --json > FILE` (or a run's JSON from it)",
            path.display()
        )
    };
    if text.len() as u64 > MOST_BYTES {
        return Err(not_a_host("is larger than a host description"));
    }
    crate::input_file::check_json_strings(&format!("'{}'", path.display()), text.as_bytes())?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|_| not_a_host("is not JSON"))?;
    let host = if value.get("topology").is_some() {
        &value
    } else {
        value
            .get("host")
            .filter(|host| host.get("topology").is_some())
            .ok_or_else(|| not_a_host("has no host topology"))?
    };
    let count = |field: &str| -> Result<usize> {
        host["topology"][field]
            .as_u64()
            .filter(|count| (1..MOST_CPUS).contains(count))
            .map(|count| count as usize)
            .ok_or_else(|| {
                not_a_host(&format!(
                    "has no topology.{field} from 1 to {MOST_CPUS} (a whole number)"
                ))
            })
    };
    let (physical_cores, logical_cpus) = (count("physical_cores")?, count("logical_cpus")?);
    if logical_cpus < physical_cores {
        return Err(not_a_host(&format!(
            "says {logical_cpus} logical CPUs for {physical_cores} physical cores, fewer"
        )));
    }
    let label = host["label"]
        .as_str()
        .or(host["hostname"].as_str())
        .map_or_else(|| path.display().to_string(), printable);
    Ok(NodeCores {
        label,
        physical_cores,
        logical_cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node.json");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_host_description_and_a_runs_document_both_give_the_cores() {
        let host =
            crate::host::HostInfo::read(&crate::host::sysfs::FsRoot::new("/"), None).unwrap();
        let (_dir, path) = written(&serde_json::to_string(&host).unwrap());
        let node = node_cores(&path).unwrap();
        assert_eq!(
            (node.physical_cores, node.logical_cpus),
            (host.topology.physical_cores, host.topology.logical_cpus)
        );
        assert_eq!(node.label, host.label);
        let run = serde_json::json!({ "host": serde_json::to_value(&host).unwrap(), "levels": [] });
        let (_dir, path) = written(&run.to_string());
        assert_eq!(node_cores(&path).unwrap(), node);
    }

    #[test]
    fn what_is_not_a_host_is_refused_naming_the_file_and_the_fix() {
        for (text, why) in [
            ("not json", "is not JSON"),
            ("{\"levels\": []}", "has no host topology"),
            (
                "{\"topology\": {\"physical_cores\": 0, \"logical_cpus\": 2}}",
                "topology.physical_cores from 1",
            ),
            (
                "{\"topology\": {\"physical_cores\": 8, \"logical_cpus\": 4}}",
                "4 logical CPUs for 8 physical cores",
            ),
            (
                "{\"topology\": {\"physical_cores\": 1e300, \"logical_cpus\": 4}}",
                "topology.physical_cores",
            ),
        ] {
            let (_dir, path) = written(text);
            let problem = node_cores(&path).unwrap_err().to_string();
            assert!(problem.contains(why), "{problem}");
            assert!(problem.contains("corescale host --json"), "{problem}");
        }
    }
}
