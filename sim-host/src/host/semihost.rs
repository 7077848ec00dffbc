//! Semihosting: the guest's console, files, clock and exit.
//!
//! A call is first decoded into a typed [`Request`] from the operation
//! number, the parameter register and guest memory ([`decode`]; testable
//! without Unicorn through the [`GuestMemory`] trait), then carried out by
//! [`Semihost::handle`]. Operation numbers and parameter blocks are those of
//! ARM's "Semihosting for AArch32 and AArch64" (the RISC-V semihosting
//! specification uses the same calls).
//!
//! Host files are sandboxed: without `--fs-root` the guest can open only the
//! console (`:tt`) and the feature file (`:semihosting-features`); with it,
//! only relative paths that stay under the root once symbolic links are
//! resolved. Refusals return -1 with an errno, as a host refusal would.
//! `SYS_SYSTEM` is always refused.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

/// Guest memory as semihosting sees it.
pub trait GuestMemory {
    fn read(&self, addr: u32, buf: &mut [u8]) -> Result<(), MemoryFault>;
    fn write(&mut self, addr: u32, data: &[u8]) -> Result<(), MemoryFault>;

    fn read_u32(&self, addr: u32) -> Result<u32, MemoryFault> {
        let mut b = [0; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn read_vec(&self, addr: u32, len: u32) -> Result<Vec<u8>, MemoryFault> {
        if len > MAX_TRANSFER {
            return Err(MemoryFault { addr, len });
        }
        let mut v = vec![0; len as usize];
        self.read(addr, &mut v)?;
        Ok(v)
    }

    /// A NUL-terminated string of at most 4 KiB.
    fn read_cstr(&self, addr: u32) -> Result<Vec<u8>, MemoryFault> {
        let mut out = Vec::new();
        let mut byte = [0u8];
        for offset in 0..4096u32 {
            self.read(addr.wrapping_add(offset), &mut byte)?;
            if byte[0] == 0 {
                return Ok(out);
            }
            out.push(byte[0]);
        }
        Ok(out)
    }
}

/// The guest passed an address semihosting cannot read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("semihosting parameter at {addr:#010x} ({len} bytes) is not accessible guest memory")]
pub struct MemoryFault {
    pub addr: u32,
    pub len: u32,
}

/// Largest single transfer (a larger length is treated as a bad pointer).
pub const MAX_TRANSFER: u32 = 64 << 20;

/// `ADP_Stopped_ApplicationExit`: a normal exit.
pub const ADP_STOPPED_APPLICATION_EXIT: u32 = 0x20026;

pub mod op {
    pub const SYS_OPEN: u32 = 0x01;
    pub const SYS_CLOSE: u32 = 0x02;
    pub const SYS_WRITEC: u32 = 0x03;
    pub const SYS_WRITE0: u32 = 0x04;
    pub const SYS_WRITE: u32 = 0x05;
    pub const SYS_READ: u32 = 0x06;
    pub const SYS_READC: u32 = 0x07;
    pub const SYS_ISERROR: u32 = 0x08;
    pub const SYS_ISTTY: u32 = 0x09;
    pub const SYS_SEEK: u32 = 0x0a;
    pub const SYS_FLEN: u32 = 0x0c;
    pub const SYS_TMPNAM: u32 = 0x0d;
    pub const SYS_REMOVE: u32 = 0x0e;
    pub const SYS_RENAME: u32 = 0x0f;
    pub const SYS_CLOCK: u32 = 0x10;
    pub const SYS_TIME: u32 = 0x11;
    pub const SYS_SYSTEM: u32 = 0x12;
    pub const SYS_ERRNO: u32 = 0x13;
    pub const SYS_GET_CMDLINE: u32 = 0x15;
    pub const SYS_HEAPINFO: u32 = 0x16;
    pub const SYS_EXIT: u32 = 0x18;
    pub const SYS_EXIT_EXTENDED: u32 = 0x20;
    pub const SYS_ELAPSED: u32 = 0x30;
    pub const SYS_TICKFREQ: u32 = 0x31;
}

/// A decoded semihosting call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Open {
        name: Vec<u8>,
        mode: u32,
    },
    Close {
        handle: u32,
    },
    WriteC {
        byte: u8,
    },
    Write0 {
        text: Vec<u8>,
    },
    Write {
        handle: u32,
        data: Vec<u8>,
    },
    Read {
        handle: u32,
        buf: u32,
        len: u32,
    },
    ReadC,
    IsError {
        status: i32,
    },
    IsTty {
        handle: u32,
    },
    Seek {
        handle: u32,
        pos: u32,
    },
    Flen {
        handle: u32,
    },
    TmpNam,
    Remove {
        name: Vec<u8>,
    },
    Rename {
        from: Vec<u8>,
        to: Vec<u8>,
    },
    Clock,
    Time,
    System,
    Errno,
    GetCmdline {
        buf: u32,
        len_addr: u32,
        capacity: u32,
    },
    HeapInfo {
        block: u32,
    },
    Exit {
        reason: u32,
        subcode: Option<u32>,
    },
    Elapsed {
        out: u32,
    },
    TickFreq,
    Unknown {
        op: u32,
    },
}

/// Decodes a call: `op` from r0 / a0, `param` from r1 / a1.
pub fn decode(op: u32, param: u32, mem: &dyn GuestMemory) -> Result<Request, MemoryFault> {
    use op::*;
    let word = |i: u32| mem.read_u32(param.wrapping_add(4 * i));
    Ok(match op {
        SYS_OPEN => {
            let (ptr, mode, len) = (word(0)?, word(1)?, word(2)?);
            Request::Open {
                name: mem.read_vec(ptr, len)?,
                mode,
            }
        }
        SYS_CLOSE => Request::Close { handle: word(0)? },
        SYS_WRITEC => {
            let mut b = [0u8];
            mem.read(param, &mut b)?;
            Request::WriteC { byte: b[0] }
        }
        SYS_WRITE0 => Request::Write0 {
            text: mem.read_cstr(param)?,
        },
        SYS_WRITE => {
            let (handle, ptr, len) = (word(0)?, word(1)?, word(2)?);
            Request::Write {
                handle,
                data: mem.read_vec(ptr, len)?,
            }
        }
        SYS_READ => Request::Read {
            handle: word(0)?,
            buf: word(1)?,
            len: word(2)?,
        },
        SYS_READC => Request::ReadC,
        SYS_ISERROR => Request::IsError {
            status: word(0)? as i32,
        },
        SYS_ISTTY => Request::IsTty { handle: word(0)? },
        SYS_SEEK => Request::Seek {
            handle: word(0)?,
            pos: word(1)?,
        },
        SYS_FLEN => Request::Flen { handle: word(0)? },
        SYS_TMPNAM => Request::TmpNam,
        SYS_REMOVE => {
            let (ptr, len) = (word(0)?, word(1)?);
            Request::Remove {
                name: mem.read_vec(ptr, len)?,
            }
        }
        SYS_RENAME => {
            let (p1, l1, p2, l2) = (word(0)?, word(1)?, word(2)?, word(3)?);
            Request::Rename {
                from: mem.read_vec(p1, l1)?,
                to: mem.read_vec(p2, l2)?,
            }
        }
        SYS_CLOCK => Request::Clock,
        SYS_TIME => Request::Time,
        SYS_SYSTEM => Request::System,
        SYS_ERRNO => Request::Errno,
        SYS_GET_CMDLINE => Request::GetCmdline {
            buf: word(0)?,
            len_addr: param.wrapping_add(4),
            capacity: word(1)?,
        },
        SYS_HEAPINFO => Request::HeapInfo { block: word(0)? },
        // 32-bit callers pass the reason itself; EXIT_EXTENDED a block.
        SYS_EXIT => Request::Exit {
            reason: param,
            subcode: None,
        },
        SYS_EXIT_EXTENDED => Request::Exit {
            reason: word(0)?,
            subcode: Some(word(1)?),
        },
        SYS_ELAPSED => Request::Elapsed { out: param },
        SYS_TICKFREQ => Request::TickFreq,
        other => Request::Unknown { op: other },
    })
}

/// errno values the guest's C library understands (newlib/picolibc).
use crate::host::sandbox::{errno, Sandbox};

/// The most host files (and console handles) a guest may hold open at
/// once: beyond it SYS_OPEN fails with EMFILE, so a guest cannot exhaust
/// the host's descriptors (and with them the run's own outputs).
pub const MAX_OPEN_HANDLES: usize = 64;

const FEATURES_FILE: &[u8] = b":semihosting-features";
/// Magic and feature byte: EXIT_EXTENDED and stdout/stderr via `:tt`.
const FEATURES: [u8; 5] = [b'S', b'H', b'F', b'B', 0b11];

enum Handle {
    Stdin,
    Stdout,
    Stderr,
    Features { pos: usize },
    File(File),
}

/// The outcome of a call for the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Continue with this value in r0 / a0.
    Return(u32),
    /// The guest exits with this status.
    Exit(i32),
}

/// Where the guest's console goes.
pub trait Console {
    fn stdout(&mut self, bytes: &[u8]);
    fn stderr(&mut self, bytes: &[u8]);
    /// One byte of input, or `None` at end of input.
    fn read_byte(&mut self) -> Option<u8>;
}

/// How much of the guest's output a run keeps ([`HostConsole::captured`]):
/// its beginning, for a caller that reads it (tests, benchmarks). The rest
/// goes where it goes (the terminal) and is compared while it is written
/// (issue 30, N03): memory never grows with the output.
pub const CONSOLE_KEPT: usize = 64 * 1024;

/// The host's real console; also keeps the beginning of the output and
/// compares all of it with an expectation.
#[derive(Default)]
pub struct HostConsole {
    /// The first [`CONSOLE_KEPT`] bytes of the output.
    pub captured: Vec<u8>,
    /// Bytes the guest wrote to stdout.
    pub written: u64,
    /// The output compared with what it should be, as it is written.
    pub check: Option<crate::host::expected::OutputCheck>,
    pub echo: bool,
    /// A read from stdin gives up (as end of input) when this passes...
    pub deadline: Option<std::time::Instant>,
    /// ...or when a stop signal has been asked for, so neither `--timeout`
    /// nor Ctrl-C waits for a user who never types.
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicI32>>,
    /// Set when a read gave up for one of those reasons.
    pub read_cut_short: bool,
    /// Bytes read from stdin and not yet given to the guest.
    pub(crate) input: std::collections::VecDeque<u8>,
}

impl HostConsole {
    /// Whether a blocked read must give up now.
    fn must_give_up(&self) -> bool {
        let stopped = self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed) > 0);
        stopped
            || self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
    }

    /// Waits (in slices of 50 ms, so signals and the deadline are seen) for
    /// input on stdin and reads what is there; `false` at end of input or
    /// when giving up.
    fn refill(&mut self) -> bool {
        use std::os::fd::AsFd;
        let stdin = std::io::stdin();
        let fd = stdin.as_fd();
        let slice = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        loop {
            if self.must_give_up() {
                self.read_cut_short = true;
                return false;
            }
            let mut fds = [rustix::event::PollFd::new(
                &fd,
                rustix::event::PollFlags::IN,
            )];
            match rustix::event::poll(&mut fds, Some(&slice)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => break,
                Err(_) => return false,
            }
        }
        let mut buf = [0u8; 4096];
        match rustix::io::read(fd, &mut buf) {
            Ok(n) if n > 0 => {
                self.input.extend(&buf[..n]);
                true
            }
            _ => false,
        }
    }
}

impl Console for HostConsole {
    fn stdout(&mut self, bytes: &[u8]) {
        self.written += bytes.len() as u64;
        let room = CONSOLE_KEPT.saturating_sub(self.captured.len());
        self.captured
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
        if let Some(check) = &mut self.check {
            check.feed(bytes);
        }
        if self.echo {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(bytes);
            let _ = out.flush();
        }
    }
    fn stderr(&mut self, bytes: &[u8]) {
        if self.echo {
            let _ = std::io::stderr().write_all(bytes);
        }
    }
    fn read_byte(&mut self) -> Option<u8> {
        if self.input.is_empty() && !self.refill() {
            return None;
        }
        self.input.pop_front()
    }
}

/// Semihosting state of one run.
pub struct Semihost {
    handles: HashMap<u32, Handle>,
    next_handle: u32,
    errno: u32,
    files: Sandbox,
    cmdline: Vec<u8>,
    clock_hz: u64,
    heap: [u32; 4],
}

impl Semihost {
    /// `cmdline` is what SYS_GET_CMDLINE returns; `heap` the four words of
    /// SYS_HEAPINFO (heap base, heap limit, stack base, stack limit).
    pub fn new(files: Sandbox, cmdline: String, clock_hz: u64, heap: [u32; 4]) -> Semihost {
        Semihost {
            handles: HashMap::new(),
            next_handle: 1,
            errno: 0,
            files,
            cmdline: cmdline.into_bytes(),
            clock_hz,
            heap,
        }
    }

    fn fail(&mut self, errno: u32) -> Outcome {
        self.errno = errno;
        Outcome::Return(u32::MAX)
    }

    fn add(&mut self, handle: Handle) -> Outcome {
        if self.handles.len() >= MAX_OPEN_HANDLES {
            return self.fail(errno::EMFILE);
        }
        let h = self.next_handle;
        self.next_handle += 1;
        self.handles.insert(h, handle);
        Outcome::Return(h)
    }

    /// Carries out a request. `now` is the core's cycle count and the
    /// simulated time (for the clocks), `console` receives output.
    pub fn handle(
        &mut self,
        request: Request,
        now: crate::host::devices::Now,
        mem: &mut dyn GuestMemory,
        console: &mut dyn Console,
    ) -> Result<Outcome, MemoryFault> {
        use Request::*;
        Ok(match request {
            Open { name, mode } => self.open(&name, mode),
            Close { handle } => match self.handles.remove(&handle) {
                Some(_) => Outcome::Return(0),
                None => self.fail(errno::EBADF),
            },
            WriteC { byte } => {
                console.stdout(&[byte]);
                Outcome::Return(0)
            }
            Write0 { text } => {
                console.stdout(&text);
                Outcome::Return(0)
            }
            Write { handle, data } => self.write(handle, &data, console),
            Read { handle, buf, len } => self.read(handle, buf, len, mem, console)?,
            ReadC => Outcome::Return(console.read_byte().map_or(u32::MAX, u32::from)),
            IsError { status } => Outcome::Return(u32::from(status < 0)),
            IsTty { handle } => self.is_tty(handle),
            Seek { handle, pos } => self.seek(handle, pos),
            Flen { handle } => self.flen(handle),
            TmpNam => self.fail(errno::ENOSYS),
            Remove { name } => match self.files.remove(&name) {
                Ok(()) => Outcome::Return(0),
                Err(e) => self.fail(e),
            },
            Rename { from, to } => match self.files.rename(&from, &to) {
                Ok(()) => Outcome::Return(0),
                Err(e) => self.fail(e),
            },
            // Simulated time in centiseconds, at the clocks in force.
            Clock => Outcome::Return((now.picos / 10_000_000_000) as u32),
            Time => Outcome::Return(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as u32),
            ),
            System => self.fail(errno::EACCES),
            Errno => Outcome::Return(self.errno),
            GetCmdline {
                buf,
                len_addr,
                capacity,
            } => self.get_cmdline(buf, len_addr, capacity, mem)?,
            HeapInfo { block } => {
                let bytes: Vec<u8> = self.heap.iter().flat_map(|w| w.to_le_bytes()).collect();
                mem.write(block, &bytes)?;
                Outcome::Return(0)
            }
            Exit { reason, subcode } => Outcome::Exit(match (reason, subcode) {
                (ADP_STOPPED_APPLICATION_EXIT, Some(code)) => code as i32,
                (ADP_STOPPED_APPLICATION_EXIT, None) => 0,
                _ => 1,
            }),
            Elapsed { out } => {
                let cycles = now.cycles;
                let lo = cycles as u32;
                let hi = (cycles >> 32) as u32;
                mem.write(out, &lo.to_le_bytes())?;
                mem.write(out.wrapping_add(4), &hi.to_le_bytes())?;
                Outcome::Return(0)
            }
            TickFreq => Outcome::Return(self.clock_hz.min(u64::from(u32::MAX)) as u32),
            Unknown { .. } => self.fail(errno::ENOSYS),
        })
    }

    /// SYS_OPEN: the console (`:tt`), the features file, or a file
    /// beneath the sandbox.
    fn open(&mut self, name: &[u8], mode: u32) -> Outcome {
        if name == b":tt" {
            // mode 0-3 read (stdin), 4-7 write (stdout), 8-11 append (stderr)
            let handle = match mode {
                0..=3 => Handle::Stdin,
                4..=7 => Handle::Stdout,
                _ => Handle::Stderr,
            };
            self.add(handle)
        } else if name == FEATURES_FILE {
            if mode <= 1 {
                self.add(Handle::Features { pos: 0 })
            } else {
                self.fail(errno::EACCES)
            }
        } else if self.handles.len() >= MAX_OPEN_HANDLES {
            self.fail(errno::EMFILE)
        } else {
            match self.files.open(name, mode) {
                Ok(f) => self.add(Handle::File(f)),
                Err(e) => self.fail(e),
            }
        }
    }

    /// SYS_WRITE: returns the number of bytes *not* written.
    fn write(&mut self, handle: u32, data: &[u8], console: &mut dyn Console) -> Outcome {
        match self.handles.get_mut(&handle) {
            Some(Handle::Stdout) => {
                console.stdout(data);
                Outcome::Return(0)
            }
            Some(Handle::Stderr) => {
                console.stderr(data);
                Outcome::Return(0)
            }
            Some(Handle::File(f)) => match f.write(data) {
                Ok(n) => Outcome::Return((data.len() - n) as u32),
                Err(_) => {
                    self.errno = errno::EIO;
                    Outcome::Return(data.len() as u32)
                }
            },
            Some(_) => self.fail(errno::EBADF),
            None => self.fail(errno::EBADF),
        }
    }

    /// SYS_READ into guest memory: returns the number of bytes *not* read.
    fn read(
        &mut self,
        handle: u32,
        buf: u32,
        len: u32,
        mem: &mut dyn GuestMemory,
        console: &mut dyn Console,
    ) -> Result<Outcome, MemoryFault> {
        if len > MAX_TRANSFER {
            return Err(MemoryFault { addr: buf, len });
        }
        let mut data = vec![0u8; len as usize];
        let n = match self.handles.get_mut(&handle) {
            Some(Handle::Stdin) => read_line(console, &mut data),
            Some(Handle::Features { pos }) => {
                let rest = &FEATURES[(*pos).min(FEATURES.len())..];
                let n = rest.len().min(data.len());
                data[..n].copy_from_slice(&rest[..n]);
                *pos += n;
                n
            }
            Some(Handle::File(f)) => match f.read(&mut data) {
                Ok(n) => n,
                Err(_) => {
                    self.errno = errno::EIO;
                    return Ok(Outcome::Return(u32::MAX));
                }
            },
            Some(_) | None => return Ok(self.fail(errno::EBADF)),
        };
        mem.write(buf, &data[..n])?;
        Ok(Outcome::Return(len - n as u32))
    }

    fn is_tty(&mut self, handle: u32) -> Outcome {
        match self.handles.get(&handle) {
            Some(Handle::Stdin | Handle::Stdout | Handle::Stderr) => Outcome::Return(1),
            Some(_) => {
                self.errno = errno::ENOENT;
                Outcome::Return(0)
            }
            None => self.fail(errno::EBADF),
        }
    }

    fn seek(&mut self, handle: u32, pos: u32) -> Outcome {
        match self.handles.get_mut(&handle) {
            Some(Handle::File(f)) => match f.seek(SeekFrom::Start(u64::from(pos))) {
                Ok(_) => Outcome::Return(0),
                Err(_) => self.fail(errno::EINVAL),
            },
            Some(Handle::Features { pos: p }) => {
                *p = pos as usize;
                Outcome::Return(0)
            }
            Some(_) => self.fail(errno::EINVAL),
            None => self.fail(errno::EBADF),
        }
    }

    fn flen(&mut self, handle: u32) -> Outcome {
        match self.handles.get(&handle) {
            Some(Handle::File(f)) => match f.metadata() {
                Ok(m) => Outcome::Return(m.len().min(u64::from(u32::MAX >> 1)) as u32),
                Err(_) => self.fail(errno::EIO),
            },
            Some(Handle::Features { .. }) => Outcome::Return(FEATURES.len() as u32),
            Some(_) => self.fail(errno::EINVAL),
            None => self.fail(errno::EBADF),
        }
    }

    /// SYS_GET_CMDLINE: the text, NUL-terminated, and its length.
    fn get_cmdline(
        &mut self,
        buf: u32,
        len_addr: u32,
        capacity: u32,
        mem: &mut dyn GuestMemory,
    ) -> Result<Outcome, MemoryFault> {
        if self.cmdline.len() + 1 > capacity as usize {
            return Ok(self.fail(errno::EINVAL));
        }
        let mut text = self.cmdline.clone();
        text.push(0);
        mem.write(buf, &text)?;
        mem.write(len_addr, &(self.cmdline.len() as u32).to_le_bytes())?;
        Ok(Outcome::Return(0))
    }
}

/// Reads console input into `data` up to a newline (kept) or its end;
/// returns how many bytes.
fn read_line(console: &mut dyn Console, data: &mut [u8]) -> usize {
    let mut n = 0;
    while n < data.len() {
        match console.read_byte() {
            Some(b) => {
                data[n] = b;
                n += 1;
                if b == b'\n' {
                    break;
                }
            }
            None => break,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guest memory as a flat buffer starting at address 0x1000.
    struct Flat(Vec<u8>);
    const BASE: u32 = 0x1000;

    impl GuestMemory for Flat {
        fn read(&self, addr: u32, buf: &mut [u8]) -> Result<(), MemoryFault> {
            let fault = MemoryFault {
                addr,
                len: buf.len() as u32,
            };
            let start = addr.checked_sub(BASE).ok_or(fault)? as usize;
            let src = self.0.get(start..start + buf.len()).ok_or(fault)?;
            buf.copy_from_slice(src);
            Ok(())
        }
        fn write(&mut self, addr: u32, data: &[u8]) -> Result<(), MemoryFault> {
            let fault = MemoryFault {
                addr,
                len: data.len() as u32,
            };
            let start = addr.checked_sub(BASE).ok_or(fault)? as usize;
            self.0
                .get_mut(start..start + data.len())
                .ok_or(fault)?
                .copy_from_slice(data);
            Ok(())
        }
    }

    impl Flat {
        fn put(&mut self, addr: u32, data: &[u8]) {
            self.write(addr, data).unwrap();
        }
        fn words(&mut self, addr: u32, words: &[u32]) {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.put(addr, &bytes);
        }
    }

    #[derive(Default)]
    struct TestConsole {
        out: Vec<u8>,
        err: Vec<u8>,
        input: Vec<u8>,
    }

    impl Console for TestConsole {
        fn stdout(&mut self, bytes: &[u8]) {
            self.out.extend_from_slice(bytes);
        }
        fn stderr(&mut self, bytes: &[u8]) {
            self.err.extend_from_slice(bytes);
        }
        fn read_byte(&mut self) -> Option<u8> {
            (!self.input.is_empty()).then(|| self.input.remove(0))
        }
    }

    fn host(root: Option<std::path::PathBuf>) -> Semihost {
        let files = Sandbox::new(root.as_deref()).unwrap();
        Semihost::new(files, "prog -v 3".into(), 25_000_000, [1, 2, 3, 4])
    }

    fn call(
        sh: &mut Semihost,
        mem: &mut Flat,
        con: &mut TestConsole,
        op: u32,
        param: u32,
    ) -> Outcome {
        let req = decode(op, param, mem).unwrap();
        // 50,000,000 cycles at 25 MHz: 2 s
        let now = crate::host::devices::Now {
            cycles: 50_000_000,
            picos: 2_000_000_000_000,
        };
        sh.handle(req, now, mem, con).unwrap()
    }

    fn open(
        sh: &mut Semihost,
        mem: &mut Flat,
        con: &mut TestConsole,
        name: &str,
        mode: u32,
    ) -> Outcome {
        mem.put(0x1100, name.as_bytes());
        mem.words(0x1000, &[0x1100, mode, name.len() as u32]);
        call(sh, mem, con, op::SYS_OPEN, 0x1000)
    }

    #[test]
    fn decodes_write_into_a_typed_request() {
        let mut mem = Flat(vec![0; 0x1000]);
        mem.put(0x1200, b"hello");
        mem.words(0x1000, &[7, 0x1200, 5]);
        assert_eq!(
            decode(op::SYS_WRITE, 0x1000, &mem).unwrap(),
            Request::Write {
                handle: 7,
                data: b"hello".to_vec()
            }
        );
    }

    #[test]
    fn bad_pointer_is_a_memory_fault_not_a_panic() {
        let mem = Flat(vec![0; 0x100]);
        assert!(decode(op::SYS_WRITE, 0x9000_0000, &mem).is_err());
        let mut mem = Flat(vec![0; 0x100]);
        mem.words(0x1000, &[1, 0x1010, u32::MAX]);
        assert!(decode(op::SYS_WRITE, 0x1000, &mem).is_err());
    }

    #[test]
    fn console_write_and_exit_extended() {
        let (mut sh, mut mem, mut con) =
            (host(None), Flat(vec![0; 0x1000]), TestConsole::default());
        let Outcome::Return(h) = open(&mut sh, &mut mem, &mut con, ":tt", 4) else {
            panic!()
        };
        mem.put(0x1200, b"out\n");
        mem.words(0x1000, &[h, 0x1200, 4]);
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_WRITE, 0x1000),
            Outcome::Return(0)
        );
        assert_eq!(con.out, b"out\n");
        mem.words(0x1000, &[ADP_STOPPED_APPLICATION_EXIT, 3]);
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_EXIT_EXTENDED, 0x1000),
            Outcome::Exit(3)
        );
        assert_eq!(
            call(
                &mut sh,
                &mut mem,
                &mut con,
                op::SYS_EXIT,
                ADP_STOPPED_APPLICATION_EXIT
            ),
            Outcome::Exit(0)
        );
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_EXIT, 0x20023),
            Outcome::Exit(1)
        );
    }

    #[test]
    fn feature_file_announces_exit_extended() {
        let (mut sh, mut mem, mut con) =
            (host(None), Flat(vec![0; 0x1000]), TestConsole::default());
        let Outcome::Return(h) = open(&mut sh, &mut mem, &mut con, ":semihosting-features", 0)
        else {
            panic!()
        };
        mem.words(0x1000, &[h, 0x1300, 5]);
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_READ, 0x1000),
            Outcome::Return(0)
        );
        let mut got = [0u8; 5];
        mem.read(0x1300, &mut got).unwrap();
        assert_eq!(&got, b"SHFB\x03");
    }

    #[test]
    fn files_are_refused_without_a_root() {
        let (mut sh, mut mem, mut con) =
            (host(None), Flat(vec![0; 0x1000]), TestConsole::default());
        assert_eq!(
            open(&mut sh, &mut mem, &mut con, "data.txt", 0),
            Outcome::Return(u32::MAX)
        );
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_ERRNO, 0),
            Outcome::Return(errno::EACCES)
        );
    }

    #[test]
    fn sandbox_allows_inside_and_refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("in.txt"), b"abc").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        let (mut sh, mut mem, mut con) = (
            host(Some(dir.path().to_owned())),
            Flat(vec![0; 0x1000]),
            TestConsole::default(),
        );
        let Outcome::Return(h) = open(&mut sh, &mut mem, &mut con, "in.txt", 0) else {
            panic!()
        };
        assert_ne!(h, u32::MAX);
        mem.words(0x1000, &[h]);
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_FLEN, 0x1000),
            Outcome::Return(3)
        );
        for escape in ["../secret", "/etc/passwd", "link", "a/../../x"] {
            assert_eq!(
                open(&mut sh, &mut mem, &mut con, escape, 0),
                Outcome::Return(u32::MAX),
                "{escape} must be refused"
            );
        }
        // a new file inside the root can be written
        let Outcome::Return(w) = open(&mut sh, &mut mem, &mut con, "out.txt", 4) else {
            panic!()
        };
        mem.put(0x1200, b"xyz");
        mem.words(0x1000, &[w, 0x1200, 3]);
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_WRITE, 0x1000),
            Outcome::Return(0)
        );
        assert_eq!(std::fs::read(dir.path().join("out.txt")).unwrap(), b"xyz");
    }

    #[test]
    fn a_guest_holds_at_most_64_handles() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        let (mut sh, mut mem, mut con) = (
            host(Some(dir.path().to_owned())),
            Flat(vec![0; 0x1000]),
            TestConsole::default(),
        );
        let mut handles = Vec::new();
        for _ in 0..MAX_OPEN_HANDLES {
            let Outcome::Return(h) = open(&mut sh, &mut mem, &mut con, "f", 0) else {
                panic!()
            };
            assert_ne!(h, u32::MAX);
            handles.push(h);
        }
        for name in ["f", ":tt"] {
            assert_eq!(
                open(&mut sh, &mut mem, &mut con, name, 0),
                Outcome::Return(u32::MAX)
            );
            assert_eq!(
                call(&mut sh, &mut mem, &mut con, op::SYS_ERRNO, 0),
                Outcome::Return(errno::EMFILE)
            );
        }
        // closing one makes room for one
        mem.words(0x1000, &[handles[0]]);
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_CLOSE, 0x1000),
            Outcome::Return(0)
        );
        assert_ne!(
            open(&mut sh, &mut mem, &mut con, "f", 0),
            Outcome::Return(u32::MAX)
        );
    }

    #[test]
    fn system_is_refused() {
        let (mut sh, mut mem, mut con) =
            (host(None), Flat(vec![0; 0x1000]), TestConsole::default());
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_SYSTEM, 0x1000),
            Outcome::Return(u32::MAX)
        );
    }

    #[test]
    fn clocks_follow_emulated_cycles() {
        let (mut sh, mut mem, mut con) =
            (host(None), Flat(vec![0; 0x1000]), TestConsole::default());
        // 50 M cycles at 25 MHz = 2 s = 200 centiseconds
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_CLOCK, 0),
            Outcome::Return(200)
        );
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_TICKFREQ, 0),
            Outcome::Return(25_000_000)
        );
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_ELAPSED, 0x1400),
            Outcome::Return(0)
        );
        assert_eq!(mem.read_u32(0x1400).unwrap(), 50_000_000);
    }

    #[test]
    fn command_line_is_returned_with_its_length() {
        let (mut sh, mut mem, mut con) =
            (host(None), Flat(vec![0; 0x1000]), TestConsole::default());
        mem.words(0x1000, &[0x1500, 64]);
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_GET_CMDLINE, 0x1000),
            Outcome::Return(0)
        );
        assert_eq!(mem.read_cstr(0x1500).unwrap(), b"prog -v 3");
        assert_eq!(mem.read_u32(0x1004).unwrap(), 9);
    }

    #[test]
    fn console_input_reads_a_line() {
        let (mut sh, mut mem, mut con) =
            (host(None), Flat(vec![0; 0x1000]), TestConsole::default());
        con.input = b"ab\ncd".to_vec();
        let Outcome::Return(h) = open(&mut sh, &mut mem, &mut con, ":tt", 0) else {
            panic!()
        };
        mem.words(0x1000, &[h, 0x1600, 16]);
        // 3 of 16 bytes read: 13 not read
        assert_eq!(
            call(&mut sh, &mut mem, &mut con, op::SYS_READ, 0x1000),
            Outcome::Return(13)
        );
    }
}
