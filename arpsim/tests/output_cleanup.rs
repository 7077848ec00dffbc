//! `remove_temporaries` acts on the whole process: tested in a binary of
//! its own so no other test's temporary file is removed under it.

use arpsim::output::{remove_temporaries, Output};
use std::io::Write;

fn temporaries_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".tmp")
        })
        .count()
}

#[test]
fn remove_temporaries_deletes_what_unfinished_outputs_hold() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = Output::create(&dir.path().join("a.arp")).unwrap();
    let b = Output::create_seekable(&dir.path().join("b.json")).unwrap();
    a.write_all(b"partial").unwrap();
    assert_eq!(temporaries_in(dir.path()), 2);
    remove_temporaries();
    assert_eq!(temporaries_in(dir.path()), 0);
    assert!(arpsim::output::temporaries().is_empty());
    drop((a, b));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
