//! The syntax tree of one CHIP3S object (section 4, Appendix A).

use crate::diagnostic::Span;

#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Application,
    Subtask,
    Partmp,
}

impl ObjectKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ObjectKind::Application => "application",
            ObjectKind::Subtask => "subtask",
            ObjectKind::Partmp => "partmp",
        }
    }
}

/// One object definition (section 4.1). A file holds exactly one.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub kind: ObjectKind,
    pub name: Ident,
    pub includes: Vec<Ident>,
    pub groups: Vec<Ident>,
    pub vars: Vec<VarDecl>,
    /// `None` when the object has no `link` block. A template's link block
    /// is parsed so that the checker can say which rule it breaks.
    pub link: Option<(Span, Vec<LinkEntry>)>,
    pub options: Vec<Assignment>,
    pub procs: Vec<Procedure>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarType {
    Numeric,
    Vector,
    String,
}

impl VarType {
    pub fn name(self) -> &'static str {
        match self {
            VarType::Numeric => "numeric",
            VarType::Vector => "vector",
            VarType::String => "string",
        }
    }
}

/// `var GROUP TYPE: a = 1, b;` (object level) or `var TYPE: a, b;`
/// (procedure level, group `local`).
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub group: Ident,
    pub ty: VarType,
    pub items: Vec<VarItem>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VarItem {
    pub name: Ident,
    pub init: Option<RValue>,
    /// The initialiser as written, for `chips-eval vars`.
    pub init_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LinkEntry {
    pub target: Ident,
    pub assignments: Vec<Assignment>,
}

/// Right-hand side of an assignment (section 4.5 `assignment_opt`).
#[derive(Debug, Clone, PartialEq)]
pub enum RValue {
    Expr(Expr),
    Vector(VectorConst),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub target: Ident,
    /// `x[i] = e` on a data vector (an extension: the grammar only assigns
    /// whole identifiers, but `dim` vectors are useless without it).
    pub index: Option<Expr>,
    pub value: RValue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcKind {
    Cflow,
    Exec,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Procedure {
    pub kind: ProcKind,
    pub name: Ident,
    pub params: Vec<Ident>,
    pub locals: Vec<VarDecl>,
    pub body: ProcBody,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProcBody {
    Cflow(Vec<CflowStmt>),
    Exec(Vec<ExecStmt>),
}

/// Vector operand of `compute`, `loop`, `case` (section 4.6 `vector`).
#[derive(Debug, Clone, PartialEq)]
pub enum VectorRef {
    Const(VectorConst),
    Name(Ident),
}

#[derive(Debug, Clone, PartialEq)]
pub enum VectorConst {
    /// `<0>`: the empty resource usage vector, costing nothing.
    Zero(Span),
    /// `<is TYPE, e1, e2, ...>`
    Typed { ty: Ident, elements: Vec<Expr> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum CflowStmt {
    Compute(VectorRef, Span),
    Loop {
        overhead: VectorRef,
        count: Expr,
        body: Vec<CflowStmt>,
        span: Span,
    },
    Case {
        overhead: VectorRef,
        arms: Vec<(Expr, Vec<CflowStmt>)>,
        span: Span,
    },
    Call {
        name: Ident,
        args: Vec<Expr>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExecStmt {
    Block(Vec<ExecStmt>),
    Assign(Assignment),
    If {
        cond: Expr,
        then_branch: Box<ExecStmt>,
        else_branch: Option<Box<ExecStmt>>,
    },
    While {
        cond: Expr,
        body: Box<ExecStmt>,
    },
    Break(Span),
    Continue(Span),
    Print(Vec<Expr>, Span),
    Call {
        name: Ident,
        args: Vec<Expr>,
    },
    Return(Option<Expr>, Span),
    Exit(Span),
    Dim(Ident, Expr),
    Free(Ident),
    Step {
        device: Ident,
        body: Vec<ExecStmt>,
    },
    Confdev(Vec<Expr>, Span),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
}

impl BinOp {
    /// `+ - * /`, as opposed to a comparison.
    pub fn is_arithmetic(self) -> bool {
        matches!(self, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div)
    }

    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Number(f64, Span),
    Str(String, Span),
    /// `x`: a variable, a procedure called without arguments, or an
    /// object evaluated for its time (section 4.4).
    Name(Ident),
    /// `x[i]` (data vectors are indexed from 1, as in Mathematica).
    Index(Ident, Box<Expr>),
    /// `obj.x`
    Member(Ident, Ident),
    /// `f(args)` or `f()`
    Call(Ident, Vec<Expr>),
    Neg(Box<Expr>, Span),
    /// `first op rhs op rhs ...`: operators of one precedence level,
    /// applied left to right. Flat rather than a nested binary tree so
    /// that evaluating, checking, cloning or dropping a sum of a million
    /// terms does not recurse once per operator.
    Chain(Box<Expr>, Vec<ChainLink>),
}

/// One `op rhs` step of an [`Expr::Chain`]; `span` is the operator's.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainLink {
    pub op: BinOp,
    pub rhs: Expr,
    pub span: Span,
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Number(_, s) | Expr::Str(_, s) | Expr::Neg(_, s) => *s,
            // A chain has at least one link (the parser builds no empty one).
            Expr::Chain(first, links) => links.first().map_or_else(|| first.span(), |l| l.span),
            Expr::Name(i) | Expr::Index(i, _) | Expr::Member(i, _) | Expr::Call(i, _) => i.span,
        }
    }
}
