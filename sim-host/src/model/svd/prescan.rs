//! The bounds of an SVD file checked before svd-parser reads it (issue 43,
//! M02, M03): one streaming pass (quick-xml, no recursion, memory by
//! depth) refuses nesting deeper than [`MAX_SVD_DEPTH`] and more than
//! [`MAX_SVD_ELEMENTS`] peripherals, clusters, registers and fields once
//! `<dim>` arrays (and `<dimIndex>` lists, which svd-parser spells out
//! while it parses) are expanded, nested ones multiplied. The count is
//! taken where an element ends, so `<dim>` may come anywhere inside it.
//! `derivedFrom` copies are counted after parsing (`super::expansion`).
//!
//! The same pass checks that each register's reset value fits its size,
//! both inherited as CMSIS-SVD says (the register's own, else the nearest
//! cluster's, peripheral's or device's), so that a refusal names the
//! line; registers under a `derivedFrom` inherit from elsewhere and are
//! checked after the expansion (`super::properties`).

use crate::model::limits::{MAX_SVD_DEPTH, MAX_SVD_ELEMENTS};
use quick_xml::events::Event;
use quick_xml::Reader;

/// The elements an expansion repeats.
const COUNTED: [&[u8]; 4] = [b"peripheral", b"cluster", b"register", b"field"];
/// The children of a counted element read here.
const READ: [&[u8]; 3] = [b"dim", b"dimIndex", b"name"];
/// The elements whose register properties registers inherit.
const HOLDS_PROPERTIES: [&[u8]; 4] = [b"device", b"peripheral", b"cluster", b"register"];
/// The register properties read here.
const PROPERTIES: [&[u8]; 2] = [b"size", b"resetValue"];

/// An element's own register properties: each a number and its line.
#[derive(Default)]
struct Properties {
    size: Option<(u64, u64)>,
    reset: Option<(u64, u64)>,
    /// It has a `derivedFrom` (and inherits from its base).
    derived: bool,
}

/// One open element.
#[derive(Default)]
struct Frame {
    tag: String,
    counted: bool,
    line: u64,
    /// The text of a `READ` child of a counted element.
    text: Option<String>,
    /// For a counted element: its `<dim>`, `<dimIndex>` size and `<name>`.
    dim: u64,
    indexes: u64,
    name: Option<String>,
    /// Elements inside it, their own arrays expanded.
    inside: u64,
    /// For an element registers inherit properties from: its own.
    properties: Option<Properties>,
}

impl Frame {
    /// How many copies of it the expansion makes.
    fn copies(&self) -> u64 {
        self.dim.max(self.indexes).max(1)
    }

    fn describe(&self) -> String {
        match &self.name {
            Some(name) => format!("<{}> `{name}`", self.tag),
            None => format!("<{}>", self.tag),
        }
    }
}

/// Line numbers of byte offsets read in increasing order.
struct Lines<'a> {
    text: &'a [u8],
    at: usize,
    line: u64,
}

impl Lines<'_> {
    fn of(&mut self, offset: u64) -> u64 {
        let offset = (offset as usize).min(self.text.len());
        if offset > self.at {
            self.line += newlines(&self.text[self.at..offset]);
            self.at = offset;
        }
        self.line
    }
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Refuses `xml` beyond the caps, naming the line and the element.
pub(super) fn check(xml: &str) -> Result<(), String> {
    let mut reader = Reader::from_str(xml);
    let mut lines = Lines {
        text: xml.as_bytes(),
        at: 0,
        line: 1,
    };
    // the document itself, below the root element
    let mut stack = vec![Frame::default()];
    loop {
        let start = reader.buffer_position();
        let event = reader.read_event().map_err(|e| {
            let line = lines.of(reader.error_position());
            format!("line {line}: {e}")
        })?;
        match event {
            Event::Start(e) => {
                let line = lines.of(start);
                let mut frame = open(e.local_name().as_ref(), line, &stack)?;
                note_derived(&mut frame, &e);
                stack.push(frame);
            }
            Event::Empty(e) => {
                let line = lines.of(start);
                let mut frame = open(e.local_name().as_ref(), line, &stack)?;
                note_derived(&mut frame, &e);
                close(&mut stack, frame)?;
            }
            Event::Text(t) => keep_text(&mut stack, &String::from_utf8_lossy(&t)),
            Event::CData(t) => keep_text(&mut stack, &String::from_utf8_lossy(&t)),
            Event::End(_) => {
                let frame = stack.pop().expect("an element is open at its end");
                close(&mut stack, frame)?;
                if stack.is_empty() {
                    // more ends than starts: quick-xml checks names, the
                    // parser says what is wrong
                    return Ok(());
                }
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// The frame of an element opened at `line` inside those of `stack` (the
/// document's frame first).
fn open(tag: &[u8], line: u64, stack: &[Frame]) -> Result<Frame, String> {
    let tag_text = String::from_utf8_lossy(tag).into_owned();
    if stack.len() > MAX_SVD_DEPTH {
        let counted = stack.iter().rev().find(|f| f.counted);
        let inside = counted.map_or_else(String::new, |f| {
            format!(" inside {} of line {}", f.describe(), f.line)
        });
        return Err(format!(
            "line {line}: <{tag_text}>{inside} is nested deeper than {MAX_SVD_DEPTH} elements \
             (the cap on SVD nesting, MAX_SVD_DEPTH)"
        ));
    }
    Ok(Frame {
        counted: COUNTED.contains(&tag),
        text: (READ.contains(&tag) || PROPERTIES.contains(&tag)).then(String::new),
        properties: HOLDS_PROPERTIES.contains(&tag).then(Properties::default),
        tag: tag_text,
        line,
        ..Frame::default()
    })
}

/// Marks an element with a `derivedFrom` attribute.
fn note_derived(frame: &mut Frame, e: &quick_xml::events::BytesStart<'_>) {
    let derived = e
        .attributes()
        .flatten()
        .any(|a| a.key.local_name().as_ref() == b"derivedFrom");
    if let Some(p) = frame.properties.as_mut() {
        p.derived = derived;
    }
}

fn keep_text(stack: &mut [Frame], text: &str) {
    if let Some(kept) = stack.last_mut().and_then(|f| f.text.as_mut()) {
        // a hostile name cannot grow without bound: only the start is kept
        if kept.len() < 256 {
            kept.push_str(text);
        }
    }
}

/// Ends `frame`: what it read goes to its parent, and its expanded count.
fn close(stack: &mut [Frame], frame: Frame) -> Result<(), String> {
    if frame.tag == "register" {
        check_reset_width(&frame, stack)?;
    }
    let Some(parent) = stack.last_mut() else {
        return Ok(());
    };
    if let (Some(props), Some(text)) = (parent.properties.as_mut(), &frame.text) {
        let value = number(text.trim()).map(|v| (v, frame.line));
        match frame.tag.as_str() {
            "size" => props.size = value,
            "resetValue" => props.reset = value,
            _ => {}
        }
    }
    if parent.counted {
        if let Some(text) = &frame.text {
            let text = text.trim();
            match frame.tag.as_str() {
                "dim" => parent.dim = number(text).unwrap_or(1),
                "dimIndex" => parent.indexes = index_count(text),
                "name" => parent.name = Some(text.to_owned()),
                _ => {}
            }
        }
    }
    let cap = MAX_SVD_ELEMENTS as u64;
    let count = if frame.counted {
        let count = frame.copies().saturating_mul(1 + frame.inside);
        if count > cap {
            let why = if frame.indexes > frame.dim {
                format!("its <dimIndex> spells out {} names", frame.indexes)
            } else {
                format!("<dim> {}", frame.dim)
            };
            return Err(format!(
                "line {}: {} expands to {count} elements ({why}, {} elements each): at most \
                 {cap} per file (MAX_SVD_ELEMENTS)",
                frame.line,
                frame.describe(),
                1 + frame.inside,
            ));
        }
        count
    } else {
        frame.inside
    };
    parent.inside = parent.inside.saturating_add(count);
    if parent.inside > cap {
        return Err(format!(
            "line {}: {} holds more than {cap} peripherals, clusters, registers and fields \
             once expanded: at most {cap} per file (MAX_SVD_ELEMENTS)",
            parent.line,
            parent.describe()
        ));
    }
    Ok(())
}

/// Refuses register `frame` (inside `stack`) if its reset value, its own
/// or inherited, is wider than its size, its own or inherited.
fn check_reset_width(frame: &Frame, stack: &[Frame]) -> Result<(), String> {
    let chain = || {
        std::iter::once(frame)
            .chain(stack.iter().rev())
            .filter_map(|f| f.properties.as_ref().map(|p| (f, p)))
    };
    // the element a register inherits from is elsewhere
    if chain().any(|(f, p)| p.derived && f.tag != "device") {
        return Ok(());
    }
    let Some((value, value_line)) = chain().find_map(|(_, p)| p.reset) else {
        return Ok(());
    };
    let size = chain().find_map(|(_, p)| p.size);
    let bits = size.map_or(32, |(bits, _)| bits);
    let fits = bits >= 64 || value >> bits == 0;
    if fits {
        return Ok(());
    }
    let size_where = match size {
        Some((_, line)) => format!("the <size> of line {line}"),
        None => "SVD's default size".into(),
    };
    let peripheral = stack
        .iter()
        .rev()
        .find(|f| f.tag == "peripheral")
        .and_then(|f| f.name.as_deref())
        .map(|p| format!(" of peripheral `{p}`"))
        .unwrap_or_default();
    Err(format!(
        "line {value_line}: <resetValue> {value:#x} of register `{}` (line {}){peripheral} is \
         wider than its size, {bits} bits ({size_where})",
        frame.name.as_deref().unwrap_or("?"),
        frame.line
    ))
}

/// A number as svd-parser reads one (decimal, `0x` hex, `0b` or `#`
/// binary with `x` as 0); `None` leaves it to the parser's message.
fn number(text: &str) -> Option<u64> {
    let (digits, radix) = if let Some(h) = text.strip_prefix("0x").or(text.strip_prefix("0X")) {
        (h.to_owned(), 16)
    } else if let Some(b) = text.strip_prefix("0b").or(text.strip_prefix('#')) {
        (b.to_lowercase().replace('x', "0"), 2)
    } else {
        (text.to_owned(), 10)
    };
    u64::from_str_radix(&digits, radix).ok()
}

/// The names a `<dimIndex>` spells out: `A-B` (numbers or one letter
/// each) or a comma list.
fn index_count(text: &str) -> u64 {
    match text.split_once('-') {
        Some((a, b)) => match (a.trim().parse::<u64>(), b.trim().parse::<u64>()) {
            (Ok(a), Ok(b)) => b.saturating_sub(a).saturating_add(1),
            _ => 26,
        },
        None => text.split(',').count() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_index_lists_read_as_svd_parser_reads_them() {
        assert_eq!(number("12"), Some(12));
        assert_eq!(number("0x10"), Some(16));
        assert_eq!(number("#1x1"), Some(5));
        assert_eq!(number("zz"), None);
        assert_eq!(index_count("0-7"), 8);
        assert_eq!(index_count("A-D"), 26);
        assert_eq!(index_count("a,b,c"), 3);
        assert_eq!(index_count("0-4294967295"), 1 << 32);
    }

    #[test]
    fn a_dim_after_the_children_still_multiplies_them() {
        let xml = "<device><peripherals><peripheral><registers><cluster>\
                   <register><name>R</name><dim>1000</dim></register>\
                   <dim>1000</dim><name>C%s</name></cluster></registers>\
                   </peripheral></peripherals></device>";
        let e = check(xml).unwrap_err();
        assert!(e.contains("<cluster> `C%s` expands to 1001000"), "{e}");
    }
}
