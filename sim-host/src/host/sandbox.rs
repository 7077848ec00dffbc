//! The guest's host files: only beneath `--fs-root`, and never by checking
//! a path and then opening it (a check-then-use race). Every open, remove
//! and rename goes through a `cap_std::fs::Dir` for the root, which on
//! Linux resolves with `openat2(RESOLVE_BENEATH)`: absolute paths, `..`,
//! symbolic links (dangling or not) and magic links that lead out of the
//! root all fail, whatever happens to the tree meanwhile.

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use std::fs::File;
use std::io;
use std::path::Path;

/// Error numbers the guest sees (newlib's values, as semihosting's
/// SYS_ERRNO reports them).
pub mod errno {
    pub const ENOENT: u32 = 2;
    pub const EIO: u32 = 5;
    pub const EBADF: u32 = 9;
    pub const EACCES: u32 = 13;
    pub const EINVAL: u32 = 22;
    pub const EMFILE: u32 = 24;
    pub const ENOSYS: u32 = 88;
}

/// The host folder a guest may use, if any.
pub struct Sandbox {
    root: Option<Dir>,
}

impl Sandbox {
    /// Opens the root now: a missing or unreadable `--fs-root` is an error
    /// at start, not a surprise when the guest first opens a file.
    pub fn new(root: Option<&Path>) -> io::Result<Sandbox> {
        let root = root
            .map(|r| Dir::open_ambient_dir(r, cap_std::ambient_authority()))
            .transpose()?;
        Ok(Sandbox { root })
    }

    /// A sandbox that refuses every file.
    pub fn none() -> Sandbox {
        Sandbox { root: None }
    }

    /// Opens a file with a semihosting SYS_OPEN mode (0-3 read, 4-7 write
    /// and truncate, 8-11 append; `+` modes also read).
    ///
    /// Only regular files: the open itself never waits (`O_NONBLOCK`), and
    /// a FIFO, device or socket is then refused with EACCES (issue 30,
    /// N10: a FIFO in `--fs-root` blocked the host for good, deaf to
    /// `--timeout` and SIGTERM).
    pub fn open(&self, name: &[u8], mode: u32) -> Result<File, u32> {
        let (root, name) = self.resolve(name)?;
        let mut options = OpenOptions::new();
        let plus = mode % 4 >= 2;
        match mode / 4 {
            0 => options.read(true).write(plus),
            1 => options.write(true).create(true).truncate(true).read(plus),
            _ => options.append(true).create(true).read(plus),
        };
        options.custom_flags(
            (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32,
        );
        let file = root
            .open_with(name, &options)
            .map(|f| f.into_std())
            .map_err(|e| to_errno(&e))?;
        if !file.metadata().map_err(|e| to_errno(&e))?.is_file() {
            return Err(errno::EACCES);
        }
        // reads and writes of a regular file block as they always did
        let flags = rustix::fs::fcntl_getfl(&file).map_err(|e| e.raw_os_error() as u32)?;
        rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)
            .map_err(|e| e.raw_os_error() as u32)?;
        Ok(file)
    }

    pub fn remove(&self, name: &[u8]) -> Result<(), u32> {
        let (root, name) = self.resolve(name)?;
        root.remove_file(name).map_err(|e| to_errno(&e))
    }

    pub fn rename(&self, from: &[u8], to: &[u8]) -> Result<(), u32> {
        let (root, from) = self.resolve(from)?;
        let (_, to) = self.resolve(to)?;
        root.rename(from, root, to).map_err(|e| to_errno(&e))
    }

    /// The root and the guest's name as a relative path; refusals that
    /// need no file system (no root, not UTF-8, absolute) come first.
    fn resolve<'a>(&self, name: &'a [u8]) -> Result<(&Dir, &'a Path), u32> {
        let root = self.root.as_ref().ok_or(errno::EACCES)?;
        let name = std::str::from_utf8(name).map_err(|_| errno::EINVAL)?;
        if name.is_empty() {
            return Err(errno::ENOENT);
        }
        let path = Path::new(name);
        if path.is_absolute() {
            return Err(errno::EACCES);
        }
        Ok((root, path))
    }
}

/// The guest's view of a host error: its errno where the host has one,
/// EACCES for an escape cap-std refused.
fn to_errno(e: &io::Error) -> u32 {
    match e.raw_os_error() {
        Some(code) if code > 0 => code as u32,
        _ if e.kind() == io::ErrorKind::NotFound => errno::ENOENT,
        _ => errno::EACCES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, Sandbox) {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(Some(root.path())).unwrap();
        (root, outside, sandbox)
    }

    /// issue 30, N10: opening a FIFO (no writer, no reader) blocked the
    /// host for good; it is refused at once, for reading and writing, as
    /// is a device.
    #[test]
    fn a_fifo_or_device_is_refused_without_waiting() {
        let (root, _outside, sb) = setup();
        let fifo = root.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        for mode in [0, 2, 4, 8] {
            assert!(sb.open(b"fifo", mode).is_err(), "mode {mode}");
        }
        // a private /dev/null (1, 3), made only inside the scratch folder
        let null = root.path().join("null");
        let made = rustix::fs::mknodat(
            rustix::fs::CWD,
            &null,
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o600),
            rustix::fs::makedev(1, 3),
        );
        if made.is_ok() {
            assert_eq!(sb.open(b"null", 0).unwrap_err(), errno::EACCES);
        }
        // a regular file still opens
        std::fs::write(root.path().join("plain"), "x").unwrap();
        assert!(sb.open(b"plain", 0).is_ok());
    }

    #[test]
    fn files_inside_open_read_and_write() {
        let (root, _outside, sb) = setup();
        let mut f = sb.open(b"new.txt", 4).unwrap();
        f.write_all(b"hello").unwrap();
        drop(f);
        let mut text = String::new();
        sb.open(b"./new.txt", 0)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "hello");
        sb.rename(b"new.txt", b"renamed.txt").unwrap();
        assert!(root.path().join("renamed.txt").exists());
        sb.remove(b"renamed.txt").unwrap();
        assert!(!root.path().join("renamed.txt").exists());
    }

    #[test]
    fn a_dangling_link_cannot_create_a_file_outside() {
        let (root, outside, sb) = setup();
        let target = outside.path().join("planted");
        symlink(&target, root.path().join("trap")).unwrap();
        assert_eq!(sb.open(b"trap", 4).unwrap_err(), errno::EACCES);
        assert!(!target.exists(), "a file was created outside the root");
    }

    #[test]
    fn links_dotdot_and_absolute_paths_stay_inside() {
        let (root, outside, sb) = setup();
        std::fs::write(outside.path().join("secret"), "x").unwrap();
        symlink(outside.path(), root.path().join("door")).unwrap();
        symlink("../..", root.path().join("up")).unwrap();
        let absolute = outside.path().join("secret");
        for name in [
            b"door/secret".as_slice(),
            b"../secret",
            b"up/secret",
            absolute.to_str().unwrap().as_bytes(),
        ] {
            let err = sb.open(name, 0).unwrap_err();
            assert_ne!(err, 0, "{}", String::from_utf8_lossy(name));
            assert!(sb.open(name, 4).is_err());
            assert!(sb.remove(name).is_err());
        }
        assert!(outside.path().join("secret").exists());
        assert!(sb.rename(b"../secret", b"stolen").is_err());
    }

    #[test]
    fn no_root_refuses_everything_and_a_missing_root_is_an_error_at_start() {
        assert_eq!(Sandbox::none().open(b"a", 0).unwrap_err(), errno::EACCES);
        let dir = tempfile::tempdir().unwrap();
        assert!(Sandbox::new(Some(&dir.path().join("missing"))).is_err());
    }
}
