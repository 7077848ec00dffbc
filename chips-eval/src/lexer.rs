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
    let chars: Vec<char> = src.chars().collect();
    // Byte offset of each character (and of the end), for `Token::offset`.
    let byte_at: Vec<usize> = src
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(src.len()))
        .collect();
    let mut tokens = Vec::new();
    let mut diags = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    // Advances over one character, keeping line and column.
    let advance = |i: &mut usize, line: &mut u32, col: &mut u32| {
        if chars[*i] == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
        *i += 1;
    };
    while i < chars.len() {
        let c = chars[i];
        let span = Span::new(line, col);
        let offset = byte_at[i];
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut col);
            continue;
        }
        if c == '(' && chars.get(i + 1) == Some(&'*') {
            // Comments do not nest (Appendix B: COMMENT start condition).
            advance(&mut i, &mut line, &mut col);
            advance(&mut i, &mut line, &mut col);
            let mut closed = false;
            while i < chars.len() {
                if chars[i] == '*' && chars.get(i + 1) == Some(&')') {
                    advance(&mut i, &mut line, &mut col);
                    advance(&mut i, &mut line, &mut col);
                    closed = true;
                    break;
                }
                advance(&mut i, &mut line, &mut col);
            }
            if !closed {
                diags.push(Diagnostic::new(
                    file,
                    span,
                    "comment opened with `(*` is never closed with `*)`",
                ));
            }
            continue;
        }
        if c == '"' {
            advance(&mut i, &mut line, &mut col);
            let mut text = String::new();
            let mut closed = false;
            while i < chars.len() {
                if chars[i] == '"' {
                    advance(&mut i, &mut line, &mut col);
                    closed = true;
                    break;
                }
                text.push(chars[i]);
                advance(&mut i, &mut line, &mut col);
            }
            if !closed {
                diags.push(Diagnostic::new(
                    file,
                    span,
                    "string is never closed with `\"`",
                ));
            }
            tokens.push(Token {
                tok: Tok::Str(text),
                span,
                offset,
            });
            continue;
        }
        if c.is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                advance(&mut i, &mut line, &mut col);
            }
            let word: String = chars[start..i].iter().collect();
            let tok = match KEYWORDS.iter().find(|(s, _)| *s == word) {
                Some((_, k)) => Tok::Kw(*k),
                None => Tok::Ident(word),
            };
            tokens.push(Token { tok, span, offset });
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                advance(&mut i, &mut line, &mut col);
            }
            if i < chars.len()
                && chars[i] == '.'
                && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())
            {
                advance(&mut i, &mut line, &mut col);
                while i < chars.len() && chars[i].is_ascii_digit() {
                    advance(&mut i, &mut line, &mut col);
                }
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    while i < j {
                        advance(&mut i, &mut line, &mut col);
                    }
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        advance(&mut i, &mut line, &mut col);
                    }
                }
            }
            let text: String = chars[start..i].iter().collect();
            match text.parse::<f64>() {
                Ok(n) if n.is_finite() => tokens.push(Token {
                    tok: Tok::Number(n),
                    span,
                    offset,
                }),
                // Refused like `1.7e308 * 10` in the evaluator. The token is
                // kept so that the parser does not report a missing operand.
                Ok(n) => {
                    diags.push(Diagnostic::new(
                        file,
                        span,
                        format!(
                            "number `{}` is too large (it overflows to infinity)",
                            quote(&text)
                        ),
                    ));
                    tokens.push(Token {
                        tok: Tok::Number(n),
                        span,
                        offset,
                    });
                }
                Err(_) => diags.push(Diagnostic::new(
                    file,
                    span,
                    format!("malformed number `{}`", quote(&text)),
                )),
            }
            continue;
        }
        let next = chars.get(i + 1).copied();
        let (punct, len) = match (c, next) {
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
            advance(&mut i, &mut line, &mut col);
        }
        match punct {
            Some(p) => tokens.push(Token {
                tok: Tok::Punct(p),
                span,
                offset,
            }),
            None => diags.push(Diagnostic::new(
                file,
                span,
                format!("unexpected character `{}`", c.escape_debug()),
            )),
        }
    }
    tokens.push(Token {
        tok: Tok::Eof,
        span: Span::new(line, col),
        offset: src.len(),
    });
    (tokens, diags)
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
