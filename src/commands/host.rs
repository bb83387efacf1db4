//! `corescale host`: what this machine is.

use anyhow::Result;

use crate::cli::HostArgs;
use crate::host::HostInfo;
use crate::host::sysfs::FsRoot;
use crate::report::host_text;

pub fn execute(args: &HostArgs) -> Result<()> {
    let host = HostInfo::read(&FsRoot::new(&args.root), None)?;
    if args.json {
        super::write_out(&format!("{}\n", serde_json::to_string_pretty(&host)?))?;
    } else {
        super::write_out(&host_text::render(&host))?;
    }
    Ok(())
}
