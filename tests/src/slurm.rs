//! A real single-node Slurm on localhost, for the tests of the Slurm
//! recipe of docs/scale-out.md: `munged`, `slurmctld` and `slurmd` run in
//! the foreground as children of the test, from a `slurm.conf` written into
//! one folder, which holds everything they write (MUNGE key, socket, seed,
//! pid and log files, slurmctld's state, slurmd's spool), on free ports of
//! their own. No cgroup, systemd or accounting database is needed.
//! [`Cluster`] stops every daemon it started, by pid, when dropped (also
//! when the test fails).

pub mod needs;

use std::cell::RefCell;
use std::fs::File;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

/// The ignore message of the Slurm tests (see `tests/build.rs`).
pub const NEEDS: &str = "needs slurm and munge (scripts/bootstrap.sh installs them) and root";

/// How long starting the daemons, or a job, may take before the test gives
/// up (a bound against hanging, not a speed check: the daemons are ready
/// in about a second, the jobs end in a few).
pub const DEADLINE: Duration = Duration::from_secs(120);

/// How often the state is polled while waiting.
const POLL: Duration = Duration::from_millis(50);

/// The CPUs slurmd declares (`SlurmdParameters=config_overrides`): the
/// recipe's four tasks of `--cpus-per-task=4` at once, whatever the host.
const NODE_CPUS: u32 = 16;

/// A running single-node Slurm (see the module documentation).
pub struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    /// Started daemons, in start order: (name, child).
    daemons: RefCell<Vec<(&'static str, Child)>>,
    /// When the first daemon was spawned and when the node was ready.
    pub started: Instant,
    pub ready: Instant,
}

/// One job, or one task of an array, as `scontrol show job` reports it.
#[derive(Debug, Clone)]
pub struct JobState {
    pub id: String,
    /// The array's id (`ArrayJobId`) for a task of an array, else empty.
    pub array_job: String,
    pub array_task: Option<u32>,
    pub state: String,
    /// `ExitCode=STATUS:SIGNAL`
    pub exit_code: String,
}

impl Cluster {
    /// Starts munged, slurmctld and slurmd with everything in `dir` (made
    /// here) and waits until the node is idle. Panics with the reason, and
    /// the daemons' logs, when that fails (what is missing when the
    /// machine cannot run them).
    pub fn start(dir: &Path) -> Cluster {
        if let Some(reason) = needs::missing() {
            panic!("a Slurm cannot be started here: {reason}");
        }
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(sub)).expect("cluster folders");
        }
        let dir = dir.canonicalize().expect("cluster folder");
        let socket = dir.join("munge/munge.socket");
        // sockaddr_un holds 107 bytes of path
        assert!(
            socket.as_os_str().len() < 100 && dir.as_os_str().len() < 60,
            "{}: too long a path for the daemons' sockets (set TMPDIR to a shorter folder)",
            dir.display()
        );
        write_munge_key(&dir.join("munge/munge.key"));
        let (ctld_port, slurmd_port) = free_port_pair();
        let conf = dir.join("slurm.conf");
        std::fs::write(&conf, slurm_conf(&dir, &hostname(), ctld_port, slurmd_port))
            .expect("slurm.conf");
        let mut cluster = Cluster {
            dir: dir.clone(),
            conf,
            daemons: RefCell::new(Vec::new()),
            started: Instant::now(),
            ready: Instant::now(),
        };
        let key = dir.join("munge/munge.key");
        let munge_args = [
            "--foreground".into(),
            format!("--socket={}", socket.display()),
            format!("--key-file={}", key.display()),
            format!("--pid-file={}", dir.join("munge/munged.pid").display()),
            format!("--log-file={}", dir.join("log/munged.log").display()),
            format!("--seed-file={}", dir.join("munge/munged.seed").display()),
        ];
        cluster.spawn("munged", &munge_args);
        cluster.wait_for("munged to answer", || {
            let mut c = Command::new(needs::find("munge").expect("munge"));
            c.arg("--no-input").arg("--socket").arg(&socket);
            answer(run_within(&mut c, Duration::from_secs(5))).map(|_| ())
        });
        let conf = cluster.conf.display().to_string();
        cluster.spawn("slurmctld", &["-D".into(), "-f".into(), conf.clone()]);
        cluster.spawn("slurmd", &["-D".into(), "-f".into(), conf]);
        cluster.wait_for("the node to be idle", || {
            let state = answer(cluster.client("sinfo", &["--noheader", "--format=%T"]))?;
            match state.trim() {
                "idle" => Ok(()),
                other => Err(format!("node state: {other}")),
            }
        });
        cluster.ready = Instant::now();
        cluster
    }

    /// Spawns a daemon in the foreground, its output into `log/NAME.out`.
    fn spawn(&self, name: &'static str, args: &[String]) {
        let out = File::create(self.dir.join(format!("log/{name}.out"))).expect("daemon log");
        let child = Command::new(needs::find(name).expect("checked by needs::missing"))
            .args(args)
            .current_dir(&self.dir)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("daemon log"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        self.daemons.borrow_mut().push((name, child));
    }

    /// Polls `ready` until it gives `Ok`; panics with its last `Err` (what
    /// was seen) and the logs when a daemon exits or the deadline passes.
    fn wait_for(&self, what: &str, mut ready: impl FnMut() -> Result<(), String>) {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let seen = match ready() {
                Ok(()) => return,
                Err(seen) => seen,
            };
            for (name, child) in self.daemons.borrow_mut().iter_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!(
                        "waiting for {what}: {name} exited ({status}); last seen: {seen}\n{}",
                        self.logs()
                    );
                }
            }
            if Instant::now() > deadline {
                panic!(
                    "{what}: not within {} s; last seen: {seen}\n{}",
                    DEADLINE.as_secs(),
                    self.logs()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// The configuration file (clients find it through `SLURM_CONF`).
    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// A command with this cluster's `SLURM_CONF`.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// Runs a Slurm client (`sinfo`, `scontrol`, …) with bounded time.
    pub fn client(&self, program: &str, args: &[&str]) -> std::io::Result<Output> {
        let path = needs::find(program).unwrap_or_else(|| program.into());
        run_within(
            self.command(path).args(args).current_dir(&self.dir),
            Duration::from_secs(30),
        )
    }

    /// Runs a Slurm client that must succeed; its standard output.
    pub fn must(&self, program: &str, args: &[&str]) -> String {
        let out = self
            .client(program, args)
            .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.logs()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until none of `jobs` (ids; an array's id stands for all its
    /// tasks) is pending, running or completing, then returns the state of
    /// each job and array task. Panics after [`DEADLINE`], with the queue
    /// and the daemons' logs.
    pub fn wait_until_ended(&self, jobs: &[&str]) -> Vec<JobState> {
        let list = jobs.join(",");
        self.wait_for(&format!("jobs {list} to end"), || {
            let queue = answer(self.client(
                "squeue",
                &["--noheader", "--format=%i %T %r", "--jobs", &list],
            ))?;
            if queue.trim().is_empty() {
                Ok(())
            } else {
                Err(format!("queue:\n{queue}"))
            }
        });
        jobs.iter().flat_map(|j| self.job_states(j)).collect()
    }

    /// Waits until job `job` runs (squeue shows it RUNNING).
    pub fn wait_until_running(&self, job: &str) {
        self.wait_for(&format!("job {job} to run"), || {
            let state =
                answer(self.client("squeue", &["--noheader", "--format=%T", "--jobs", job]))?;
            match state.trim() {
                "RUNNING" => Ok(()),
                other => Err(format!("job state: {other:?}")),
            }
        });
    }

    /// `scontrol show job ID`: one state per job or array task.
    pub fn job_states(&self, job: &str) -> Vec<JobState> {
        let text = self.must("scontrol", &["--oneliner", "show", "job", job]);
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let field = |name: &str| {
                    line.split_whitespace()
                        .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
                        .unwrap_or("")
                        .to_owned()
                };
                JobState {
                    id: field("JobId"),
                    array_job: field("ArrayJobId"),
                    array_task: field("ArrayTaskId").parse().ok(),
                    state: field("JobState"),
                    exit_code: field("ExitCode"),
                }
            })
            .collect()
    }

    /// The tail of every daemon's log, for failure messages.
    pub fn logs(&self) -> String {
        let mut text = format!("cluster folder: {}\n", self.dir.display());
        for name in [
            "munged.out",
            "slurmctld.log",
            "slurmd.log",
            "slurmctld.out",
            "slurmd.out",
        ] {
            let path = self.dir.join("log").join(name);
            let Ok(log) = std::fs::read_to_string(&path) else {
                continue;
            };
            let lines: Vec<&str> = log.lines().collect();
            text += &format!("--- {} (last lines)\n", path.display());
            for l in &lines[lines.len().saturating_sub(15)..] {
                text += l;
                text += "\n";
            }
        }
        text
    }
}

impl Drop for Cluster {
    /// Cancels what is still queued or running (slurmd's job steps are not
    /// its children, so stopping it would not end them), then stops the
    /// daemons newest first: SIGTERM by pid, and SIGKILL if one has not
    /// exited within 10 s; each is waited for.
    fn drop(&mut self) {
        let daemons = self.daemons.take();
        let has = |name: &str| daemons.iter().any(|(n, _)| *n == name);
        if has("slurmctld") && has("slurmd") {
            let _ = self.client("scancel", &["--user=root"]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                match self.client("squeue", &["--noheader", "--format=%i"]) {
                    Ok(o) if o.status.success() && o.stdout.trim_ascii().is_empty() => break,
                    Ok(o) if !o.status.success() => break,
                    Err(_) => break,
                    _ => std::thread::sleep(POLL),
                }
            }
        }
        for (name, mut child) in daemons.into_iter().rev() {
            if let Ok(None) = child.try_wait() {
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .stderr(Stdio::null())
                    .status();
                let deadline = Instant::now() + Duration::from_secs(10);
                while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if let Ok(None) = child.try_wait() {
                    eprintln!("{name} (pid {}) ignored SIGTERM: killed", child.id());
                    let _ = child.kill();
                }
            }
            let _ = child.wait();
        }
    }
}

/// The processes (pid, command name) whose environment names `conf` as
/// their `SLURM_CONF`: every daemon of a [`Cluster`], and what they and its
/// jobs started (they inherit it).
pub fn processes_of(conf: &Path) -> Vec<(u32, String)> {
    let mut wanted = b"SLURM_CONF=".to_vec();
    wanted.extend(conf.as_os_str().as_encoded_bytes());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == wanted))
        })
        .map(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            (pid, comm.trim().to_owned())
        })
        .collect()
}

/// A client's standard output when it succeeded, else what it said.
fn answer(output: std::io::Result<Output>) -> Result<String, String> {
    match output {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => Err(format!(
            "{}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `command` with its output captured, killing it after `limit`.
pub fn run_within(command: &mut Command, limit: Duration) -> std::io::Result<Output> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // readers on their own threads, so a full pipe never blocks the child
    let mut pipe_out = child.stdout.take().expect("piped");
    let mut pipe_err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = pipe_out.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = pipe_err.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("{command:?}: no answer within {} s", limit.as_secs()),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// A fresh MUNGE key: 1024 random bytes, readable by its owner only (as
/// munged demands).
fn write_munge_key(path: &Path) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut key = [0u8; 1024];
    File::open("/dev/urandom")
        .and_then(|mut r| r.read_exact(&mut key))
        .expect("random bytes for the MUNGE key");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o400)
        .open(path)
        .and_then(|mut f| f.write_all(&key))
        .expect("MUNGE key");
}

/// This host's short name: slurmctld runs only on the host its
/// `SlurmctldHost` names, and slurmd takes its node name from it.
fn hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    name.trim()
        .split('.')
        .next()
        .unwrap_or("localhost")
        .to_owned()
}

/// Two consecutive TCP ports that nothing listens on, for slurmctld and
/// slurmd. Each call (of any test thread) starts its search elsewhere, and
/// test processes start at different places, so concurrent clusters do not
/// pick the same pair; a pair is taken only if both ports can be bound.
fn free_port_pair() -> (u16, u16) {
    const FIRST: u16 = 20_000;
    const SPAN: u16 = 10_000;
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let start = (std::process::id() % u32::from(SPAN / 2)) as u16 * 2;
    for _ in 0..SPAN / 2 {
        let offset = (start + NEXT.fetch_add(2, Ordering::Relaxed)) % SPAN;
        let port = FIRST + offset;
        let free = |p: u16| TcpListener::bind(("0.0.0.0", p)).is_ok();
        if free(port) && free(port + 1) {
            return (port, port + 1);
        }
    }
    panic!("no two free consecutive ports in {FIRST}..{}", FIRST + SPAN);
}

/// The cluster's configuration: one node (this host, at 127.0.0.1), one
/// partition; plain process tracking, no task plugin, no accounting;
/// every path inside `dir`.
fn slurm_conf(dir: &Path, host: &str, ctld_port: u16, slurmd_port: u16) -> String {
    let d = dir.display();
    format!(
        "# written by tests/src/slurm.rs: a single-node Slurm inside {d}
ClusterName=arpsim-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
SlurmctldSyslogDebug=quiet
SlurmdSyslogDebug=quiet
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
NodeName={host} NodeAddr=127.0.0.1 CPUs={NODE_CPUS} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
"
    )
}
