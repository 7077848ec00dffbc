//! Recursive-descent parser for the grammar of Appendix A.
//!
//! The parser never panics on input. It reports every problem with file,
//! line, column and what was expected, and recovers so that one run shows
//! several errors: a missing `,` or `:` or `;` is reported and assumed
//! present; anything else skips to the end of the statement.
//!
//! Decisions where the printed grammar is ambiguous or wrong (see the
//! crate docs for the full list):
//! * Operator precedence is the conventional one, `* /` over `+ -` over
//!   `< > <= >=` over `== !=`, unary minus/plus tightest. Appendix A lists
//!   the groups in that order but with YACC's meaning (later is tighter)
//!   it would inverts them, which contradicts the example's regression
//!   model `Pmrg0 + Pmrg1 / hardware.Nproc`.
//! * Inside `<is T, ...>` the elements are parsed without the relational
//!   operators (the `>` closes the vector); parenthesise a comparison.
//! * `if E then S else S`: `then` is required in both forms (Appendix A's
//!   `IF expression exec_stm ELSE exec_stm` drops it by mistake).
//! * `step DEVICE { ... }` names its device, as the example and section
//!   4.4 do (Appendix A's `STEP '{' exec_lst '}'` omits it).
//! * Procedure parameters `proc exec f var a, b; { ... }` may be absent
//!   (Appendix A requires at least one `var` clause, section 4.3 and the
//!   example do not).
//! * In `link` and `option` bodies assignments are separated by `,` or `;`
//!   (the example uses both); a link entry starts at `NAME :`.
//! * Header items (include, var, defgroup, link, option) are accepted in
//!   any order; the `option` block is required (Appendix A), and a
//!   missing one is reported once.

use crate::ast::*;
use crate::diagnostic::{Diagnostic, Span};
use crate::lexer::{lex, Keyword as K, Punct as P, Tok, Token};

/// Deepest nesting of expressions and statements before the parser gives
/// up on a construct (keeps hostile input from exhausting the stack).
const MAX_NESTING: usize = 200;
/// After this many diagnostics in one file, parsing stops.
const MAX_DIAGNOSTICS: usize = 50;

/// Parses one source file holding one object.
pub fn parse_object(file: &str, src: &str) -> Result<Object, Vec<Diagnostic>> {
    match parse_object_recovering(file, src) {
        (Some(o), d) if d.is_empty() => Ok(o),
        (_, d) => Err(d),
    }
}

/// Parses one object, returning the object as recovered from errors (if
/// the header could be read) together with every diagnostic, so that the
/// checker can still report on a file with syntax slips.
pub fn parse_object_recovering(file: &str, src: &str) -> (Option<Object>, Vec<Diagnostic>) {
    let (tokens, mut diags) = lex(file, src);
    let mut p = Parser {
        file,
        src,
        tokens,
        pos: 0,
        diags: Vec::new(),
        depth: 0,
        case_depth_marker: false,
    };
    let obj = p.object();
    diags.append(&mut p.diags);
    if obj.is_none() && diags.is_empty() {
        diags.push(Diagnostic::new(
            file,
            Span::new(1, 1),
            "no object definition found",
        ));
    }
    (obj, diags)
}

/// Marker for "this construct could not be parsed; a diagnostic was
/// recorded".
struct Bail;
type PResult<T> = Result<T, Bail>;

struct Parser<'a> {
    file: &'a str,
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    depth: usize,
    /// Set while parsing the statements of a `case` arm.
    case_depth_marker: bool,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }
    fn peek_at(&self, n: usize) -> &Tok {
        let i = (self.pos + n).min(self.tokens.len() - 1);
        &self.tokens[i].tok
    }
    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }
    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }
    fn at_eof(&self) -> bool {
        matches!(self.peek(), Tok::Eof)
    }
    fn is_p(&self, p: P) -> bool {
        *self.peek() == Tok::Punct(p)
    }
    fn is_kw(&self, k: K) -> bool {
        *self.peek() == Tok::Kw(k)
    }
    fn eat_p(&mut self, p: P) -> bool {
        if self.is_p(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, k: K) -> bool {
        if self.is_kw(k) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn error_at(&mut self, span: Span, msg: String) {
        if self.diags.len() < MAX_DIAGNOSTICS {
            self.diags.push(Diagnostic::new(self.file, span, msg));
        }
    }
    fn too_many_errors(&self) -> bool {
        self.diags.len() >= MAX_DIAGNOSTICS
    }
    /// Reports "expected X" at the current token.
    fn expected(&mut self, what: &str) -> Bail {
        let found = self.peek().to_string();
        let span = self.span();
        self.error_at(span, format!("expected {what}, found {found}"));
        Bail
    }
    /// Consumes `p`, or reports it missing and carries on as if it were
    /// there (single-token insertion recovery).
    fn expect_p(&mut self, p: P, context: &str) {
        if !self.eat_p(p) {
            self.expected(&format!("`{}` {context}", p.text()));
        }
    }
    fn ident(&mut self, what: &str) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.span();
                self.bump();
                Ok(Ident { name, span })
            }
            _ => Err(self.expected(what)),
        }
    }
    /// Skips to just after the next `;` or to (not over) the `}` closing
    /// the current construct, keeping brace nesting.
    fn sync_statement(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Punct(P::Semi) if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::Punct(P::LBrace) => depth += 1,
                Tok::Punct(P::RBrace) => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let span = self.span();
            self.error_at(span, format!("nesting deeper than {MAX_NESTING} levels"));
            self.depth -= 1;
            return Err(Bail);
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ---------------------------------------------------------------- objects

    fn object(&mut self) -> Option<Object> {
        let kind = match self.peek() {
            Tok::Kw(K::Application) => ObjectKind::Application,
            Tok::Kw(K::Subtask) => ObjectKind::Subtask,
            Tok::Kw(K::Partmp) => ObjectKind::Partmp,
            _ => {
                self.expected("`application`, `subtask` or `partmp`");
                return None;
            }
        };
        self.bump();
        let name = self.ident("the object's name").ok()?;
        self.expect_p(P::LBrace, "after the object's name");
        let mut obj = Object {
            kind,
            name,
            includes: vec![],
            groups: vec![],
            vars: vec![],
            link: None,
            options: vec![],
            procs: vec![],
        };
        let mut seen_option = false;
        let mut reported_missing_option = false;
        loop {
            if self.too_many_errors() {
                return None;
            }
            match self.peek().clone() {
                Tok::Kw(K::Include) => {
                    self.bump();
                    match self.ident("the name of an object to include") {
                        Ok(i) => {
                            obj.includes.push(i);
                            self.expect_p(P::Semi, "after `include NAME`");
                        }
                        Err(_) => self.sync_statement(),
                    }
                }
                Tok::Kw(K::Defgroup) => {
                    self.bump();
                    match self.ident("the name of the group") {
                        Ok(i) => {
                            obj.groups.push(i);
                            self.expect_p(P::Semi, "after `defgroup NAME`");
                        }
                        Err(_) => self.sync_statement(),
                    }
                }
                Tok::Kw(K::Var) => {
                    self.bump();
                    match self.object_var_decl() {
                        Ok(d) => obj.vars.push(d),
                        Err(_) => self.sync_statement(),
                    }
                }
                Tok::Kw(K::Link) => {
                    let span = self.span();
                    self.bump();
                    let entries = self.link_block();
                    obj.link = Some((span, entries));
                }
                Tok::Kw(K::Option) => {
                    self.bump();
                    seen_option = true;
                    let mut opts = self.assignment_block("option");
                    obj.options.append(&mut opts);
                }
                Tok::Kw(K::Proc) => {
                    if !seen_option && !reported_missing_option {
                        let span = self.span();
                        self.error_at(
                            span,
                            format!(
                                "expected an `option {{ ... }}` block before the procedures of {} `{}` \
                                 (Appendix A: option_stm is required)",
                                kind.keyword(),
                                obj.name.name
                            ),
                        );
                        reported_missing_option = true;
                    }
                    if let Some(p) = self.procedure() {
                        obj.procs.push(p);
                    }
                }
                Tok::Punct(P::RBrace) => {
                    if !seen_option && !reported_missing_option {
                        let span = self.span();
                        self.error_at(
                            span,
                            format!(
                                "expected an `option {{ ... }}` block in {} `{}` (Appendix A: option_stm is required)",
                                kind.keyword(),
                                obj.name.name
                            ),
                        );
                    }
                    self.bump();
                    if !self.at_eof() {
                        self.expected(
                            "end of file after the object's closing `}` (one object per file)",
                        );
                    }
                    return Some(obj);
                }
                Tok::Eof => {
                    self.expected("`}` closing the object");
                    return Some(obj);
                }
                _ => {
                    self.expected("`include`, `var`, `defgroup`, `link`, `option`, `proc` or `}`");
                    self.sync_statement();
                    if self.is_p(P::RBrace) && self.peek_at(1) != &Tok::Eof {
                        self.bump();
                    }
                }
            }
        }
    }

    fn var_type(&mut self) -> PResult<VarType> {
        let t = match self.peek() {
            Tok::Kw(K::Numeric) => VarType::Numeric,
            Tok::Kw(K::Vector) => VarType::Vector,
            Tok::Kw(K::String) => VarType::String,
            _ => return Err(self.expected("a type (`numeric`, `vector` or `string`)")),
        };
        self.bump();
        Ok(t)
    }

    /// `var GROUP TYPE : items ;` after `var`.
    fn object_var_decl(&mut self) -> PResult<VarDecl> {
        let group =
            self.ident("a variable group (dtdp, rsus, hrddev, scope, sysd or a defgroup name)")?;
        let ty = self.var_type()?;
        self.expect_p(
            P::Colon,
            &format!("after `var {} {}`", group.name, ty.name()),
        );
        let items = self.var_items()?;
        self.expect_p(P::Semi, "after the variable list");
        Ok(VarDecl { group, ty, items })
    }

    /// `var TYPE : items ;` after `var`, inside a procedure.
    fn local_var_decl(&mut self, var_span: Span) -> PResult<VarDecl> {
        let ty = self.var_type()?;
        self.expect_p(P::Colon, &format!("after `var {}`", ty.name()));
        let items = self.var_items()?;
        self.expect_p(P::Semi, "after the variable list");
        Ok(VarDecl {
            group: Ident {
                name: "local".into(),
                span: var_span,
            },
            ty,
            items,
        })
    }

    fn var_items(&mut self) -> PResult<Vec<VarItem>> {
        let mut items = Vec::new();
        loop {
            let name = self.ident("a variable name")?;
            let (init, init_text) = if self.eat_p(P::Assign) {
                let start = self.pos;
                let v = self.rvalue()?;
                (Some(v), Some(self.text_between(start, self.pos)))
            } else {
                (None, None)
            };
            items.push(VarItem {
                name,
                init,
                init_text,
            });
            if !self.eat_p(P::Comma) {
                return Ok(items);
            }
        }
    }

    /// The source text of tokens `start..end`, for display. Uses the
    /// tokens' byte offsets: finding them from line and column meant a scan
    /// from the start of the file per variable (quadratic in file size).
    fn text_between(&self, start: usize, end: usize) -> String {
        if end <= start {
            return String::new();
        }
        let x = self.tokens[start].offset;
        let y = self.tokens[end].offset.max(x);
        let text = self.src[x..y].trim();
        let text = text.split("(*").next().unwrap_or("").trim();
        text.trim_end_matches([',', ';']).trim().to_string()
    }

    fn link_block(&mut self) -> Vec<LinkEntry> {
        let mut entries = Vec::new();
        self.expect_p(P::LBrace, "after `link`");
        while !self.is_p(P::RBrace) && !self.at_eof() && !self.too_many_errors() {
            let target = match self.ident("the name of a linked object followed by `:`") {
                Ok(t) => t,
                Err(_) => {
                    self.sync_statement();
                    continue;
                }
            };
            self.expect_p(
                P::Colon,
                &format!("after the linked object `{}`", target.name),
            );
            let mut assignments = Vec::new();
            // Assignments run until the next `NAME :` or the closing brace.
            while matches!(self.peek(), Tok::Ident(_)) && *self.peek_at(1) != Tok::Punct(P::Colon) {
                match self.assignment() {
                    Ok(a) => assignments.push(a),
                    Err(_) => self.sync_statement(),
                }
                if !self.eat_p(P::Semi) && !self.eat_p(P::Comma) && !self.is_p(P::RBrace) {
                    self.expected("`;` or `,` after a link assignment");
                    self.sync_statement();
                }
            }
            entries.push(LinkEntry {
                target,
                assignments,
            });
            if !matches!(self.peek(), Tok::Ident(_)) && !self.is_p(P::RBrace) {
                self.expected("an assignment, a linked object `NAME :` or `}`");
                self.sync_statement();
            }
        }
        self.expect_p(P::RBrace, "closing the link block");
        entries
    }

    fn assignment_block(&mut self, what: &str) -> Vec<Assignment> {
        let mut out = Vec::new();
        self.expect_p(P::LBrace, &format!("after `{what}`"));
        while !self.is_p(P::RBrace) && !self.at_eof() && !self.too_many_errors() {
            match self.assignment() {
                Ok(a) => out.push(a),
                Err(_) => {
                    self.sync_statement();
                    continue;
                }
            }
            if !self.eat_p(P::Comma) && !self.eat_p(P::Semi) && !self.is_p(P::RBrace) {
                self.expected(&format!("`,` or `;` between {what} assignments"));
                self.sync_statement();
            }
        }
        self.expect_p(P::RBrace, &format!("closing the {what} block"));
        out
    }

    fn assignment(&mut self) -> PResult<Assignment> {
        let target = self.ident("a variable name")?;
        let index = if self.eat_p(P::LBracket) {
            let e = self.expr()?;
            self.expect_p(P::RBracket, "after the index");
            Some(e)
        } else {
            None
        };
        if !self.eat_p(P::Assign) {
            return Err(self.expected(&format!("`=` after `{}`", target.name)));
        }
        let value = self.rvalue()?;
        Ok(Assignment {
            target,
            index,
            value,
        })
    }

    fn rvalue(&mut self) -> PResult<RValue> {
        if self.is_p(P::Lt) {
            Ok(RValue::Vector(self.vector_const()?))
        } else {
            Ok(RValue::Expr(self.expr()?))
        }
    }

    fn vector_const(&mut self) -> PResult<VectorConst> {
        let span = self.span();
        self.expect_p(P::Lt, "opening a vector");
        if let Tok::Number(n) = *self.peek() {
            self.bump();
            if n != 0.0 {
                self.error_at(
                    span,
                    format!("only `<0>` may omit the vector type, found `<{n}>`"),
                );
            }
            self.expect_p(P::Gt, "closing `<0>`");
            return Ok(VectorConst::Zero(span));
        }
        if !self.eat_kw(K::Is) {
            return Err(self.expected("`is TYPE,` or `0` after `<` in a vector"));
        }
        let ty = self.ident("a vector type after `is`")?;
        let mut elements = Vec::new();
        while self.eat_p(P::Comma) {
            elements.push(self.additive()?);
        }
        if !self.eat_p(P::Gt) {
            return Err(self.expected("`,` or `>` in the vector"));
        }
        Ok(VectorConst::Typed { ty, elements })
    }

    fn vector_ref(&mut self) -> PResult<VectorRef> {
        if self.is_p(P::Lt) {
            Ok(VectorRef::Const(self.vector_const()?))
        } else {
            Ok(VectorRef::Name(
                self.ident("a vector: a name or `<is TYPE, ...>`")?,
            ))
        }
    }

    // ------------------------------------------------------------- procedures

    fn procedure(&mut self) -> Option<Procedure> {
        self.bump(); // `proc`
        let kind = if self.eat_kw(K::Cflow) {
            ProcKind::Cflow
        } else if self.eat_kw(K::Exec) {
            ProcKind::Exec
        } else {
            self.expected("`cflow` or `exec` after `proc`");
            self.skip_procedure();
            return None;
        };
        let name = match self.ident("the procedure's name") {
            Ok(n) => n,
            Err(_) => {
                self.skip_procedure();
                return None;
            }
        };
        let mut params = Vec::new();
        while self.eat_kw(K::Var) {
            while let Ok(i) = self.ident("a parameter name") {
                params.push(i);
                if !self.eat_p(P::Comma) {
                    break;
                }
            }
            self.expect_p(P::Semi, "after the parameter list");
        }
        if !self.eat_p(P::LBrace) {
            self.expected(&format!(
                "`{{` opening the body of procedure `{}`",
                name.name
            ));
            self.skip_procedure();
            return None;
        }
        let mut locals = Vec::new();
        while self.is_kw(K::Var) {
            let sp = self.span();
            self.bump();
            match self.local_var_decl(sp) {
                Ok(d) => locals.push(d),
                Err(_) => self.sync_statement(),
            }
        }
        let body = match kind {
            ProcKind::Cflow => ProcBody::Cflow(self.cflow_list()),
            ProcKind::Exec => ProcBody::Exec(self.exec_list()),
        };
        self.expect_p(P::RBrace, &format!("closing procedure `{}`", name.name));
        Some(Procedure {
            kind,
            name,
            params,
            locals,
            body,
        })
    }

    /// After a broken procedure header: skip to the next `proc` or the
    /// object's closing brace.
    fn skip_procedure(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Kw(K::Proc) if depth == 0 => return,
                Tok::Punct(P::LBrace) => depth += 1,
                Tok::Punct(P::RBrace) => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn cflow_list(&mut self) -> Vec<CflowStmt> {
        let mut out = Vec::new();
        loop {
            if self.too_many_errors() || self.at_eof() || self.is_p(P::RBrace) {
                return out;
            }
            // A case arm ends where the next arm's `expr :` begins; the
            // caller handles that by checking for statement keywords.
            if !matches!(
                self.peek(),
                Tok::Kw(K::Compute) | Tok::Kw(K::Loop) | Tok::Kw(K::Case) | Tok::Kw(K::Call)
            ) {
                if self.in_case_arm() {
                    return out;
                }
                self.expected("a control-flow statement (`compute`, `loop`, `case` or `call`)");
                let before = self.pos;
                self.sync_statement();
                if self.pos == before {
                    self.bump();
                }
                continue;
            }
            match self.cflow_stmt() {
                Ok(s) => out.push(s),
                Err(_) => self.sync_statement(),
            }
        }
    }

    /// True while parsing the body of a case arm: any non-statement token
    /// starts the next arm's probability expression.
    fn in_case_arm(&self) -> bool {
        self.case_depth_marker
    }

    fn cflow_stmt(&mut self) -> PResult<CflowStmt> {
        self.enter()?;
        let r = self.cflow_stmt_inner();
        self.leave();
        r
    }

    fn cflow_stmt_inner(&mut self) -> PResult<CflowStmt> {
        let span = self.span();
        match self.bump().tok {
            Tok::Kw(K::Compute) => {
                let v = self.vector_ref()?;
                self.expect_p(P::Semi, "after `compute VECTOR`");
                Ok(CflowStmt::Compute(v, span))
            }
            Tok::Kw(K::Loop) => {
                let overhead = self.vector_ref()?;
                self.expect_p(
                    P::Comma,
                    "after the loop's overhead vector (`loop VECTOR, COUNT { ... }`)",
                );
                let count = self.expr()?;
                self.expect_p(P::LBrace, "opening the loop body");
                let saved = std::mem::replace(&mut self.case_depth_marker, false);
                let body = self.cflow_list();
                self.case_depth_marker = saved;
                self.expect_p(P::RBrace, "closing the loop body");
                Ok(CflowStmt::Loop {
                    overhead,
                    count,
                    body,
                    span,
                })
            }
            Tok::Kw(K::Case) => {
                let overhead = self.vector_ref()?;
                self.expect_p(P::LBrace, "opening the case body");
                let saved = std::mem::replace(&mut self.case_depth_marker, true);
                let mut arms = Vec::new();
                while !self.is_p(P::RBrace) && !self.at_eof() && !self.too_many_errors() {
                    let prob = match self.expr() {
                        Ok(e) => e,
                        Err(_) => {
                            self.sync_statement();
                            continue;
                        }
                    };
                    self.expect_p(P::Colon, "after the case probability");
                    let body = self.cflow_list();
                    arms.push((prob, body));
                }
                self.case_depth_marker = saved;
                self.expect_p(P::RBrace, "closing the case body");
                if arms.is_empty() {
                    self.error_at(
                        span,
                        "a `case` needs at least one `PROBABILITY: statements` arm".into(),
                    );
                }
                Ok(CflowStmt::Case {
                    overhead,
                    arms,
                    span,
                })
            }
            Tok::Kw(K::Call) => {
                let (name, args) = self.call_tail()?;
                Ok(CflowStmt::Call { name, args })
            }
            _ => Err(Bail),
        }
    }

    /// `NAME ;` or `NAME ( args ) ;` after `call`.
    fn call_tail(&mut self) -> PResult<(Ident, Vec<Expr>)> {
        let name = self.ident("the name of the procedure to call")?;
        let args = if self.eat_p(P::LParen) {
            self.call_args()?
        } else {
            vec![]
        };
        self.expect_p(P::Semi, "after the call");
        Ok((name, args))
    }

    /// Arguments after `(` up to and including `)`.
    fn call_args(&mut self) -> PResult<Vec<Expr>> {
        let mut args = Vec::new();
        if self.eat_p(P::RParen) {
            return Ok(args);
        }
        loop {
            args.push(self.expr_or_string()?);
            if self.eat_p(P::Comma) {
                continue;
            }
            if self.eat_p(P::RParen) {
                return Ok(args);
            }
            return Err(self.expected("`,` or `)` in the argument list"));
        }
    }

    fn exec_list(&mut self) -> Vec<ExecStmt> {
        let mut out = Vec::new();
        while !self.is_p(P::RBrace) && !self.at_eof() && !self.too_many_errors() {
            let before = self.pos;
            match self.exec_stmt() {
                Ok(s) => out.push(s),
                Err(_) => {
                    self.sync_statement();
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        out
    }

    fn exec_stmt(&mut self) -> PResult<ExecStmt> {
        self.enter()?;
        let r = self.exec_stmt_inner();
        self.leave();
        r
    }

    fn exec_stmt_inner(&mut self) -> PResult<ExecStmt> {
        let span = self.span();
        let stmt = match self.peek().clone() {
            Tok::Punct(P::LBrace) => {
                self.bump();
                let body = self.exec_list();
                self.expect_p(P::RBrace, "closing the block");
                ExecStmt::Block(body)
            }
            Tok::Ident(_) => {
                let a = self.assignment()?;
                self.expect_p(P::Semi, "after the assignment");
                ExecStmt::Assign(a)
            }
            Tok::Kw(K::If) => {
                self.bump();
                let cond = self.expr()?;
                if !self.eat_kw(K::Then) {
                    self.expected("`then` after the `if` condition");
                }
                let then_branch = Box::new(self.exec_stmt()?);
                let else_branch = if self.eat_kw(K::Else) {
                    Some(Box::new(self.exec_stmt()?))
                } else {
                    None
                };
                ExecStmt::If {
                    cond,
                    then_branch,
                    else_branch,
                }
            }
            Tok::Kw(K::While) => {
                self.bump();
                self.expect_p(P::LParen, "after `while`");
                let cond = self.expr()?;
                self.expect_p(P::RParen, "after the `while` condition");
                let body = Box::new(self.exec_stmt()?);
                ExecStmt::While { cond, body }
            }
            Tok::Kw(K::Break) => {
                self.bump();
                self.expect_p(P::Semi, "after `break`");
                ExecStmt::Break(span)
            }
            Tok::Kw(K::Continue) => {
                self.bump();
                self.expect_p(P::Semi, "after `continue`");
                ExecStmt::Continue(span)
            }
            Tok::Kw(K::Print) => {
                self.bump();
                let mut items = vec![self.expr_or_string()?];
                while self.eat_p(P::Comma) {
                    items.push(self.expr_or_string()?);
                }
                self.expect_p(P::Semi, "after the `print` list");
                ExecStmt::Print(items, span)
            }
            Tok::Kw(K::Call) => {
                self.bump();
                let (name, args) = self.call_tail()?;
                ExecStmt::Call { name, args }
            }
            Tok::Kw(K::Return) => {
                self.bump();
                if self.eat_p(P::Semi) {
                    ExecStmt::Return(None, span)
                } else {
                    let e = self.expr()?;
                    self.expect_p(P::Semi, "after the returned expression");
                    ExecStmt::Return(Some(e), span)
                }
            }
            Tok::Kw(K::Exit) => {
                self.bump();
                self.expect_p(P::Semi, "after `exit`");
                ExecStmt::Exit(span)
            }
            Tok::Kw(K::Dim) => {
                self.bump();
                let name = self.ident("the name of the data vector to allocate")?;
                self.expect_p(P::Comma, "after the vector name in `dim NAME, SIZE`");
                let size = self.expr()?;
                self.expect_p(P::Semi, "after `dim`");
                ExecStmt::Dim(name, size)
            }
            Tok::Kw(K::Free) => {
                self.bump();
                let name = self.ident("the name of the data vector to free")?;
                self.expect_p(P::Semi, "after `free NAME`");
                ExecStmt::Free(name)
            }
            Tok::Kw(K::Step) => {
                self.bump();
                let device =
                    self.ident("the device used by the step (for example `cpu` or `inpcom`)")?;
                self.expect_p(P::LBrace, "opening the step body");
                let body = self.exec_list();
                self.expect_p(P::RBrace, "closing the step body");
                ExecStmt::Step { device, body }
            }
            Tok::Kw(K::Confdev) => {
                self.bump();
                let mut args = vec![self.expr()?];
                while self.eat_p(P::Comma) {
                    args.push(self.expr()?);
                }
                self.expect_p(P::Semi, "after the `confdev` arguments");
                ExecStmt::Confdev(args, span)
            }
            Tok::Kw(K::Var) => {
                self.error_at(
                    span,
                    "variable declarations must come first in a procedure body".into(),
                );
                return Err(Bail);
            }
            _ => return Err(self.expected("an execution statement")),
        };
        Ok(stmt)
    }

    // ------------------------------------------------------------ expressions

    fn expr_or_string(&mut self) -> PResult<Expr> {
        if let Tok::Str(s) = self.peek().clone() {
            let span = self.span();
            self.bump();
            return Ok(Expr::Str(s, span));
        }
        self.expr()
    }

    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.equality();
        self.leave();
        r
    }

    fn equality(&mut self) -> PResult<Expr> {
        self.chain(Self::relational, |t| match t {
            Tok::Punct(P::EqEq) => Some(BinOp::Eq),
            Tok::Punct(P::Ne) => Some(BinOp::Ne),
            _ => None,
        })
    }

    fn relational(&mut self) -> PResult<Expr> {
        self.chain(Self::additive, |t| match t {
            Tok::Punct(P::Lt) => Some(BinOp::Lt),
            Tok::Punct(P::Gt) => Some(BinOp::Gt),
            Tok::Punct(P::Le) => Some(BinOp::Le),
            Tok::Punct(P::Ge) => Some(BinOp::Ge),
            _ => None,
        })
    }

    fn additive(&mut self) -> PResult<Expr> {
        self.chain(Self::multiplicative, |t| match t {
            Tok::Punct(P::Plus) => Some(BinOp::Add),
            Tok::Punct(P::Minus) => Some(BinOp::Sub),
            _ => None,
        })
    }

    fn multiplicative(&mut self) -> PResult<Expr> {
        self.chain(Self::unary, |t| match t {
            Tok::Punct(P::Star) => Some(BinOp::Mul),
            Tok::Punct(P::Slash) => Some(BinOp::Div),
            _ => None,
        })
    }

    /// One precedence level: `operand (op operand)*`, left-associative, read
    /// in a loop into one flat [`Expr::Chain`] (no recursion per operator).
    fn chain(
        &mut self,
        operand: fn(&mut Self) -> PResult<Expr>,
        operator: fn(&Tok) -> Option<BinOp>,
    ) -> PResult<Expr> {
        let first = operand(self)?;
        let mut links = Vec::new();
        while let Some(op) = operator(self.peek()) {
            let span = self.bump().span;
            let rhs = operand(self)?;
            links.push(ChainLink { op, rhs, span });
        }
        Ok(if links.is_empty() {
            first
        } else {
            Expr::Chain(Box::new(first), links)
        })
    }

    fn unary(&mut self) -> PResult<Expr> {
        let span = self.span();
        if self.eat_p(P::Minus) {
            self.enter()?;
            let e = self.unary();
            self.leave();
            return Ok(Expr::Neg(Box::new(e?), span));
        }
        if self.eat_p(P::Plus) {
            self.enter()?;
            let e = self.unary();
            self.leave();
            return e;
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<Expr> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Number(n) => {
                self.bump();
                Ok(Expr::Number(n, span))
            }
            Tok::Str(s) => {
                self.bump();
                Ok(Expr::Str(s, span))
            }
            Tok::Punct(P::LParen) => {
                self.bump();
                let e = self.expr()?;
                self.expect_p(P::RParen, "closing the parenthesis");
                Ok(e)
            }
            Tok::Ident(name) => {
                self.bump();
                let id = Ident { name, span };
                if self.eat_p(P::LParen) {
                    let args = self.call_args()?;
                    Ok(Expr::Call(id, args))
                } else if self.eat_p(P::LBracket) {
                    let idx = self.expr()?;
                    self.expect_p(P::RBracket, "closing the index");
                    Ok(Expr::Index(id, Box::new(idx)))
                } else if self.eat_p(P::Dot) {
                    let member = self.ident(&format!("a variable name after `{}.`", id.name))?;
                    Ok(Expr::Member(id, member))
                } else {
                    Ok(Expr::Name(id))
                }
            }
            _ => Err(self.expected("an expression")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_of(src: &str) -> Vec<ExecStmt> {
        let obj = parse_object(
            "t.la",
            &format!("application a {{ option {{ }} proc exec init {{ {src} }} }}"),
        )
        .unwrap_or_else(|d| panic!("{d:?}"));
        match &obj.procs[0].body {
            ProcBody::Exec(b) => b.clone(),
            ProcBody::Cflow(_) => unreachable!(),
        }
    }

    fn diags(src: &str) -> Vec<Diagnostic> {
        parse_object_recovering("t.la", src).1
    }

    #[test]
    fn multiplication_binds_tighter_than_addition_and_comparison() {
        let b = body_of("return 1 + 2 * 3 < 4 == 1;");
        let ExecStmt::Return(Some(Expr::Chain(lhs, eq)), _) = &b[0] else {
            panic!("{b:?}")
        };
        assert_eq!(eq[0].op, BinOp::Eq);
        let Expr::Chain(sum, lt) = lhs.as_ref() else {
            panic!("{lhs:?}")
        };
        assert_eq!(lt[0].op, BinOp::Lt);
        let Expr::Chain(_, add) = sum.as_ref() else {
            panic!("{sum:?}")
        };
        assert_eq!(add[0].op, BinOp::Add);
        assert!(matches!(&add[0].rhs, Expr::Chain(_, mul) if mul[0].op == BinOp::Mul));
    }

    #[test]
    fn an_operator_chain_is_one_flat_node() {
        let b = body_of("return 1 - 2 + 3 - 4;");
        let ExecStmt::Return(Some(Expr::Chain(first, links)), _) = &b[0] else {
            panic!("{b:?}")
        };
        assert!(matches!(first.as_ref(), Expr::Number(n, _) if *n == 1.0));
        let ops: Vec<BinOp> = links.iter().map(|l| l.op).collect();
        assert_eq!(ops, [BinOp::Sub, BinOp::Add, BinOp::Sub]);
    }

    #[test]
    fn header_items_links_and_options() {
        let obj = parse_object(
            "t.la",
            "subtask s { include a; include b; defgroup g; var g numeric: x = 1, y; \
             link { a: p = 1; q = x, r = \"s\"; b: z = <0>; } option { ptmp = \"a\"; debug = 1 } }",
        )
        .unwrap();
        assert_eq!(obj.includes.len(), 2);
        assert_eq!(obj.groups[0].name, "g");
        assert_eq!(obj.vars[0].items[0].init_text.as_deref(), Some("1"));
        let (_, entries) = obj.link.unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].assignments.len(), 3);
        assert_eq!(obj.options.len(), 2);
    }

    #[test]
    fn case_arms_and_loops() {
        let obj = parse_object(
            "t.la",
            "partmp t { option { } proc cflow T var n; { var vector: v = <is hllc, 2*IASG>; \
             case <0> { p: compute v; loop <0>, n { compute v; } 1 - p: call T(1); } } }",
        )
        .unwrap();
        let ProcBody::Cflow(stmts) = &obj.procs[0].body else {
            panic!()
        };
        let CflowStmt::Case { arms, .. } = &stmts[0] else {
            panic!("{stmts:?}")
        };
        assert_eq!(arms.len(), 2);
        assert_eq!(arms[0].1.len(), 2);
        assert_eq!(obj.procs[0].params[0].name, "n");
    }

    #[test]
    fn comparison_inside_a_vector_needs_parentheses() {
        let b = body_of("v = <is hllc, (a > b) * IASG>; w = <0>;");
        assert!(matches!(
            &b[0],
            ExecStmt::Assign(Assignment {
                value: RValue::Vector(VectorConst::Typed { .. }),
                ..
            })
        ));
        assert!(
            !diags("application a { option { } proc exec init { v = <is hllc, a > b>; } }")
                .is_empty()
        );
    }

    #[test]
    fn missing_then_and_nonzero_untyped_vector_are_reported() {
        let d = diags("application a { option { } proc exec init { if x call f; v = <5>; } }");
        assert!(
            d.iter().any(|x| x.message.contains("expected `then`")),
            "{d:?}"
        );
        assert!(d.iter().any(|x| x.message.contains("only `<0>`")), "{d:?}");
    }

    #[test]
    fn several_errors_in_one_file_with_positions() {
        let d = diags(
            "application a {\noption { }\nproc exec init {\n  x = ;\n  y = 1 +;\n  z = 2;\n}\n}\n",
        );
        let at: Vec<(u32, u32)> = d.iter().map(|x| (x.span.line, x.span.col)).collect();
        assert_eq!(at, vec![(4, 7), (5, 10)], "{d:?}");
    }

    #[test]
    fn one_object_per_file() {
        let d = diags("partmp a { option { } }\npartmp b { option { } }");
        assert!(d[0].message.contains("one object per file"), "{d:?}");
    }
}
