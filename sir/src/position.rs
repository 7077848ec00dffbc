//! Where something is in the input text.

use std::fmt;

/// A place in the XML input: 1-based line and 1-based column.
///
/// Columns count Unicode scalar values (characters), not bytes, so they match
/// what an editor shows for UTF-8 text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

impl Position {
    pub const START: Position = Position { line: 1, column: 1 };

    pub fn new(line: u64, column: u64) -> Self {
        Position { line, column }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Where a model element came from: the position of its start tag when it was
/// parsed, `None` when it was built in code.
///
/// Provenance is not content: two `Origin`s always compare equal, so that a
/// model parsed from a file equals the same model built programmatically or
/// parsed again after being written (the round-trip invariant).
#[derive(Debug, Clone, Copy, Default)]
pub struct Origin(pub Option<Position>);

impl Origin {
    pub const BUILT: Origin = Origin(None);

    pub fn at(position: Position) -> Self {
        Origin(Some(position))
    }

    pub fn position(&self) -> Option<Position> {
        self.0
    }
}

impl PartialEq for Origin {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for Origin {}
