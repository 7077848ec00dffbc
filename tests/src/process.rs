//! Processes a test starts: sim-host run in a scratch folder, what it
//! printed, and a child stopped by its pid when the test is done with it.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// sim-host with `args` in `dir`, standard input closed.
pub fn sim_host(dir: &Path, args: &[&str]) -> Output {
    Command::new(crate::sim_host_bin())
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("sim-host runs")
}

/// What a process printed: its standard output, then its standard error.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A process a test started, stopped by its pid when the test is done
/// with it, also when the test fails first.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Waits for `child` at most `limit`; kills it beyond (`None`).
pub fn wait_for(child: &mut Child, limit: Duration) -> Option<i32> {
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

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// qemu-system-arm running `elf` on `machine` (as `cpu`, else the
/// machine's own), its console the semihosting one and `args` its
/// semihosting command line (program name first, where the guest reads
/// one); killed after `seconds`.
pub fn qemu_arm(
    machine: &str,
    cpu: Option<&str>,
    elf: &Path,
    args: &[&str],
    seconds: u32,
) -> Output {
    qemu_arm_with(machine, cpu, elf, args, seconds, &[])
}

/// [`qemu_arm`] on a virtual clock that counts instructions
/// (`-icount shift=0,sleep=off`), so that the guest's timers (SysTick)
/// do not follow the host's: a guest that prints what its timer ticks saw
/// prints the same however loaded the host is.
pub fn qemu_arm_icount(
    machine: &str,
    cpu: Option<&str>,
    elf: &Path,
    args: &[&str],
    seconds: u32,
) -> Output {
    qemu_arm_with(
        machine,
        cpu,
        elf,
        args,
        seconds,
        &["-icount", "shift=0,sleep=off"],
    )
}

fn qemu_arm_with(
    machine: &str,
    cpu: Option<&str>,
    elf: &Path,
    args: &[&str],
    seconds: u32,
    qemu_args: &[&str],
) -> Output {
    let mut semihosting = "enable=on,target=native,chardev=semihosting".to_owned();
    for a in args {
        semihosting.push_str(",arg=");
        semihosting.push_str(a);
    }
    let mut cmd = Command::new("timeout");
    cmd.arg(seconds.to_string())
        .args(["qemu-system-arm", "-M", machine]);
    if let Some(cpu) = cpu {
        cmd.args(["-cpu", cpu]);
    }
    cmd.args(qemu_args)
        .args(["-display", "none", "-serial", "none", "-monitor", "none"])
        .args(["-chardev", "stdio,id=semihosting", "-semihosting-config"])
        .arg(semihosting)
        .arg("-kernel")
        .arg(elf)
        .output()
        .expect("qemu-system-arm starts")
}
