//! Tests of the plugin loader, adapter and host API without the machine:
//! the example plugins (C, compiled here with the host gcc; Rust, compiled
//! here with rustc) and small inline C plugins, driven through an arpsim
//! engine with a fake guest.

use super::*;
use arpsim::engine::Engine;
use arpsim::query::{Dataset, TraceValue};
use arpsim::types::Mode;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles C `source` into `dir/name.so` with the host gcc.
fn gcc_plugin(dir: &Path, name: &str, source: &Path) -> PathBuf {
    let so = dir.join(format!("{name}.so"));
    run(Command::new("gcc")
        .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-I"])
        .arg(Path::new(MANIFEST).join("include"))
        .arg("-o")
        .arg(&so)
        .arg(source));
    so
}

fn inline_plugin(dir: &Path, name: &str, code: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, format!("#include \"sim_host_plugin.h\"\n{code}")).unwrap();
    gcc_plugin(dir, name, &src)
}

fn energy_plugin(dir: &Path) -> PathBuf {
    gcc_plugin(
        dir,
        "energy",
        &Path::new(MANIFEST).join("plugins/example-c/energy.c"),
    )
}

/// The Rust example plugin, built once with rustc with its one dependency
/// (the ABI crate; cargo would contend for the lock of the running build)
/// and copied into `dir`: each test loads its own file, so plugin globals
/// are not shared between tests running in parallel.
fn rust_plugin(dir: &Path) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let out = tempfile::tempdir().unwrap().keep();
        let abi = out.join("libsim_host_plugin_abi.rlib");
        run(Command::new("rustc")
            .args(["--edition", "2021", "--crate-type", "rlib", "-O"])
            .args(["--crate-name", "sim_host_plugin_abi", "-o"])
            .arg(&abi)
            .arg(Path::new(MANIFEST).join("plugin-abi/src/lib.rs")));
        let so = out.join("libexample_rs.so");
        run(Command::new("rustc")
            .args(["--edition", "2021", "--crate-type", "cdylib", "-O"])
            .args(["--crate-name", "example_rs", "--extern"])
            .arg(format!("sim_host_plugin_abi={}", abi.display()))
            .arg("-o")
            .arg(&so)
            .arg(Path::new(MANIFEST).join("plugins/example-rs/src/lib.rs")));
        so
    });
    let copy = dir.join("libexample_rs.so");
    std::fs::copy(built, &copy).unwrap();
    copy
}

fn spec(path: &Path, args: &str) -> PluginSpec {
    PluginSpec {
        path: path.to_owned(),
        args: args.to_owned(),
    }
}

/// A guest with settable counters, one memory word at 0x1000 and r0..r3.
#[derive(Default)]
struct FakeGuest {
    cycles: Cell<u64>,
    instructions: Cell<u64>,
    word: Cell<i32>,
}

impl GuestAccess for FakeGuest {
    fn cycles(&self) -> u64 {
        self.cycles.get()
    }
    fn instructions(&self) -> u64 {
        self.instructions.get()
    }
    fn clock_hz(&self) -> u64 {
        25_000_000
    }
    fn register(&self, n: u32) -> Option<u64> {
        (n < 4).then_some(u64::from(n) * 11)
    }
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> bool {
        let bytes = self.word.get().to_ne_bytes();
        let Some(off) = addr.checked_sub(0x1000) else {
            return false;
        };
        let off = off as usize;
        if off + buf.len() > 4 {
            return false;
        }
        buf.copy_from_slice(&bytes[off..off + buf.len()]);
        true
    }
}

/// The host's own set, as in arp_host: cycles between enter and leave.
struct HostCycles(Rc<FakeGuest>);

impl CallbackSet for HostCycles {
    fn data_type(&self) -> DataType {
        DataType::ULLong
    }
    fn enter(&mut self, _tid: Tid, _sid: Sid, data: &mut Value) {
        *data = Value::ULLong(self.0.cycles.get());
    }
    fn leave(&mut self, _tid: Tid, _sid: Sid, data: &mut Value) {
        *data = Value::ULLong(self.0.cycles.get() - data.to_raw());
    }
}

/// An engine recording into `dir/data.arp` with the host set first, then
/// the plugin's sets.
fn engine(dir: &Path, guest: &Rc<FakeGuest>, plugins: &[&Plugin]) -> Engine {
    let mut engine = Engine::new();
    engine.set_file_name(dir.join("data.arp")).unwrap();
    engine
        .add_callbacks(Box::new(HostCycles(Rc::clone(guest))))
        .unwrap();
    for p in plugins {
        for set in p.callback_sets() {
            engine.add_callbacks(set).unwrap();
        }
    }
    engine.start(4, 16, Mode::RecordAll).unwrap();
    engine
}

/// Runs one ARP call with `guest` current, as the machine does.
fn call<R>(guest: &Rc<FakeGuest>, f: impl FnOnce() -> R) -> R {
    with_guest(Rc::clone(guest) as Rc<dyn GuestAccess>, f)
}

fn set(guest: &FakeGuest, cycles: u64, instructions: u64, word: i32) {
    guest.cycles.set(cycles);
    guest.instructions.set(instructions);
    guest.word.set(word);
}

/// The stack and the values of one record_all sample.
type Sample = (Vec<Sid>, Vec<Value>);

fn samples(dir: &Path) -> (Vec<DataType>, Vec<Sample>) {
    let data = Dataset::load(&dir.join("data.arp")).unwrap();
    let types = (0..data.data_mult())
        .map(|i| data.data_type(i).unwrap())
        .collect();
    let traces = data
        .traces()
        .map(|t| {
            let values = (0..data.data_mult())
                .map(|i| match t.value(i) {
                    Some(TraceValue::Sample(v)) => v,
                    other => panic!("not a sample: {other:?}"),
                })
                .collect();
            (t.stack().iter().map(|e| e.sid).collect(), values)
        })
        .collect();
    (types, traces)
}

#[test]
fn c_example_records_energy_and_a_watched_word_after_the_host_set() {
    let dir = tempfile::tempdir().unwrap();
    let so = energy_plugin(dir.path());
    let plugin = Plugin::load(
        &spec(&so, "pj_per_cycle=10,pj_per_insn=5,watch=0x1000"),
        25_000_000,
    )
    .unwrap();
    assert_eq!(plugin.data_types(), [DataType::Double, DataType::Int]);
    let guest = Rc::new(FakeGuest::default());
    let mut engine = engine(dir.path(), &guest, &[&plugin]);
    set(&guest, 100, 40, 7);
    call(&guest, || engine.enter_kernel(1, 5, 0)).unwrap();
    set(&guest, 300, 120, 10);
    call(&guest, || engine.leave_kernel(1, 5)).unwrap();
    engine.finish().unwrap();
    let (types, traces) = samples(dir.path());
    assert_eq!(types, [DataType::ULLong, DataType::Double, DataType::Int]);
    // 200 cycles * 10 pJ + 80 instructions * 5 pJ = 2.4 nJ; word 7 -> 10
    assert_eq!(
        traces,
        [(
            vec![5],
            vec![Value::ULLong(200), Value::Double(2.4), Value::Int(3)]
        )]
    );
}

#[test]
fn rust_example_records_the_ipc_of_nested_sections_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let so = rust_plugin(dir.path());
    let plugin = Plugin::load(&spec(&so, ""), 1).unwrap();
    assert_eq!(plugin.data_types(), [DataType::Double]);
    let guest = Rc::new(FakeGuest::default());
    let mut engine = engine(dir.path(), &guest, &[&plugin]);
    set(&guest, 0, 0, 0);
    call(&guest, || engine.enter_profiled(1, 1, 0)).unwrap();
    // thread 2 starts inside section 1 and runs its own kernel
    call(&guest, || engine.spawned(1, 2)).unwrap();
    set(&guest, 10, 5, 0);
    call(&guest, || engine.enter_kernel(1, 2, 0)).unwrap();
    call(&guest, || engine.enter_kernel(2, 3, 0)).unwrap();
    set(&guest, 30, 10, 0);
    call(&guest, || engine.leave_kernel(1, 2)).unwrap(); // 5 insns / 20 cycles
    set(&guest, 50, 30, 0);
    call(&guest, || engine.leave_kernel(2, 3)).unwrap(); // 25 / 40
    call(&guest, || engine.join(2)).unwrap();
    set(&guest, 100, 100, 0);
    call(&guest, || engine.leave_profiled(1, 1)).unwrap(); // 100 / 100
    engine.finish().unwrap();
    let (types, traces) = samples(dir.path());
    assert_eq!(types, [DataType::ULLong, DataType::Double]);
    let ipc_of = |stack: &[Sid]| {
        traces
            .iter()
            .find(|(s, _)| s == stack)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no trace {stack:?} in {traces:?}"))
    };
    assert_eq!(ipc_of(&[1, 2]), [Value::ULLong(20), Value::Double(0.25)]);
    assert_eq!(ipc_of(&[1, 3]), [Value::ULLong(40), Value::Double(0.625)]);
    assert_eq!(ipc_of(&[1]), [Value::ULLong(100), Value::Double(1.0)]);
}

#[test]
fn two_plugins_record_in_load_order() {
    let dir = tempfile::tempdir().unwrap();
    let specs = [
        spec(&rust_plugin(dir.path()), ""),
        spec(&energy_plugin(dir.path()), ""),
    ];
    let plugins = Plugin::load_all(&specs, 1).unwrap();
    let guest = Rc::new(FakeGuest::default());
    let refs: Vec<&Plugin> = plugins.iter().map(|p| &**p).collect();
    let mut engine = engine(dir.path(), &guest, &refs);
    set(&guest, 0, 0, 0);
    call(&guest, || engine.enter_kernel(0, 1, 0)).unwrap();
    set(&guest, 100, 50, 0);
    call(&guest, || engine.leave_kernel(0, 1)).unwrap();
    engine.finish().unwrap();
    let (types, traces) = samples(dir.path());
    assert_eq!(
        types,
        [DataType::ULLong, DataType::Double, DataType::Double]
    );
    // defaults of the C example: 10 pJ/cycle, 5 pJ/instruction
    assert_eq!(
        traces[0].1,
        [Value::ULLong(100), Value::Double(0.5), Value::Double(1.25)]
    );
}

#[test]
fn wrong_abi_version_is_refused_before_init() {
    let dir = tempfile::tempdir().unwrap();
    let so = inline_plugin(
        dir.path(),
        "v99",
        "const uint32_t sim_host_plugin_abi_version = 99;\n\
         int sim_host_plugin_init(const sim_host_api *a, const char *s) \
         { (void)a; (void)s; *(volatile int *)0 = 1; return 0; }\n",
    );
    let err = Plugin::load(&spec(&so, ""), 1).unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::AbiVersion {
                found: 99,
                expected: 1,
                ..
            }
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("v99.so") && text.contains("ABI version 99"),
        "{text}"
    );
}

#[test]
fn missing_symbols_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let no_init = inline_plugin(
        dir.path(),
        "noinit",
        "const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;\n",
    );
    let err = Plugin::load(&spec(&no_init, ""), 1).unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::MissingSymbol {
                symbol: "sim_host_plugin_init",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("noinit.so"), "{err}");
    let no_version = inline_plugin(
        dir.path(),
        "noversion",
        "int sim_host_plugin_init(const sim_host_api *a, const char *s) \
         { (void)a; (void)s; return 0; }\n",
    );
    let err = Plugin::load(&spec(&no_version, ""), 1).unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::MissingSymbol {
                symbol: "sim_host_plugin_abi_version",
                ..
            }
        ),
        "{err}"
    );
    let err = Plugin::load(&spec(&dir.path().join("absent.so"), ""), 1).unwrap_err();
    assert!(matches!(err, PluginError::Load { .. }), "{err}");
    assert!(err.to_string().contains("absent.so"), "{err}");
}

#[test]
fn a_plugin_message_is_bounded() {
    assert_eq!(bounded("short"), "short");
    let long = "x".repeat(100_000);
    let cut = bounded(&long);
    assert!(
        cut.len() < 300 && cut.ends_with("… (100000 bytes)"),
        "{cut}"
    );
}

#[test]
fn init_failures_are_reported_with_code_and_message() {
    let dir = tempfile::tempdir().unwrap();
    let err = Plugin::load(&spec(&energy_plugin(dir.path()), "fail"), 1).unwrap_err();
    match &err {
        PluginError::InitFailed { code, message, .. } => {
            assert_eq!((*code, message.as_str()), (3, "asked to fail"))
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("energy.so"), "{err}");
    let err = Plugin::load(&spec(&energy_plugin(dir.path()), "bogus"), 1).unwrap_err();
    assert!(
        err.to_string().contains("unknown argument `bogus`"),
        "{err}"
    );
    // a panic inside the Rust plugin's init, caught there, is a failure
    let err = Plugin::load(&spec(&rust_plugin(dir.path()), "panic"), 1).unwrap_err();
    match &err {
        PluginError::InitFailed { code, message, .. } => {
            assert_eq!(*code, -99);
            assert!(message.contains("asked to panic"), "{message}");
        }
        other => panic!("{other}"),
    }
    // no message given
    let silent = inline_plugin(
        dir.path(),
        "silent",
        "const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;\n\
         int sim_host_plugin_init(const sim_host_api *a, const char *s) \
         { (void)a; (void)s; return -11; }\n",
    );
    let err = Plugin::load(&spec(&silent, ""), 1).unwrap_err();
    assert!(err.to_string().contains("code -11"), "{err}");
}

#[test]
fn bad_registrations_fail_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let bad_type = inline_plugin(
        dir.path(),
        "badtype",
        "const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;\n\
         static void cb(const sim_host_sid s, void *d, void *c) { (void)s; (void)d; (void)c; }\n\
         int r;\n\
         int sim_host_plugin_init(const sim_host_api *a, const char *s) { (void)s;\n\
           r = a->add_callbacks(a->host, 42, cb, cb, 0, 0, 0); return 0; }\n",
    );
    let err = Plugin::load(&spec(&bad_type, ""), 1).unwrap_err();
    assert!(matches!(err, PluginError::Registration { .. }), "{err}");
    assert!(err.to_string().contains("data type 42"), "{err}");
    let null_leave = inline_plugin(
        dir.path(),
        "nullleave",
        "const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;\n\
         static void cb(const sim_host_sid s, void *d, void *c) { (void)s; (void)d; (void)c; }\n\
         int sim_host_plugin_init(const sim_host_api *a, const char *s) { (void)s;\n\
           return a->add_callbacks(a->host, SIM_HOST_INT, cb, 0, 0, 0, 0) == -1 ? 0 : 1; }\n",
    );
    let err = Plugin::load(&spec(&null_leave, ""), 1).unwrap_err();
    assert!(err.to_string().contains("must not be NULL"), "{err}");
    let none = inline_plugin(
        dir.path(),
        "none",
        "const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;\n\
         int sim_host_plugin_init(const sim_host_api *a, const char *s) \
         { (void)a; (void)s; return 0; }\n",
    );
    let err = Plugin::load(&spec(&none, ""), 1).unwrap_err();
    assert!(matches!(err, PluginError::NoCallbacks { .. }), "{err}");
}

/// A plugin that counts its callbacks and writes the count and the host
/// API's answers to the file named by its arguments in finish.
const PROBE: &str = r#"
#include <stdio.h>
#include <string.h>
const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;
static const sim_host_api *api;
static char out[512];
static int calls;
static uint64_t r1, word, pc;
static int bad_reg, bad_mem, late_add;
static void enter(const sim_host_sid s, void *d, void *c) {
    (void)d; (void)c; calls++;
    api->read_register(api->host, 1, &r1);
    bad_reg = api->read_register(api->host, 99, &pc);
    uint32_t w = 0; api->read_memory(api->host, 0x1000, &w, 4); word = w;
    bad_mem = api->read_memory(api->host, 0x2000, &w, 4);
    late_add = api->add_callbacks(api->host, SIM_HOST_INT, enter, enter, 0, 0, 0);
    *(short *)d = (short)(s * 2 + api->current_tid(api->host));
}
static void leave(const sim_host_sid s, void *d, void *c) { (void)s; (void)c; calls++; *(short *)d += 1000; }
int sim_host_plugin_init(const sim_host_api *a, const char *args) {
    api = a; strncpy(out, args, sizeof out - 1);
    if (a->size < sizeof(sim_host_api) || a->clock_hz(a->host) != 1234 || a->cycles(a->host) != 0)
        return 5;
    return a->add_callbacks(a->host, SIM_HOST_SHORT, enter, leave, 0, 0, 0);
}
void sim_host_plugin_finish(void) {
    FILE *f = fopen(out, "w");
    if (f) { fprintf(f, "%d %llu %llu %d %d %d", calls, (unsigned long long)r1,
                     (unsigned long long)word, bad_reg, bad_mem, late_add); fclose(f); }
}
"#;

#[test]
fn host_api_answers_inside_callbacks_and_finish_runs_after_the_sets() {
    let dir = tempfile::tempdir().unwrap();
    let so = inline_plugin(dir.path(), "probe", PROBE);
    let report = dir.path().join("finish.txt");
    let plugin = Plugin::load(&spec(&so, report.to_str().unwrap()), 1234).unwrap();
    // outside a callback: no guest
    let api = plugin.api();
    assert_eq!((api.cycles)(api.host), 0);
    let mut v = 0u64;
    assert_eq!((api.read_register)(api.host, 0, &mut v), -1);
    assert_eq!((api.clock_hz)(api.host), 1234);
    let guest = Rc::new(FakeGuest::default());
    assert_eq!(call(&guest, || (api.clock_hz)(api.host)), 25_000_000);
    let mut engine = engine(dir.path(), &guest, &[&plugin]);
    set(&guest, 0, 0, 77);
    call(&guest, || engine.enter_kernel(3, 9, 0)).unwrap();
    call(&guest, || engine.leave_kernel(3, 9)).unwrap();
    engine.finish().unwrap();
    let (_, traces) = samples(dir.path());
    assert_eq!(traces[0].1[1], Value::Short(9 * 2 + 3 + 1000));
    assert!(!report.exists(), "finish ran while the plugin is in use");
    drop(engine);
    assert!(!report.exists(), "finish ran while the Plugin value exists");
    drop(plugin);
    let text = std::fs::read_to_string(&report).unwrap();
    // 2 calls; r1 = 11; word 77; bad register, bad address and a late
    // add_callbacks all refused
    assert_eq!(text, "2 11 77 -1 -1 -1");
}

#[test]
fn plugin_specs_split_at_the_first_colon() {
    let s: PluginSpec = "./p.so:a=1,b=x:y".parse().unwrap();
    assert_eq!(s, spec(Path::new("./p.so"), "a=1,b=x:y"));
    let s: PluginSpec = "p.so".parse().unwrap();
    assert_eq!(s.args, "");
    assert!(":x".parse::<PluginSpec>().is_err());
}
