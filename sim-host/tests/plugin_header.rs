//! `include/sim_host_plugin.h` against the one Rust declaration of the
//! plugin ABI (`sim-host-plugin-abi`): the C compiler checks every field's
//! name, offset and size, the table's size, the version, the data type
//! codes and the function types. gcc is needed to build sim-host at all
//! (Unicorn is C), so it is not optional here.

use sim_host_plugin_abi::{data_type, HostApi, ABI_VERSION, FIELDS};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The C type of each function field: what the header must declare.
const FUNCTION_TYPES: &[(&str, &str)] = &[
    (
        "add_callbacks",
        "int (*)(void *, int, sim_host_enter_callback, sim_host_leave_callback, \
         sim_host_spawn_callback, sim_host_join_callback, void *)",
    ),
    ("set_error", "void (*)(void *, const char *)"),
    ("log", "void (*)(void *, const char *)"),
    ("clock_hz", "uint64_t (*)(void *)"),
    ("cycles", "uint64_t (*)(void *)"),
    ("instructions", "uint64_t (*)(void *)"),
    ("current_tid", "sim_host_tid (*)(void *)"),
    ("read_register", "int (*)(void *, uint32_t, uint64_t *)"),
    ("read_memory", "int (*)(void *, uint64_t, void *, size_t)"),
];

const DATA_TYPES: &[(&str, i32)] = &[
    ("SIM_HOST_CHAR", data_type::CHAR),
    ("SIM_HOST_UCHAR", data_type::UCHAR),
    ("SIM_HOST_SHORT", data_type::SHORT),
    ("SIM_HOST_USHORT", data_type::USHORT),
    ("SIM_HOST_INT", data_type::INT),
    ("SIM_HOST_UINT", data_type::UINT),
    ("SIM_HOST_LONG", data_type::LONG),
    ("SIM_HOST_ULONG", data_type::ULONG),
    ("SIM_HOST_LLONG", data_type::LLONG),
    ("SIM_HOST_ULLONG", data_type::ULLONG),
    ("SIM_HOST_FLOAT", data_type::FLOAT),
    ("SIM_HOST_DOUBLE", data_type::DOUBLE),
    ("SIM_HOST_LDOUBLE", data_type::LDOUBLE),
];

/// A C file of static assertions: the header must agree with the Rust ABI.
fn assertions() -> String {
    let mut c = String::from("#include <stddef.h>\n#include \"sim_host_plugin.h\"\n");
    let mut assert = |cond: String, what: String| {
        c.push_str(&format!("_Static_assert({cond}, \"{what}\");\n"));
    };
    for (name, offset, size) in FIELDS {
        assert(
            format!("offsetof(sim_host_api, {name}) == {offset}"),
            format!("offset of {name}"),
        );
        assert(
            format!("sizeof(((sim_host_api *)0)->{name}) == {size}"),
            format!("size of {name}"),
        );
    }
    for (name, ty) in FUNCTION_TYPES {
        assert(
            format!("__builtin_types_compatible_p(__typeof__(((sim_host_api *)0)->{name}), {ty})"),
            format!("type of {name}"),
        );
    }
    for (name, code) in DATA_TYPES {
        assert(format!("{name} == {code}"), format!("code of {name}"));
    }
    assert(
        format!("sizeof(sim_host_api) == {}", size_of::<HostApi>()),
        "size of sim_host_api (a field the Rust ABI lacks?)".into(),
    );
    assert(
        format!("SIM_HOST_PLUGIN_ABI_VERSION == {ABI_VERSION}u"),
        "ABI version".into(),
    );
    c
}

/// Compiles `source` against the header; the compiler's messages on failure.
fn compile(source: &str) -> Result<(), String> {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let mut gcc = Command::new("gcc")
        .args(["-std=c11", "-fsyntax-only", "-x", "c", "-", "-I"])
        .arg(&include)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gcc (needed to build sim-host) runs");
    gcc.stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    let out = gcc.wait_with_output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn the_header_declares_the_rust_abi() {
    assert_eq!(
        FIELDS.len(),
        FUNCTION_TYPES.len() + 3,
        "a field without a C type here"
    );
    if let Err(messages) = compile(&assertions()) {
        panic!("sim_host_plugin.h disagrees with sim-host-plugin-abi:\n{messages}");
    }
}

#[test]
fn the_check_fails_when_the_header_and_the_abi_differ() {
    let wrong = assertions().replace(
        &format!("== {}, \"offset of log\"", FIELDS[5].1),
        &format!("== {}, \"offset of log\"", FIELDS[5].1 + 8),
    );
    assert_ne!(wrong, assertions(), "the offset of `log` is asserted");
    let messages = compile(&wrong).expect_err("a wrong offset does not compile");
    assert!(messages.contains("offset of log"), "{messages}");
}
