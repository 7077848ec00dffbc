//! RISC-V traps taken as the core takes them (issue 39, RISC-V privileged
//! spec 20211203, machine ISA 1.12), on the `traps` example
//! (`guest-shim/examples/traps/riscv/traps.S`, whose comments mark the
//! translated blocks): ecall, ebreak, illegal instructions and misaligned
//! AMOs go to mtvec with mcause, mepc and mtval, `mret` returns; the
//! machine timer's interrupts and the traps compose; traps that cannot
//! be taken end the run saying why.
//!
//! Every count is derived here by hand from the target files' cycle
//! tables and `[system]` trap facts: rv32imac (Hazard3: trap_entry and
//! interrupt_entry 3, instruction_timings.adoc "Trap Request"), and the
//! sifive-e31 table (trap and interrupt entry 4, the E31 manual's
//! interrupt latency) without its branch predictor, whose own rules are
//! tested elsewhere (`predictor`); here only the traps' costs are at
//! stake. QEMU ends a translated block after every CSR instruction,
//! ecall, ebreak, mret and branch, and blocks are priced one by one
//! (latencies across blocks are not modelled).

use e2e_tests::recorded_samples;
use e2e_tests::{guest, scratch, sim_host_bin};
use std::path::Path;
use std::process::Command;

/// One run's exit status, output, error text and samples (innermost
/// section id, cycles).
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    samples: Vec<(u16, u64)>,
}

/// The cores the counts are derived on.
#[derive(Clone, Copy, Debug)]
enum Core {
    /// The built-in rv32imac (Hazard3, no predictor).
    Hazard3,
    /// The built-in sifive-e31 file without `[cycles.predictor]`.
    E31,
    /// The built-in sifive-e31, as it is.
    E31Predicted,
}

impl Core {
    fn guests(self) -> &'static str {
        match self {
            Core::Hazard3 => "rv32imac",
            Core::E31 | Core::E31Predicted => "sifive-e31",
        }
    }
}

/// The sifive-e31 target file less its branch predictor.
fn e31_without_predictor(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(e2e_tests::repo_root().join("targets/sifive-e31.toml"))
        .expect("targets/sifive-e31.toml");
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with('[') {
            skipping = line.trim() == "[cycles.predictor]";
        }
        if !skipping {
            out.push_str(&line.replace("name = \"sifive-e31\"", "name = \"e31-no-predictor\""));
            out.push('\n');
        }
    }
    assert!(!out.contains("[cycles.predictor]") && out.contains("e31-no-predictor"));
    let path = dir.join("e31-no-predictor.toml");
    std::fs::write(&path, out).unwrap();
    path
}

fn run(core: Core, args: &[&str]) -> Run {
    let dir = scratch(&format!("traps-{core:?}-{}", args.join("-")));
    let file = dir.join("data.arp");
    let mut cmd = Command::new(sim_host_bin());
    cmd.args(["run", "-q", "--max-cycles", "2000000"]);
    match core {
        Core::E31 => cmd.arg("--target-file").arg(e31_without_predictor(&dir)),
        _ => cmd.args(["--target", core.guests()]),
    };
    let out = cmd
        .arg(guest(core.guests(), "traps"))
        .arg("-o")
        .arg(&file)
        .arg("--")
        .args(args)
        .output()
        .expect("sim-host starts");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        samples: if file.exists() {
            recorded_samples(&file)
        } else {
            Vec::new()
        },
    }
}

fn sample(r: &Run, sid: u16) -> u64 {
    r.samples
        .iter()
        .find(|(s, _)| *s == sid)
        .unwrap_or_else(|| panic!("no sample of section {sid}: {}", r.stderr))
        .1
}

/// The numbers a line `word a b ...` of the output holds after `word`.
fn printed(r: &Run, word: &str) -> Vec<u64> {
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with(word))
        .unwrap_or_else(|| panic!("no `{word}` line in {:?}: {}", r.stdout, r.stderr));
    line.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// The prices the kernels use, from the target files' tables.
struct Prices {
    alu: u64,
    /// jal (a call)
    call: u64,
    /// jalr (a return)
    ret: u64,
    /// a conditional branch, and what it costs more taken
    branch: u64,
    taken: u64,
    /// csrr, csrw, mret: the `system` row
    system: u64,
    store: u64,
    load: u64,
    /// an instruction using the register the load before it loaded
    load_use: u64,
    trap_entry: u64,
    interrupt_entry: u64,
}

/// rv32imac: Hazard3's Instruction Cycle Counts; trap and interrupt entry
/// 3 ([system] trap_entry, interrupt_entry).
const HAZARD3: Prices = Prices {
    alu: 1,
    call: 2,
    ret: 2,
    branch: 1,
    taken: 1,
    system: 1,
    store: 1,
    load: 1,
    load_use: 1,
    trap_entry: 3,
    interrupt_entry: 3,
};

/// sifive-e31 without its predictor: one instruction per cycle, a branch
/// 1 taken or not, LW's result 2 cycles late (a dependent instruction
/// waits 1); trap and interrupt entry 4.
const E31: Prices = Prices {
    alu: 1,
    call: 1,
    ret: 1,
    branch: 1,
    taken: 0,
    system: 1,
    store: 1,
    load: 1,
    load_use: 1,
    trap_entry: 4,
    interrupt_entry: 4,
};

fn prices(core: Core) -> &'static Prices {
    match core {
        Core::Hazard3 => &HAZARD3,
        _ => &E31,
    }
}

/// The listed failure of issue 39: an ecall with a handler in mtvec
/// faulted ("ecall with no environment to take it"), naming the
/// instruction after it. It is taken: mcause 11 (M-mode), mepc the ecall
/// itself (3.3.1), MPP = M, MPIE = the MIE before (clear), MIE clear.
#[test]
fn an_ecall_goes_to_the_handler_in_mtvec() {
    let r = run(Core::Hazard3, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("ecall mcause=11 mepc=site mtval=00000000 mpp=3 mpie=0 mie=0\n"),
        "{}",
        r.stdout
    );
}

/// What each handler saw (the last of its kind's 200 traps). mcause:
/// 3.1.15 (a misaligned AMO is a store/AMO exception, 6, an LR a load's,
/// 4); mepc: the trapping instruction (3.1.14); mtval (3.1.16): Hazard3
/// hardwires it to 0; the E31 file writes the instruction bits of an
/// illegal instruction (16 of the all-zero halfword: 0), the address of
/// an EBREAK and of a misaligned access. The misaligned AMO never wrote
/// its word.
#[test]
fn each_trap_kind_sets_mcause_mepc_mtval_and_mstatus() {
    let kinds = [
        ("ecall", 11, "00000000", "00000000"),
        ("ebreak", 3, "00000000", "site"),
        ("c.ebreak", 3, "00000000", "site"),
        ("illegal", 2, "00000000", "0000000b"),
        ("c.unimp", 2, "00000000", "00000000"),
        ("unimp", 2, "00000000", "c0001073"),
        ("amo", 6, "00000000", "misaligned+1"),
        ("lr", 4, "00000000", "misaligned+1"),
    ];
    for core in [Core::Hazard3, Core::E31Predicted] {
        let r = run(core, &[]);
        assert_eq!(r.code, Some(0), "{core:?}: {}", r.stderr);
        for (kind, cause, hazard3, e31) in kinds {
            let tval = if matches!(core, Core::Hazard3) {
                hazard3
            } else {
                e31
            };
            let line = format!("{kind} mcause={cause} mepc=site mtval={tval} mpp=3 mpie=0 mie=0\n");
            assert!(r.stdout.contains(&line), "{core:?}: {line} in {}", r.stdout);
        }
        assert!(r.stdout.contains("misaligned 11223344 55667788\n"));
    }
}

/// Each kind's kernel, N = 100 (section 2k-1) and 200 (2k): `li t0, N`,
/// `jal` into it, [la t3; la t1; csrw mtvec] (the AMO and LR kernels
/// [.. la t4] more), N times the trap, the handler, [addi; bnez] (a
/// 16-bit kind's c.nop first), the taken bnez N-1 times, `ret`, the leave
/// call's `li; li; jal`.
///
/// The trap costs trap_entry from the trapping instruction's start, in
/// place of its own price (the AMO's block [amo addi bnez] is taken back
/// down to the AMO). The handler: 5 csrr, 4 sw, addi, csrw, mret = 12.
/// Hazard3: 13 + 18 N (ecall 1813 and 3613 for 100 and 200); E31 without
/// its predictor: 11 + 18 N.
#[test]
fn each_trap_kind_costs_its_entry_and_the_handler() {
    // (first section, 16-bit trapping instruction, sets t4)
    let kinds = [
        (1, "ecall", false, false),
        (3, "ebreak", false, false),
        (5, "c.ebreak", true, false),
        (7, "illegal", false, false),
        (9, "c.unimp", true, false),
        (11, "unimp", false, false),
        (13, "amo", false, true),
        (15, "lr", false, true),
    ];
    for core in [Core::Hazard3, Core::E31] {
        let p = prices(core);
        let r = run(core, &[]);
        assert_eq!(r.code, Some(0), "{core:?}: {}", r.stderr);
        let handler = 5 * p.system + 4 * p.store + p.alu + p.system + p.system;
        assert_eq!(handler, 12);
        for (sid, kind, short, t4) in kinds {
            let setup = 4 * p.alu + p.system + if t4 { 2 * p.alu } else { 0 };
            let body = p.trap_entry + handler + if short { p.alu } else { 0 } + p.alu + p.branch;
            for (section, n) in [(sid, 100u64), (sid + 1, 200)] {
                let expected = p.alu
                    + p.call
                    + setup
                    + n * body
                    + (n - 1) * p.taken
                    + p.ret
                    + 2 * p.alu
                    + p.call;
                assert_eq!(sample(&r, section), expected, "{core:?} {kind} N={n}");
            }
        }
    }
    assert_eq!(13 + 18 * 100, 1813);
}

/// Section 20: inside it `lw` reads mtime at the section's cycle 0, `add;
/// sw` set mtimecmp = mtime + P (the SIO counting core cycles), `csrsi`
/// sets MIE; N iterations of [ecall] [addi; bnez] (the bnez taken N-1
/// times), then [csrsi] clears MIE and the leave call `li; li; jal`
/// follows: after = 5 on Hazard3. The shared handler's ecall path after
/// the entry: [csrr] [bltz, not taken] [csrr] [addi; csrw] [addi; mret]
/// = 7; its timer path [csrr] [bltz, taken] [lw; add; sw; addi; mret] =
/// 9. A tick due while the ecall handler runs (MIE clear) is taken after
/// its mret; the interrupted block pays the branch into it when the
/// timer handler returns. So S = 5 + N (trap + 7 + 2) + (N - 1) + 5 +
/// ticks (interrupt entry + 9), and the ticks are the periods up to the
/// MIE-clearing block, (S - after) / P.
///
/// Nested: the timer path saves mepc and mstatus ([csrr] [csrr]), makes
/// an ecall (MIE is clear; the trap is taken all the same: trap + 7),
/// restores them ([csrw] [csrw]) and returns: a tick costs interrupt
/// entry + 3 + 2 + trap + 7 + 2 + 6 = 26, and counts an ecall more.
#[test]
fn ecalls_and_the_machine_timer_compose() {
    let p = &HAZARD3;
    let ecall_path = 3 * p.system + p.branch + p.alu + p.alu + p.system;
    let timer_path =
        p.system + p.branch + p.taken + p.load + p.load_use + p.alu + p.store + p.alu + p.system;
    assert_eq!((ecall_path, timer_path), (7, 9));
    let setup = p.load + p.load_use + p.alu + p.store + p.system;
    let after = p.system + 2 * p.alu + p.call;
    let nested_tick = p.interrupt_entry
        + p.system
        + p.branch
        + p.taken
        + 2 * p.system
        + p.trap_entry
        + ecall_path
        + 2 * p.system
        + (timer_path - p.system - p.branch - p.taken);
    assert_eq!(nested_tick, 26);
    for (case, tick) in [
        ("tick-ecall", p.interrupt_entry + timer_path),
        ("nested", nested_tick),
    ] {
        for (period, n) in [(100u64, 1000u64), (37, 500), (1000, 777)] {
            let r = run(
                Core::Hazard3,
                &[case, "sio", &period.to_string(), &n.to_string()],
            );
            assert_eq!(r.code, Some(0), "{case} P={period}: {}", r.stderr);
            let counts = printed(&r, "ecalls");
            let (ecalls, ticks) = (counts[0], counts[1]);
            let s = sample(&r, 20);
            assert!(ticks > 0, "{case} P={period}");
            assert_eq!(
                ticks,
                (s - after) / period,
                "{case} P={period} N={n}: S={s}"
            );
            let nested = u64::from(case == "nested");
            assert_eq!(ecalls, n + nested * ticks, "{case} P={period}");
            let work = setup
                + n * (p.trap_entry + ecall_path + p.alu + p.branch)
                + (n - 1) * p.taken
                + after;
            assert_eq!(s, work + ticks * tick, "{case} P={period} N={n}");
        }
    }
}

/// The FE310's CLINT: mtime counts 32768 Hz against the E31's 320 MHz,
/// mtimecmp at 0x02004000. The same decomposition on the E31 (without
/// its predictor): the ecall path 7 and the timer path [csrr] [bltz]
/// [lw; add (waits 1); sw; addi; mret] = 8, the set-up 5 (the add waits
/// for the lw), after = csrci + li + li + jal = 4. Each tick is one
/// period of mtime: about (S - after) x 32768 / 320 MHz / P of them.
#[test]
fn the_clint_timer_interrupts_an_ecall_loop() {
    let p = &E31;
    let ecall_path = 7;
    let timer_path = p.system + p.branch + p.load + p.load_use + p.alu + p.store + p.alu + p.system;
    let (setup, after) = (5, 4);
    for (case, tick) in [
        ("tick-ecall", p.interrupt_entry + timer_path),
        (
            "nested",
            p.interrupt_entry
                + p.system
                + p.branch
                + 2 * p.system
                + p.trap_entry
                + ecall_path
                + 2 * p.system
                + (timer_path - p.system - p.branch),
        ),
    ] {
        let (period, n) = (1u64, 3000u64);
        let r = run(
            Core::E31,
            &[case, "clint", &period.to_string(), &n.to_string()],
        );
        assert_eq!(r.code, Some(0), "{case}: {}", r.stderr);
        let counts = printed(&r, "ecalls");
        let (ecalls, ticks) = (counts[0], counts[1]);
        let s = sample(&r, 20);
        let nested = u64::from(case == "nested");
        assert_eq!(ecalls, n + nested * ticks, "{case}");
        let work = setup + n * (p.trap_entry + ecall_path + p.alu + p.branch) + after;
        assert_eq!(s, work + ticks * tick, "{case}");
        // the periods of mtime in the stretch, give or take the one the
        // section started in
        let periods = (s - after) * 32_768 / 320_000_000 / period;
        assert!(
            ticks == periods || ticks == periods + 1,
            "{case}: {ticks} ticks, {periods} periods"
        );
    }
}

/// A timer interrupt made pending inside an ecall handler (MIE clear
/// there) is not taken inside it: it is taken at the first instruction
/// the handler's mret returns to, the one after the ecall (3.1.6.1).
#[test]
fn an_interrupt_pending_in_a_handler_is_taken_after_its_mret() {
    for (core, timer) in [(Core::Hazard3, "sio"), (Core::E31Predicted, "clint")] {
        let r = run(core, &["pending", timer]);
        assert_eq!(r.code, Some(0), "{core:?}: {}", r.stderr);
        assert!(
            r.stdout.contains("timer mepc=site+4 inside=0\n"),
            "{core:?}: {}",
            r.stdout
        );
    }
}

/// The CLINT's msip raises the machine software interrupt (mcause
/// 0x80000003, mie.MSIE). Section 21: [csrsi] sets MIE, N iterations of
/// [sw msip; addi; bnez], the interrupt taken in front of the next block
/// (interrupt entry 4, the handler [sw; addi; mret] 3), [csrci], `li; li;
/// jal`: 1 + N (3 + 4 + 3) + 1 + 3 on the E31 without its predictor.
#[test]
fn the_clint_software_interrupt() {
    let p = &E31;
    for n in [1u64, 100] {
        let r = run(Core::E31, &["software", &n.to_string()]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert!(
            r.stdout
                .contains(&format!("software {n} mcause=80000003\n")),
            "{}",
            r.stdout
        );
        let per = p.store + p.alu + p.branch + p.interrupt_entry + p.store + p.alu + p.system;
        let expected = p.system + n * per + p.system + 2 * p.alu + p.call;
        assert_eq!(sample(&r, 21), expected, "N={n}");
    }
}

/// Traps that cannot be taken end the run with a fault that names the
/// trap, the instruction and the rule (privileged spec 3.1.7), never a
/// jump into nothing or a loop of traps.
#[test]
fn a_trap_with_no_handler_ends_the_run_naming_it() {
    let cases: [(Core, &[&str], &str, &str); 5] = [
        (
            Core::Hazard3,
            &["mtvec-zero"],
            "ecall from M-mode (mcause 11) with no handler to take it: mtvec is 0",
            "pc: ecall_mtvec_zero+0x4 (0x",
        ),
        (
            Core::E31Predicted,
            &["mtvec-zero"],
            "ecall from M-mode (mcause 11) with no handler to take it: mtvec is 0",
            "pc: ecall_mtvec_zero+0x4 (0x",
        ),
        (
            Core::Hazard3,
            &["mtvec-data"],
            "its handler address 0x40000000 (from mtvec) is not executable memory",
            "): ecall",
        ),
        (
            Core::Hazard3,
            &["timer-mtvec-zero", "sio"],
            "machine timer interrupt (mcause 0x80000007) with no handler to take it: mtvec is 0",
            "pc: timer_mtvec_zero+",
        ),
        (
            Core::E31Predicted,
            &["timer-mtvec-zero", "clint"],
            "machine timer interrupt (mcause 0x80000007) with no handler to take it: mtvec is 0",
            "pc: timer_mtvec_zero+",
        ),
    ];
    for (core, args, kind, pc) in cases {
        let r = run(core, args);
        assert_eq!(r.code, Some(120), "{core:?} {args:?}: {}", r.stderr);
        assert!(r.stderr.contains(kind), "{core:?} {args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("RISC-V privileged spec 3.1.7"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains(pc), "{core:?} {args:?}: {}", r.stderr);
    }
}

/// A handler that traps at its first instruction traps forever: a loop
/// like any other, ended by --max-cycles (exit 122) with the cycles it
/// was given.
#[test]
fn a_trap_storm_is_bounded_by_the_cycle_limit() {
    for core in [Core::Hazard3, Core::E31Predicted] {
        let r = run(core, &["storm"]);
        assert_eq!(r.code, Some(122), "{core:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("stopped after 2000000 cycles"),
            "{core:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn reruns_are_byte_identical() {
    for (core, args) in [
        (Core::Hazard3, &[][..]),
        (Core::Hazard3, &["nested", "sio", "37", "500"][..]),
        (
            Core::E31Predicted,
            &["tick-ecall", "clint", "1", "3000"][..],
        ),
    ] {
        let first = run(core, args);
        assert_eq!(first.code, Some(0), "{core:?}: {}", first.stderr);
        let again = run(core, args);
        assert_eq!(again.stdout, first.stdout, "{core:?}");
        assert_eq!(again.samples, first.samples, "{core:?}");
    }
}

/// `sim-host targets` shows each RISC-V board's timer (kind, address,
/// rate, interrupts) and what its traps cost, from the target files.
#[test]
fn the_target_list_shows_the_timers_and_the_traps() {
    let out = Command::new(sim_host_bin())
        .arg("targets")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let listing = |name: &str| {
        let from = text
            .find(&format!("\n{name} "))
            .unwrap_or_else(|| panic!("{name} listed: {text}"));
        let rest = &text[from + 1..];
        rest[..rest.find("\n\n").unwrap_or(rest.len())].to_owned()
    };
    for (name, lines) in [
        (
            "rv32imac",
            [
                "  traps: ecall, ebreak, illegal instructions, misaligned LR and AMOs enter mtvec's handler in 3 cycles, an interrupt in 3; mtval always 0",
                "  machine timer: rp2350-sio at 0xd00001a4 (MTIME_CTRL): mtime at 0xd00001b0 counts 1000000 Hz (with MTIME_CTRL.FULLSPEED the core clock), mtimecmp at 0xd00001b8 raises the machine timer interrupt",
            ],
        ),
        (
            "sifive-e31",
            [
                "  traps: ecall, ebreak, illegal instructions, misaligned LR and AMOs enter mtvec's handler in 4 cycles, an interrupt in 4; mtval the address or instruction",
                "  machine timer: sifive-clint at 0x02000000: mtime at 0x0200bff8 counts 32768 Hz, mtimecmp at 0x02004000 raises the machine timer interrupt, msip at 0x02000000 the machine software interrupt",
            ],
        ),
    ] {
        let block = listing(name);
        for line in lines {
            assert!(block.lines().any(|l| l == line), "{name}: {line}\n{block}");
        }
    }
}
