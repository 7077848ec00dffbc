//! The core's own clocks and exceptions (issue 26), on the `clocks`
//! example: DWT_CYCCNT, SysTick and RISC-V's counter CSRs read the
//! simulated cycle count; SysTick, SVCall and PendSV are taken as the core
//! takes them, with the latencies of `sim-host/src/model/cores.rs`.
//!
//! Every expected count is derived here by hand from the target files'
//! cycle tables (whose rows cite the cores' manuals). The measured
//! stretches are inline assembly in `guest-shim/examples/clocks/clocks.c`:
//!
//!   ARM (Thumb-1, the same code on every Cortex-M):
//!     bl arp_enter_kernel            <- the section starts after the call
//!     ldr r5, [r4]                   <- t0 (the counter)
//!     movs r3, #100
//!     1: subs r3, #1 ; bne 1b
//!     ldr r6, [r4]                   <- t1
//!     movs r0, #1 ; movs r1, #1
//!     bl arp_leave_kernel            <- the section's sample holds this call
//!
//!   RISC-V: csrr t0, CSR ; li t2, 100 ; 1: addi t2, -1 ; bnez t2, 1b ;
//!     csrr t1, CSR ; li a0, 1 ; li a1, 1 ; call arp_leave_kernel
//!
//! A counter read returns the count at the start of the reading
//! instruction, so t1 - t0 is the cost of every instruction from the
//! first read up to, not including, the second.

use e2e_tests::process::qemu_arm;
use e2e_tests::recorded_samples;
use e2e_tests::{guest, require_tool, scratch, sim_host_bin};
use std::path::Path;
use std::process::{Command, Output};

/// One run's exit status, output, error text and recorded samples
/// (innermost section id, cycles), and its data.arp bytes.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    samples: Vec<(u16, u64)>,
    arp: Vec<u8>,
}

fn run(target: &str, args: &[&str]) -> Run {
    let dir = scratch(&format!("clocks-{target}-{}", args.join("-")));
    let file = dir.join("data.arp");
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", target, "-q", "--max-cycles", "50000000"])
        .arg(guest(target, "clocks"))
        .arg("-o")
        .arg(&file)
        .arg("--")
        .args(args)
        .output()
        .expect("sim-host starts");
    finish(out, &file)
}

fn finish(out: Output, file: &Path) -> Run {
    let arp = std::fs::read(file).unwrap_or_default();
    let samples = if arp.is_empty() {
        Vec::new()
    } else {
        recorded_samples(file)
    };
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        samples,
        arp,
    }
}

/// The number the guest printed after `word` on its first line.
fn printed(r: &Run, word: &str) -> u64 {
    let line = r.stdout.lines().next().unwrap_or_default();
    let value = line
        .strip_prefix(word)
        .and_then(|rest| rest.trim().parse().ok());
    value.unwrap_or_else(|| panic!("no `{word} N` line: {}{}", r.stdout, r.stderr))
}

/// The one sample of section `sid`.
fn sample(r: &Run, sid: u16) -> u64 {
    let values: Vec<u64> = r
        .samples
        .iter()
        .filter(|(s, _)| *s == sid)
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(
        values.len(),
        1,
        "one sample of section {sid}: {:?}",
        r.samples
    );
    values[0]
}

/// What the ARM stretch costs on a core: the instruction prices it uses.
/// The cores whose prices this file derives (ARMv6-M and ARMv7-M without
/// dual issue).
const V6M_V7M: [&str; 5] = [
    "cortex-m0",
    "cortex-m0plus",
    "cortex-m3",
    "cortex-m4",
    "cortex-m4f",
];

struct ArmPrices {
    /// LDR (not pipelined: the next instruction is not a load)
    ldr: u64,
    /// STR to the System Control Space
    str_: u64,
    /// MOVS, SUBS, ADDS; a conditional branch not taken
    alu: u64,
    /// what a taken conditional branch costs on top
    taken: u64,
    /// BL
    bl: u64,
    /// LDR of a literal (the handler's `ldr r0, =ticks`)
    ldr_literal: u64,
    /// LDR whose base register the previous load wrote
    ldr_dependent: u64,
    /// the exception return's BX LR (its refill is in the return latency)
    bx_return: u64,
    /// SVC
    svc: u64,
    entry: u64,
    exit: u64,
    tail_chain: u64,
}

/// Cortex-M3 and M4: TRMs DDI 0337I and DDI 0439D Table 3-1 (the rows of
/// targets/cortex-m3.toml and cortex-m4.toml); latencies 12 entry, 10
/// return, 6 tail-chaining (Cortex-M4 TRM DDI 0439D 3.9.1, as model::cores
/// cites; the Cortex-M3 TRM's return of 12 is a typographical error, Arm
/// Knowledge Article 103489845).
const M3_M4: ArmPrices = ArmPrices {
    ldr: 2,
    str_: 1,
    alu: 1,
    // B<cc> taken: 1 + P with P = 1
    taken: 1,
    // BL: 1 + P with P = 1
    bl: 2,
    // LDR [PC, #imm]: 2, plus 1 for the literal's fetch from the code
    // region (the contention rule of targets/cortex-m4.toml)
    ldr_literal: 3,
    // the base was written by the load just before: not pipelined
    ldr_dependent: 2,
    bx_return: 1,
    // SVC: 1 (the system row)
    svc: 1,
    entry: 12,
    exit: 10,
    tail_chain: 6,
};

/// Cortex-M0: TRM DDI 0432C Table 3-1 (targets/cortex-m0.toml): loads
/// and stores 2, B<cc> 1 or 3 taken, BL 4, the system row 4 for SVC;
/// latencies 16 entry (J. Yiu's latency table) and, unpublished for M0,
/// 16 return and 6 tail-chaining (the model's assumptions, model::cores).
const M0: ArmPrices = ArmPrices {
    ldr: 2,
    str_: 2,
    alu: 1,
    taken: 2,
    bl: 4,
    ldr_literal: 2,
    ldr_dependent: 2,
    bx_return: 1,
    svc: 4,
    entry: 16,
    exit: 16,
    tail_chain: 6,
};

/// Cortex-M0+: TRM DDI 0484C Table 3-1 (targets/cortex-m0plus.toml):
/// loads and stores 2, B<cc> 1 or 2 taken, BL 3, the system row 3 for SVC;
/// entry 15 (J. Yiu's latency table, the target's `[system]`), return 16
/// and tail-chaining 6 (the M0's, model::cores' assumption).
const M0PLUS: ArmPrices = ArmPrices {
    ldr: 2,
    str_: 2,
    alu: 1,
    taken: 1,
    bl: 3,
    ldr_literal: 2,
    ldr_dependent: 2,
    bx_return: 1,
    svc: 3,
    entry: 15,
    exit: 16,
    tail_chain: 6,
};

fn arm_prices(target: &str) -> &'static ArmPrices {
    match target {
        "cortex-m0" => &M0,
        "cortex-m0plus" => &M0PLUS,
        _ => &M3_M4,
    }
}

/// `n` iterations of `subs; bne` (the last branch not taken).
fn arm_loop(p: &ArmPrices, n: u64) -> u64 {
    n * 2 * p.alu + (n - 1) * p.taken
}

/// From the first counter read to the second: ldr, movs, the loop.
fn arm_counted(p: &ArmPrices) -> u64 {
    p.ldr + p.alu + arm_loop(p, 100)
}

/// The section: the counted stretch, the second read, two movs, the BL.
fn arm_section(p: &ArmPrices) -> u64 {
    arm_counted(p) + p.ldr + 2 * p.alu + p.bl
}

#[test]
fn dwt_cyccnt_counts_the_sections_cycles() {
    for target in ["cortex-m3", "cortex-m4", "cortex-m4f"] {
        let p = arm_prices(target);
        let r = run(target, &["dwt"]);
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        assert_eq!(printed(&r, "dwt"), arm_counted(p), "{target}");
        assert_eq!(sample(&r, 1), arm_section(p), "{target}");
    }
    // 2 + 1 + (200 + 99) on M3/M4, and the section 6 more
    assert_eq!(arm_counted(&M3_M4), 302);
    assert_eq!(arm_section(&M3_M4), 308);
}

#[test]
fn systick_counts_down_the_sections_cycles() {
    for target in V6M_V7M {
        let p = arm_prices(target);
        let r = run(target, &["systick"]);
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        assert_eq!(printed(&r, "systick"), arm_counted(p), "{target}");
        assert_eq!(sample(&r, 1), arm_section(p), "{target}");
    }
    // M0: 2 + 1 + (200 + 99 x 2), the section 2 + 1 + 1 + 4 more
    assert_eq!(arm_counted(&M0), 401);
    assert_eq!(arm_section(&M0), 409);
}

/// rv32imac prices (targets/rv32imac.toml, Hazard3's Instruction Cycle
/// Counts): csrr 1, li and addi 1, bnez 1 not taken and 2 taken, call 2.
#[test]
fn riscv_cycle_and_instret_count_the_sections_work() {
    let (csrr, alu, taken_extra, call) = (1, 1, 1, 2);
    let counted = csrr + alu + 100 * 2 * alu + 99 * taken_extra;
    let section = counted + csrr + 2 * alu + call;
    let r = run("rv32imac", &["cycle"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(printed(&r, "cycle"), counted);
    assert_eq!(sample(&r, 1), section);
    assert_eq!((counted, section), (301, 306));
    // instret: the first csrr, li, then 100 x (addi, bnez)
    let r = run("rv32imac", &["instret"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(printed(&r, "instret"), 1 + 1 + 200);
    assert_eq!(sample(&r, 1), section);
}

/// SysTick with reload R, enabled by the store right after the enter call
/// and disabled by the store before the leave call's set-up, over N loop
/// iterations. The counter counts while enabled: from the enabling store's
/// first cycle to the disabling store's, E = S - (str + 2 movs + bl) of the
/// section's S cycles. Loaded with 0, it reloads at its first cycle and
/// reaches 0 every R + 1 cycles after: floor(E / (R + 1)) interrupts. Each
/// costs the entry, the handler (ldr literal, dependent ldr, adds, str,
/// bx) and the return; the section holds them all.
#[test]
fn systick_interrupts_tick_every_reload_plus_one_cycles() {
    for target in V6M_V7M {
        let p = arm_prices(target);
        for (reload, n) in [(99u64, 1000u64), (249, 3000), (63, 777)] {
            let r = run(target, &["tick", &reload.to_string(), &n.to_string()]);
            assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
            let ticks = printed(&r, "ticks");
            let s = sample(&r, 1);
            let after = p.str_ + 2 * p.alu + p.bl;
            assert_eq!(
                ticks,
                (s - after) / (reload + 1),
                "{target} R={reload} N={n}: S={s}"
            );
            let handler = p.ldr_literal + p.ldr_dependent + p.alu + p.str_ + p.bx_return;
            let per_tick = p.entry + handler + p.exit;
            let work = p.str_ + arm_loop(p, n) + after;
            assert_eq!(s, work + ticks * per_tick, "{target} R={reload} N={n}");
        }
    }
}

/// RISC-V's machine timer (RP2350's SIO mtime, counting core cycles with
/// MTIME_CTRL.FULLSPEED): inside the section, `lw t4, -8(t3)` reads mtime
/// at the section's cycle 0 and `add`/`sw` set mtimecmp = mtime + P, so
/// the interrupt is due at cycles P, 2P, ... (the handler moves mtimecmp
/// by P each time). It is taken at each block boundary at or after that,
/// while mstatus.MIE is set: up to the block of the `csrrci` that clears
/// it, whose start is S - after. Each costs the trap's jump to mtvec (3,
/// Hazard3's Trap Request) and the handler: lw (1, +1 as c.add reads it),
/// c.add, sw, c.addi, mret (1 each, the system class).
#[test]
fn riscv_machine_timer_interrupts_every_period() {
    let (load, load_use, alu, store, csr, taken_extra, call, mret) = (1, 1, 1, 1, 1, 1, 2, 1);
    let trap_entry = 3;
    let handler = load + load_use + alu + store + alu + mret;
    let after = csr + 2 * alu + call;
    for (period, n) in [(100u64, 1000u64), (300, 1000), (20, 1000), (1000, 777)] {
        let r = run("rv32imac", &["mtick", &period.to_string(), &n.to_string()]);
        assert_eq!(r.code, Some(0), "P={period}: {}", r.stderr);
        let ticks = printed(&r, "ticks");
        let s = sample(&r, 1);
        assert_eq!(ticks, (s - after) / period, "P={period} N={n}: S={s}");
        let setup = load + load_use + alu + store + csr;
        let work = setup + n * 2 * alu + (n - 1) * taken_extra + after;
        assert_eq!(s, work + ticks * (trap_entry + handler), "P={period} N={n}");
    }
}

/// An SVC whose handler is `str r1, [r0]; bx lr`-shaped (on v7-M a bare
/// `bx lr`): from the counter read before it to the one after, the read,
/// the SVC, the entry, the handler and the return. With PendSV pended by
/// the handler, its handler (`bx lr`) tail-chains in before the return.
#[test]
fn svc_and_tail_chaining_cost_the_manuals_latencies() {
    for target in V6M_V7M {
        let p = arm_prices(target);
        // on v6-M the SVC handler always stores (r1 = 0 or PENDSVSET)
        let handler = if target.starts_with("cortex-m0") {
            p.str_ + p.bx_return
        } else {
            p.bx_return
        };
        let svc = p.ldr + p.svc + p.entry + handler + p.exit;
        let r = run(target, &["svc"]);
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        assert_eq!(printed(&r, "svc"), svc, "{target}");

        let pending = p.str_ + p.bx_return + p.tail_chain + p.bx_return;
        let chained = p.ldr + p.svc + p.entry + pending + p.exit;
        let r = run(target, &["tailchain"]);
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        assert_eq!(printed(&r, "tailchain"), chained, "{target}");
    }
    // on M3/M4: ldr 2, svc 1, entry 12, bx lr 1, return 10 (what cortex-m4 printed)
    let p = &M3_M4;
    assert_eq!(p.ldr + p.svc + p.entry + p.bx_return + p.exit, 26);
}

/// Two tasks on their own process stacks switched by PendSV print in
/// turns, as under QEMU's mps2-an386 (Cortex-M4).
#[test]
fn pendsv_switches_two_tasks() {
    let expected = "A0\nB0\nA1\nB1\nA2\nB2\n";
    for target in [
        "cortex-m3",
        "cortex-m4",
        "cortex-m4f",
        "cortex-m7",
        "cortex-m33",
    ] {
        let r = run(target, &["pendsv"]);
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        assert_eq!(r.stdout, expected, "{target}");
    }
}

#[test]
#[cfg_attr(
    not(has_qemu_arm),
    ignore = "needs qemu-system-arm (scripts/bootstrap.sh installs it)"
)]
fn pendsv_task_switch_matches_qemu() {
    require_tool("qemu-system-arm");
    for (target, machine) in [
        ("cortex-m4", "mps2-an386"),
        ("cortex-m4f", "mps2-an386"),
        ("cortex-m7", "mps2-an500"),
        ("cortex-m33", "mps2-an505"),
    ] {
        let elf = guest(target, "clocks");
        let out = qemu_arm(machine, None, &elf, &["clocks", "pendsv"], 120);
        assert!(
            out.status.success(),
            "{target}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ours = run(target, &["pendsv"]);
        assert_eq!(ours.code, Some(0), "{target}: {}", ours.stderr);
        assert_eq!(
            ours.stdout,
            String::from_utf8_lossy(&out.stdout),
            "{target}"
        );
    }
}

/// The start/stop timer pattern of Embench's and CoreMark's board support
/// (read the counter, run, read it again) around an ARP section: the
/// timer sees the section plus the few instructions between its reads and
/// the ARP calls (a store of the start value, the enter call's set-up).
#[test]
fn a_start_stop_timer_harness_agrees_with_the_section() {
    let every = ["cortex-m7", "cortex-m33", "rv32imac"];
    for target in V6M_V7M.into_iter().chain(every) {
        let r = run(target, &["harness"]);
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        let timed = printed(&r, "harness");
        let section = sample(&r, 2);
        assert!(
            timed >= section && timed - section <= 16,
            "{target}: the timer says {timed}, the section {section}"
        );
    }
}

#[test]
fn reruns_are_byte_identical() {
    let cases: [(&str, &[&str]); 9] = [
        ("cortex-m0", &["tick", "99", "1000"]),
        ("cortex-m0plus", &["svc"]),
        ("cortex-m3", &["harness"]),
        ("cortex-m4", &["tick", "99", "1000"]),
        ("cortex-m4f", &["tailchain"]),
        ("cortex-m7", &["tick", "99", "1000"]),
        ("cortex-m33", &["pendsv"]),
        ("rv32imac", &["harness"]),
        ("rv32imac", &["mtick", "100", "1000"]),
    ];
    for (target, args) in cases {
        let first = run(target, args);
        assert_eq!(first.code, Some(0), "{target}: {}", first.stderr);
        assert!(!first.arp.is_empty(), "{target}: data.arp written");
        for _ in 0..2 {
            let again = run(target, args);
            assert_eq!(again.stdout, first.stdout, "{target}");
            assert_eq!(again.arp, first.arp, "{target}: data.arp differs");
        }
    }
}

#[test]
fn cpuid_is_the_cores() {
    for (target, cpuid) in [
        ("cortex-m0", "410cc200"),
        ("cortex-m0plus", "410cc601"),
        ("cortex-m3", "412fc231"),
        ("cortex-m4", "410fc241"),
        ("cortex-m4f", "410fc241"),
        ("cortex-m7", "411fc272"),
        ("cortex-m33", "410fd214"),
    ] {
        let r = run(target, &["cpuid"]);
        assert_eq!(
            r.stdout.lines().next(),
            Some(&*format!("cpuid {cpuid}")),
            "{target}"
        );
    }
}

/// Registers sim-host does not model end the run (exit 125), naming the
/// register, the access and the instruction; never RAM.
#[test]
fn unmodelled_registers_are_refused_by_name() {
    let cases = [
        ("cortex-m4", "mpu", "write to MPU_CTRL"),
        ("cortex-m4", "idpfr", "read of ID_PFR0"),
        ("cortex-m0", "idpfr", "read of ID_PFR0"),
        ("cortex-m0", "dwt", "DWT_CYCCNT"),
    ];
    for (target, case, names) in cases {
        let r = run(target, &[case]);
        assert_eq!(r.code, Some(125), "{target} {case}: {}", r.stderr);
        assert!(r.stderr.contains(names), "{target} {case}: {}", r.stderr);
        assert!(
            r.stderr.contains("pc: main+0x"),
            "{target} {case}: {}",
            r.stderr
        );
    }
    let r = run("cortex-m0", &["dwt"]);
    assert!(r.stderr.contains("ARMv6-M"), "{}", r.stderr);
}

#[test]
fn a_system_reset_request_ends_the_run_with_its_status() {
    let r = run("cortex-m4", &["reset"]);
    assert_eq!(r.code, Some(118), "{}", r.stderr);
    assert!(r.stderr.contains("SYSRESETREQ"), "{}", r.stderr);
}

/// In a function profile a handler is called from the code it
/// interrupted, once per exception, its inclusive cost the entry latency
/// and its own instructions (the return's latency is the interrupted
/// code's, which resumes with it); the interrupted function's frame
/// survives every interrupt.
#[test]
fn a_profile_shows_handlers_called_from_the_interrupted_code() {
    let p = arm_prices("cortex-m4");
    let dir = scratch("clocks-callgrind");
    let profile = dir.join("callgrind.out");
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", "cortex-m4", "-q"])
        .arg(guest("cortex-m4", "clocks"))
        .arg("-o")
        .arg(dir.join("data.arp"))
        .arg("--callgrind")
        .arg(&profile)
        .args(["--", "tick", "99", "1000"])
        .output()
        .expect("sim-host starts");
    let r = finish(out, &dir.join("data.arp"));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ticks = printed(&r, "ticks");
    let text = std::fs::read_to_string(&profile).unwrap();
    // callgrind names a function once, `(N) name`, and `(N)` after
    let id_of = |name: &str| -> String {
        text.lines()
            .filter_map(|l| l.split_once('=').map(|(_, r)| r))
            .find_map(|r| r.strip_suffix(&format!(" {name}")))
            .unwrap_or_else(|| panic!("{name} is not named:\n{text}"))
            .to_owned()
    };
    let isr = id_of("arm_systick_isr");
    // the edge section -> arm_systick_isr: `calls=N 0` then `line cycles insns`
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.strip_prefix("cfn=").is_some_and(|r| r.starts_with(&isr)))
        .unwrap_or_else(|| panic!("no call edge to the handler:\n{text}"));
    let caller = lines[..at]
        .iter()
        .rev()
        .find(|l| l.starts_with("fn="))
        .unwrap();
    let handler = p.ldr_literal + p.ldr_dependent + p.alu + p.str_ + p.bx_return;
    assert_eq!(lines[at + 1], format!("calls={ticks} 0"));
    let cost: Vec<u64> = lines[at + 2]
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(cost, vec![ticks * (p.entry + handler), ticks * 5]);
    // the handler's caller is the section open in `tick` (a section is a
    // frame of its own: `tick (clocks.c:LINE)`)
    let section = text
        .lines()
        .filter_map(|l| l.strip_prefix("cfn="))
        .find(|r| r.contains(" tick (clocks.c:"))
        .expect("the section is named");
    let section_id = section.split(' ').next().unwrap();
    assert_eq!(*caller, format!("fn={section_id}"), "{text}");
}
