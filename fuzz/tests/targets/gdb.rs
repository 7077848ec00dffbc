//! The GDB target's driver: a run of the corpus's tiny guest in this
//! process with the stub on one end of a loopback connection, the input's
//! packets written to the other end one at a time. The stub's protocol
//! runs on the engine's thread, so a stuck stub shows as a packet without
//! an answer; a run that does not end after the session, as a hang.

use sim_host::engine::Stop;
use sim_host::tools::gdb::{debugger, GdbLink};
use sim_host::tools::session::{self, RunSpec, TargetSource};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// How long a packet may wait for its answer (a `c` runs the guest to its
/// end: a few thousand instructions, or the cycle limit below).
const ANSWER_WAIT: Duration = Duration::from_secs(8);
/// How long the run may take to end after the session.
const END_WAIT: Duration = Duration::from_secs(8);
/// Packets sent per input.
const MAX_PACKETS: usize = 32;
/// A guest whose registers the packets changed may loop: the run stops
/// here instead (about a millisecond of emulation).
const MAX_CYCLES: u64 = 1_000_000;

/// Sends the packets of `input` (one a line; a line `riscv` picks the
/// rv32imac guest, else cortex-m4) and checks each is answered or ends the
/// session, and that the run ends without an internal error. Bytes gdb
/// never sends outside binary data (not printable ASCII) become hex digits
/// unless a line says `raw`: a stub ends the session at the first such
/// byte, and the packets' own parsers are what is worth reaching.
pub fn session(input: &[u8], _scratch: &Path) -> Result<(), String> {
    let riscv = input.split(|&b| b == b'\n').any(|line| line == b"riscv");
    let target = if riscv { "rv32imac" } else { "cortex-m4" };
    let elf = fuzz_targets::repo_root().join(format!("fuzz/corpus/elf/tiny-{target}.elf"));
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let mut gdb = TcpStream::connect(address).map_err(|e| e.to_string())?;
    let (stub, _) = listener.accept().map_err(|e| e.to_string())?;
    let _ = gdb.set_nodelay(true);
    let _ = stub.set_nodelay(true);
    gdb.set_read_timeout(Some(ANSWER_WAIT))
        .map_err(|e| e.to_string())?;
    let (ended, end) = mpsc::channel();
    let run = std::thread::Builder::new()
        .name("fuzz-gdb-run".into())
        .spawn(move || {
            let _ = ended.send(run_guest(elf, target, stub));
        })
        .map_err(|e| e.to_string())?;
    let talk = talk(&mut gdb, input);
    // ends the session (and so the run) if the packets did not
    let _ = gdb.write_all(b"$k#6b");
    drop(gdb);
    let outcome = match end.recv_timeout(END_WAIT) {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            return Err(format!(
                "the run did not end within {END_WAIT:?} after the session"
            ))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(match run.join() {
            Err(panic) => format!("the run panicked: {}", panic_text(&panic)),
            Ok(()) => "the run ended without an outcome".into(),
        }),
    };
    talk.and(outcome)
}

/// Writes each packet and waits for its answer; stops when the session
/// ends.
fn talk(gdb: &mut TcpStream, input: &[u8]) -> Result<(), String> {
    let raw = input.split(|&b| b == b'\n').any(|line| line == b"raw");
    let bodies = input
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty() && *line != b"riscv" && *line != b"raw")
        .take(MAX_PACKETS);
    for body in bodies {
        let body = if raw { body.to_vec() } else { printable(body) };
        let body = &body[..];
        if gdb.write_all(&framed(body)).is_err() {
            return Ok(()); // the session has ended
        }
        if body.starts_with(b"k") {
            return Ok(()); // kill has no answer: the session ends
        }
        match answer(gdb) {
            Answer::Packet => {}
            Answer::Closed => return Ok(()),
            Answer::Silent => {
                return Err(format!(
                    "no answer to the packet {:?} within {ANSWER_WAIT:?}",
                    String::from_utf8_lossy(body)
                ))
            }
        }
    }
    Ok(())
}

/// `body` with every byte outside printable ASCII replaced by a hex digit.
fn printable(body: &[u8]) -> Vec<u8> {
    body.iter()
        .map(|&b| match b {
            0x20..=0x7e => b,
            _ => b"0123456789abcdef"[usize::from(b & 15)],
        })
        .collect()
}

/// `$body#checksum`, with `#`, `$`, `}` and `*` escaped as the protocol
/// says (`}` then the byte xor 0x20), so that every line is one packet.
fn framed(body: &[u8]) -> Vec<u8> {
    let mut escaped = Vec::with_capacity(body.len() + 4);
    for &b in body {
        if matches!(b, b'#' | b'$' | b'}' | b'*') {
            escaped.extend_from_slice(&[b'}', b ^ 0x20]);
        } else {
            escaped.push(b);
        }
    }
    let sum = escaped.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    let mut packet = vec![b'$'];
    packet.extend_from_slice(&escaped);
    packet.extend_from_slice(format!("#{sum:02x}").as_bytes());
    packet
}

enum Answer {
    Packet,
    Closed,
    Silent,
}

/// Reads up to the end of the stub's next packet (acknowledging it),
/// skipping acknowledgements.
fn answer(gdb: &mut TcpStream) -> Answer {
    let mut byte = [0u8; 1];
    let mut in_packet = false;
    let mut checksum_left = None;
    loop {
        match gdb.read(&mut byte) {
            Ok(0) => return Answer::Closed,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Answer::Silent
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Answer::Closed,
        }
        match (checksum_left, byte[0]) {
            (Some(1), _) => {
                let _ = gdb.write_all(b"+");
                return Answer::Packet;
            }
            (Some(n), _) => checksum_left = Some(n - 1),
            (None, b'$') => in_packet = true,
            (None, b'#') if in_packet => checksum_left = Some(2),
            _ => {}
        }
    }
}

/// Runs the guest with the stub on `stub`; the run's stop, or what went
/// wrong.
fn run_guest(elf: PathBuf, target: &str, stub: TcpStream) -> Result<(), String> {
    let mut spec = RunSpec::new(elf, TargetSource::Builtin(target.into()));
    spec.engine.max_cycles = Some(MAX_CYCLES);
    let mut prepared = session::prepare(&spec).map_err(|e| format!("{e:#}"))?;
    let (arch, fpu) = (prepared.target.arch, prepared.target.isa.has_fpu());
    prepared.options.debugger = Some(debugger(arch, fpu, GdbLink::Connected(stub)));
    let finished = session::execute(&spec, prepared).map_err(|e| e.to_string())?;
    match finished.outcome.stop {
        Stop::Internal(message) => Err(format!("the run ended with an internal error: {message}")),
        _ => Ok(()),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
