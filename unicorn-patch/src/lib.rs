//! `unicorn-engine-sys` 2.1.5 with sim-host's patch (`charge.patch`,
//! ARCHITECTURE.md decision 2): the bindings bindgen generates from the
//! patched `unicorn.h`, and upstream's own `bindings/rust/sys/src/lib.rs`
//! (without its module lines), both from `OUT_DIR` (build.rs).
#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    unpredictable_function_pointer_comparisons,
    clippy::all,
    clippy::pedantic
)]

mod bindings {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}
pub use bindings::*;

include!(concat!(env!("OUT_DIR"), "/upstream_lib.rs"));
