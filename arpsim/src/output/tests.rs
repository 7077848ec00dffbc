use super::*;
use std::os::unix::fs::symlink;
use std::process::Command;

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn a_character_device_is_written_in_place_never_replaced() {
    let dir = scratch();
    let null = dir.path().join("null");
    // A private /dev/null (major 1, minor 3): never the machine's own.
    let made = Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .status();
    if !made.is_ok_and(|s| s.success()) {
        // a missing capability fails under CI, never a silent pass there
        assert!(
            std::env::var_os("CI").is_none(),
            "mknod needs root (CAP_MKNOD): the device case cannot be tested"
        );
        eprintln!("SKIPPED: mknod needs root (CAP_MKNOD); the device case is not tested");
        return;
    }
    for seekable in [false, true] {
        let mut out = if seekable {
            Output::create_seekable(&null).unwrap()
        } else {
            Output::create(&null).unwrap()
        };
        out.write_all(b"records").unwrap();
        out.commit().unwrap();
        let meta = fs::symlink_metadata(&null).unwrap();
        assert!(meta.file_type().is_char_device(), "the device was replaced");
        assert_eq!(meta.rdev(), fs::metadata("/dev/null").unwrap().rdev());
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_fifo_receives_the_bytes_and_stays_a_fifo() {
    let dir = scratch();
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    write(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_symlink_stays_a_link_and_its_target_is_replaced() {
    let dir = scratch();
    let target = dir.path().join("real.arp");
    let link = dir.path().join("link.arp");
    fs::write(&target, "old").unwrap();
    symlink("real.arp", &link).unwrap();
    write(&link, "new").unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_to_string(&target).unwrap(), "new");
}

#[test]
fn a_dangling_symlink_creates_its_target() {
    let dir = scratch();
    let link = dir.path().join("link.arp");
    symlink("sub-missing.arp", &link).unwrap();
    write(&link, "made").unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        fs::read_to_string(dir.path().join("sub-missing.arp")).unwrap(),
        "made"
    );
}

#[test]
fn a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask() {
    let dir = scratch();
    let old = dir.path().join("old.arp");
    fs::write(&old, "x").unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o640)).unwrap();
    write(&old, "y").unwrap();
    assert_eq!(fs::metadata(&old).unwrap().mode() & 0o7777, 0o640);

    // File::create asks for 0666 and gets the umask applied: the reference.
    let reference = dir.path().join("reference");
    File::create(&reference).unwrap();
    let new = dir.path().join("new.arp");
    write(&new, "z").unwrap();
    assert_eq!(
        fs::metadata(&new).unwrap().mode() & 0o7777,
        fs::metadata(&reference).unwrap().mode() & 0o7777
    );
}

#[test]
fn an_abandoned_output_leaves_the_old_file_and_no_temporary() {
    let dir = scratch();
    let path = dir.path().join("d.arp");
    fs::write(&path, "previous").unwrap();
    let mut out = Output::create(&path).unwrap();
    out.write_all(b"half").unwrap();
    let temp = temporaries()
        .into_iter()
        .find(|t| t.starts_with(dir.path()))
        .expect("the temporary is registered");
    assert!(temp.exists());
    drop(out);
    assert!(!temp.exists());
    assert!(!temporaries().contains(&temp));
    assert_eq!(fs::read_to_string(&path).unwrap(), "previous");
}

#[test]
fn a_missing_directory_is_found_before_writing() {
    let dir = scratch();
    let err = check_writable(&dir.path().join("no/such/d.arp")).unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    let err = check_writable(dir.path()).unwrap_err();
    assert!(err.to_string().contains("directory"), "{err}");
    assert!(check_writable(&dir.path().join("ok.arp")).is_ok());
    assert!(leftovers(dir.path()).is_empty());
}

const NO_INPUTS: [(&str, &Path); 0] = [];

/// Two outputs never name one file: the same path, a symbolic link to
/// it, `./` in it, or a hard link of it (issue 43, M04).
#[test]
fn two_names_for_one_file_are_found() {
    let dir = scratch();
    let a = dir.path().join("a.json");
    let link = dir.path().join("b.json");
    symlink("a.json", &link).unwrap();
    let other = dir.path().join("c.json");
    let dotted = dir.path().join(".").join("a.json");
    let check = |outs: &[(&str, &Path)]| check_files(outs, &NO_INPUTS);
    let e = check(&[("--json", &a), ("--csv", &other), ("--junit", &link)]).unwrap_err();
    assert!(
        e.starts_with("--json ") && e.contains("--junit") && e.contains("same file"),
        "{e}"
    );
    assert!(check(&[("--csv", &other), ("-o", &dotted), ("--json", &a)]).is_err());
    assert!(check(&[("--json", &a), ("--csv", &other)]).is_ok());
    assert!(check(&[("--json", Path::new("-")), ("--csv", Path::new("-"))]).is_ok());
    fs::write(&a, "a").unwrap();
    let hard = dir.path().join("hard.csv");
    fs::hard_link(&a, &hard).unwrap();
    let e = check(&[("--json", &a), ("--csv", &hard)]).unwrap_err();
    assert!(e.contains("--csv") && e.contains("same file"), "{e}");
}

#[test]
fn the_check_names_the_option_and_the_path() {
    let dir = scratch();
    let ok = dir.path().join("r.json");
    let missing = dir.path().join("nope/x.csv");
    let err = check_files(&[("--json", &ok), ("--csv", &missing)], &NO_INPUTS).unwrap_err();
    assert!(err.starts_with("--csv "), "{err}");
    assert!(err.contains("nope"), "{err}");
    let err = check_files(&[("--json", &ok), ("-o", &ok)], &NO_INPUTS).unwrap_err();
    assert!(err.contains("--json") && err.contains("-o") && err.contains("same file"));
    assert!(check_files(
        &[("--json", ok.as_path()), ("--csv", Path::new("-"))],
        &NO_INPUTS
    )
    .is_ok());
    assert!(!ok.exists(), "a check writes nothing");
    assert!(leftovers(dir.path()).is_empty());
}

/// issue 30, N20; issue 43, M04: an output that is an input, under its
/// own name, a link or a hard link, is refused; distinct files and
/// devices are not. Owned labels (a suite's entries) work alike.
#[test]
fn an_output_that_is_an_input_is_refused_by_device_and_inode() {
    let dir = scratch();
    let input = dir.path().join("f.elf");
    fs::write(&input, "elf").unwrap();
    let hard = dir.path().join("hard.elf");
    fs::hard_link(&input, &hard).unwrap();
    let soft = dir.path().join("soft.elf");
    symlink(&input, &soft).unwrap();
    let other = dir.path().join("other.arp");
    fs::write(&other, "arp").unwrap();
    let new = dir.path().join("new.arp");
    for out in [&input, &hard, &soft] {
        let e = check_files(&[("-o", out)], &[("ELF", &input)]).unwrap_err();
        assert!(e.contains("-o") && e.contains("the input ELF"), "{e}");
    }
    let ins: [(&str, &Path); 2] = [("ELF", &input), ("--expect-output", &other)];
    let e = check_files(&[("-o", &new), ("--report-json", &other)], &ins).unwrap_err();
    assert!(
        e.contains("--report-json") && e.contains("--expect-output"),
        "{e}"
    );
    assert!(check_files(&[("-o", new.as_path()), ("-", Path::new("-"))], &ins).is_ok());
    assert!(check_files(&[("-o", &other)], &[("ELF", &input)]).is_ok());
    let owned = vec![(String::from("entry `f` elf"), input.clone())];
    let e = check_files(&[("--junit", &hard)], &owned).unwrap_err();
    assert!(e.contains("--junit") && e.contains("entry `f` elf"), "{e}");
    assert_eq!(fs::read_to_string(&input).unwrap(), "elf");
}
