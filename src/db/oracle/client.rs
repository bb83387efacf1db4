//! Oracle's client library (Instant Client's libclntsh), which ODPI-C loads at run time when
//! an Oracle target is first used: every build carries the Oracle workload, and a host
//! without the library runs everything else as before. Where it is missing, an Oracle
//! target ends with one line saying what to install, before anything else is done.

/// What provides the client library, for the error and README.
pub const HOW_TO_PROVIDE: &str = "install Oracle Instant Client Basic (Oracle Linux/RHEL: `dnf install oracle-instantclient-release-el8 && dnf install oracle-instantclient-basic`; Debian/Ubuntu: the Basic zip from oracle.com, or its RPM through `alien`, then `ldconfig`), or point LD_LIBRARY_PATH at its folder, or ORACLE_HOME at a full client";

/// The client library's version ("23.6.0.24.10"), or why it could not be loaded.
#[cfg(feature = "oracle")]
pub fn version() -> Result<String, String> {
    oracle::Version::client()
        .map(|version| version.to_string())
        .map_err(|error| {
            // "DPI-1047: Cannot locate a 64-bit Oracle Client library: "libclntsh.so: ...". See
            // https://...": the first sentence, which names what the loader did not find.
            let text = error.to_string();
            let text = text.strip_prefix("DPI Error: ").unwrap_or(&text);
            text.split(". See ").next().unwrap_or(text).to_string()
        })
}

#[cfg(not(feature = "oracle"))]
pub fn version() -> Result<String, String> {
    Err("this corescale was built without Oracle support (`--no-default-features`): build it with the default features".to_string())
}

/// An error naming what is missing and how to provide it, unless the client library loads.
pub fn require() -> anyhow::Result<String> {
    version().map_err(|why| {
        anyhow::anyhow!("Oracle's client library could not be loaded ({why}): {HOW_TO_PROVIDE}")
    })
}

/// For `--version`: the client library's version, or that it was not found.
pub fn found() -> String {
    match version() {
        Ok(version) => format!("Oracle client library {version} found"),
        Err(_) => "Oracle client library not found (needed only for oracle:// targets)".to_string(),
    }
}
