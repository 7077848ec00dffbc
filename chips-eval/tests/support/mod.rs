//! What the tests that need something of the machine share. Such a test
//! is ignored, with the reason, where the build script
//! (`tests/support/probe.rs`) did not find what it needs; with `CI` set
//! it always runs, and [`require`] fails it when the need is missing.

/// Fails the test, saying it needs `what`, unless `available`.
#[track_caller]
pub fn require(what: &str, available: bool) {
    if available {
        return;
    }
    if std::env::var_os("CI").is_some() {
        panic!("needs {what} (CI is set: a test runs whatever it needs)");
    }
    panic!(
        "needs {what}, which the build script's probe found when chips-eval was built \
         (`cargo clean -p chips-eval` probes again)"
    );
}
