//! Section names a guest gives itself with `ARP_SECTION_NAME(sid, "name")`
//! (`guest-shim/include/atomium_rp.h`, issue 39): records in the ELF
//! section `.arp_names`, which is not allocated (the guest never loads
//! it), so no optimisation can merge or drop them.
//!
//! A record is the section id (2 bytes, little-endian, as the targets
//! are) followed by the name and its NUL; records follow each other
//! without padding (the section's alignment is 1). A malformed section
//! gives a problem naming the section and the record's offset, never a
//! panic: a truncated record or a name without its NUL ends the reading
//! there, an empty or non-UTF-8 name is skipped, and an id given two
//! different names gets both, joined by ` | ` (as `arp --elf` joins two
//! names of one id), with a problem naming both.

use goblin::elf::{section_header, Elf};
use std::collections::BTreeMap;

/// The ELF section's name.
pub const SECTION: &str = ".arp_names";

/// The names of one ELF's `.arp_names`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GivenNames {
    pub by_sid: BTreeMap<u16, String>,
    /// What was wrong with the section, each naming it and an offset.
    pub problems: Vec<String>,
}

impl GivenNames {
    /// The name given to `sid`, if any.
    pub fn get(&self, sid: u16) -> Option<&str> {
        self.by_sid.get(&sid).map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.by_sid.is_empty()
    }
}

/// The names in `elf`'s `.arp_names` (none when it has no such section).
pub fn read(elf: &Elf<'_>, bytes: &[u8]) -> GivenNames {
    let Some(sh) = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(SECTION))
    else {
        return GivenNames::default();
    };
    let problem = |what: String| GivenNames {
        by_sid: BTreeMap::new(),
        problems: vec![format!("section {SECTION}: {what}; its names are not used")],
    };
    if sh.sh_type == section_header::SHT_NOBITS {
        return problem("it has no contents in the file (SHT_NOBITS)".into());
    }
    let data = usize::try_from(sh.sh_offset)
        .ok()
        .zip(usize::try_from(sh.sh_size).ok())
        .and_then(|(start, size)| bytes.get(start..start.checked_add(size)?));
    match data {
        Some(data) => parse(data),
        None => problem(format!(
            "its {} bytes at file offset {:#x} run past the end of the file ({} bytes)",
            sh.sh_size,
            sh.sh_offset,
            bytes.len()
        )),
    }
}

/// The records of a `.arp_names` section's contents.
pub fn parse(data: &[u8]) -> GivenNames {
    let mut names = GivenNames::default();
    // every (name, offset) given to each id, in order
    let mut given: BTreeMap<u16, Vec<(String, usize)>> = BTreeMap::new();
    let mut at = 0;
    while at < data.len() {
        let here = |what: &str| format!("section {SECTION}, offset {at:#x}: {what}");
        let Some(id) = data.get(at..at + 2) else {
            names.problems.push(here(&format!(
                "a truncated record ({} byte(s) left; a record is a 2-byte section id, \
                 a name and its NUL); the rest is not read",
                data.len() - at
            )));
            break;
        };
        let sid = u16::from_le_bytes([id[0], id[1]]);
        let text = &data[at + 2..];
        let Some(len) = text.iter().position(|b| *b == 0) else {
            names.problems.push(here(&format!(
                "the name of section {sid} has no NUL before the end of the section; \
                 the rest is not read"
            )));
            break;
        };
        match std::str::from_utf8(&text[..len]) {
            Ok("") => names
                .problems
                .push(here(&format!("section {sid} is given an empty name"))),
            Ok(name) => {
                let known = given.entry(sid).or_default();
                if !known.iter().any(|(n, _)| n == name) {
                    known.push((name.to_owned(), at));
                }
            }
            Err(_) => names
                .problems
                .push(here(&format!("the name of section {sid} is not UTF-8"))),
        }
        at += 2 + len + 1;
    }
    for (sid, all) in given {
        if all.len() > 1 {
            let listed: Vec<String> = all
                .iter()
                .map(|(n, off)| format!("{n:?} (offset {off:#x})"))
                .collect();
            names.problems.push(format!(
                "section {SECTION}: section {sid} is given {} different names: {}; \
                 it is named by all of them",
                all.len(),
                listed.join(", ")
            ));
        }
        let joined: Vec<String> = all.into_iter().map(|(n, _)| n).collect();
        names.by_sid.insert(sid, joined.join(" | "));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(sid: u16, name: &str) -> Vec<u8> {
        let mut r = sid.to_le_bytes().to_vec();
        r.extend_from_slice(name.as_bytes());
        r.push(0);
        r
    }

    #[test]
    fn records_follow_each_other() {
        let data = [record(1, "add"), record(300, "fold"), record(1, "add")].concat();
        let names = parse(&data);
        assert!(names.problems.is_empty(), "{:?}", names.problems);
        assert_eq!(names.get(1), Some("add"));
        assert_eq!(names.get(300), Some("fold"));
        assert_eq!(names.by_sid.len(), 2);
    }

    #[test]
    fn a_truncated_record_is_a_problem_at_its_offset() {
        let mut data = record(1, "add");
        data.push(7);
        let names = parse(&data);
        assert_eq!(names.get(1), Some("add"));
        assert_eq!(names.problems.len(), 1);
        let p = &names.problems[0];
        assert!(
            p.contains(".arp_names, offset 0x6: a truncated record"),
            "{p}"
        );
    }

    #[test]
    fn a_name_without_its_nul_is_a_problem_at_its_offset() {
        let mut data = record(2, "ok");
        data.extend_from_slice(&[9, 0, b'n', b'o']);
        let names = parse(&data);
        assert_eq!(names.get(2), Some("ok"));
        assert_eq!(names.get(9), None);
        let p = &names.problems[0];
        assert!(
            p.contains("offset 0x5: the name of section 9 has no NUL"),
            "{p}"
        );
    }

    #[test]
    fn two_names_for_one_id_are_both_shown_and_reported() {
        let data = [record(4, "step"), record(4, "jump")].concat();
        let names = parse(&data);
        assert_eq!(names.get(4), Some("step | jump"));
        let p = &names.problems[0];
        assert!(p.contains("section 4 is given 2 different names"), "{p}");
        assert!(p.contains("\"step\" (offset 0x0)"), "{p}");
        assert!(p.contains("\"jump\" (offset 0x7)"), "{p}");
    }

    #[test]
    fn empty_and_non_utf8_names_are_skipped_with_a_problem() {
        let mut data = record(5, "");
        data.extend_from_slice(&[6, 0, 0xff, 0xfe, 0]);
        data.extend(record(7, "fine"));
        let names = parse(&data);
        assert_eq!(names.by_sid.len(), 1);
        assert_eq!(names.get(7), Some("fine"));
        assert!(names.problems[0].contains("offset 0x0: section 5 is given an empty name"));
        assert!(names.problems[1].contains("offset 0x3: the name of section 6 is not UTF-8"));
    }

    #[test]
    fn nothing_is_nothing() {
        assert_eq!(parse(&[]), GivenNames::default());
    }
}
