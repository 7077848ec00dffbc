//! Issue 30, N09: a long playback load asks whether to stop every
//! `STOP_POLL_RECORDS` records, and stops when told.

use arpsim::playback::{PlaybackIndex, STOP_POLL_RECORDS};
use arpsim::ArpError;
use std::io::Write;

#[test]
fn a_load_asked_to_stop_stops_within_one_poll() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.arp");
    let n = 10 * STOP_POLL_RECORDS;
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    write!(
        f,
        "# Atomium record and playback data - format version 1.1.\n0 1 1 9\n{n:028}\n"
    )
    .unwrap();
    for k in 0..n {
        writeln!(f, "1 0 1@{k}: 7;").unwrap();
    }
    drop(f);
    // the whole file loads when never asked to stop
    assert_eq!(PlaybackIndex::load(&path).unwrap().samples(), n);
    // told to stop at the third question: 2 polls of records read, no more
    let mut asked = 0;
    let err = PlaybackIndex::load_until(&path, &mut || {
        asked += 1;
        (asked == 3).then(|| "a test's stop".to_string())
    })
    .unwrap_err();
    assert_eq!(asked, 3);
    match err {
        ArpError::Stopped(why) => {
            let read = 2 * STOP_POLL_RECORDS;
            assert_eq!(why, format!("a test's stop, after {read} record(s)"));
        }
        other => panic!("{other}"),
    }
}
