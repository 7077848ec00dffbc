//! `sim-host run --gdb` (issue 16): gdb-multiarch debugs a guest through
//! the stub (breakpoint, registers, a step, memory, a monitor command), and
//! the run's data.arp and counts are byte for byte those of a run without
//! the debugger. Every file a test makes is in its own scratch folder.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn gdb_available() -> bool {
    Command::new("gdb-multiarch")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn run_plain(dir: &Path, target: &str, elf: &Path, extra: &[&str]) -> Output {
    let out = Command::new(sim_host_bin())
        .current_dir(dir)
        .args(["run", "-q", "--target", target, "-o", "plain.arp"])
        .args(extra)
        .args(["--report-json", "plain.json"])
        .arg(elf)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    out
}

/// A run waiting for gdb on `port`; returns once it listens, with a
/// thread collecting the rest of its stderr.
fn start_debuggable(
    dir: &Path,
    target: &str,
    elf: &Path,
    port: u16,
    extra: &[&str],
) -> (Child, std::thread::JoinHandle<String>) {
    let mut child = Command::new(sim_host_bin())
        .current_dir(dir)
        .args(["run", "-q", "--target", target, "-o", "debugged.arp"])
        .args(extra)
        .args(["--report-json", "debugged.json"])
        .args(["--gdb", &format!("127.0.0.1:{port}")])
        .arg(elf)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(
        first.contains(&format!("GDB on 127.0.0.1:{port}")) || first.contains("connect on"),
        "{first}"
    );
    let rest = std::thread::spawn(move || {
        let mut text = first;
        let _ = stderr.read_to_string(&mut text);
        text
    });
    (child, rest)
}

/// Waits for `child` at most `limit`; kills it beyond.
fn wait_for(child: &mut Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn gdb_batch(elf: &Path, port: u16, commands: &[&str]) -> String {
    let mut gdb = Command::new("gdb-multiarch");
    gdb.args(["-batch", "-nx"])
        .args(["-ex", &format!("target remote 127.0.0.1:{port}")]);
    for c in commands {
        gdb.args(["-ex", c]);
    }
    let mut child = gdb
        .arg(elf)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = wait_for(&mut child, Duration::from_secs(120));
    assert_eq!(status, Some(0), "gdb failed:\n{out}\n{err}");
    out + &err
}

fn totals(path: &Path) -> (u64, u64) {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let t = &json["totals"];
    (
        t["cycles"].as_u64().unwrap(),
        t["instructions"].as_u64().unwrap(),
    )
}

/// Runs `example` plainly and under gdb with `commands`; asserts the
/// debugged run ended well with the plain run's data.arp and totals, and
/// returns what gdb said.
fn debug_and_compare(target: &str, example: &str, extra: &[&str], commands: &[&str]) -> String {
    let dir = scratch(&format!("gdb-{target}-{example}"));
    let elf = guest(target, example);
    run_plain(&dir, target, &elf, extra);
    let port = free_port();
    let (mut run, stderr) = start_debuggable(&dir, target, &elf, port, extra);
    let gdb = gdb_batch(&elf, port, commands);
    let status = wait_for(&mut run, Duration::from_secs(120));
    let stderr = stderr.join().unwrap();
    assert_eq!(status, Some(0), "{stderr}\ngdb said:\n{gdb}");
    assert!(gdb.contains("exited normally"), "{gdb}");
    let plain = std::fs::read(dir.join("plain.arp")).unwrap();
    let debugged = std::fs::read(dir.join("debugged.arp")).unwrap();
    assert!(plain == debugged, "data.arp differs with the debugger");
    assert_eq!(
        totals(&dir.join("plain.json")),
        totals(&dir.join("debugged.json"))
    );
    gdb
}

fn debug_filter_and_compare(target: &str) {
    if !gdb_available() {
        eprintln!("SKIPPED: gdb-multiarch is not installed (scripts/bootstrap.sh installs it)");
        return;
    }
    let commands = [
        "break filter_horizontally",
        "continue",
        "info registers pc",
        "stepi",
        "x/4xw $sp",
        "monitor cycles",
        "delete",
        "continue",
    ];
    let gdb = debug_and_compare(target, "filter", &[], &commands);
    assert!(gdb.contains("Breakpoint 1, filter_horizontally"), "{gdb}");
    assert!(
        gdb.lines()
            .any(|l| l.starts_with("pc ") && l.contains("<filter_horizontally")),
        "{gdb}"
    );
    assert!(
        gdb.lines()
            .any(|l| l.starts_with("0x") && l.contains(":\t0x")),
        "{gdb}"
    );
    assert!(gdb.contains("cycles: "), "{gdb}");
}

#[test]
fn gdb_debugs_a_cortex_m4_guest_without_changing_its_measurements() {
    debug_filter_and_compare("cortex-m4");
}

#[test]
fn gdb_debugs_an_rv32imac_guest_without_changing_its_measurements() {
    debug_filter_and_compare("rv32imac");
}

/// Breakpoints hit by four threads on four cores, steps, and a step over
/// an intercepted call that blocks its thread (`simthread_join`): the
/// threads interleave as without the debugger.
#[test]
fn gdb_in_a_four_core_guest_leaves_its_measurements_unchanged() {
    if !gdb_available() {
        eprintln!("SKIPPED: gdb-multiarch is not installed (scripts/bootstrap.sh installs it)");
        return;
    }
    for target in ["cortex-m4", "rv32imac"] {
        let commands = [
            "break filter_rows_horizontally",
            "continue",
            "stepi 5",
            "continue",
            "next",
            "delete",
            "break simthread_join",
            "continue",
            "stepi",
            "continue",
            "delete",
            "continue",
        ];
        let gdb = debug_and_compare(target, "filter-par-4", &["--cores", "4"], &commands);
        assert!(gdb.contains("Breakpoint 2, simthread_join"), "{gdb}");
        assert!(!gdb.contains("SIGTRAP"), "{gdb}");
    }
}

/// A guest fault stops in gdb at the faulting instruction, with its
/// registers and stack there to inspect; continuing ends the run with the
/// usual fault status.
#[test]
fn a_guest_fault_stops_in_gdb_at_the_faulting_instruction() {
    if !gdb_available() {
        eprintln!("SKIPPED: gdb-multiarch is not installed (scripts/bootstrap.sh installs it)");
        return;
    }
    let dir = scratch("gdb-fault");
    let elf = guest("cortex-m4", "crash");
    let port = free_port();
    let mut run = Command::new(sim_host_bin())
        .current_dir(&dir)
        .args(["run", "-q", "--gdb", &port.to_string()])
        .arg(&elf)
        .args(["--", "unmapped"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.contains("waiting for GDB"), "{first}");
    let gdb = gdb_batch(&elf, port, &["continue", "bt", "continue"]);
    let status = wait_for(&mut run, Duration::from_secs(120));
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(status, Some(120), "{rest}");
    assert!(gdb.contains("Program received signal SIGSEGV"), "{gdb}");
    assert!(gdb.contains("#0  0x") && gdb.contains("in main"), "{gdb}");
    assert!(
        gdb.contains("Program terminated with signal SIGSEGV"),
        "{gdb}"
    );
    assert!(rest.contains("read of unmapped memory"), "{rest}");
}

/// One remote-protocol packet, with its checksum.
fn send_packet(stream: &mut TcpStream, body: &str) {
    let sum = body.bytes().fold(0u8, u8::wrapping_add);
    write!(stream, "${body}#{sum:02x}").unwrap();
}

/// The next packet's body (acknowledging it).
fn read_packet(stream: &mut TcpStream) -> String {
    let mut text = Vec::new();
    let mut byte = [0u8; 1];
    while !text.ends_with(b"#") {
        stream.read_exact(&mut byte).unwrap();
        text.push(byte[0]);
    }
    let mut sum = [0u8; 2];
    stream.read_exact(&mut sum).unwrap();
    stream.write_all(b"+").unwrap();
    let text = String::from_utf8_lossy(&text).into_owned();
    let start = text.rfind('$').unwrap_or(0);
    text[start + 1..text.len() - 1].to_owned()
}

/// gdb's interrupt (the 0x03 byte Ctrl-C sends) stops the running guest
/// at once; a detach lets it finish with the measurements of a plain run.
/// Spoken in the raw protocol, so it needs no gdb.
#[test]
fn an_interrupt_stops_the_guest_and_a_detach_lets_it_finish_unchanged() {
    let dir = scratch("gdb-interrupt");
    let elf = guest("cortex-m4", "filter-bench");
    run_plain(&dir, "cortex-m4", &elf, &[]);
    let port = free_port();
    let (mut run, stderr) = start_debuggable(&dir, "cortex-m4", &elf, port, &[]);
    let mut gdb = TcpStream::connect(("127.0.0.1", port)).unwrap();
    gdb.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    send_packet(&mut gdb, "?");
    assert!(read_packet(&mut gdb).starts_with('T'));
    send_packet(&mut gdb, "c");
    std::thread::sleep(Duration::from_millis(50));
    gdb.write_all(&[0x03]).unwrap();
    let stop = read_packet(&mut gdb);
    assert!(stop.starts_with("S02") || stop.starts_with("T02"), "{stop}");
    send_packet(&mut gdb, "D");
    assert_eq!(read_packet(&mut gdb), "OK");
    let status = wait_for(&mut run, Duration::from_secs(120));
    assert_eq!(status, Some(0), "{}", stderr.join().unwrap());
    let plain = std::fs::read(dir.join("plain.arp")).unwrap();
    let debugged = std::fs::read(dir.join("debugged.arp")).unwrap();
    assert!(plain == debugged, "data.arp differs after an interrupt");
    assert_eq!(
        totals(&dir.join("plain.json")),
        totals(&dir.join("debugged.json"))
    );
}

#[test]
fn a_bad_gdb_address_is_a_usage_error() {
    let elf = guest("cortex-m4", "filter");
    for bad in [
        &["--gdb", "not-a-port"][..],
        &["--gdb", "3333", "--timeout", "5"],
    ] {
        let out = Command::new(sim_host_bin())
            .arg("run")
            .args(bad)
            .arg(&elf)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
    }
}

/// With --gdb-no-wait the guest runs at once and stops when gdb connects
/// (here in the raw protocol); the measurements stay those of a plain run.
#[test]
fn gdb_no_wait_stops_the_running_guest_when_gdb_connects() {
    let dir = scratch("gdb-no-wait");
    let elf = guest("cortex-m4", "filter-bench");
    run_plain(&dir, "cortex-m4", &elf, &[]);
    let port = free_port();
    let (mut run, stderr) = start_debuggable(&dir, "cortex-m4", &elf, port, &["--gdb-no-wait"]);
    // the guest runs meanwhile (a release build runs it in about 0.4 s)
    std::thread::sleep(Duration::from_millis(20));
    let mut gdb = TcpStream::connect(("127.0.0.1", port)).unwrap();
    gdb.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    send_packet(&mut gdb, "?");
    assert!(read_packet(&mut gdb).starts_with('T'));
    send_packet(&mut gdb, &format!("qRcmd,{}", hex(b"cycles")));
    let output = read_packet(&mut gdb);
    assert!(output.starts_with('O'), "{output}");
    send_packet(&mut gdb, "D");
    let mut reply = read_packet(&mut gdb);
    if reply.starts_with('O') {
        reply = read_packet(&mut gdb);
    }
    assert_eq!(reply, "OK");
    let status = wait_for(&mut run, Duration::from_secs(120));
    assert_eq!(status, Some(0), "{}", stderr.join().unwrap());
    let plain = std::fs::read(dir.join("plain.arp")).unwrap();
    let debugged = std::fs::read(dir.join("debugged.arp")).unwrap();
    assert!(
        plain == debugged,
        "data.arp differs after a late connection"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
