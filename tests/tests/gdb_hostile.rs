//! The GDB stub against a hostile client (issue 43: M11 and the cases the
//! audit did not reach), spoken in the raw remote protocol over the
//! socket, so no gdb is needed. Every bad request gets an error reply
//! (`E..`) or a bounded answer, and the session goes on: after it the
//! client detaches and the run finishes with a plain run's data.arp.
//! Every sim-host a test starts is killed by its pid when the test is done
//! with it, also when the test fails first.

use e2e_tests::gdb_wire::{read_packet, run_length_decoded, send_packet};
use e2e_tests::process::Reaped;
use e2e_tests::{guest, scratch, sim_host_bin, Scratch};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The PacketSize the stub announces (`sim-host/src/tools/gdb`).
const PACKET_SIZE: usize = 4096;

/// A run of `filter-bench` waiting for the test's raw client.
struct Session {
    dir: Scratch,
    run: Reaped,
    stderr: Option<std::thread::JoinHandle<String>>,
    port: u16,
}

impl Session {
    fn start(name: &str, target: &str, extra: &[&str]) -> Session {
        let dir = scratch(name);
        let elf = guest(target, "filter-bench");
        let plain = Command::new(sim_host_bin())
            .current_dir(&dir)
            .args(["run", "-q", "--target", target, "-o", "plain.arp"])
            .arg(&elf)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(plain.status.code(), Some(0), "{plain:?}");
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(sim_host_bin())
            .current_dir(&dir)
            .args(["run", "-q", "--target", target, "-o", "debugged.arp"])
            .args(["--gdb", &format!("127.0.0.1:{port}")])
            .args(extra)
            .arg(&elf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let run = Reaped(child);
        // the first line says it listens
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        assert!(first.contains(&format!("127.0.0.1:{port}")), "{first}");
        let rest = std::thread::spawn(move || {
            let mut text = first;
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Session {
            dir,
            run,
            stderr: Some(rest),
            port,
        }
    }

    fn connect(&self) -> TcpStream {
        let gdb = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        gdb.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        gdb
    }

    /// The client detaches; the run ends with status 0 and a plain run's
    /// data.arp. Returns its stderr.
    fn detach_and_finish(mut self, gdb: &mut TcpStream) -> String {
        send_packet(gdb, "D");
        assert_eq!(decoded_packet(gdb), "OK");
        let deadline = Instant::now() + Duration::from_secs(120);
        let status = loop {
            if let Some(status) = self.run.0.try_wait().unwrap() {
                break status.code();
            }
            assert!(Instant::now() < deadline, "the run did not end");
            std::thread::sleep(Duration::from_millis(20));
        };
        let stderr = self.stderr.take().unwrap().join().unwrap();
        assert_eq!(status, Some(0), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!stderr.contains("without the debugger"), "{stderr}");
        let plain = std::fs::read(self.dir.join("plain.arp")).unwrap();
        let debugged = std::fs::read(self.dir.join("debugged.arp")).unwrap();
        assert!(plain == debugged, "data.arp differs:\n{stderr}");
        stderr
    }
}

/// The console text of a `monitor` command and its final reply.
fn monitor(gdb: &mut TcpStream, command: &[u8]) -> (String, String) {
    let hex: String = command.iter().map(|b| format!("{b:02x}")).collect();
    monitor_raw(gdb, &format!("qRcmd,{hex}"))
}

fn monitor_raw(gdb: &mut TcpStream, packet: &str) -> (String, String) {
    send_packet(gdb, packet);
    let mut console = Vec::new();
    loop {
        let reply = decoded_packet(gdb);
        match reply.strip_prefix('O') {
            Some(hex) if reply != "OK" => {
                console.extend((0..hex.len() / 2).map(|i| {
                    u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("console output is hex")
                }));
            }
            _ => return (String::from_utf8_lossy(&console).into_owned(), reply),
        }
    }
}

fn is_error(reply: &str) -> bool {
    reply.len() == 3 && reply.starts_with('E')
}

fn stopped(gdb: &mut TcpStream) {
    send_packet(gdb, "?");
    let stop = decoded_packet(gdb);
    assert!(stop.starts_with('T'), "{stop}");
}

/// M11: a `G` packet shorter or longer than the register file is an error
/// reply naming the lengths on sim-host's stderr; nothing is written (the
/// registers read back unchanged), and the session goes on. Before the
/// fix gdbstub answered "Received a packet with too much data" and ended
/// the session.
fn short_and_long_g_packets(target: &str, file_bytes: usize) {
    let session = Session::start(&format!("gdb-g-{target}"), target, &[]);
    let mut gdb = session.connect();
    stopped(&mut gdb);
    send_packet(&mut gdb, "g");
    let registers = decoded_packet(&mut gdb);
    assert_eq!(registers.len(), 2 * file_bytes, "{registers}");
    for length in [0, 5, file_bytes - 4, file_bytes + 4] {
        let data = "ab".repeat(length);
        send_packet(&mut gdb, &format!("G{data}"));
        let reply = decoded_packet(&mut gdb);
        assert!(is_error(&reply), "G with {length} bytes: {reply}");
        send_packet(&mut gdb, "g");
        assert_eq!(decoded_packet(&mut gdb), registers, "after G of {length}");
    }
    // the whole file, as read: accepted
    send_packet(&mut gdb, &format!("G{registers}"));
    assert_eq!(decoded_packet(&mut gdb), "OK");
    let stderr = session.detach_and_finish(&mut gdb);
    assert!(
        stderr.contains(&format!(
            "a `G` packet with 5 bytes of register data refused (E16): the register file is {file_bytes} bytes"
        )),
        "{stderr}"
    );
}

/// cortex-m4 (no FPU): r0-r15, xpsr, msp, psp, 4 bytes each.
#[test]
fn a_g_packet_of_the_wrong_length_is_an_error_reply_on_cortex_m4() {
    short_and_long_g_packets("cortex-m4", 19 * 4);
}

/// rv32imac: x0-x31 and pc, 4 bytes each.
#[test]
fn a_g_packet_of_the_wrong_length_is_an_error_reply_on_rv32imac() {
    short_and_long_g_packets("rv32imac", 33 * 4);
}

/// `m` with a huge length, past the end of memory, past 2^32 or with a
/// length beyond 64 bits: a reply of at most the PacketSize, all hex (the
/// memory that is there, from the address asked for), or an error reply.
/// Before: `m0,ffffffff` was a 275 KB reply ending in hex and then "E79",
/// and a length beyond 64 bits ended the session.
#[test]
fn huge_and_wrapping_memory_reads_get_bounded_replies() {
    let session = Session::start("gdb-huge-read", "cortex-m4", &[]);
    let mut gdb = session.connect();
    stopped(&mut gdb);
    send_packet(&mut gdb, "m0,40");
    let start = decoded_packet(&mut gdb);
    assert_eq!(start.len(), 0x80, "{start}");
    let hex =
        |r: &str| !r.is_empty() && r.len() % 2 == 0 && r.bytes().all(|b| b.is_ascii_hexdigit());
    for (packet, from_flash) in [
        ("m0,ffffffff", true),
        ("m0,1ffffffffffffffff", true),
        ("m20000000,ffffffffffffffff", false),
        ("m20000000,100000", false),
    ] {
        send_packet(&mut gdb, packet);
        let reply = decoded_packet(&mut gdb);
        assert!(
            hex(&reply),
            "{packet}: {}",
            &reply[reply.len().saturating_sub(16)..]
        );
        assert!(
            reply.len() <= PACKET_SIZE,
            "{packet}: {} hex digits",
            reply.len()
        );
        if from_flash {
            assert!(reply.starts_with(&start), "{packet}");
        }
    }
    // the end of the address space is the end of the read (no wrap to 0,
    // where the flash is): here unmapped
    for packet in [
        "mfffffff0,100",
        "mffffffff,2",
        "m100000000,4",
        "mzz,4",
        "m0,",
    ] {
        send_packet(&mut gdb, packet);
        let reply = decoded_packet(&mut gdb);
        assert!(is_error(&reply), "{packet}: {reply}");
    }
    send_packet(&mut gdb, "m0,40");
    assert_eq!(decoded_packet(&mut gdb), start, "the session goes on");
    session.detach_and_finish(&mut gdb);
}

/// `monitor` arguments that are no hex, odd hex, control bytes, a
/// 2,000-byte word and thread numbers out of any range: an error reply or
/// the console text saying what is wrong, never a raw control byte, and
/// the session goes on.
#[test]
fn hostile_monitor_commands_are_answered_and_the_session_goes_on() {
    let session = Session::start("gdb-hostile-monitor", "cortex-m4", &[]);
    let mut gdb = session.connect();
    stopped(&mut gdb);
    for packet in ["qRcmd,zz", "qRcmd,123", "qRcmd,6379636c657"] {
        let (console, reply) = monitor_raw(&mut gdb, packet);
        assert!(is_error(&reply) && console.is_empty(), "{packet}: {reply}");
    }
    for thread in ["99999999999999999999999", "0", "-1", "1x"] {
        let (console, reply) = monitor(&mut gdb, format!("sections {thread}").as_bytes());
        assert_eq!(reply, "OK");
        assert!(
            console.contains(&format!("`{thread}` is not a thread")),
            "{console}"
        );
    }
    let (console, reply) = monitor(&mut gdb, b"\x00\x01cycles\x1b[2J");
    assert_eq!(reply, "OK");
    assert!(
        console.contains(r"unknown monitor command `\0\u{1}cycles\u{1b}[2J`"),
        "{console}"
    );
    assert!(
        !console.bytes().any(|b| b < 0x20 && b != b'\n'),
        "{console:?}"
    );
    let (console, reply) = monitor(&mut gdb, "A".repeat(2000).as_bytes());
    assert_eq!(reply, "OK");
    assert!(console.contains("unknown monitor command"), "{console}");
    let (console, reply) = monitor(&mut gdb, b"cycles");
    assert_eq!(reply, "OK");
    assert!(console.contains("cycles: "), "{console}");
    session.detach_and_finish(&mut gdb);
}

/// Breakpoints at odd addresses (the Thumb bit; no instruction starts at
/// one, so it could never stop), outside memory, past 2^32 or with a kind
/// past 2^32: error replies, and the session goes on. Before: the odd
/// ones were accepted (a breakpoint that never stops) and an address past
/// 2^32 ended the session.
#[test]
fn breakpoints_at_odd_or_impossible_addresses_are_refused() {
    let session = Session::start("gdb-odd-breakpoints", "cortex-m4", &[]);
    let mut gdb = session.connect();
    stopped(&mut gdb);
    for packet in [
        "Z0,1,2",
        "Z0,101,2",
        "Z1,20000001,3",
        "Z0,f0000000,2",
        "Z1,fffffffe,4",
        "Z0,100000000,2",
        "Z0,100,100000000",
        "z0,101,2",
    ] {
        send_packet(&mut gdb, packet);
        let reply = decoded_packet(&mut gdb);
        assert!(is_error(&reply), "{packet}: {reply}");
    }
    // an even address in flash is taken, and removed
    for packet in ["Z0,100,2", "z0,100,2"] {
        send_packet(&mut gdb, packet);
        assert_eq!(decoded_packet(&mut gdb), "OK", "{packet}");
    }
    let stderr = session.detach_and_finish(&mut gdb);
    assert!(
        stderr.contains("a breakpoint at the odd address 0x00000101 refused"),
        "{stderr}"
    );
}

/// Whether `stream` was served: anything the stub sent it.
fn served(mut stream: TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = stream.write_all(b"$?#3f");
    let mut byte = [0u8; 1];
    let got = matches!(stream.read(&mut byte), Ok(1));
    let _ = stream.shutdown(Shutdown::Both);
    got
}

/// Several clients at once: the first is served, the others are refused
/// or closed unserved, and the first's session goes on; with and without
/// `--gdb-no-wait`.
#[test]
fn of_several_simultaneous_clients_only_the_first_is_served() {
    for extra in [&[][..], &["--gdb-no-wait"][..]] {
        let session = Session::start("gdb-several", "cortex-m4", extra);
        let mut gdb = session.connect();
        let others: Vec<TcpStream> = (0..5)
            .filter_map(|_| TcpStream::connect(("127.0.0.1", session.port)).ok())
            .collect();
        stopped(&mut gdb);
        for (n, other) in others.into_iter().enumerate() {
            assert!(!served(other), "{extra:?}: client {} was served", n + 2);
        }
        stopped(&mut gdb);
        session.detach_and_finish(&mut gdb);
    }
}

/// The next packet's body, run-length decoding undone.
fn decoded_packet(stream: &mut TcpStream) -> String {
    run_length_decoded(&read_packet(stream))
}
