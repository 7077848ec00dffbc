//! Every file the tools write goes through this module, so that writing an
//! output never destroys anything the user did not name (ARCHITECTURE.md,
//! "Outputs"):
//!
//! - a regular file, or a path that does not exist yet, is written to a
//!   temporary file beside it and renamed over it at the end, so a reader
//!   never sees half a file and an abandoned write leaves the old one;
//! - a symbolic link is followed (up to [`MAX_LINK_HOPS`]) and its final
//!   target is replaced: the link stays a link;
//! - a character or block device, FIFO or socket (`/dev/null`,
//!   `/dev/stdout`, a pipe) is opened and written in place, never renamed
//!   over;
//! - `-` is standard output;
//! - the final mode is the replaced file's (and its owner, where allowed),
//!   or `0666 & !umask` for a new file.
//!
//! Temporary files are registered while they exist so a signal handler that
//! must exit at once can remove them ([`remove_temporaries`]).
//!
//! Before a command writes anything it checks all its files at once with
//! [`check_files`]: every command the same way, so that no output ever
//! replaces an input or another output (issue 43, M04).

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, Metadata};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many symbolic links are followed before giving up (Linux's ELOOP
/// limit).
pub const MAX_LINK_HOPS: usize = 40;

/// Where an output path leads, after following symbolic links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// `-`: the process's standard output.
    Stdout,
    /// A device, FIFO or socket: written in place.
    Special(PathBuf),
    /// A regular file (existing, with its metadata) or a new path: written
    /// beside and renamed.
    Regular { path: PathBuf, existing: bool },
}

impl Destination {
    /// Resolves `path`: `-`, symbolic links, the kind of file at the end.
    pub fn of(path: &Path) -> io::Result<Destination> {
        if path.as_os_str() == "-" {
            return Ok(Destination::Stdout);
        }
        let resolved = follow_links(path)?;
        match fs::metadata(&resolved) {
            Ok(meta) if meta.is_dir() => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory, not a file",
            )),
            Ok(meta) if is_special(&meta) => Ok(Destination::Special(resolved)),
            Ok(_) => Ok(Destination::Regular {
                path: resolved,
                existing: true,
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Destination::Regular {
                path: resolved,
                existing: false,
            }),
            Err(e) => Err(e),
        }
    }

    /// The file that is finally written (for comparing two outputs).
    pub fn identity(&self) -> Option<PathBuf> {
        match self {
            Destination::Stdout => None,
            Destination::Special(_) => None,
            Destination::Regular { path, .. } => {
                let dir = fs::canonicalize(parent_dir(path)).ok()?;
                Some(dir.join(path.file_name()?))
            }
        }
    }
}

fn is_special(meta: &Metadata) -> bool {
    let t = meta.file_type();
    t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
}

/// Follows `path` through symbolic links to the path that names a non-link
/// (which may not exist: a dangling link names its would-be target).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&current)?;
                current = parent_dir(&current).join(target);
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("more than {MAX_LINK_HOPS} symbolic links to follow"),
    ))
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Checks, before any work is done, that `path` can be written: its
/// directory exists and accepts a new file (tried for real: as root,
/// permission bits say nothing), or it is a device, FIFO or `-`.
pub fn check_writable(path: &Path) -> io::Result<Destination> {
    writable(path, &mut HashSet::new())
}

/// [`check_writable`], trying each directory once (`probed`).
fn writable(path: &Path, probed: &mut HashSet<PathBuf>) -> io::Result<Destination> {
    let dest = Destination::of(path)?;
    if let Destination::Regular { path, .. } = &dest {
        let dir = parent_dir(path);
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("the directory {} does not exist", dir.display()),
            ));
        }
        if probed.insert(dir.to_path_buf()) {
            tempfile::Builder::new()
                .prefix(".sim-host-check.")
                .tempfile_in(dir)?;
        }
    }
    Ok(dest)
}

/// What makes two names one file: the path written after links (the
/// directory canonical), and for a file that exists its device and inode
/// (a hard link is another path to it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FileKey {
    Path(PathBuf),
    Inode(u64, u64),
}

fn keys_of(dest: &Destination) -> Vec<FileKey> {
    let mut keys: Vec<FileKey> = dest.identity().map(FileKey::Path).into_iter().collect();
    if let Destination::Regular {
        path,
        existing: true,
    } = dest
    {
        keys.extend(inode(path).map(|(dev, ino)| FileKey::Inode(dev, ino)));
    }
    keys
}

/// The device and inode of the regular file `path` leads to.
fn inode(path: &Path) -> Option<(u64, u64)> {
    fs::metadata(path)
        .ok()
        .filter(Metadata::is_file)
        .map(|m| (m.dev(), m.ino()))
}

/// The one check of a command's files, made before it reads or writes
/// anything (issue 43, M04: one check for every command, so that no
/// command forgets an input): each of `outputs` can be written
/// ([`check_writable`]), no two of them name one file (the same path
/// after links, or a hard link of the other), and none is one of
/// `inputs` (the same device and inode after links: the same file under
/// another name or a hard link included). Devices, FIFOs and `-` are
/// written in place and never compared. Each pair is (the option that
/// names the file, its path); the error names both options and paths,
/// e.g. `--json /x/r.json: the directory /x does not exist`.
pub fn check_files<O, P, I, Q>(outputs: &[(O, P)], inputs: &[(I, Q)]) -> Result<(), String>
where
    O: AsRef<str>,
    P: AsRef<Path>,
    I: AsRef<str>,
    Q: AsRef<Path>,
{
    let named =
        |(option, path): &(O, P)| format!("{} {}", option.as_ref(), path.as_ref().display());
    let mut probed = HashSet::new();
    let mut seen: HashMap<FileKey, usize> = HashMap::new();
    let mut existing = Vec::new();
    for (i, output) in outputs.iter().enumerate() {
        let dest = writable(output.1.as_ref(), &mut probed)
            .map_err(|e| format!("{}: {e}", named(output)))?;
        for key in keys_of(&dest) {
            if let FileKey::Inode(dev, ino) = key {
                existing.push((i, (dev, ino)));
            }
            if let Some(&first) = seen.get(&key) {
                return Err(format!(
                    "{} and {} name the same file: each output needs its own",
                    named(&outputs[first]),
                    named(output)
                ));
            }
            seen.insert(key, i);
        }
    }
    if existing.is_empty() {
        return Ok(());
    }
    let by_inode: HashMap<(u64, u64), usize> = inputs
        .iter()
        .enumerate()
        .rev()
        .filter_map(|(i, (_, path))| inode(path.as_ref()).map(|id| (id, i)))
        .collect();
    for (i, id) in existing {
        if let Some(&j) = by_inode.get(&id) {
            let (option, input) = &inputs[j];
            return Err(format!(
                "{} is the input {} {} (the same file): an output never replaces an input",
                named(&outputs[i]),
                option.as_ref(),
                input.as_ref().display()
            ));
        }
    }
    Ok(())
}

static TEMPORARIES: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// Registers a temporary file or folder for [`remove_temporaries`].
pub fn register_temporary(path: &Path) {
    register(path);
}

/// Takes back [`register_temporary`] (the caller removed it itself).
pub fn unregister_temporary(path: &Path) {
    unregister(path);
}

fn register(path: &Path) {
    if let Ok(mut set) = TEMPORARIES.lock() {
        set.get_or_insert_with(HashSet::new)
            .insert(path.to_path_buf());
    }
}

fn unregister(path: &Path) {
    if let Ok(mut set) = TEMPORARIES.lock() {
        if let Some(set) = set.as_mut() {
            set.remove(path);
        }
    }
}

/// Removes every temporary file an unfinished output holds: for a process
/// that must exit at once (a second signal) without running destructors.
pub fn remove_temporaries() {
    // try_lock: a signal may arrive while this thread holds the lock.
    if let Ok(mut set) = TEMPORARIES.try_lock() {
        for path in set.take().unwrap_or_default() {
            if path.is_dir() {
                let _ = fs::remove_dir_all(path);
            } else {
                let _ = fs::remove_file(path);
            }
        }
    }
}

/// The temporary files that exist now (for tests).
pub fn temporaries() -> Vec<PathBuf> {
    TEMPORARIES
        .lock()
        .map(|s| s.iter().flatten().cloned().collect())
        .unwrap_or_default()
}

enum Sink {
    /// Written beside `final_path`, renamed over it at commit.
    Replace {
        temp: Box<tempfile::NamedTempFile>,
        final_path: PathBuf,
        replaced: Option<Metadata>,
    },
    /// The device or FIFO itself.
    InPlace(File),
    /// An unnamed file, copied to `to` at commit (for writers that seek).
    Spool { file: File, to: SpoolTarget },
}

enum SpoolTarget {
    Stdout,
    Special(PathBuf),
}

/// An output being written; nothing is visible at its path before
/// [`Output::commit`] (for regular files), and dropping it uncommitted
/// leaves whatever was there.
pub struct Output {
    /// Always `Some` until `commit` takes it.
    sink: Option<Sink>,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Output")
    }
}

impl Output {
    /// Starts writing `path`. Devices and FIFOs are written as the bytes
    /// come; use [`Output::create_seekable`] for a writer that seeks.
    pub fn create(path: &Path) -> io::Result<Output> {
        Self::open(path, false)
    }

    /// Like [`Output::create`], but [`Output::file`] can seek: a device,
    /// FIFO or `-` is spooled to an unnamed temporary file and copied at
    /// commit.
    pub fn create_seekable(path: &Path) -> io::Result<Output> {
        Self::open(path, true)
    }

    fn open(path: &Path, seekable: bool) -> io::Result<Output> {
        let sink = match Destination::of(path)? {
            Destination::Regular { path, existing } => replace_sink(path, existing)?,
            Destination::Special(path) if seekable => Sink::Spool {
                file: tempfile::tempfile()?,
                to: SpoolTarget::Special(path),
            },
            Destination::Special(path) => Sink::InPlace(open_special(&path)?),
            Destination::Stdout => Sink::Spool {
                file: tempfile::tempfile()?,
                to: SpoolTarget::Stdout,
            },
        };
        Ok(Output { sink: Some(sink) })
    }

    /// The file being written.
    pub fn file(&mut self) -> &mut File {
        match self.sink.as_mut() {
            Some(Sink::Replace { temp, .. }) => temp.as_file_mut(),
            Some(Sink::InPlace(file)) => file,
            Some(Sink::Spool { file, .. }) => file,
            None => unreachable!("an Output is consumed by commit"),
        }
    }

    /// Makes the output visible at its path.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(sink) = self.sink.take() else {
            return Ok(());
        };
        match sink {
            Sink::Replace {
                temp,
                final_path,
                replaced,
            } => commit_replace(*temp, &final_path, replaced.as_ref()),
            Sink::InPlace(mut file) => file.flush(),
            Sink::Spool { mut file, to } => {
                file.seek(SeekFrom::Start(0))?;
                match to {
                    SpoolTarget::Stdout => {
                        let mut out = io::stdout().lock();
                        io::copy(&mut file, &mut out)?;
                        out.flush()
                    }
                    SpoolTarget::Special(path) => {
                        let mut out = open_special(&path)?;
                        io::copy(&mut file, &mut out).map(|_| ())
                    }
                }
            }
        }
    }
}

/// Set once a stop signal came: a wait for a FIFO's reader gives up.
static WAITS_CANCELLED: AtomicBool = AtomicBool::new(false);
/// When a wait for a FIFO's reader gives up (`--timeout`).
static WAIT_DEADLINE: Mutex<Option<Instant>> = Mutex::new(None);
/// How often a FIFO without a reader is tried again.
const READER_POLL: Duration = Duration::from_millis(20);

/// Makes every wait for a FIFO's reader (now or later) give up: called by
/// a stop signal's handler (issue 30, N09).
pub fn cancel_waits() {
    WAITS_CANCELLED.store(true, Ordering::SeqCst);
}

/// Waits for a FIFO's reader give up at `deadline` (`--timeout`).
pub fn set_wait_deadline(deadline: Option<Instant>) {
    *WAIT_DEADLINE.lock().unwrap_or_else(|e| e.into_inner()) = deadline;
}

/// Opens a device, FIFO or socket for writing without blocking for good:
/// a FIFO with no reader yet is tried again every [`READER_POLL`] until
/// one opens it, a stop signal came ([`cancel_waits`]) or the deadline
/// passed ([`set_wait_deadline`]); the error is then
/// [`io::ErrorKind::Interrupted`]. Once open, writes block as usual.
fn open_special(path: &Path) -> io::Result<File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    loop {
        let opened = fs::OpenOptions::new()
            .write(true)
            .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32)
            .open(path);
        match opened {
            Ok(file) => {
                let flags = rustix::fs::fcntl_getfl(&file)?;
                rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
                return Ok(file);
            }
            // ENXIO: a FIFO that no process has open for reading
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
                let deadline = *WAIT_DEADLINE.lock().unwrap_or_else(|e| e.into_inner());
                let why = if WAITS_CANCELLED.load(Ordering::SeqCst) {
                    Some("a stop signal came")
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    Some("the time-out passed")
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(io::Error::new(
                        io::ErrorKind::Interrupted,
                        format!("no process opened the FIFO for reading before {why}"),
                    ));
                }
                std::thread::sleep(READER_POLL);
            }
            Err(e) => return Err(e),
        }
    }
}

fn replace_sink(final_path: PathBuf, existing: bool) -> io::Result<Sink> {
    let name = final_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    // 0666 here: the kernel applies the umask, as for any new file.
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(parent_dir(&final_path))?;
    register(temp.path());
    let replaced = if existing {
        fs::metadata(&final_path).ok()
    } else {
        None
    };
    Ok(Sink::Replace {
        temp: Box::new(temp),
        final_path,
        replaced,
    })
}

fn commit_replace(
    temp: tempfile::NamedTempFile,
    final_path: &Path,
    replaced: Option<&Metadata>,
) -> io::Result<()> {
    let temp_path = temp.path().to_path_buf();
    if let Some(old) = replaced {
        let file = temp.as_file();
        file.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777))?;
        // Keeping the owner needs privileges; without them the file is ours.
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
    }
    temp.as_file().sync_data()?;
    let result = temp.persist(final_path).map(|_| ()).map_err(|e| e.error);
    unregister(&temp_path);
    result
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(Sink::Replace { temp, .. }) = &self.sink {
            unregister(temp.path());
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file().write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

/// Writes `bytes` to `path` by the rules above: the replacement for
/// `std::fs::write`.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    let mut out = Output::create(path)?;
    out.write_all(bytes.as_ref())?;
    out.commit()
}

#[cfg(test)]
mod tests;
