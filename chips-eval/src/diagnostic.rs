//! Source positions and diagnostics shared by the lexer, the parser, the
//! checker and the evaluator.

use std::fmt;

/// Most characters of user input a message echoes.
const MAX_QUOTED_CHARS: usize = 80;

/// User input (a value, a name, a default) as echoed in a message or a
/// listing: at most 80 characters, cut with an ellipsis, so that a
/// megabyte-long value cannot flood the terminal.
pub fn quote(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// A position in a source file: 1-based line and column (columns count
/// characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

impl Span {
    pub fn new(line: u32, col: u32) -> Self {
        Span { line, col }
    }
}

/// One message about a source file, located by file, line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub span: Span,
    pub message: String,
}

impl Diagnostic {
    pub fn new(file: impl Into<String>, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.into(),
            span,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.span.line, self.span.col, self.message
        )
    }
}

/// Several diagnostics, reported together (the parser and the checker
/// recover and keep going).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quote_keeps_short_input_and_cuts_long_input_at_80_characters() {
        assert_eq!(quote("Nproc"), "Nproc");
        let exact = "é".repeat(80);
        assert_eq!(quote(&exact), exact);
        let cut = quote(&"é".repeat(81));
        assert_eq!(cut.chars().count(), 81);
        assert!(cut.ends_with("é…"), "{cut}");
    }
}
