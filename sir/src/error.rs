//! Typed errors of parsing and writing.

use thiserror::Error;

use crate::position::Position;

/// Most characters of the input a message echoes.
const MAX_QUOTED_CHARS: usize = 80;

/// Input (a name, a value) as echoed in a message: at most 80 characters,
/// cut with an ellipsis, so that a huge attribute cannot flood the screen.
pub fn quote(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// Parsing stopped at `position` because of `kind`.
///
/// The parser stops at the first error: after malformed or invalid input
/// nothing later in the file can be trusted to mean what it seems to.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{position}: {kind}")]
pub struct ParseError {
    pub position: Position,
    pub kind: ParseErrorKind,
}

impl ParseError {
    pub(crate) fn new(position: Position, kind: ParseErrorKind) -> Self {
        ParseError { position, kind }
    }
}

/// What went wrong while parsing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseErrorKind {
    /// Not well-formed XML (as reported by the XML reader).
    #[error("malformed XML: {0}")]
    Malformed(String),
    /// Reading the input failed.
    #[error("I/O error: {0}")]
    Io(String),
    /// The input is not UTF-8 or declares another encoding.
    #[error("unsupported encoding: {0} (only UTF-8 is read)")]
    Encoding(String),
    /// A DOCTYPE with an internal subset: refused, so that no entity is ever
    /// declared and expanded (billion-laughs and external-entity attacks).
    #[error(
        "DOCTYPE with an internal subset is refused (entity declarations are never processed)"
    )]
    InternalSubset,
    /// A reference to an entity other than the five predefined ones.
    #[error("reference to undeclared entity `&{};` (custom entities are never expanded)", quote(.0))]
    CustomEntity(String),
    /// The document ends before the root element is closed, or has no root.
    #[error("unexpected end of document")]
    UnexpectedEof,
    /// Content after the root element.
    #[error("content after the root element")]
    TrailingContent,
    /// The root is not `sir` in a namespace this crate reads.
    #[error(
        "root element is {}; expected `sir` (APART: no namespace, Periscope: namespace {})",
        quote(.found),
        crate::namespaces::PERISCOPE
    )]
    WrongRoot { found: String },
    /// A prefix that no `xmlns:` declaration binds.
    #[error("namespace prefix `{}` is not declared", quote(.0))]
    UnboundPrefix(String),
    /// An element this dialect does not define, in the dialect's namespace.
    #[error("unknown element <{}> inside <{}>", quote(.element), quote(.parent))]
    UnknownElement { element: String, parent: String },
    /// A known element in a place the content model does not allow (wrong
    /// parent, wrong order, or too many).
    #[error("<{}> not allowed here inside <{}>: {reason}", quote(.element), quote(.parent))]
    Misplaced {
        element: String,
        parent: String,
        reason: String,
    },
    /// A required child element is missing.
    #[error("<{}> lacks required child <{child}>", quote(.parent))]
    MissingChild { parent: String, child: String },
    /// An unqualified attribute the element does not declare.
    #[error("unknown attribute `{}` on <{}>", quote(.attribute), quote(.element))]
    UnknownAttribute { element: String, attribute: String },
    /// The same attribute twice on one element.
    #[error("duplicate attribute `{}` on <{}>", quote(.attribute), quote(.element))]
    DuplicateAttribute { element: String, attribute: String },
    /// A `#REQUIRED` attribute is absent.
    #[error("<{}> lacks required attribute `{attribute}`", quote(.element))]
    MissingAttribute { element: String, attribute: String },
    /// An attribute value outside its enumeration or lexical type.
    #[error("<{}> attribute `{}`: `{}` is not {expected}", quote(.element), quote(.attribute), quote(.value))]
    InvalidValue {
        element: String,
        attribute: String,
        value: String,
        expected: String,
    },
    /// Character data where the element has element-only or empty content.
    #[error("text not allowed inside <{}>", quote(.element))]
    UnexpectedText { element: String },
    /// A configured limit was reached (see [`crate::ParseOptions`]).
    #[error("limit exceeded: {0}")]
    LimitExceeded(String),
}

/// Writing a model failed.
#[derive(Debug, Error)]
pub enum WriteError {
    #[error("I/O error while writing SIR: {0}")]
    Io(#[from] std::io::Error),
    /// An annotation name or namespace that cannot be written as XML.
    #[error("cannot write annotation {}:{}: {reason}", quote(.namespace), quote(.local))]
    InvalidAnnotation {
        namespace: String,
        local: String,
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quote_cuts_at_80_characters_not_bytes() {
        assert_eq!(quote("unit"), "unit");
        let exact = "ü".repeat(80);
        assert_eq!(quote(&exact), exact);
        assert_eq!(quote(&"ü".repeat(81)), format!("{exact}…"));
    }
}
