//! RISC-V traps taken as the core takes them (issue 39, RISC-V privileged
//! spec 20211203, machine ISA 1.12), on the `traps` example
//! (`guest-shim/examples/traps/riscv/traps.S`): ecall, ebreak, illegal
//! instructions and misaligned AMOs go to mtvec with mcause, mepc and
//! mtval, `mret` returns.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::process::Command;

/// One run's exit status, output and error text.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(target: &str, args: &[&str]) -> Run {
    let dir = scratch(&format!("traps-{target}-{}", args.join("-")));
    let out = Command::new(sim_host_bin())
        .args(["run", "-q", "--max-cycles", "2000000", "--target", target])
        .arg(guest(target, "traps"))
        .arg("-o")
        .arg(dir.join("data.arp"))
        .arg("--")
        .args(args)
        .output()
        .expect("sim-host starts");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The listed failure of issue 39: an ecall with a handler in mtvec
/// faulted ("ecall with no environment to take it"), naming the
/// instruction after it. It is taken: mcause 11 (M-mode), mepc the ecall
/// itself (3.3.1), MPP = M, MPIE = the MIE before (clear), MIE clear.
#[test]
fn an_ecall_goes_to_the_handler_in_mtvec() {
    let r = run("rv32imac", &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("ecall mcause=11 mepc=site mtval=00000000 mpp=3 mpie=0 mie=0\n"),
        "{}",
        r.stdout
    );
}
