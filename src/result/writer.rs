//! Writes result documents to the files named with `-o`, each rewritten atomically after every
//! level (temporary file in the same directory, then rename) so an interrupted run keeps every
//! completed level.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::RunDocument;
use super::csv_format;
use crate::error::UsageError;
use crate::interrupt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Csv,
    /// HdrHistogram's interval log of each level's response times.
    Hlog,
    /// The same of each level's statement classes (`*.classes.hlog`).
    ClassesHlog,
}

/// A result file and its format, chosen by extension; `-` is the JSON document on standard
/// output, written once at the end (for pipelines and `kubectl logs`).
#[derive(Debug, Clone)]
pub(crate) struct Output {
    pub path: PathBuf,
    pub format: Format,
}

impl Output {
    /// Whether this output is standard output (`-o -`).
    pub(crate) fn is_stdout(&self) -> bool {
        self.path.as_os_str() == "-"
    }

    /// Checks the extension and that the directory exists, before any measuring starts.
    pub(crate) fn parse(path: &Path) -> Result<Self, UsageError> {
        if path.as_os_str() == "-" {
            return Ok(Self {
                path: path.to_path_buf(),
                format: Format::Json,
            });
        }
        let format = match path.extension().and_then(|ext| ext.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("json") => Format::Json,
            Some(ext) if ext.eq_ignore_ascii_case("csv") => Format::Csv,
            Some(ext) if ext.eq_ignore_ascii_case("hlog") => {
                let stem = path
                    .file_stem()
                    .and_then(|stem| stem.to_str())
                    .unwrap_or("");
                if stem.to_ascii_lowercase().ends_with(".classes") {
                    Format::ClassesHlog
                } else {
                    Format::Hlog
                }
            }
            _ => {
                return Err(UsageError::new(format!(
                    "cannot tell the format of output '{}': name it *.json, *.csv or *.hlog",
                    path.display()
                )));
            }
        };
        let directory = parent_directory(path);
        if !directory.is_dir() {
            return Err(UsageError::new(format!(
                "output directory '{}' does not exist: create it or choose another --output",
                directory.display()
            )));
        }
        Ok(Self {
            path: path.to_path_buf(),
            format,
        })
    }

    pub(crate) fn stage(&self, document: &RunDocument) -> Result<Staged> {
        let document = masked(document);
        let document = document.as_ref();
        let bytes = match self.format {
            Format::Json => {
                let mut text = serde_json::to_vec_pretty(document)?;
                text.push(b'\n');
                text
            }
            Format::Csv => csv_format::to_csv(document)?,
            Format::Hlog => super::hlog_format::to_hlog(document)?,
            Format::ClassesHlog => super::hlog_format::to_classes_hlog(document)?,
        };
        stage(&self.path, &bytes, true).with_context(|| {
            format!(
                "cannot write results to '{}' (is the disk full or read-only? free space or choose another --output)",
                self.path.display()
            )
        })
    }
}

fn parent_directory(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// The file that finally receives the bytes: a symlink's target (followed hop by hop), so
/// a link stays a link and its target is what gets replaced. Only links this user owns are
/// followed, as the kernel's protected_symlinks does in shared directories: a link someone
/// else planted in /tmp must not make corescale replace the file it points at.
fn final_path(path: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let own_uid = std::fs::metadata("/proc/self").map(|meta| meta.uid()).ok();
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        check_folders(parent_directory(&current))?;
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                if Some(metadata.uid()) != own_uid {
                    anyhow::bail!(
                        "'{}' is a symbolic link owned by another user: corescale does not replace what it points at (remove it or choose another name)",
                        current.display()
                    );
                }
                let Ok(target) = std::fs::read_link(&current) else {
                    break;
                };
                current = parent_directory(&current).join(target);
            }
            _ => break,
        }
    }
    Ok(current)
}

/// Refuses an output folder (`report -o DIR/`, the folder of any output file) that is, or
/// lies under, a symbolic link owned by another user, as [`final_path`] refuses such a link
/// to a file: a link planted in a shared directory must not send corescale's files where
/// its owner chose. Links root owns (`/var/run`) are the system's, and followed.
pub(crate) fn check_folders(folder: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let own_uid = std::fs::metadata("/proc/self").map(|meta| meta.uid()).ok();
    // Without a trailing slash, which would make the link's target looked at, not the link.
    let folder: PathBuf = folder.components().collect();
    for folder in folder.ancestors() {
        if folder.as_os_str().is_empty() {
            continue;
        }
        if let Ok(metadata) = std::fs::symlink_metadata(folder)
            && metadata.file_type().is_symlink()
            && Some(metadata.uid()) != own_uid
            && metadata.uid() != 0
        {
            anyhow::bail!(
                "the output folder '{}' is a symbolic link owned by another user: corescale does not write through it (remove it or choose another folder)",
                folder.display()
            );
        }
    }
    Ok(())
}

/// The permissions a new file gets under this process's umask (rw for whom the umask allows).
fn mode_under_umask() -> u32 {
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Umask:"))
                .and_then(|value| u32::from_str_radix(value.trim(), 8).ok())
        })
        .unwrap_or(0o022);
    0o666 & !umask
}

/// The document as it may be stored: its tags and command line with every password this
/// process knows hidden, as everywhere else. A password read from `.pgpass` or typed at the
/// prompt is known only once read, after the command line and tags were recorded.
fn masked(document: &RunDocument) -> std::borrow::Cow<'_, RunDocument> {
    let hide = |text: &String| crate::redact::redact(text);
    let changed = document.tags.values().any(|value| hide(value) != *value)
        || document.command_line.iter().any(|word| hide(word) != *word);
    if !changed {
        return std::borrow::Cow::Borrowed(document);
    }
    let mut masked = document.clone();
    for value in masked.tags.values_mut() {
        *value = hide(value);
    }
    for word in &mut masked.command_line {
        *word = hide(word);
    }
    std::borrow::Cow::Owned(masked)
}

/// A written but not yet visible result: renamed into place by [`Staged::publish`].
pub(crate) struct Staged {
    temporary: Option<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl Staged {
    pub(crate) fn publish(mut self) -> Result<()> {
        if let Some(temporary) = self.temporary.take() {
            let staged = temporary.path().to_path_buf();
            interrupt::finish_registered(&staged, || temporary.persist(&self.path))?;
        }
        Ok(())
    }
}

/// A staged file never published is removed (by the temporary file) and forgotten.
impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(temporary) = self.temporary.take() {
            let staged = temporary.path().to_path_buf();
            interrupt::finish_registered(&staged, || drop(temporary));
        }
    }
}

/// Writes `bytes` to a temporary file beside `path`'s final target, synced, with the mode the
/// umask gives new files; nothing is visible until [`Staged::publish`]. A path that is a
/// device, FIFO or other non-regular file is written through at once instead (`--json
/// /dev/stdout` must not replace the device with a file).
/// `durable` syncs the bytes to disk before the rename (results of a long run); reports,
/// which can be drawn again from the results, skip it.
pub(crate) fn stage(path: &Path, bytes: &[u8], durable: bool) -> Result<Staged> {
    stage_with(path, durable, &mut |file| Ok(file.write_all(bytes)?))
}

/// [`stage`] with the bytes written by `write` as they are made (through a buffer), not
/// gathered first: a large report is never held whole.
pub(crate) fn stage_with(
    path: &Path,
    durable: bool,
    write: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
) -> Result<Staged> {
    let mut buffered = |file: &mut dyn Write| -> Result<()> {
        let mut buffer = std::io::BufWriter::with_capacity(1 << 16, file);
        write(&mut buffer)?;
        Ok(buffer.flush()?)
    };
    // Devices and pipes are written through the path as given (/dev/stdout may lead to a
    // pipe that has no name to resolve).
    if let Ok(metadata) = std::fs::metadata(path)
        && !metadata.is_file()
    {
        if metadata.is_dir() {
            anyhow::bail!("'{}' is a directory", path.display());
        }
        let target = path.to_path_buf();
        let mut file = std::fs::OpenOptions::new().write(true).open(&target)?;
        buffered(&mut file)?;
        return Ok(Staged {
            temporary: None,
            path: target,
        });
    }
    let target = final_path(path)?;
    // Registered as it is created: a signal that ends the process removes it.
    let mut temporary = interrupt::create_registered(
        || {
            tempfile::Builder::new()
                .prefix(".corescale-")
                .tempfile_in(parent_directory(&target))
        },
        |temporary| temporary.path(),
    )?;
    buffered(&mut temporary)?;
    // Temporary files are private (0600); results are ordinary files, as the umask says.
    temporary
        .as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode_under_umask()))?;
    if durable {
        temporary.as_file().sync_all()?;
    }
    Ok(Staged {
        temporary: Some(temporary),
        path: target,
    })
}

/// Writes a report file through a temporary beside `path`, renamed over it: a reader never
/// sees half a file; SIGINT, SIGTERM or SIGHUP remove the temporary (only SIGKILL can leave a
/// `.corescale-*` file behind), never a torn one.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    stage(path, bytes, false)?.publish()
}

/// [`write_atomically`] with the bytes written by `write` as they are made.
pub(crate) fn write_atomically_with(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    stage_with(path, false, write)?.publish()
}

/// Writes the document to every output: all files are staged first and renamed one after
/// the other only when every one is complete, so a kill leaves them at the same level.
pub(crate) fn write_all(outputs: &[Output], document: &RunDocument) -> Result<()> {
    let staged = outputs
        .iter()
        .filter(|output| !output.is_stdout())
        .map(|output| output.stage(document))
        .collect::<Result<Vec<_>>>()?;
    staged.into_iter().try_for_each(Staged::publish)
}

/// Writes the final document to standard output when `-o -` asked for it: once, at the end,
/// as a pipe cannot be rewritten level by level.
pub(crate) fn write_stdout(outputs: &[Output], document: &RunDocument) -> Result<()> {
    if !outputs.iter().any(Output::is_stdout) {
        return Ok(());
    }
    let mut text = serde_json::to_string_pretty(document)?;
    text.push('\n');
    write_out(&text)
}

/// Exclusive use of a run's output files: an advisory lock (flock) on a hidden lock file
/// beside each, held until the run ends, so a second run cannot overwrite the first's levels.
pub(crate) struct OutputLocks {
    held: Vec<(PathBuf, nix::fcntl::Flock<std::fs::File>)>,
}

impl OutputLocks {
    pub(crate) fn acquire(outputs: &[Output]) -> Result<Self> {
        // Built as it goes, so a refusal half-way removes the lock files taken so far.
        let mut locks = Self { held: Vec::new() };
        let held = &mut locks.held;
        for output in outputs.iter().filter(|output| !output.is_stdout()) {
            let target = final_path(&output.path)?;
            let name = target
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let lock_path = parent_directory(&target).join(format!(".{name}.corescale-lock"));
            if held.iter().any(|(path, _)| *path == lock_path) {
                continue;
            }
            let lock = match lock_file(&lock_path) {
                Ok(Some(lock)) => lock,
                Ok(None) => anyhow::bail!(
                    "'{}' is being written by another corescale run: wait for it to end or choose another --output",
                    output.path.display()
                ),
                Err(error) => {
                    return Err(error).with_context(|| {
                        format!(
                            "cannot create the lock file '{}' beside the output",
                            lock_path.display()
                        )
                    });
                }
            };
            held.push((lock_path, lock));
        }
        Ok(locks)
    }
}

impl Drop for OutputLocks {
    fn drop(&mut self) {
        // Unlinked while still locked: a run that opened the old file fails its own check.
        for (path, _) in &self.held {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Locks `path` without waiting (None: another process holds it); retries when the file
/// was replaced between open and lock.
fn lock_file(path: &Path) -> std::io::Result<Option<nix::fcntl::Flock<std::fs::File>>> {
    use std::os::unix::fs::MetadataExt;
    loop {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        let lock = match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        {
            Ok(lock) => lock,
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => return Ok(None),
            Err((_, errno)) => return Err(std::io::Error::from(errno)),
        };
        let same = match (lock.metadata(), std::fs::metadata(path)) {
            (Ok(held), Ok(now)) => held.ino() == now.ino() && held.dev() == now.dev(),
            _ => false,
        };
        if same {
            return Ok(Some(lock));
        }
    }
}

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
