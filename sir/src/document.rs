//! A SIR of either dialect, recognised by its root element.

use std::io::BufRead;

use crate::apart::Apart;
use crate::content::read_root;
use crate::diagnostic::{Parsed, Report};
use crate::dialect::{is_root, parse_from_root, wrong_root, Grammar};
use crate::error::{ParseError, WriteError};
use crate::periscope::Periscope;
use crate::reader::{ParseOptions, XmlReader};
use crate::{apart, periscope};

/// The two dialects this crate reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// APART SIR: root `sir` in no namespace.
    Apart,
    /// Periscope SIR: root `sir` in [`periscope::NAMESPACE`].
    Periscope,
}

/// A parsed SIR of either dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Document {
    Apart(apart::Sir),
    Periscope(periscope::Sir),
}

impl Document {
    pub fn dialect(&self) -> Dialect {
        match self {
            Document::Apart(_) => Dialect::Apart,
            Document::Periscope(_) => Dialect::Periscope,
        }
    }

    pub fn validate(&self) -> Report {
        match self {
            Document::Apart(sir) => sir.validate(),
            Document::Periscope(sir) => sir.validate(),
        }
    }

    /// Writes the document in its own dialect.
    pub fn write(&self, out: &mut dyn std::io::Write) -> Result<(), WriteError> {
        match self {
            Document::Apart(sir) => apart::write(sir, out),
            Document::Periscope(sir) => periscope::write(sir, out),
        }
    }
}

/// Parses a SIR of either dialect, chosen by the namespace of the root `sir`.
pub fn parse<R: BufRead>(input: R, options: &ParseOptions) -> Result<Parsed<Document>, ParseError> {
    let mut reader = XmlReader::new(input, options);
    let root = read_root(&mut reader)?;
    if is_root(Apart::VOCABULARY, &root) {
        Ok(parse_from_root::<Apart, R>(&mut reader, root)?.map(Document::Apart))
    } else if is_root(Periscope::VOCABULARY, &root) {
        Ok(parse_from_root::<Periscope, R>(&mut reader, root)?.map(Document::Periscope))
    } else {
        Err(wrong_root(&root))
    }
}

/// [`parse`] of a string with default limits.
pub fn parse_str(xml: &str) -> Result<Parsed<Document>, ParseError> {
    parse(xml.as_bytes(), &ParseOptions::default())
}
