//! Inputs made from the corpus: a committed file with a few edits of the
//! kinds libFuzzer's mutator makes (bits, bytes, interesting integers,
//! inserted and deleted runs, repeated runs, pieces of other corpus files,
//! cuts), plus two that know text formats: a dictionary token inserted and
//! a number replaced by an edge value. A proptest strategy, so a failing
//! input shrinks to fewer and smaller edits.

use proptest::prelude::*;
use proptest::sample::Index;

/// Integers worth trying where a binary format has a count, size or
/// offset, written little-endian over 1, 2, 4 or 8 bytes.
const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x1000,
    0x7fff,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    0xffff_ffff,
    u64::MAX,
];

/// Numbers worth trying where a text format has one.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "8",
    "31",
    "32",
    "33",
    "64",
    "255",
    "256",
    "4096",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "0x0",
    "0xffffffff",
    "0x80000000",
    "1e308",
    "1e999",
    "-0.0",
    "nan",
    "inf",
    "0.5",
];

/// One change to an input; positions are indices into what the input is
/// at that point, so every edit applies to any input.
#[derive(Debug, Clone)]
pub enum Edit {
    FlipBit(Index, u8),
    SetByte(Index, u8),
    Integer(Index, Index, u8),
    Insert(Index, Vec<u8>),
    Token(Index, Index),
    Number(Index, Index),
    Delete(Index, u16),
    Repeat(Index, u16, u8),
    Splice(Index, Index, Index, u16),
    Cut(Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = any::<Index>;
    prop_oneof![
        2 => (at(), 0u8..8).prop_map(|(a, b)| Edit::FlipBit(a, b)),
        2 => (at(), any::<u8>()).prop_map(|(a, b)| Edit::SetByte(a, b)),
        2 => (at(), at(), 0u8..4).prop_map(|(a, v, w)| Edit::Integer(a, v, w)),
        1 => (at(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(a, b)| Edit::Insert(a, b)),
        3 => (at(), at()).prop_map(|(a, t)| Edit::Token(a, t)),
        3 => (at(), at()).prop_map(|(a, n)| Edit::Number(a, n)),
        2 => (at(), 1u16..64).prop_map(|(a, n)| Edit::Delete(a, n)),
        1 => (at(), 1u16..256, 1u8..4).prop_map(|(a, n, t)| Edit::Repeat(a, n, t)),
        1 => (at(), at(), at(), 1u16..512).prop_map(|(a, f, s, n)| Edit::Splice(a, f, s, n)),
        1 => at().prop_map(Edit::Cut),
    ]
}

/// What edits draw on: the corpus (for splices) and the format's tokens.
#[derive(Debug, Clone)]
pub struct Material {
    pub corpus: Vec<Vec<u8>>,
    pub tokens: &'static [&'static str],
    /// Inputs are cut to this many bytes after editing.
    pub max_len: usize,
}

/// A corpus file with up to `max_edits` edits, or (one case in ten)
/// random bytes.
pub fn inputs(material: Material, max_edits: usize) -> impl Strategy<Value = Vec<u8>> {
    let n = material.corpus.len();
    let edited =
        (0..n, prop::collection::vec(edit(), 0..=max_edits)).prop_map(move |(file, edits)| {
            let mut bytes = material.corpus[file].clone();
            for e in &edits {
                apply(&mut bytes, e, &material);
            }
            bytes.truncate(material.max_len);
            bytes
        });
    prop_oneof![
        9 => edited,
        1 => prop::collection::vec(any::<u8>(), 0..1024),
    ]
}

/// Applies `edit` to `bytes`.
pub fn apply(bytes: &mut Vec<u8>, edit: &Edit, material: &Material) {
    let len = bytes.len();
    // a position in the input, or its end
    let pos = |i: &Index| i.index(len + 1);
    match edit {
        Edit::FlipBit(at, bit) if len > 0 => bytes[at.index(len)] ^= 1 << bit,
        Edit::SetByte(at, byte) if len > 0 => bytes[at.index(len)] = *byte,
        Edit::Integer(at, value, width) => {
            let value = INTERESTING[value.index(INTERESTING.len())].to_le_bytes();
            let width = 1usize << width;
            let start = pos(at).min(len.saturating_sub(width));
            let end = (start + width).min(len);
            bytes[start..end].copy_from_slice(&value[..end - start]);
        }
        Edit::Insert(at, new) => insert(bytes, pos(at), new),
        Edit::Token(at, token) if !material.tokens.is_empty() => {
            let token = material.tokens[token.index(material.tokens.len())];
            insert(bytes, pos(at), token.as_bytes());
        }
        Edit::Number(which, number) => replace_number(bytes, which, number),
        Edit::Delete(at, n) => {
            let start = pos(at);
            let end = (start + usize::from(*n)).min(len);
            bytes.drain(start..end);
        }
        Edit::Repeat(at, n, times) => {
            let start = pos(at);
            let end = (start + usize::from(*n)).min(len);
            let run = bytes[start..end].repeat(usize::from(*times));
            insert(bytes, end, &run);
        }
        Edit::Splice(at, file, from, n) => {
            let other = &material.corpus[file.index(material.corpus.len())];
            let start = from.index(other.len() + 1);
            let end = (start + usize::from(*n)).min(other.len());
            insert(bytes, pos(at), &other[start..end]);
        }
        Edit::Cut(at) => bytes.truncate(pos(at)),
        Edit::FlipBit(..) | Edit::SetByte(..) | Edit::Token(..) => {}
    }
}

fn insert(bytes: &mut Vec<u8>, at: usize, new: &[u8]) {
    bytes.splice(at..at, new.iter().copied());
}

/// Replaces one run of ASCII digits (with a `0x` prefix, hex digits) by
/// an edge value.
fn replace_number(bytes: &mut Vec<u8>, which: &Index, number: &Index) {
    let runs = number_runs(bytes);
    if runs.is_empty() {
        return;
    }
    let (start, end) = runs[which.index(runs.len())];
    let value = NUMBERS[number.index(NUMBERS.len())];
    bytes.splice(start..end, value.bytes());
}

/// Where the numbers of `bytes` are, as (start, end).
fn number_runs(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        let hex = bytes[i] == b'0' && matches!(bytes.get(i + 1), Some(b'x' | b'X'));
        i += if hex { 2 } else { 0 };
        while i < bytes.len()
            && (bytes[i].is_ascii_digit() || (hex && bytes[i].is_ascii_hexdigit()))
        {
            i += 1;
        }
        runs.push((start, i));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    fn material() -> Material {
        Material {
            corpus: vec![b"size = 0x100\ncount = 12\n".to_vec(), b"<a>7</a>".to_vec()],
            tokens: &["<b>", "= "],
            max_len: 64,
        }
    }

    fn index(runner: &mut TestRunner, at: usize, of: usize) -> Index {
        // an Index whose position in `of` items is `at`
        loop {
            let i = any::<Index>().new_tree(runner).unwrap().current();
            if i.index(of) == at {
                return i;
            }
        }
    }

    #[test]
    fn a_number_edit_replaces_a_whole_number_hex_included() {
        let mut runner = TestRunner::deterministic();
        let m = material();
        let mut bytes = m.corpus[0].clone();
        let which = index(&mut runner, 0, 2);
        let value = index(
            &mut runner,
            NUMBERS.iter().position(|n| *n == "-1").unwrap(),
            NUMBERS.len(),
        );
        apply(&mut bytes, &Edit::Number(which, value), &m);
        assert_eq!(bytes, b"size = -1\ncount = 12\n");
    }

    #[test]
    fn every_edit_keeps_inputs_within_reach_of_the_cap() {
        let mut runner = TestRunner::deterministic();
        let strategy = inputs(material(), 8);
        for _ in 0..2000 {
            let input = strategy.new_tree(&mut runner).unwrap().current();
            assert!(input.len() <= 1024);
        }
    }

    #[test]
    fn a_repeat_copies_the_run_after_itself() {
        let mut runner = TestRunner::deterministic();
        let m = material();
        let mut bytes = b"<a>x</a>".to_vec();
        let at = index(&mut runner, 0, 9);
        apply(&mut bytes, &Edit::Repeat(at, 3, 2), &m);
        assert_eq!(bytes, b"<a><a><a>x</a>");
    }
}
