//! Lexical analysis after the document's Appendix B (`chips.l`).
//!
//! Differences from Appendix B, all deliberate:
//! * `>=`, `<=`, `==`, `!=` are lexed as single tokens (the YACC grammar
//!   names GTE/LSE/EQL/NEQ but the printed lexer never produces them);
//! * `defgroup` is a keyword (section 4.2 uses it; Appendix B omits it);
//! * an unterminated comment or string, and a character no rule matches,
//!   are diagnostics rather than silently returned characters;
//! * a number may carry an exponent without a fraction (`1e6`).

use crate::diagnostic::{quote, Diagnostic, Span};
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    Number(f64),
    Str(String),
    Kw(Keyword),
    Punct(Punct),
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    Application,
    Subtask,
    Partmp,
    Include,
    Var,
    Defgroup,
    Link,
    Option,
    Proc,
    Cflow,
    Compute,
    Loop,
    Call,
    Case,
    Exec,
    If,
    Then,
    Else,
    While,
    Break,
    Continue,
    Print,
    Return,
    Exit,
    Dim,
    Free,
    Step,
    Confdev,
    Numeric,
    Vector,
    String,
    Is,
    Array,
}

const KEYWORDS: &[(&str, Keyword)] = &[
    ("application", Keyword::Application),
    ("subtask", Keyword::Subtask),
    ("partmp", Keyword::Partmp),
    ("include", Keyword::Include),
    ("var", Keyword::Var),
    ("defgroup", Keyword::Defgroup),
    ("link", Keyword::Link),
    ("option", Keyword::Option),
    ("proc", Keyword::Proc),
    ("cflow", Keyword::Cflow),
    ("compute", Keyword::Compute),
    ("loop", Keyword::Loop),
    ("call", Keyword::Call),
    ("case", Keyword::Case),
    ("exec", Keyword::Exec),
    ("if", Keyword::If),
    ("then", Keyword::Then),
    ("else", Keyword::Else),
    ("while", Keyword::While),
    ("break", Keyword::Break),
    ("continue", Keyword::Continue),
    ("print", Keyword::Print),
    ("return", Keyword::Return),
    ("exit", Keyword::Exit),
    ("dim", Keyword::Dim),
    ("free", Keyword::Free),
    ("step", Keyword::Step),
    ("confdev", Keyword::Confdev),
    ("numeric", Keyword::Numeric),
    ("vector", Keyword::Vector),
    ("string", Keyword::String),
    ("is", Keyword::Is),
    ("array", Keyword::Array),
];

impl Keyword {
    pub fn text(self) -> &'static str {
        KEYWORDS
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(s, _)| *s)
            .unwrap_or("?")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Punct {
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Semi,
    Colon,
    Comma,
    Dot,
    Assign,
    Plus,
    Minus,
    Star,
    Slash,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    Ne,
}

impl Punct {
    pub fn text(self) -> &'static str {
        match self {
            Punct::LBrace => "{",
            Punct::RBrace => "}",
            Punct::LParen => "(",
            Punct::RParen => ")",
            Punct::LBracket => "[",
            Punct::RBracket => "]",
            Punct::Semi => ";",
            Punct::Colon => ":",
            Punct::Comma => ",",
            Punct::Dot => ".",
            Punct::Assign => "=",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::Star => "*",
            Punct::Slash => "/",
            Punct::Lt => "<",
            Punct::Gt => ">",
            Punct::Le => "<=",
            Punct::Ge => ">=",
            Punct::EqEq => "==",
            Punct::Ne => "!=",
        }
    }
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "identifier `{}`", quote(s)),
            Tok::Number(n) => write!(f, "number `{n}`"),
            Tok::Str(_) => write!(f, "string"),
            Tok::Kw(k) => write!(f, "`{}`", k.text()),
            Tok::Punct(p) => write!(f, "`{}`", p.text()),
            Tok::Eof => write!(f, "end of file"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// Byte offset of the token's first character in the source.
    pub offset: usize,
}

/// Splits `src` into tokens. Always ends with one `Tok::Eof`; problems are
/// returned as diagnostics next to the tokens that could be read.
pub fn lex(file: &str, src: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut lexer = Lexer::new(file, src);
    while let Some(c) = lexer.peek(0) {
        let start = lexer.here();
        if c.is_whitespace() {
            lexer.bump();
        } else if c == '(' && lexer.peek(1) == Some('*') {
            lexer.comment(start);
        } else if c == '"' {
            lexer.string(start);
        } else if c.is_ascii_alphabetic() {
            lexer.word(start);
        } else if c.is_ascii_digit()
            || (c == '.' && lexer.peek(1).is_some_and(|d| d.is_ascii_digit()))
        {
            lexer.number(start);
        } else {
            lexer.punct(c, start);
        }
    }
    lexer.finish()
}

/// Where a token starts: line and column, and byte offset.
#[derive(Clone, Copy)]
struct Start {
    span: Span,
    offset: usize,
}

/// The state of [`lex`]: the characters, the position in them (index,
/// line, column) and what has been read.
struct Lexer<'f> {
    file: &'f str,
    chars: Vec<char>,
    /// Byte offset of each character (and of the end), for `Token::offset`.
    byte_at: Vec<usize>,
    i: usize,
    line: u32,
    col: u32,
    tokens: Vec<Token>,
    diags: Vec<Diagnostic>,
}

impl<'f> Lexer<'f> {
    fn new(file: &'f str, src: &str) -> Self {
        Lexer {
            file,
            chars: src.chars().collect(),
            byte_at: src
                .char_indices()
                .map(|(b, _)| b)
                .chain(std::iter::once(src.len()))
                .collect(),
            i: 0,
            line: 1,
            col: 1,
            tokens: Vec::new(),
            diags: Vec::new(),
        }
    }

    /// The character `ahead` places after the current one.
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn here(&self) -> Start {
        Start {
            span: Span::new(self.line, self.col),
            offset: self.byte_at[self.i],
        }
    }

    /// Advances over one character, keeping line and column.
    fn bump(&mut self) {
        if self.chars[self.i] == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        self.i += 1;
    }

    /// Advances over the characters for which `accept` holds.
    fn bump_while(&mut self, accept: impl Fn(char) -> bool) {
        while self.peek(0).is_some_and(&accept) {
            self.bump();
        }
    }

    fn push(&mut self, tok: Tok, start: Start) {
        self.tokens.push(Token {
            tok,
            span: start.span,
            offset: start.offset,
        });
    }

    fn error(&mut self, start: Start, message: impl Into<String>) {
        self.diags
            .push(Diagnostic::new(self.file, start.span, message.into()));
    }

    /// `(* ... *)`. Comments do not nest (Appendix B: COMMENT start
    /// condition).
    fn comment(&mut self, start: Start) {
        self.bump();
        self.bump();
        while self.peek(0).is_some() {
            if self.peek(0) == Some('*') && self.peek(1) == Some(')') {
                self.bump();
                self.bump();
                return;
            }
            self.bump();
        }
        self.error(start, "comment opened with `(*` is never closed with `*)`");
    }

    /// `"..."`, without escapes; an unclosed string still makes a token.
    fn string(&mut self, start: Start) {
        self.bump();
        let mut text = String::new();
        let mut closed = false;
        while let Some(c) = self.peek(0) {
            self.bump();
            if c == '"' {
                closed = true;
                break;
            }
            text.push(c);
        }
        if !closed {
            self.error(start, "string is never closed with `\"`");
        }
        self.push(Tok::Str(text), start);
    }

    /// A keyword or an identifier.
    fn word(&mut self, start: Start) {
        let first = self.i;
        self.bump_while(|c| c.is_ascii_alphanumeric() || c == '_');
        let word: String = self.chars[first..self.i].iter().collect();
        let tok = match KEYWORDS.iter().find(|(s, _)| *s == word) {
            Some((_, k)) => Tok::Kw(*k),
            None => Tok::Ident(word),
        };
        self.push(tok, start);
    }

    /// Digits, an optional fraction and an optional exponent (`1e6`,
    /// `.5`, `2.5E-3`).
    fn number(&mut self, start: Start) {
        let first = self.i;
        self.bump_while(|c| c.is_ascii_digit());
        if self.peek(0) == Some('.') && self.peek(1).is_some_and(|d| d.is_ascii_digit()) {
            self.bump();
            self.bump_while(|c| c.is_ascii_digit());
        }
        if matches!(self.peek(0), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.peek(1), Some('+' | '-')));
            if self.peek(1 + sign).is_some_and(|d| d.is_ascii_digit()) {
                for _ in 0..=sign {
                    self.bump();
                }
                self.bump_while(|c| c.is_ascii_digit());
            }
        }
        let text: String = self.chars[first..self.i].iter().collect();
        match text.parse::<f64>() {
            Ok(n) if n.is_finite() => self.push(Tok::Number(n), start),
            // Refused like `1.7e308 * 10` in the evaluator. The token is
            // kept so that the parser does not report a missing operand.
            Ok(n) => {
                let message = format!(
                    "number `{}` is too large (it overflows to infinity)",
                    quote(&text)
                );
                self.error(start, message);
                self.push(Tok::Number(n), start);
            }
            Err(_) => self.error(start, format!("malformed number `{}`", quote(&text))),
        }
    }

    /// An operator or punctuation, one or two characters.
    fn punct(&mut self, c: char, start: Start) {
        let (punct, len) = match (c, self.peek(1)) {
            ('<', Some('=')) => (Some(Punct::Le), 2),
            ('>', Some('=')) => (Some(Punct::Ge), 2),
            ('=', Some('=')) => (Some(Punct::EqEq), 2),
            ('!', Some('=')) => (Some(Punct::Ne), 2),
            ('{', _) => (Some(Punct::LBrace), 1),
            ('}', _) => (Some(Punct::RBrace), 1),
            ('(', _) => (Some(Punct::LParen), 1),
            (')', _) => (Some(Punct::RParen), 1),
            ('[', _) => (Some(Punct::LBracket), 1),
            (']', _) => (Some(Punct::RBracket), 1),
            (';', _) => (Some(Punct::Semi), 1),
            (':', _) => (Some(Punct::Colon), 1),
            (',', _) => (Some(Punct::Comma), 1),
            ('.', _) => (Some(Punct::Dot), 1),
            ('=', _) => (Some(Punct::Assign), 1),
            ('+', _) => (Some(Punct::Plus), 1),
            ('-', _) => (Some(Punct::Minus), 1),
            ('*', _) => (Some(Punct::Star), 1),
            ('/', _) => (Some(Punct::Slash), 1),
            ('<', _) => (Some(Punct::Lt), 1),
            ('>', _) => (Some(Punct::Gt), 1),
            _ => (None, 1),
        };
        for _ in 0..len {
            self.bump();
        }
        match punct {
            Some(p) => self.push(Tok::Punct(p), start),
            None => self.error(
                start,
                format!("unexpected character `{}`", c.escape_debug()),
            ),
        }
    }

    /// The tokens, ended by `Tok::Eof`, and the diagnostics.
    fn finish(mut self) -> (Vec<Token>, Vec<Diagnostic>) {
        let end = Start {
            span: Span::new(self.line, self.col),
            offset: *self.byte_at.last().unwrap_or(&0),
        };
        self.push(Tok::Eof, end);
        (self.tokens, self.diags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex("t", src).0.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn comments_strings_numbers_and_two_char_operators() {
        assert_eq!(
            kinds("(* c\n *) x >= 2.5e1 \"hi\" != <0>"),
            vec![
                Tok::Ident("x".into()),
                Tok::Punct(Punct::Ge),
                Tok::Number(25.0),
                Tok::Str("hi".into()),
                Tok::Punct(Punct::Ne),
                Tok::Punct(Punct::Lt),
                Tok::Number(0.0),
                Tok::Punct(Punct::Gt),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn positions_are_line_and_column() {
        let (toks, _) = lex("t", "a\n  bc");
        assert_eq!(toks[1].span, Span::new(2, 3));
    }

    #[test]
    fn unterminated_comment_is_reported_where_it_opens() {
        let (_, d) = lex("t", "x (* never");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].span, Span::new(1, 3));
    }

    #[test]
    fn stray_character_is_reported() {
        let (_, d) = lex("t", "a $ b");
        assert!(d[0].message.contains('$'));
    }
}
