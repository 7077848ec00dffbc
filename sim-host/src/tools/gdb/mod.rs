//! A GDB remote stub (`sim-host run --gdb [ADDR:]PORT`), built on the
//! `gdbstub` crate, that leaves the measurements untouched.
//!
//! The protocol runs on the emulation thread: the machine calls
//! [`GdbDebugger`] (a `machine::Debugger`) whenever the guest stops for it,
//! and it serves gdb's packets until gdb resumes the guest. Breakpoints and
//! steps are code hooks that stop in front of an instruction (guest memory
//! is never patched), and the machine charges a block exactly once however
//! often it stops inside it; a debugger's reads, writes and waits cost no
//! simulated cycle. While the guest runs, a helper thread watches the
//! socket for gdb's interrupt (Ctrl-C) and asks the machine to stop at a
//! block boundary (within 2^20 simulated cycles: the block hook polls).

pub mod arch_m;
pub mod checked;
pub mod ids;
pub mod monitor;
pub mod packets;
pub mod target;

use crate::engine::{DebugGuest, DebugInterrupt, DebugResume, DebugStop, Debugger, Stop, Watch};
use crate::host::signals::StopRequest;
use crate::model::target::Arch;
use checked::Checked;
use gdbstub::common::Signal;
use gdbstub::stub::state_machine::GdbStubStateMachine;
use gdbstub::stub::{DisconnectReason, GdbStub, MultiThreadStopReason};
use gdbstub::target::ext::breakpoints::WatchKind;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use target::{GdbTarget, GuestArch};

/// How often blocked socket reads look at the stop signals.
const POLL: Duration = Duration::from_millis(100);

/// `PORT` (on the loopback interface) or `ADDRESS:PORT`.
pub fn parse_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| {
        format!(
            "`{text}`: expected PORT (on 127.0.0.1) or ADDRESS:PORT, as 127.0.0.1:3333 \
             (a bare --gdb, for 127.0.0.1:3333, goes after the ELF)"
        )
    })
}

/// Waits for gdb to connect; `None` if a stop signal came first.
pub fn accept(listener: &TcpListener, stop: &StopRequest) -> std::io::Result<Option<TcpStream>> {
    listener.set_nonblocking(true)?;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false)?;
                stream.set_nodelay(true)?;
                return Ok(Some(stream));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if stop.signal().is_some() {
                    return Ok(None);
                }
                std::thread::sleep(POLL / 2);
            }
            Err(e) => return Err(e),
        }
    }
}

/// How gdb reaches the run.
pub enum GdbLink {
    /// Connected before the first instruction.
    Connected(TcpStream),
    /// Accepted while the guest runs (`--gdb-no-wait`), which then stops.
    Later(TcpListener),
}

/// The debugger for a guest of `arch`, talking to gdb over `link`; `fpu`:
/// an Arm core with an FPU, whose description has the VFP registers.
pub fn debugger(arch: Arch, fpu: bool, link: GdbLink) -> Rc<RefCell<dyn Debugger>> {
    match arch {
        Arch::Arm if fpu => Rc::new(RefCell::new(
            GdbDebugger::<Checked<arch_m::CortexM<true>>>::new(link),
        )),
        Arch::Arm => Rc::new(RefCell::new(
            GdbDebugger::<Checked<arch_m::CortexM<false>>>::new(link),
        )),
        Arch::Riscv => Rc::new(RefCell::new(GdbDebugger::<
            Checked<gdbstub_arch::riscv::Riscv32>,
        >::new(link))),
    }
}

type StateMachine<A> = GdbStubStateMachine<'static, GdbTarget<A>, TcpStream>;

/// A connection gdb made while the guest ran, until the guest stops for it.
type Incoming = Arc<Mutex<Option<TcpStream>>>;

/// The link to gdb, before and after the machine attaches.
pub struct GdbDebugger<A: GuestArch> {
    link: Option<GdbLink>,
    incoming: Option<(Incoming, DebugGuest)>,
    session: Option<Session<A>>,
}

impl<A: GuestArch> GdbDebugger<A> {
    pub fn new(link: GdbLink) -> GdbDebugger<A> {
        GdbDebugger {
            link: Some(link),
            incoming: None,
            session: None,
        }
    }

    fn start_session(&mut self, stream: TcpStream, guest: DebugGuest) {
        match Session::start(stream, guest) {
            Ok(session) => self.session = Some(session),
            Err(e) => crate::say!("sim-host: gdb: {e}; running without the debugger"),
        }
    }

    /// A connection accepted while the guest ran: the session starts now,
    /// as if before the first instruction.
    fn late_session(&mut self) -> bool {
        let Some((incoming, guest)) = &self.incoming else {
            return false;
        };
        let Some(stream) = lock(incoming).take() else {
            return false;
        };
        let guest = guest.clone();
        self.incoming = None;
        self.start_session(stream, guest);
        self.session.is_some()
    }
}

impl<A: GuestArch> Debugger for GdbDebugger<A> {
    fn attach(&mut self, guest: DebugGuest) {
        if let Some(session) = &mut self.session {
            // the run started again (`monitor reset`): same gdb, new guest
            session.target.guest = guest;
            return;
        }
        match self.link.take() {
            Some(GdbLink::Connected(stream)) => self.start_session(stream, guest),
            Some(GdbLink::Later(listener)) => {
                let incoming = accept_later(listener, guest.interrupt());
                self.incoming = Some((incoming, guest));
            }
            None => {}
        }
    }

    fn stopped(&mut self, mut why: DebugStop) -> DebugResume {
        if self.session.is_none() {
            if !self.late_session() {
                // still waiting for gdb (--gdb-no-wait), or gdb is gone
                return match self.incoming {
                    Some(_) => DebugResume::Continue,
                    None => DebugResume::Detach,
                };
            }
            why = DebugStop::Start;
        }
        let Some(session) = self.session.as_mut() else {
            return DebugResume::Detach;
        };
        session.watcher.pause();
        let resume = session.serve(why).unwrap_or_else(|e| {
            crate::say!("sim-host: gdb: {e}; the run goes on without the debugger");
            DebugResume::Detach
        });
        match resume {
            DebugResume::Continue | DebugResume::Step(_) => session.watcher.resume(),
            DebugResume::Reset => {}
            DebugResume::Detach | DebugResume::Kill => self.session = None,
        }
        resume
    }

    fn ended(&mut self, stop: &Stop) {
        if let Some(mut session) = self.session.take() {
            session.watcher.pause();
            if let Err(e) = session.end(stop) {
                crate::say!("sim-host: gdb: {e}");
            }
        }
    }
}

/// Accepts one connection on a helper thread and asks the guest to stop
/// for it.
fn accept_later(listener: TcpListener, interrupt: DebugInterrupt) -> Incoming {
    let incoming: Incoming = Arc::default();
    let slot = Arc::clone(&incoming);
    let spawned = std::thread::Builder::new()
        .name("gdb-accept".into())
        .spawn(move || {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let _ = stream.set_nodelay(true);
            *lock(&slot) = Some(stream);
            interrupt.request();
        });
    if let Err(e) = spawned {
        crate::say!("sim-host: gdb: cannot wait for a connection: {e}");
    }
    incoming
}

/// A connected gdb: gdbstub's state machine, the target it drives, the
/// bytes read but not yet fed, and the interrupt watcher.
struct Session<A: GuestArch> {
    stub: Option<StateMachine<A>>,
    target: GdbTarget<A>,
    pending: Received,
    watcher: Watcher,
}

impl<A: GuestArch> Session<A> {
    fn start(stream: TcpStream, guest: DebugGuest) -> Result<Session<A>, String> {
        let watcher = Watcher::start(&stream, guest.interrupt());
        let mut target = GdbTarget::new(guest);
        let stub = GdbStub::new(stream)
            .run_state_machine(&mut target)
            .map_err(protocol_error)?;
        Ok(Session {
            stub: Some(stub),
            target,
            pending: Received::default(),
            watcher,
        })
    }

    /// Tells gdb why the guest stopped, then serves its packets until it
    /// resumes the guest, detaches or kills it.
    fn serve(&mut self, why: DebugStop) -> Result<DebugResume, String> {
        let tid = ids::tid(self.target.guest.current_thread());
        let reason = match why {
            DebugStop::Start => None,
            DebugStop::Breakpoint => Some(MultiThreadStopReason::SwBreak(tid)),
            DebugStop::Step => Some(MultiThreadStopReason::SignalWithThread {
                tid,
                signal: Signal::SIGTRAP,
            }),
            DebugStop::Interrupt => Some(MultiThreadStopReason::SignalWithThread {
                tid,
                signal: Signal::SIGINT,
            }),
            DebugStop::Watch { kind, addr } => Some(MultiThreadStopReason::Watch {
                tid,
                kind: match kind {
                    Watch::Read => WatchKind::Read,
                    Watch::Write => WatchKind::Write,
                    Watch::Access => WatchKind::ReadWrite,
                },
                addr: addr as u32,
            }),
        };
        let mut stub = self.stub.take().ok_or("gdb is gone")?;
        if why == DebugStop::Interrupt {
            stub = self.take_interrupt(stub)?;
            if let GdbStubStateMachine::Running(_) = stub {
                // the bytes that stopped the guest were no interrupt
                self.stub = Some(stub);
                return Ok(DebugResume::Continue);
            }
        }
        if let Some(reason) = reason {
            stub = self.report(stub, reason)?;
        }
        self.pump_until_resumed(stub)
    }

    fn report(
        &mut self,
        stub: StateMachine<A>,
        reason: MultiThreadStopReason<u32>,
    ) -> Result<StateMachine<A>, String> {
        let next = match stub {
            GdbStubStateMachine::Running(running) => running.report_stop(&mut self.target, reason),
            GdbStubStateMachine::CtrlCInterrupt(ctrl_c) => {
                ctrl_c.interrupt_handled(&mut self.target, Some(reason))
            }
            other => return Ok(other),
        };
        next.map_err(protocol_error)
    }

    /// Reads gdb's interrupt byte (0x03), which stopped the guest; still
    /// `Running` if what gdb sent was something else.
    fn take_interrupt(&mut self, mut stub: StateMachine<A>) -> Result<StateMachine<A>, String> {
        while let GdbStubStateMachine::Running(mut running) = stub {
            let Some(byte) = available_byte(&mut self.pending, running.borrow_conn())? else {
                return Ok(GdbStubStateMachine::Running(running));
            };
            stub = running
                .incoming_data(&mut self.target, byte)
                .map_err(protocol_error)?;
        }
        Ok(stub)
    }

    fn pump_until_resumed(&mut self, mut stub: StateMachine<A>) -> Result<DebugResume, String> {
        self.target.resume = None;
        loop {
            stub = match stub {
                GdbStubStateMachine::Idle(_) if std::mem::take(&mut self.target.reset) => {
                    self.stub = Some(stub);
                    return Ok(DebugResume::Reset);
                }
                GdbStubStateMachine::Idle(mut idle) => {
                    let byte =
                        next_byte(&mut self.pending, idle.borrow_conn(), &self.target.guest)?;
                    idle.incoming_data(&mut self.target, byte)
                }
                GdbStubStateMachine::Running(running) => {
                    self.stub = Some(GdbStubStateMachine::Running(running));
                    return Ok(self.target.resume.take().unwrap_or(DebugResume::Continue));
                }
                GdbStubStateMachine::CtrlCInterrupt(ctrl_c) => {
                    let reason = MultiThreadStopReason::SignalWithThread {
                        tid: ids::tid(self.target.guest.current_thread()),
                        signal: Signal::SIGINT,
                    };
                    ctrl_c.interrupt_handled(&mut self.target, Some(reason))
                }
                GdbStubStateMachine::Disconnected(gone) => {
                    return Ok(match gone.get_reason() {
                        DisconnectReason::Kill => DebugResume::Kill,
                        _ => DebugResume::Detach,
                    });
                }
            }
            .map_err(protocol_error)?;
        }
    }

    /// Tells gdb how the run ended. A fault stops first (SIGSEGV) so the
    /// faulting state can be inspected.
    fn end(&mut self, stop: &Stop) -> Result<(), String> {
        let final_reason = match stop {
            Stop::Exit(status) => MultiThreadStopReason::Exited(*status as u8),
            Stop::Fault(_) => MultiThreadStopReason::Terminated(Signal::SIGSEGV),
            Stop::Interrupted(signal) => {
                MultiThreadStopReason::Terminated(Signal(u8::try_from(*signal).unwrap_or(9)))
            }
            Stop::CycleLimit(_) | Stop::Timeout(_) => {
                MultiThreadStopReason::Terminated(Signal::SIGXCPU)
            }
            Stop::Arp(_)
            | Stop::Internal(_)
            | Stop::Unsupported(_)
            | Stop::SystemReset
            | Stop::Unpriced(_) => MultiThreadStopReason::Terminated(Signal::SIGABRT),
        };
        let mut stub = self.stub.take().ok_or("gdb is gone")?;
        if let Stop::Fault(fault) = stop {
            crate::say!("sim-host: guest fault (stopped for gdb): {}", fault.kind);
            let reason = MultiThreadStopReason::SignalWithThread {
                tid: ids::tid(self.target.guest.current_thread()),
                signal: Signal::SIGSEGV,
            };
            stub = self.report(stub, reason)?;
            if self.pump_until_resumed(stub)? != DebugResume::Continue {
                return Ok(());
            }
            stub = self.stub.take().ok_or("gdb is gone")?;
        }
        self.report(stub, final_reason).map(drop)
    }
}

/// What went wrong with the connection, in the user's words.
fn protocol_error(e: gdbstub::stub::GdbStubError<&'static str, std::io::Error>) -> String {
    if e.is_connection_error() {
        return match e.into_connection_error() {
            Some((io, _)) => format!("the connection to gdb failed: {io}"),
            None => "the connection to gdb failed".into(),
        };
    }
    let text = e.to_string();
    if text.contains("parse packet") || text.contains("PacketUnexpected") {
        "the client sent something that is not a GDB remote protocol packet".into()
    } else if text.contains("unexpected packet") {
        // gdbstub's own words ask the user to file an issue with gdbstub
        // (`Hg-1`, "every thread", was one; issue 30, N06)
        "the client sent a packet this stub does not accept (such as `Hg-1`: one thread must be named)"
            .into()
    } else {
        text
    }
}

pub use packets::MAX_PACKET;

/// Bytes gdb has sent that are not fed to the stub yet (at most one read's
/// worth), the packet being received (whole packets are vetted before
/// the stub sees them: `packets`), and replies to refused packets.
#[derive(Default)]
struct Received {
    bytes: VecDeque<u8>,
    /// Bytes for the stub, in order.
    ready: VecDeque<u8>,
    /// The packet being received, from its `$`; empty between packets.
    packet: Vec<u8>,
    /// Checksum digits still to come after the packet's `#`.
    checksum: u8,
    /// Whether gdb has sent anything yet.
    heard: bool,
    /// gdb turned acknowledgements off (`QStartNoAckMode`).
    no_ack: bool,
    /// What to send gdb for the packets refused here.
    replies: Vec<u8>,
}

/// How long a client that has connected may stay silent before its first
/// byte: gdb sends `qSupported` at once; a client that sends nothing held
/// the guest until it disconnected (issue 30, N23).
pub const FIRST_BYTE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Received {
    fn pop(&mut self) -> Result<Option<u8>, String> {
        loop {
            if let Some(byte) = self.ready.pop_front() {
                return Ok(Some(byte));
            }
            let Some(byte) = self.bytes.pop_front() else {
                return Ok(None);
            };
            self.heard = true;
            self.take(byte)?;
        }
    }

    /// One byte from gdb: outside a packet it is the stub's at once, a
    /// packet is the stub's when whole and vetted.
    fn take(&mut self, byte: u8) -> Result<(), String> {
        if byte == b'$' {
            // a packet cut short by another: the stub sees what came
            self.ready.extend(self.packet.drain(..));
            self.packet.push(byte);
            self.checksum = 0;
            return Ok(());
        }
        if self.packet.is_empty() {
            self.ready.push_back(byte);
            return Ok(());
        }
        self.packet.push(byte);
        if self.checksum > 0 {
            self.checksum -= 1;
            if self.checksum == 0 {
                self.whole_packet();
            }
        } else if byte == b'#' {
            self.checksum = 2;
        } else if self.packet.len() > MAX_PACKET {
            return Err(format!(
                "gdb sent a packet of more than {MAX_PACKET} bytes, the PacketSize this stub announces"
            ));
        }
        Ok(())
    }

    /// `$body#cs` received: given to the stub, rewritten or refused. A
    /// packet with a wrong checksum goes to the stub as it came (which
    /// asks gdb to send it again).
    fn whole_packet(&mut self) {
        let packet = std::mem::take(&mut self.packet);
        let body = &packet[1..packet.len() - 3];
        let sum = body.iter().fold(0u8, |s, b| s.wrapping_add(*b));
        let sent = std::str::from_utf8(&packet[packet.len() - 2..])
            .ok()
            .and_then(|t| u8::from_str_radix(t, 16).ok());
        if sent != Some(sum) {
            self.ready.extend(packet);
            return;
        }
        if body == b"QStartNoAckMode" {
            self.no_ack = true;
        }
        match packets::vet(body) {
            packets::Vetted::Pass => self.ready.extend(packet),
            packets::Vetted::Rewrite(body) => self.ready.extend(framed(&body)),
            packets::Vetted::Refuse(reply) => {
                if !self.no_ack {
                    self.replies.push(b'+');
                }
                self.replies.extend(framed(reply.as_bytes()));
            }
        }
    }
}

/// `$body#checksum`.
fn framed(body: &[u8]) -> Vec<u8> {
    let sum = body.iter().fold(0u8, |s, b| s.wrapping_add(*b));
    let mut packet = Vec::with_capacity(body.len() + 4);
    packet.push(b'$');
    packet.extend_from_slice(body);
    packet.extend_from_slice(format!("#{sum:02x}").as_bytes());
    packet
}

/// A byte gdb has sent, if one arrives within the socket's read timeout.
fn available_byte(pending: &mut Received, conn: &mut TcpStream) -> Result<Option<u8>, String> {
    loop {
        let byte = pending.pop()?;
        if !pending.replies.is_empty() {
            let replies = std::mem::take(&mut pending.replies);
            conn.write_all(&replies).map_err(|e| e.to_string())?;
        }
        if let Some(byte) = byte {
            return Ok(Some(byte));
        }
        let mut buf = [0u8; 4096];
        match conn.read(&mut buf) {
            Ok(0) => return Err("gdb closed the connection".into()),
            Ok(n) => pending.bytes.extend(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Ok(None)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// The next byte from gdb: buffered, else read (waking up to notice a stop
/// signal, which ends the session).
fn next_byte(
    pending: &mut Received,
    conn: &mut TcpStream,
    guest: &DebugGuest,
) -> Result<u8, String> {
    let waiting = std::time::Instant::now();
    loop {
        if let Some(byte) = available_byte(pending, conn)? {
            return Ok(byte);
        }
        if guest.interrupt().signalled() {
            return Err("stopped by a signal".into());
        }
        if !pending.heard && waiting.elapsed() >= FIRST_BYTE_WAIT {
            return Err(format!(
                "the client connected but sent nothing for {} s",
                FIRST_BYTE_WAIT.as_secs()
            ));
        }
    }
}

/// Watches the socket while the guest runs: anything gdb sends then is
/// an interrupt (or a hang-up), and the guest is asked to stop.
struct Watcher {
    running: Arc<Mutex<Running>>,
    wake: Option<mpsc::Sender<()>>,
    interrupt: DebugInterrupt,
}

impl Watcher {
    /// Without a second handle on the socket there is no interrupt (the
    /// rest works).
    fn start(stream: &TcpStream, interrupt: DebugInterrupt) -> Watcher {
        let running = Arc::new(Mutex::new(Running::default()));
        let (wake, woken) = mpsc::channel();
        // the timeout is the socket's: the emulation thread's reads wake too
        let probe = stream
            .try_clone()
            .and_then(|s| s.set_read_timeout(Some(POLL)).map(|()| s));
        let spawned = probe.ok().and_then(|probe| {
            let (running, interrupt) = (Arc::clone(&running), interrupt.clone());
            std::thread::Builder::new()
                .name("gdb-interrupt".into())
                .spawn(move || watch(&probe, &running, &interrupt, &woken))
                .ok()
        });
        Watcher {
            running,
            wake: spawned.map(|_| wake),
            interrupt,
        }
    }

    fn resume(&self) {
        if let Some(wake) = &self.wake {
            let mut running = lock(&self.running);
            running.now = true;
            running.run += 1;
            drop(running);
            let _ = wake.send(());
        }
    }

    /// The guest stopped: no interrupt is wanted any more.
    fn pause(&self) {
        lock(&self.running).now = false;
        self.interrupt.clear();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The watcher thread: after each resume, waits for data from gdb.
fn watch(
    probe: &TcpStream,
    running: &Mutex<Running>,
    interrupt: &DebugInterrupt,
    woken: &mpsc::Receiver<()>,
) {
    while woken.recv().is_ok() {
        loop {
            let run = *lock(running);
            if !run.now {
                break;
            }
            match probe.peek(&mut [0u8; 1]) {
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // data, a hang-up or a broken socket: stop the guest, unless
                // the guest stopped and ran again meanwhile (the data was
                // then gdb's packets of that stop, which the stub read)
                _ => {
                    let mut now = lock(running);
                    if now.now && now.run == run.run {
                        interrupt.request();
                        now.now = false;
                    }
                }
            }
        }
    }
}

/// Whether the guest runs, and which run since the session began.
#[derive(Debug, Clone, Copy, Default)]
struct Running {
    now: bool,
    run: u64,
}
