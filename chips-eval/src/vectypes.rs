//! Vector type definitions (section 4.5, the `vctdef` tool).
//!
//! A definition file holds blocks
//! `def NAME { args variable|N; type numeric|symbol|combination|kernel; { e1, e2, ... } }`.
//! `numeric` vectors hold numbers; `symbol` and `combination` vectors hold
//! counts of named elements (`3*IASG`, `FOR`); `kernel` (an extension for
//! calibration) holds names of measured kernels as strings. The type named
//! `data` is handled as data, never priced (section 4.5).

use crate::diagnostic::{Diagnostic, Span};
use crate::lexer::{lex, Keyword, Punct, Tok};
use std::collections::HashMap;

/// The definitions every run starts with (`vectors/builtin.vct`).
pub const BUILTIN_VCT: &str = include_str!("../vectors/builtin.vct");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementKind {
    Numeric,
    Symbol,
    Combination,
    Kernel,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VectorType {
    pub name: String,
    /// `None` for `args variable`.
    pub fixed_len: Option<usize>,
    pub kind: ElementKind,
    pub elements: Vec<String>,
}

impl VectorType {
    pub fn element_index(&self, name: &str) -> Option<usize> {
        self.elements.iter().position(|e| e == name)
    }
    pub fn is_data(&self) -> bool {
        self.name == "data"
    }
}

#[derive(Debug, Clone, Default)]
pub struct VectorTypes {
    types: HashMap<String, VectorType>,
}

impl VectorTypes {
    /// The built-in definitions.
    pub fn builtin() -> Self {
        let mut t = VectorTypes::default();
        t.add_definitions("<builtin vectors>", BUILTIN_VCT)
            .expect("built-in vector definitions parse");
        t
    }

    pub fn get(&self, name: &str) -> Option<&VectorType> {
        self.types.get(name)
    }

    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.types.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Parses a definition file and adds (or replaces) its types.
    pub fn add_definitions(&mut self, file: &str, src: &str) -> Result<(), Vec<Diagnostic>> {
        let (tokens, mut diags) = lex(file, src);
        let mut pos = 0usize;
        let tok = |pos: usize| &tokens[pos.min(tokens.len() - 1)];
        let err = |span: Span, msg: String, diags: &mut Vec<Diagnostic>| {
            diags.push(Diagnostic::new(file, span, msg));
        };
        while tok(pos).tok != Tok::Eof && diags.is_empty() {
            let t = tok(pos);
            if t.tok != Tok::Ident("def".into()) {
                err(
                    t.span,
                    format!("expected `def`, found {}", t.tok),
                    &mut diags,
                );
                break;
            }
            pos += 1;
            let name = match &tok(pos).tok {
                Tok::Ident(n) => n.clone(),
                other => {
                    err(
                        tok(pos).span,
                        format!("expected the vector type's name, found {other}"),
                        &mut diags,
                    );
                    break;
                }
            };
            pos += 1;
            if tok(pos).tok != Tok::Punct(Punct::LBrace) {
                err(
                    tok(pos).span,
                    format!("expected `{{` after `def {name}`"),
                    &mut diags,
                );
                break;
            }
            pos += 1;
            let mut vt = VectorType {
                name: name.clone(),
                fixed_len: None,
                kind: ElementKind::Numeric,
                elements: vec![],
            };
            loop {
                let t = tok(pos).clone();
                match &t.tok {
                    Tok::Punct(Punct::RBrace) => {
                        pos += 1;
                        break;
                    }
                    Tok::Ident(k) if k == "args" => {
                        pos += 1;
                        match &tok(pos).tok {
                            Tok::Ident(v) if v == "variable" => vt.fixed_len = None,
                            Tok::Number(n) if *n >= 1.0 && n.fract() == 0.0 => {
                                vt.fixed_len = Some(*n as usize)
                            }
                            other => {
                                err(tok(pos).span, format!("expected `variable` or a positive count after `args`, found {other}"), &mut diags);
                                break;
                            }
                        }
                        pos += 1;
                    }
                    Tok::Ident(k) if k == "type" => {
                        pos += 1;
                        vt.kind = match &tok(pos).tok {
                            Tok::Kw(Keyword::Numeric) => ElementKind::Numeric,
                            Tok::Ident(v) if v == "symbol" => ElementKind::Symbol,
                            Tok::Ident(v) if v == "combination" => ElementKind::Combination,
                            Tok::Ident(v) if v == "kernel" => ElementKind::Kernel,
                            other => {
                                err(tok(pos).span, format!("expected `numeric`, `symbol`, `combination` or `kernel` after `type`, found {other}"), &mut diags);
                                break;
                            }
                        };
                        pos += 1;
                    }
                    Tok::Punct(Punct::LBrace) => {
                        pos += 1;
                        loop {
                            match &tok(pos).tok {
                                Tok::Ident(e) => vt.elements.push(e.clone()),
                                other => {
                                    err(
                                        tok(pos).span,
                                        format!("expected an element name, found {other}"),
                                        &mut diags,
                                    );
                                    break;
                                }
                            }
                            pos += 1;
                            match &tok(pos).tok {
                                Tok::Punct(Punct::Comma) => pos += 1,
                                Tok::Punct(Punct::RBrace) => {
                                    pos += 1;
                                    break;
                                }
                                other => {
                                    err(tok(pos).span, format!("expected `,` or `}}` in the element list, found {other}"), &mut diags);
                                    break;
                                }
                            }
                        }
                        if !diags.is_empty() {
                            break;
                        }
                        continue;
                    }
                    other => {
                        err(t.span, format!("expected `args`, `type`, an element list or `}}` in `def {name}`, found {other}"), &mut diags);
                        break;
                    }
                }
                if tok(pos).tok != Tok::Punct(Punct::Semi) {
                    err(tok(pos).span, "expected `;`".into(), &mut diags);
                    break;
                }
                pos += 1;
            }
            if diags.is_empty() {
                if matches!(vt.kind, ElementKind::Symbol | ElementKind::Combination)
                    && vt.elements.is_empty()
                {
                    err(
                        tok(pos).span,
                        format!(
                            "vector type `{name}` of type symbol/combination lists no elements"
                        ),
                        &mut diags,
                    );
                }
                self.types.insert(name, vt);
            }
        }
        if diags.is_empty() {
            Ok(())
        } else {
            Err(diags)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_types_are_present() {
        let t = VectorTypes::builtin();
        assert_eq!(t.get("hllc").unwrap().element_index("VIDX"), Some(9));
        assert_eq!(t.get("arp").unwrap().kind, ElementKind::Kernel);
        assert!(t.get("data").unwrap().is_data());
    }

    #[test]
    fn document_flop_definition_parses() {
        let mut t = VectorTypes::default();
        t.add_definitions(
            "f",
            "(* Floating point *) def flop { args variable; type combination; { add, sub, mul } }",
        )
        .unwrap();
        assert_eq!(t.get("flop").unwrap().elements, vec!["add", "sub", "mul"]);
    }

    #[test]
    fn bad_definition_is_located() {
        let mut t = VectorTypes::default();
        let d = t
            .add_definitions("f", "def x {\n args many; }")
            .unwrap_err();
        assert_eq!(d[0].span.line, 2);
    }
}
