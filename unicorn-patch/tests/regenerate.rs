//! `patches.sh` turns the patches into a git history and back without a
//! byte of difference, so an upgrade can rebase the history and export it
//! (CONTRIBUTING.md, "Upgrading Unicorn"). Needs bash, git, patch, tar and
//! sha256sum, as the build does.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh folder of this test's own, under Cargo's scratch space.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("unicorn-patch-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

fn patches_sh(args: &[&Path]) -> String {
    let out = Command::new("bash")
        .arg(manifest_dir().join("patches.sh"))
        .args(args)
        .output()
        .expect("bash runs patches.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "patches.sh {args:?} failed:\n{text}");
    text
}

fn series(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("series"))
        .expect("series")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_patches_survive_a_round_trip_through_git() {
    let dir = scratch("round-trip");
    let (tree, out) = (dir.join("tree"), dir.join("out"));
    let krate = Path::new(env!("UNICORN_PRISTINE_CRATE"));
    let made = patches_sh(&[Path::new("tree"), &tree, Path::new("--crate"), krate]);
    let names = series(&manifest_dir());
    assert!(
        made.contains(&format!("{} commits", names.len() + 1)),
        "{made}"
    );

    patches_sh(&[Path::new("export"), &tree, Path::new("--to"), &out]);
    assert_eq!(series(&out), names);
    for name in &names {
        let ours = fs::read(manifest_dir().join(name)).expect("committed patch");
        let again = fs::read(out.join(name)).expect("exported patch");
        assert!(ours == again, "{name} differs after the round trip");
    }
    fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_crate_with_another_checksum_is_refused() {
    let dir = scratch("checksum");
    let fake = dir.join("unicorn-engine-sys-2.1.5.crate");
    fs::write(&fake, b"not the crate").unwrap();
    let out = Command::new("bash")
        .arg(manifest_dir().join("patches.sh"))
        .args([
            Path::new("tree"),
            &dir.join("tree"),
            Path::new("--crate"),
            &fake,
        ])
        .output()
        .expect("bash runs patches.sh");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("not unicorn-engine-sys-2.1.5.crate with sha256"),
        "{err}"
    );
    assert!(!dir.join("tree").exists(), "nothing unpacked");
    fs::remove_dir_all(&dir).expect("clean up");
}
