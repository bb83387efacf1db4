//! One module per subcommand: each wires run -> record -> analyse -> show.

pub mod about;
pub mod db;
pub mod host;
pub mod report;
pub mod run;

/// Writes to standard output; a reader that went away (`corescale report ... | head`) ends
/// the output quietly instead of a panic.
pub fn write_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(error).context("cannot write to standard output"))
        }
        _ => Ok(()),
    }
}
