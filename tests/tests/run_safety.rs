//! Outputs that never destroy anything, option values that never panic,
//! signals that stop a run cleanly, and a guest whose reach ends at
//! `--fs-root` (issue 12). Every file a test makes is in its own scratch
//! folder; device nodes are made there with mknod, never the machine's.

use e2e_tests::{guest, require_null_device, scratch, sim_host_bin};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(sim_host_bin())
        .current_dir(dir)
        .arg("run")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn crash_elf() -> String {
    guest("cortex-m4", "crash").display().to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Hidden temporary files an interrupted write might leave.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
#[cfg_attr(
    not(has_mknod),
    ignore = "needs mknod of a device node (CAP_MKNOD: run as root)"
)]
fn a_device_node_as_output_stays_a_device() {
    let dir = scratch("device-out");
    let null = dir.join("null");
    require_null_device(&null);
    for extra in [&[][..], &["--gzip"], &["--mode", "record_all"]] {
        let mut args = vec![crash_elf(), "-q".into(), "-o".into(), "null".into()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(["--report-json".into(), "null".into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_in(&dir, &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let meta = std::fs::symlink_metadata(&null).unwrap();
        assert!(
            meta.file_type().is_char_device(),
            "{extra:?} replaced the device"
        );
        assert_eq!(meta.rdev(), std::fs::metadata("/dev/null").unwrap().rdev());
    }
    assert!(temporaries(&dir).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_symlinked_output_keeps_the_link_and_updates_its_target() {
    let dir = scratch("link-out");
    std::fs::write(dir.join("real.arp"), "stale").unwrap();
    std::os::unix::fs::symlink("real.arp", dir.join("link.arp")).unwrap();
    let out = run_in(&dir, &[&crash_elf(), "-q", "-o", "link.arp"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let link = std::fs::symlink_metadata(dir.join("link.arp")).unwrap();
    assert!(link.file_type().is_symlink());
    let data = std::fs::read_to_string(dir.join("real.arp")).unwrap();
    assert!(data.contains("Atomium record and playback"), "{data}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unusable_output_paths_stop_the_run_before_it_starts() {
    let dir = scratch("bad-out");
    let cases: &[(&[&str], &str)] = &[
        (&["-o", "/nonexistent/d.arp"], "-o /nonexistent/d.arp"),
        (
            &["--callgrind", "/nonexistent/x"],
            "--callgrind /nonexistent/x",
        ),
        (&["--report-json", "sub"], "--report-json sub"),
        (
            &["-o", "same.json", "--report-json", "same.json"],
            "same file",
        ),
        (&["--fs-root", "missing"], "--fs-root missing"),
    ];
    std::fs::create_dir(dir.join("sub")).unwrap();
    for (args, said) in cases {
        let mut all = vec![crash_elf()];
        all.extend(args.iter().map(|s| s.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = run_in(&dir, &all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(125), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        // before any emulation: the guest printed nothing
        assert!(out.stdout.is_empty(), "{args:?} ran the guest");
        assert!(!err.contains("arp_start"), "a false second message: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn option_values_out_of_range_are_usage_errors_not_panics() {
    let dir = scratch("bad-values");
    let elf = crash_elf();
    for args in [
        ["--timeout=-1"],
        ["--timeout=nan"],
        ["--timeout=1e30"],
        ["--timeout=0"],
        ["--thread-stack=0"],
        ["--cores=0"],
        ["--cores=4294967296"],
        ["--cores=18446744073709551615"],
        ["--mode=bogus"],
        ["--arp-format=xml"],
        ["--measure=joules"],
    ] {
        let out = run_in(&dir, &[&elf, args[0]]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let option = args[0].split('=').next().unwrap();
        assert!(err.contains(option), "{args:?} names its option: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts the looping crash guest recording into `dir/d.arp` and waits
/// until it has recorded its samples.
fn start_looping(dir: &Path, word: &str, stdin: Stdio) -> Child {
    let mut child = Command::new(sim_host_bin())
        .current_dir(dir)
        .args(["run", "-q", &crash_elf(), "-o", "d.arp", "--", word])
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("recorded 3 samples"), "{first}");
    child
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for the child, killing it (and failing) if it never ends.
fn finish(mut child: Child, limit: Duration) -> (i32, String) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("the run did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `condition` until it holds; fails the test if it does not within
/// `limit` (a bound on a wait for an event, not a pause before a check).
fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn assert_partial(dir: &Path) {
    let data = std::fs::read_to_string(dir.join("d.arp")).unwrap();
    let count_line = data.lines().nth(2).unwrap();
    assert!(count_line.ends_with("partial"), "{count_line}");
    let count: u64 = count_line
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(count, 3, "{count_line}");
    assert!(temporaries(dir).is_empty(), "{:?}", temporaries(dir));
}

#[test]
fn every_stop_signal_ends_a_run_with_its_status_and_a_partial_file() {
    for (name, status) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let dir = scratch(&format!("signal-{name}"));
        // start_looping returns once the guest has recorded its samples
        let child = start_looping(&dir, "loop", Stdio::null());
        signal(&child, name);
        let (code, err) = finish(child, Duration::from_secs(60));
        assert_eq!(code, status, "SIG{name}: {err}");
        assert!(err.contains("interrupted by SIG"), "{err}");
        assert_partial(&dir);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_run_blocked_on_stdin_obeys_timeout_and_signals() {
    let dir = scratch("stdin-block");
    // stdin is a pipe the test keeps open and never writes to
    let child = start_looping(&dir, "stdin", Stdio::piped());
    signal(&child, "INT");
    let (code, err) = finish(child, Duration::from_secs(60));
    assert_eq!(code, 130, "{err}");
    assert_partial(&dir);

    let out = Command::new(sim_host_bin())
        .current_dir(&dir)
        .args(["run", "-q", &crash_elf(), "--timeout", "1", "-o", "t.arp"])
        .args(["--", "stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, err) = finish(out, Duration::from_secs(60));
    assert_eq!(code, 123, "{err}");
    assert!(std::fs::read_to_string(dir.join("t.arp"))
        .unwrap()
        .contains("partial"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_stderr_neither_panics_nor_loses_the_report() {
    let dir = scratch("closed-stderr");
    let mut child = Command::new(sim_host_bin())
        .current_dir(&dir)
        .args([
            "run",
            &crash_elf(),
            "-o",
            "d.arp",
            "--report-json",
            "r.json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take()); // as `2>&1 | head -0` would
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(json["stop"]["reason"], "exit");
    assert!(dir.join("d.arp").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_guest_names_its_data_file_only_beneath_the_root() {
    let dir = scratch("guest-name");
    std::fs::write(dir.join("notes.txt"), "the user's notes").unwrap();
    let elf = crash_elf();
    // no root: refused with a warning, the default name is used
    let out = run_in(&dir, &[&elf, "--", "name", "notes.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("arp_set_file_name(`notes.txt`) refused"));
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "the user's notes"
    );
    assert!(dir.join("data.arp").exists());

    // with a root: the file is written beneath it
    std::fs::create_dir(dir.join("root")).unwrap();
    let out = run_in(
        &dir,
        &[&elf, "--fs-root", "root", "--", "name", "notes.txt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::read_to_string(dir.join("root/notes.txt"))
        .unwrap()
        .contains("Atomium record and playback"));
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "the user's notes"
    );

    // a symlinked folder inside the root does not lead out of it
    std::os::unix::fs::symlink(&dir, dir.join("root/out")).unwrap();
    let out = run_in(
        &dir,
        &[&elf, "--fs-root", "root", "--", "name", "out/notes.txt"],
    );
    assert!(stderr(&out).contains("refused"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "the user's notes"
    );

    // unless the user allows it
    let out = run_in(
        &dir,
        &[&elf, "--allow-guest-file-name", "--", "name", "mine.arp"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dir.join("mine.arp").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_guest_cannot_exhaust_host_files_nor_read_into_its_code() {
    let dir = scratch("guest-reach");
    std::fs::create_dir(dir.join("root")).unwrap();
    std::fs::write(dir.join("root/f"), "data").unwrap();
    let elf = crash_elf();
    let out = run_in(
        &dir,
        &[&elf, "--fs-root", "root", "-o", "d.arp", "--", "files"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let opened: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("opened "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(opened > 0 && opened <= 64, "{opened}");
    assert!(std::fs::read_to_string(dir.join("d.arp"))
        .unwrap()
        .contains("Atomium record and playback"));

    let out = run_in(
        &dir,
        &[&elf, "--fs-root", "root", "-o", "c.arp", "--", "readcode"],
    );
    assert_eq!(out.status.code(), Some(120), "{}", stderr(&out));
    assert!(stderr(&out).contains("semihosting"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_elf_that_cannot_record_is_told_so() {
    let dir = scratch("no-stubs");
    let none = guest("cortex-m4", "crash-none");
    let out = run_in(&dir, &[&none.display().to_string(), "-o", "d.arp"]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no ARP entry points"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_guest_exit_status_beyond_255_is_in_the_report() {
    let dir = scratch("exit-256");
    let out = run_in(
        &dir,
        &[
            &crash_elf(),
            "-q",
            "--report-json",
            "r.json",
            "--",
            "exit",
            "256",
        ],
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(json["stop"]["reason"], "exit");
    assert_eq!(json["stop"]["exit_status"], 256);
    // the process status wraps as for any program: the report tells
    assert_eq!(out.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_playback_that_plays_nothing_claims_no_speedup() {
    let dir = scratch("play-nothing");
    let recorded = run_in(&dir, &[&crash_elf(), "-q", "-o", "crash.arp"]);
    assert_eq!(recorded.status.code(), Some(0));
    let filter = guest("cortex-m4", "filter").display().to_string();
    let out = run_in(&dir, &[&filter, "--playback", "crash.arp"]);
    let err = stderr(&out);
    assert!(err.contains("no recorded section was played"), "{err}");
    assert!(!err.contains("speedup 5"), "{err}");
    assert_eq!(out.status.code(), Some(124), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn suite_manifest(dir: &Path, entries: usize) -> PathBuf {
    let elf = crash_elf();
    let mut text = String::new();
    for i in 0..entries {
        text += &format!(
            "[[entry]]\nname = \"loop-{i}\"\nelf = \"{elf}\"\ntarget = \"cortex-m4\"\nargs = [\"loop\"]\n\n"
        );
    }
    let path = dir.join("m.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_signal_stops_a_suite_and_keeps_its_results_so_far() {
    for (name, status) in [("INT", 130), ("TERM", 143)] {
        let dir = scratch(&format!("suite-signal-{name}"));
        let manifest = suite_manifest(&dir, 3);
        let child = Command::new(sim_host_bin())
            .current_dir(&dir)
            .args(["suite", "-j", "1", "--json", "r.json", "--out", "out"])
            .arg(&manifest)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The first entry runs: its guest has started recording (into a
        // temporary file beside out/entries/loop-0.arp) and loops.
        let entry_files = dir.join("out/entries");
        wait_until("the first entry records", Duration::from_secs(60), || {
            entry_files.is_dir()
                && temporaries(&entry_files)
                    .iter()
                    .any(|n| n.starts_with(".loop-0.arp."))
        });
        signal(&child, name);
        let (code, err) = finish(child, Duration::from_secs(60));
        assert_eq!(code, status, "SIG{name}: {err}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
        assert!(json["interrupted_by"]
            .as_str()
            .unwrap()
            .contains(&format!("SIG{name}")));
        let entries = json["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0]["stop"], "interrupted");
        assert_eq!(entries[2]["stop"], "not_run");
        assert!(temporaries(&dir).is_empty());
        assert!(temporaries(&dir.join("out/entries")).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_second_signal_exits_at_once_and_leaves_no_temporary_file() {
    let dir = scratch("signal-twice");
    let child = start_looping(&dir, "loop", Stdio::null());
    // record_all streams into a temporary file beside d.arp while it runs
    assert_eq!(temporaries(&dir).len(), 1, "the streamed temporary exists");
    // Two different signals (the same one twice may be coalesced), sent
    // microseconds apart: the second normally lands before the clean stop
    // is done and exits at once; either way the status is the first
    // signal's to arrive, and nothing temporary is left.
    let pid = child.id();
    let both = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -TERM {pid}; kill -HUP {pid}"))
        .status()
        .unwrap();
    assert!(both.success());
    let (code, err) = finish(child, Duration::from_secs(60));
    assert!(code == 129 || code == 143, "{code}: {err}");
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    if dir.join("d.arp").exists() {
        assert_partial(&dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plugin_callback_that_hangs_obeys_the_timeout_and_is_named() {
    let dir = scratch("hung-plugin");
    let src = dir.join("hang.c");
    std::fs::write(
        &src,
        "#include \"sim_host_plugin.h\"\n\
         const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;\n\
         static void enter(uint16_t s, void *d, void *c) { (void)s; (void)d; (void)c; }\n\
         static void leave(uint16_t s, void *d, void *c) { (void)s; (void)d; (void)c; for (;;) {} }\n\
         int sim_host_plugin_init(const sim_host_api *api, const char *args) {\n\
             (void)args; return api->add_callbacks(api->host, 11, enter, leave, 0, 0, 0);\n\
         }\n",
    )
    .unwrap();
    let so = dir.join("hang.so");
    let built = Command::new("gcc")
        .args(["-shared", "-fPIC", "-O1", "-I"])
        .arg(e2e_tests::repo_root().join("sim-host/include"))
        .arg("-o")
        .arg(&so)
        .arg(&src)
        .status()
        .unwrap();
    assert!(built.success());
    let child = Command::new(sim_host_bin())
        .current_dir(&dir)
        .args([
            "run",
            "-q",
            &crash_elf(),
            "--timeout",
            "1",
            "-o",
            "d.arp",
            "--plugin",
        ])
        .arg(&so)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, err) = finish(child, Duration::from_secs(60));
    assert_eq!(code, 123, "{err}");
    assert!(
        err.contains("hang.so") && err.contains("leave callback"),
        "{err}"
    );
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_cpu_model_or_a_folder_as_recording_is_a_setup_error() {
    let dir = scratch("bad-setup");
    let m4 = e2e_tests::repo_root().join("targets/cortex-m4.toml");
    let text = std::fs::read_to_string(m4).unwrap();
    let bad = text
        .lines()
        .map(|l| {
            if l.starts_with("cpu = ") {
                "cpu = \"cortex-m99\"".to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(bad, text, "the target file names its Unicorn CPU model");
    std::fs::write(dir.join("m99.toml"), bad).unwrap();
    let out = run_in(&dir, &[&crash_elf(), "--target-file", "m99.toml"]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(stderr(&out).contains("cortex-m99"), "{}", stderr(&out));

    std::fs::create_dir(dir.join("rec")).unwrap();
    let out = run_in(&dir, &[&crash_elf(), "--playback", "rec"]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(stderr(&out).contains("--playback rec"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}
