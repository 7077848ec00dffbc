//! Test suites: a TOML manifest lists guest runs (ELF, target, arguments,
//! expected output and exit status); [`run`] runs them in parallel on the
//! host's cores and [`SuiteReport`] is the combined report (table, JSON,
//! CSV).
//!
//! Each entry runs [`session`] in a host thread of this process:
//! Unicorn engines are independent, the results arrive typed (no child
//! report to parse), and there is no process start per entry. The price is
//! isolation: a Rust panic in an entry is caught and fails only that entry,
//! but a crash inside Unicorn's C code would end the whole suite.
//!
//! ```toml
//! [[entry]]
//! name = "filter"                      # unique; defaults to the ELF's stem
//! elf = "../target/guests/cortex-m4/filter.elf"   # relative to the manifest
//! target = "cortex-m4"                 # a built-in target
//! args = []                            # guest arguments
//! expected_output = "../guest-shim/examples/filter/expected-output.txt"
//! exit_code = 0                        # default 0
//! cores = 2                            # optional
//! mode = "record_average"              # optional ARP mode
//! max_cycles = 100000000               # optional
//! timeout = 60.0                       # optional, seconds of host time
//! clock_hz = 168000000                 # optional: the clock of its times
//! budget = { ato_kernel_fir = 20000 }  # optional, see [`budget`]
//!
//! [[entry]]                            # one entry per combination:
//! elf = "../target/guests/{target}/filter.elf"    # see `matrix`
//! matrix = { target = ["cortex-m0", "rv32imac"], args = [["1024"], ["4096"]], cores = [1, 2] }
//! ```
//!
//! Matrices are expanded by `suite/matrix.rs` (names such as
//! `filter.target=cortex-m0.args=1024.cores=2`); [`shard`] splits the
//! expanded manifest into balanced parts and [`merge`] puts their results
//! back together. The cycle gates ([`budget`], [`baseline`]) and what CI
//! systems read of a suite ([`junit`], [`summary`]) judge the results in
//! hand.
//!
//! `clock_hz` (issue 45) sets the clock its times are at (the table's
//! sim time, `simulated_seconds`, the long CSV's time columns): cycles
//! do not change, so entries on targets of unlike clocks compare at the
//! parts' own. It is also a matrix key (`matrix = { clock_hz = [...] }`).
//! [`long_csv::long_csv`] writes one row per entry and section
//! (`suite/long_csv.rs`).
//!
//! The result (JSON, `schema_version` 5: version 5 added the entries'
//! `clock_hz` and the sections' `self_cycles`; in version 3 `sections[].share`
//! was the total's share, in 4 the self share as the run report's, version
//! 2 had no `sections[].names` or `budgets`, version 1 no `manifest_hash`,
//! `shard`, `manifest_entries` or `host`, and kept `host_seconds` in each
//! entry) keeps everything that depends on the host's speed under its last
//! key, `host`: the rest is the same, byte for byte, for the same manifest
//! and guests whether it ran whole, with any `-j`, or in shards merged.
//! `manifest_hash` is the sha256 of the expanded entries' defining fields
//! (name, ELF and expected-output paths as written, i.e. relative to the
//! manifest's folder, the expected output's own sha256, target, args,
//! exit code, cores, mode, max_cycles, timeout, and clock_hz where it is
//! set, so older manifests keep their hash; not the budgets, which
//! judge a run and do not change it): with relative paths, the
//! same on every machine that has the manifest, whatever folder it is in.
//! The ELFs' contents are not hashed (guests may be built on each machine).

pub mod baseline;
pub mod budget;
mod error;
pub mod junit;
pub mod long_csv;
mod manifest;
mod matrix;
pub mod merge;
mod result;
mod run;
pub mod shard;
pub mod summary;

pub use error::{write_output, SuiteError};
pub use long_csv::long_csv;
pub use manifest::{file_stem, sha256_hex, Entry, Manifest};
pub use result::{EntryResult, EntryTime, HostTimes, SectionResult, SuiteReport, SCHEMA_VERSION};
pub use run::{run, run_entry, run_entry_into, run_plan, EntryFiles, RunPlan};
pub use shard::{Shard, ShardInfo};

#[cfg(test)]
mod tests {
    use super::manifest::*;
    use super::result::csv_field;
    use std::path::Path;

    fn err(text: &str) -> String {
        Manifest::parse(text, Path::new("/nonexistent/m.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_name_entry_and_field() {
        let e = err("[[entry]]\nname = \"a\"\ntarget = \"cortex-m4\"\n");
        assert!(e.contains("entry 1 (a)") && e.contains("elf"), "{e}");
        let e =
            err("[[entry]]\nname = \"b\"\nelf = \"x.elf\"\ntarget = \"cortex-m4\"\ncolour = 1\n");
        assert!(e.contains("entry 1 (b)") && e.contains("colour"), "{e}");
        let e = err("[[entry]]\nname = \"c\"\nelf = \"x.elf\"\ntarget = \"cortex-m99\"\n");
        assert!(e.contains("entry 1 (c): field `target`"), "{e}");
        let e = err("[[entry]]\nname = \"d\"\nelf = \"x.elf\"\ntarget = \"cortex-m4\"\n");
        assert!(e.contains("entry 1 (d): field `elf`"), "{e}");
        let e = err("title = 1\n");
        assert!(e.contains("title"), "{e}");
        let e = err("");
        assert!(e.contains("no entries"), "{e}");
    }

    /// A manifest in a fresh folder with a (dummy) ELF beside it.
    fn manifest_in(dir: &Path, text: &str) -> Result<Manifest, String> {
        for t in ["cortex-m0", "cortex-m4"] {
            std::fs::create_dir_all(dir.join("g").join(t)).unwrap();
            std::fs::write(dir.join("g").join(t).join("f.elf"), "").unwrap();
        }
        let path = dir.join("m.toml");
        std::fs::write(&path, text).unwrap();
        Manifest::load(&path).map_err(|e| e.to_string())
    }

    const MATRIX: &str = "[[entry]]\nelf = \"g/{target}/f.elf\"\n\
        matrix = { target = [\"cortex-m0\", \"cortex-m4\"], cores = [1, 2] }\n";

    #[test]
    fn the_manifest_hash_covers_the_entries_not_the_folder() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ma = manifest_in(a.path(), MATRIX).unwrap();
        let mb = manifest_in(b.path(), MATRIX).unwrap();
        assert_eq!(ma.entries.len(), 4);
        assert_eq!(ma.entries[3].name, "f.target=cortex-m4.cores=2");
        assert_eq!(ma.entries[3].index, 4);
        assert_eq!(ma.entries[3].table, 1);
        assert!(
            ma.hash.starts_with("sha256:") && ma.hash.len() == 71,
            "{}",
            ma.hash
        );
        assert_eq!(ma.hash, mb.hash);
        let changed = manifest_in(b.path(), &MATRIX.replace("[1, 2]", "[1, 3]")).unwrap();
        assert_ne!(ma.hash, changed.hash);
        let with_args = manifest_in(b.path(), &format!("{MATRIX}args = [\"x\"]\n")).unwrap();
        assert_ne!(ma.hash, with_args.hash);
    }

    #[test]
    fn expanded_entries_are_checked_under_their_names() {
        let dir = tempfile::tempdir().unwrap();
        let e = manifest_in(dir.path(), &MATRIX.replace("[1, 2]", "[1, 9999]")).unwrap_err();
        assert!(
            e.contains("entry 1 (f.target=cortex-m0.cores=9999): field `matrix.cores`: 9999"),
            "{e}"
        );
        let e = manifest_in(dir.path(), &MATRIX.replace("cortex-m4", "cortex-m55")).unwrap_err();
        assert!(
            e.contains("(f.target=cortex-m55.cores=1): field `matrix.target`"),
            "{e}"
        );
        let e = manifest_in(dir.path(), "[[entry]]\nname = \"n\"\nelf = \"g/{target}/f.elf\"\nmatrix = { target = [\"cortex-m3\"] }\n").unwrap_err();
        assert!(
            e.contains("(n.target=cortex-m3): field `elf`: ") && e.contains("g/cortex-m3/f.elf"),
            "{e}"
        );
        let e = manifest_in(dir.path(), "[[entry]]\nelf = \"g/cortex-m0/f.elf\"\n").unwrap_err();
        assert!(
            e.contains("entry 1 (f): field `target`: missing field `target`"),
            "{e}"
        );
    }

    #[test]
    fn names_must_make_distinct_file_names() {
        let dir = tempfile::tempdir().unwrap();
        let entry = |name: &str| {
            format!("[[entry]]\nname = \"{name}\"\nelf = \"g/cortex-m0/f.elf\"\ntarget = \"cortex-m0\"\n")
        };
        let e = manifest_in(dir.path(), &(entry("a/b") + &entry("a b"))).unwrap_err();
        assert!(
            e.contains("entry 2 (a b): field `name`") && e.contains("`a_b`"),
            "{e}"
        );
        assert_eq!(file_stem("x.target=m0.args=1_2"), "x.target=m0.args=1_2");
        assert_eq!(file_stem("../up"), "_.._up");
        assert_eq!(file_stem(""), "_");
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("a\"b"), "\"a\"\"b\"");
        assert_eq!(csv_field("ab"), "ab");
    }
}
