//! The bootstrap names the package that failed to install, and why, and
//! exits non-zero. `apt-get` and `dpkg-query` are replaced by fakes on PATH,
//! so the test installs nothing.

use e2e_tests::repo_root;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

fn fake(dir: &std::path::Path, name: &str, script: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn failed_install_names_the_package_and_exits_non_zero() {
    let dir = std::env::temp_dir().join(format!("fake-apt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // nothing is installed; installing `libfoo-dev` fails like apt does
    fake(&dir, "dpkg-query", "exit 1");
    fake(
        &dir,
        "apt-get",
        r#"case "$*" in
  *update*) exit 0 ;;
  *libfoo-dev*) echo "E: Unable to locate package libfoo-dev" >&2; exit 100 ;;
  *) exit 0 ;;
esac"#,
    );
    fake(&dir, "sudo", "exec \"$@\"");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/bootstrap.sh"))
        .env("PATH", path)
        .env("BOOTSTRAP_PACKAGES", "cmake libfoo-dev")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "bootstrap must fail: {stderr}");
    assert!(
        stderr.contains("installing `libfoo-dev` failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Unable to locate package libfoo-dev"),
        "{stderr}"
    );
    assert!(stderr.contains("failed to install: libfoo-dev"), "{stderr}");
    assert!(!stderr.contains("installing `cmake` failed"), "{stderr}");
}

#[test]
fn nothing_missing_means_nothing_to_do() {
    let dir = std::env::temp_dir().join(format!("fake-dpkg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    fake(&dir, "dpkg-query", "printf 'install ok installed'");
    fake(&dir, "apt-get", "echo apt-get must not run >&2; exit 1");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/bootstrap.sh"))
        .env("PATH", path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
