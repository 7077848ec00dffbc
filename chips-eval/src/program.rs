//! Loading a program (the application and every object it includes,
//! transitively, through the search path) and checking it: symbol tables
//! per object and the interfacing rules of section 2 / Figure 3 and
//! section 4.2.
//!
//! Rules enforced here, each quoted in its diagnostic:
//! * a program has exactly one application, its entry file (section 2);
//! * an object includes only objects below it: an application includes
//!   subtasks, templates, `hardware`, `la`; a subtask includes templates,
//!   `hardware`, `la`; a template includes `hardware`, `la` (Figure 3:
//!   reading only downwards);
//! * an application links subtasks and hardware, a subtask links templates
//!   and hardware, a template links nothing (section 4.2);
//! * only interface variables (groups other than `scope` and `local`) are
//!   visible as `obj.x` or through `link`;
//! * `step`/`confdev` only in templates, no step inside a step, `confdev`
//!   only inside a step (section 4.4); exec `call` only calls exec
//!   procedures (section 4.4); names are declared before use (4.5).

use crate::ast::*;
use crate::builtin_objects::*;
use crate::diagnostic::{Diagnostic, Diagnostics, Span};
use crate::error::Error;
use crate::hardware::HardwareModel;
use crate::parser::parse_object_recovering;
use crate::vectypes::{ElementKind, VectorTypes};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub type ObjId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjKind {
    Application,
    Subtask,
    Partmp,
    Hardware,
    La,
}

impl ObjKind {
    /// Layer of Figure 1: higher numbers are lower layers.
    fn level(self) -> u8 {
        match self {
            ObjKind::Application => 0,
            ObjKind::Subtask => 1,
            ObjKind::Partmp => 2,
            ObjKind::Hardware | ObjKind::La => 3,
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            ObjKind::Application => "application",
            ObjKind::Subtask => "subtask",
            ObjKind::Partmp => "parallel template",
            ObjKind::Hardware => "hardware object",
            ObjKind::La => "run-time object",
        }
    }
    pub fn options(self) -> &'static [&'static str] {
        match self {
            ObjKind::Application => APPLICATION_OPTIONS,
            ObjKind::Subtask => SUBTASK_OPTIONS,
            ObjKind::Partmp => PARTMP_OPTIONS,
            _ => &[],
        }
    }
}

impl From<ObjectKind> for ObjKind {
    fn from(k: ObjectKind) -> Self {
        match k {
            ObjectKind::Application => ObjKind::Application,
            ObjectKind::Subtask => ObjKind::Subtask,
            ObjectKind::Partmp => ObjKind::Partmp,
        }
    }
}

#[derive(Debug, Clone)]
pub struct VarInfo {
    pub name: String,
    pub group: String,
    pub ty: VarType,
    pub init: Option<RValue>,
    pub init_text: Option<String>,
    pub span: Span,
}

impl VarInfo {
    /// Interface variables are visible to other objects (section 2).
    pub fn is_interface(&self) -> bool {
        self.group != "scope" && self.group != "local"
    }
}

#[derive(Debug, Clone)]
pub struct ProgramObject {
    pub name: String,
    pub kind: ObjKind,
    pub file: String,
    pub ast: Option<Object>,
    pub vars: Vec<VarInfo>,
    pub var_index: HashMap<String, usize>,
    pub procs: HashMap<String, usize>,
    /// Included objects by the name used in this object.
    pub includes: HashMap<String, ObjId>,
}

impl ProgramObject {
    pub fn proc(&self, name: &str) -> Option<&Procedure> {
        let ast = self.ast.as_ref()?;
        self.procs.get(name).map(|&i| &ast.procs[i])
    }
    pub fn var(&self, name: &str) -> Option<&VarInfo> {
        self.var_index.get(name).map(|&i| &self.vars[i])
    }
}

/// A loaded and checked program.
#[derive(Debug, Clone)]
pub struct Program {
    pub objects: Vec<ProgramObject>,
    pub by_name: HashMap<String, ObjId>,
    pub app: ObjId,
    pub hardware: ObjId,
    pub la: ObjId,
    pub vectors: VectorTypes,
}

/// Where and how to load a program.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Directories searched for `NAME.la`, after the including file's own.
    pub search_path: Vec<PathBuf>,
    /// Extra vector type definition files (vctdef syntax).
    pub vector_files: Vec<PathBuf>,
}

/// Reads a source file (model or vector definitions).
fn read_source(path: &Path) -> Result<String, Error> {
    let bytes = arpsim::input::read(path, crate::MAX_SOURCE_BYTES).map_err(|error| Error::Io {
        path: path.display().to_string(),
        error,
    })?;
    decode_source(&path.display().to_string(), bytes)
        .map_err(|d| Error::Diagnostics(Diagnostics(vec![d])))
}

/// A source file's text. Invalid UTF-8 is one diagnostic at the line and
/// column of the first invalid byte, with its byte offset.
fn decode_source(path: &str, bytes: Vec<u8>) -> Result<String, Diagnostic> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let before = String::from_utf8_lossy(&bytes[..valid]);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Diagnostic::new(
            path,
            Span::new(to_u32(line), to_u32(column)),
            format!(
                "invalid UTF-8: byte 0x{:02X} at byte offset {valid} (sources must be UTF-8 text)",
                bytes[valid]
            ),
        )
    })
}

impl Program {
    /// Loads the application in `entry` and everything it includes,
    /// then checks the program. `hardware` (when given) lets the checker
    /// verify `hardware.X` names and step devices.
    pub fn load(
        entry: &Path,
        opts: &LoadOptions,
        hardware: Option<&HardwareModel>,
    ) -> Result<Program, Error> {
        let mut vectors = VectorTypes::builtin();
        for f in &opts.vector_files {
            let text = read_source(f)?;
            vectors
                .add_definitions(&f.display().to_string(), &text)
                .map_err(|d| Error::Diagnostics(Diagnostics(d)))?;
        }
        let text = read_source(entry)?;
        let mut sources = vec![(
            entry.display().to_string(),
            text,
            entry.parent().map(Path::to_path_buf),
        )];
        let mut loader = Loader {
            search: opts.search_path.clone(),
            hardware_name: hardware.map(|h| h.name.clone()),
            objects: Vec::new(),
            by_name: HashMap::new(),
            diags: Vec::new(),
        };
        loader.add_special("hardware", ObjKind::Hardware);
        loader.add_special("la", ObjKind::La);
        let (file, text, dir) = sources.remove(0);
        let app = loader.load_source(&file, &text, dir.as_deref());
        let Loader {
            objects,
            by_name,
            mut diags,
            ..
        } = loader;
        let app = match app {
            Some(a) => a,
            None => return Err(Error::Diagnostics(Diagnostics(diags))),
        };
        let prog = Program {
            hardware: by_name["hardware"],
            la: by_name["la"],
            objects,
            by_name,
            app,
            vectors,
        };
        if prog.objects[app].kind != ObjKind::Application {
            diags.push(Diagnostic::new(
                prog.objects[app].file.clone(),
                Span::new(1, 1),
                format!(
                    "the entry file must define an application, found {} `{}` (section 2.1)",
                    prog.objects[app].kind.describe(),
                    prog.objects[app].name
                ),
            ));
        }
        Checker::new(&prog, hardware, &mut diags).check_all();
        if diags.is_empty() {
            Ok(prog)
        } else {
            Err(Error::Diagnostics(Diagnostics(diags)))
        }
    }

    pub fn object(&self, id: ObjId) -> &ProgramObject {
        &self.objects[id]
    }

    /// The application's interface variables (LaVarList).
    pub fn interface_vars(&self) -> Vec<&VarInfo> {
        self.objects[self.app]
            .vars
            .iter()
            .filter(|v| v.is_interface())
            .collect()
    }
}

struct Loader {
    search: Vec<PathBuf>,
    hardware_name: Option<String>,
    objects: Vec<ProgramObject>,
    by_name: HashMap<String, ObjId>,
    diags: Vec<Diagnostic>,
}

impl Loader {
    fn add_special(&mut self, name: &str, kind: ObjKind) {
        let id = self.objects.len();
        self.objects.push(ProgramObject {
            name: name.into(),
            kind,
            file: format!("<builtin {name}>"),
            ast: None,
            vars: vec![],
            var_index: HashMap::new(),
            procs: HashMap::new(),
            includes: HashMap::new(),
        });
        self.by_name.insert(name.into(), id);
    }

    fn load_source(&mut self, file: &str, text: &str, dir: Option<&Path>) -> Option<ObjId> {
        // Syntax errors are recorded and loading goes on with the
        // recovered object, so one run reports the checker's findings too.
        let (ast, mut parse_diags) = parse_object_recovering(file, text);
        self.diags.append(&mut parse_diags);
        let ast = ast?;
        let name = ast.name.name.clone();
        let id = self.objects.len();
        let mut obj = ProgramObject {
            name: name.clone(),
            kind: ast.kind.into(),
            file: file.to_string(),
            ast: None,
            vars: vec![],
            var_index: HashMap::new(),
            procs: HashMap::new(),
            includes: HashMap::new(),
        };
        // Symbol table: variables and procedures of the object.
        let mut groups: HashSet<String> = PREDEFINED_GROUPS.iter().map(|s| s.to_string()).collect();
        for g in &ast.groups {
            if !groups.insert(g.name.clone()) {
                self.diags.push(Diagnostic::new(
                    file,
                    g.span,
                    format!("group `{}` is already defined", g.name),
                ));
            }
        }
        for decl in &ast.vars {
            if !groups.contains(&decl.group.name) {
                self.diags.push(Diagnostic::new(
                    file,
                    decl.group.span,
                    format!(
                        "unknown variable group `{}` (predefined: {}; declare others with `defgroup`)",
                        decl.group.name,
                        PREDEFINED_GROUPS.join(", ")
                    ),
                ));
            } else if decl.group.name == "local" {
                self.diags.push(Diagnostic::new(
                    file,
                    decl.group.span,
                    "group `local` is for procedure variables: declare them inside the procedure (section 4.2)",
                ));
            }
            for item in &decl.items {
                if obj.var_index.contains_key(&item.name.name) {
                    self.diags.push(Diagnostic::new(
                        file,
                        item.name.span,
                        format!("variable `{}` is declared twice", item.name.name),
                    ));
                    continue;
                }
                obj.var_index.insert(item.name.name.clone(), obj.vars.len());
                obj.vars.push(VarInfo {
                    name: item.name.name.clone(),
                    group: decl.group.name.clone(),
                    ty: decl.ty,
                    init: item.init.clone(),
                    init_text: item.init_text.clone(),
                    span: item.name.span,
                });
            }
        }
        for (i, p) in ast.procs.iter().enumerate() {
            if obj.procs.insert(p.name.name.clone(), i).is_some() {
                self.diags.push(Diagnostic::new(
                    file,
                    p.name.span,
                    format!("procedure `{}` is defined twice", p.name.name),
                ));
            }
            if obj.var_index.contains_key(&p.name.name) {
                self.diags.push(Diagnostic::new(
                    file,
                    p.name.span,
                    format!(
                        "procedure `{}` has the name of a variable of the object",
                        p.name.name
                    ),
                ));
            }
        }
        if let Some(&other) = self.by_name.get(&name) {
            self.diags.push(Diagnostic::new(
                file,
                ast.name.span,
                format!(
                    "object `{name}` is already defined in {}",
                    self.objects[other].file
                ),
            ));
            return None;
        }
        self.by_name.insert(name, id);
        obj.ast = Some(ast);
        self.objects.push(obj);
        // Included objects are loaded from the including file's directory
        // first, then from the search path.
        let includes: Vec<Ident> = self.objects[id]
            .ast
            .as_ref()
            .map(|a| a.includes.clone())
            .unwrap_or_default();
        for inc in includes {
            let target = self.find_or_load(&inc, file, dir);
            if let Some(t) = target {
                self.objects[id].includes.insert(inc.name.clone(), t);
            }
        }
        Some(id)
    }

    fn find_or_load(&mut self, inc: &Ident, from_file: &str, dir: Option<&Path>) -> Option<ObjId> {
        if let Some(&id) = self.by_name.get(&inc.name) {
            return Some(id);
        }
        if self.hardware_name.as_deref() == Some(inc.name.as_str()) {
            // The hardware model's own name is an alias of `hardware`.
            return self.by_name.get("hardware").copied();
        }
        if inc.name == "sequential" {
            return self.load_source("<builtin sequential>", SEQUENTIAL_SOURCE, None);
        }
        let file_name = format!("{}.la", inc.name);
        let mut tried = Vec::new();
        for d in dir
            .into_iter()
            .map(Path::to_path_buf)
            .chain(self.search.iter().cloned())
        {
            let candidate = d.join(&file_name);
            tried.push(d.display().to_string());
            if let Ok(bytes) = arpsim::input::read(&candidate, crate::MAX_SOURCE_BYTES) {
                let path = candidate.display().to_string();
                let text = match decode_source(&path, bytes) {
                    Ok(text) => text,
                    Err(d) => {
                        self.diags.push(d);
                        return None;
                    }
                };
                let id = self.load_source(&path, &text, candidate.parent())?;
                if self.objects[id].name != inc.name {
                    self.diags.push(Diagnostic::new(
                        path,
                        Span::new(1, 1),
                        format!(
                            "file {file_name} defines `{}`, but `{}` was included",
                            self.objects[id].name, inc.name
                        ),
                    ));
                }
                return Some(id);
            }
        }
        self.diags.push(Diagnostic::new(
            from_file,
            inc.span,
            format!(
                "cannot find object `{}`: no {file_name} in {} (add a directory with -I)",
                inc.name,
                if tried.is_empty() {
                    "the search path".to_string()
                } else {
                    tried.join(", ")
                }
            ),
        ));
        None
    }
}

// ------------------------------------------------------------------- checker

struct Checker<'a> {
    prog: &'a Program,
    hardware: Option<&'a HardwareModel>,
    diags: &'a mut Vec<Diagnostic>,
}

/// Names visible inside one procedure body.
struct Scope<'s> {
    obj: &'s ProgramObject,
    locals: HashSet<String>,
    in_while: usize,
    in_step: bool,
    proc_kind: ProcKind,
}

impl<'a> Checker<'a> {
    fn new(
        prog: &'a Program,
        hardware: Option<&'a HardwareModel>,
        diags: &'a mut Vec<Diagnostic>,
    ) -> Self {
        Checker {
            prog,
            hardware,
            diags,
        }
    }

    fn err(&mut self, file: &str, span: Span, msg: String) {
        self.diags.push(Diagnostic::new(file, span, msg));
    }

    fn check_all(&mut self) {
        for id in 0..self.prog.objects.len() {
            let obj = &self.prog.objects[id];
            if let Some(ast) = &obj.ast {
                self.check_object(obj, ast);
            }
        }
    }

    fn check_object(&mut self, obj: &'a ProgramObject, ast: &'a Object) {
        let file = obj.file.as_str();
        if obj.kind == ObjKind::Application && obj.name != self.prog.objects[self.prog.app].name {
            self.err(
                file,
                ast.name.span,
                format!(
                    "a program has only one application object (section 2); `{}` is a second one",
                    obj.name
                ),
            );
        }
        // Includes: reading only downwards (Figure 3).
        for inc in &ast.includes {
            if let Some(&t) = obj.includes.get(&inc.name) {
                let target = &self.prog.objects[t];
                if target.kind.level() <= obj.kind.level() {
                    self.err(
                        file,
                        inc.span,
                        format!(
                            "{} `{}` cannot include {} `{}`: an object reads only objects of lower layers (section 2, Figure 3)",
                            obj.kind.describe(),
                            obj.name,
                            target.kind.describe(),
                            target.name
                        ),
                    );
                }
            }
        }
        // Link rules (section 4.2).
        if let Some((span, entries)) = &ast.link {
            if obj.kind == ObjKind::Partmp {
                self.err(file, *span, format!("parallel template `{}` has a link block, but a template links nothing (sections 2.3 and 4.2)", obj.name));
            }
            for e in entries {
                self.check_link_entry(obj, e);
            }
        }
        // Options.
        for a in &ast.options {
            if !obj.kind.options().contains(&a.target.name.as_str()) {
                self.err(
                    file,
                    a.target.span,
                    format!(
                        "unknown option `{}` for a {} (known: {})",
                        a.target.name,
                        obj.kind.describe(),
                        obj.kind.options().join(", ")
                    ),
                );
            }
            self.check_option_value(obj, a);
            let scope = Scope {
                obj,
                locals: HashSet::new(),
                in_while: 0,
                in_step: false,
                proc_kind: ProcKind::Exec,
            };
            self.check_rvalue(&scope, &a.value);
        }
        // Variable initialisers.
        for v in &obj.vars {
            if let Some(init) = &v.init {
                let scope = Scope {
                    obj,
                    locals: HashSet::new(),
                    in_while: 0,
                    in_step: false,
                    proc_kind: ProcKind::Exec,
                };
                self.check_rvalue(&scope, init);
            }
        }
        if obj.kind == ObjKind::Application {
            match obj.proc("init") {
                None => self.err(
                    file,
                    ast.name.span,
                    format!(
                        "application `{}` has no `proc exec init`, its entry point (section 2.1)",
                        obj.name
                    ),
                ),
                Some(p) if p.kind != ProcKind::Exec => self.err(
                    file,
                    p.name.span,
                    "`init` must be an exec procedure (section 2.1)".into(),
                ),
                _ => {}
            }
        }
        for p in &ast.procs {
            self.check_proc(obj, p);
        }
    }

    fn check_option_value(&mut self, obj: &ProgramObject, a: &Assignment) {
        if a.target.name == "ptmp" {
            match &a.value {
                RValue::Expr(Expr::Str(name, span)) => {
                    let ok = obj
                        .includes
                        .get(name)
                        .is_some_and(|&t| self.prog.objects[t].kind == ObjKind::Partmp);
                    if !ok {
                        self.err(&obj.file, *span, format!("option ptmp names `{name}`, which is not an included parallel template"));
                    }
                }
                _ => self.err(
                    &obj.file,
                    a.target.span,
                    "option ptmp takes the name of a template as a string, e.g. ptmp = \"bitonic\""
                        .into(),
                ),
            }
        }
    }

    fn check_link_entry(&mut self, obj: &'a ProgramObject, e: &LinkEntry) {
        let file = obj.file.as_str();
        let Some(&t) = obj.includes.get(&e.target.name) else {
            self.err(
                file,
                e.target.span,
                format!(
                    "link target `{}` is not included: an object links only objects it includes (section 4.2); add `include {};` or fix the name",
                    e.target.name, e.target.name
                ),
            );
            return;
        };
        let target = &self.prog.objects[t];
        let allowed = match obj.kind {
            ObjKind::Application => matches!(target.kind, ObjKind::Subtask | ObjKind::Hardware),
            ObjKind::Subtask => matches!(target.kind, ObjKind::Partmp | ObjKind::Hardware),
            _ => false,
        };
        if !allowed && obj.kind != ObjKind::Partmp {
            let rule = match obj.kind {
                ObjKind::Application => "an application links subtasks and hardware",
                _ => "a subtask links templates and hardware",
            };
            self.err(
                file,
                e.target.span,
                format!(
                    "{} `{}` cannot link {} `{}`: {rule} (section 4.2)",
                    obj.kind.describe(),
                    obj.name,
                    target.kind.describe(),
                    target.name
                ),
            );
            return;
        }
        for a in &e.assignments {
            let name = a.target.name.as_str();
            let ok = match target.kind {
                ObjKind::Hardware => match self.hardware {
                    Some(h) => h.parameters.iter().any(|(p, _)| p == name),
                    None => true,
                },
                _ => {
                    target.kind.options().contains(&name)
                        || target
                            .var(name)
                            .is_some_and(|v| v.is_interface() && v.ty != VarType::Vector)
                }
            };
            if !ok {
                let why = match target.var(name) {
                    Some(v) if !v.is_interface() => format!("`{name}` is hidden in `{}` (group {})", target.name, v.group),
                    Some(_) => format!("`{name}` is a vector; links set numeric or string interface variables (section 4.2)"),
                    None => format!("`{}` has no interface variable or option `{name}`", target.name),
                };
                self.err(
                    file,
                    a.target.span,
                    format!("cannot link `{}.{name}`: {why}", target.name),
                );
            }
            if a.index.is_some() {
                self.err(
                    file,
                    a.target.span,
                    "a link assigns whole variables, not elements".into(),
                );
            }
            let scope = Scope {
                obj,
                locals: HashSet::new(),
                in_while: 0,
                in_step: false,
                proc_kind: ProcKind::Exec,
            };
            self.check_rvalue(&scope, &a.value);
        }
    }

    fn check_proc(&mut self, obj: &'a ProgramObject, p: &'a Procedure) {
        let mut scope = Scope {
            obj,
            locals: HashSet::new(),
            in_while: 0,
            in_step: false,
            proc_kind: p.kind,
        };
        for prm in &p.params {
            if !scope.locals.insert(prm.name.clone()) {
                self.err(
                    &obj.file,
                    prm.span,
                    format!("parameter `{}` is declared twice", prm.name),
                );
            }
        }
        for d in &p.locals {
            for item in &d.items {
                if let Some(init) = &item.init {
                    self.check_rvalue(&scope, init);
                }
                if !scope.locals.insert(item.name.name.clone()) {
                    self.err(
                        &obj.file,
                        item.name.span,
                        format!("local variable `{}` is declared twice", item.name.name),
                    );
                }
            }
        }
        match &p.body {
            ProcBody::Cflow(stmts) => self.check_cflow(&mut scope, stmts),
            ProcBody::Exec(stmts) => {
                for s in stmts {
                    self.check_exec(&mut scope, s);
                }
            }
        }
    }

    fn check_cflow(&mut self, scope: &mut Scope, stmts: &[CflowStmt]) {
        for s in stmts {
            match s {
                CflowStmt::Compute(v, _) => self.check_vector_ref(scope, v),
                CflowStmt::Loop {
                    overhead,
                    count,
                    body,
                    ..
                } => {
                    self.check_vector_ref(scope, overhead);
                    self.check_expr(scope, count);
                    self.check_cflow(scope, body);
                }
                CflowStmt::Case { overhead, arms, .. } => {
                    self.check_vector_ref(scope, overhead);
                    for (p, body) in arms {
                        self.check_expr(scope, p);
                        self.check_cflow(scope, body);
                    }
                }
                CflowStmt::Call { name, args } => self.check_call(scope, name, args, true),
            }
        }
    }

    fn check_call(&mut self, scope: &Scope, name: &Ident, args: &[Expr], any_kind: bool) {
        let file = scope.obj.file.clone();
        match scope.obj.proc(&name.name) {
            Some(p) => {
                if !any_kind && p.kind != ProcKind::Exec {
                    self.err(&file, name.span, format!("`call {}` in an exec procedure: only exec procedures may be called there; use the name in an expression to use a cflow procedure (section 4.4)", name.name));
                }
                if p.params.len() != args.len() {
                    self.err(
                        &file,
                        name.span,
                        format!(
                            "procedure `{}` takes {} argument(s), {} given",
                            name.name,
                            p.params.len(),
                            args.len()
                        ),
                    );
                }
            }
            None => self.err(
                &file,
                name.span,
                format!(
                    "undefined procedure `{}` in `{}`",
                    name.name, scope.obj.name
                ),
            ),
        }
        for a in args {
            self.check_expr(scope, a);
        }
    }

    fn check_exec(&mut self, scope: &mut Scope, s: &ExecStmt) {
        let file = scope.obj.file.clone();
        match s {
            ExecStmt::Block(b) => {
                for s in b {
                    self.check_exec(scope, s);
                }
            }
            ExecStmt::Assign(a) => {
                self.check_assign_target(scope, &a.target);
                if let Some(i) = &a.index {
                    self.check_expr(scope, i);
                }
                self.check_rvalue(scope, &a.value);
            }
            ExecStmt::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.check_expr(scope, cond);
                self.check_exec(scope, then_branch);
                if let Some(e) = else_branch {
                    self.check_exec(scope, e);
                }
            }
            ExecStmt::While { cond, body } => {
                self.check_expr(scope, cond);
                scope.in_while += 1;
                self.check_exec(scope, body);
                scope.in_while -= 1;
            }
            ExecStmt::Break(sp) | ExecStmt::Continue(sp) => {
                if scope.in_while == 0 {
                    self.err(
                        &file,
                        *sp,
                        "`break` and `continue` are valid only inside a `while` loop (section 4.4)"
                            .into(),
                    );
                }
            }
            ExecStmt::Print(items, _) => {
                for e in items {
                    self.check_expr(scope, e);
                }
            }
            ExecStmt::Call { name, args } => self.check_call(scope, name, args, false),
            ExecStmt::Return(e, _) => {
                if let Some(e) = e {
                    self.check_expr(scope, e);
                }
            }
            ExecStmt::Exit(_) => {}
            ExecStmt::Dim(name, size) => {
                self.check_assign_target(scope, name);
                self.check_expr(scope, size);
            }
            ExecStmt::Free(name) => self.check_assign_target(scope, name),
            ExecStmt::Step { device, body } => {
                if scope.obj.kind != ObjKind::Partmp {
                    self.err(
                        &file,
                        device.span,
                        "`step` is applicable only in parallel template objects (section 4.4)"
                            .into(),
                    );
                }
                if scope.in_step {
                    self.err(
                        &file,
                        device.span,
                        "a step must not include another step (section 4.4)".into(),
                    );
                }
                if let Some(h) = self.hardware {
                    if h.device(&device.name).is_none() {
                        let names: Vec<&str> = h.devices.iter().map(|d| d.name.as_str()).collect();
                        self.err(
                            &file,
                            device.span,
                            format!(
                                "hardware model `{}` has no device `{}` (devices: {})",
                                h.name,
                                device.name,
                                names.join(", ")
                            ),
                        );
                    }
                }
                let was = scope.in_step;
                scope.in_step = true;
                for s in body {
                    self.check_exec(scope, s);
                }
                scope.in_step = was;
            }
            ExecStmt::Confdev(args, sp) => {
                // Inside a misplaced step, the step itself was reported.
                if !scope.in_step {
                    let msg = if scope.obj.kind != ObjKind::Partmp {
                        "`confdev` is applicable only in parallel template objects (section 4.4)"
                    } else {
                        "`confdev` configures the device of the enclosing `step`; it is outside any step"
                    };
                    self.err(&file, *sp, msg.into());
                }
                for e in args {
                    self.check_expr(scope, e);
                }
            }
        }
        let _ = scope.proc_kind;
    }

    fn check_assign_target(&mut self, scope: &Scope, name: &Ident) {
        if scope.locals.contains(&name.name) || scope.obj.var(&name.name).is_some() {
            return;
        }
        let file = scope.obj.file.clone();
        let msg = if scope.obj.procs.contains_key(&name.name) {
            format!("cannot assign to procedure `{}`", name.name)
        } else {
            format!(
                "undefined variable `{}`: declare it with `var` (section 4.5)",
                name.name
            )
        };
        self.err(&file, name.span, msg);
    }

    fn check_rvalue(&mut self, scope: &Scope, v: &RValue) {
        match v {
            RValue::Expr(e) => self.check_expr(scope, e),
            RValue::Vector(vc) => self.check_vector_const(scope, vc),
        }
    }

    fn check_vector_ref(&mut self, scope: &Scope, v: &VectorRef) {
        match v {
            VectorRef::Const(c) => self.check_vector_const(scope, c),
            VectorRef::Name(n) => {
                if !scope.locals.contains(&n.name) && scope.obj.var(&n.name).is_none() {
                    let file = scope.obj.file.clone();
                    self.err(&file, n.span, format!("undefined vector `{}`", n.name));
                }
            }
        }
    }

    fn check_vector_const(&mut self, scope: &Scope, v: &VectorConst) {
        let VectorConst::Typed { ty, elements } = v else {
            return;
        };
        let file = scope.obj.file.clone();
        let Some(vt) = self.prog.vectors.get(&ty.name) else {
            self.err(
                &file,
                ty.span,
                format!(
                    "unknown vector type `{}` (known: {})",
                    ty.name,
                    self.prog.vectors.names().join(", ")
                ),
            );
            return;
        };
        if let Some(n) = vt.fixed_len {
            if elements.len() != n {
                self.err(
                    &file,
                    ty.span,
                    format!(
                        "vector type `{}` has {n} element(s), {} given",
                        ty.name,
                        elements.len()
                    ),
                );
            }
        }
        let symbolic = matches!(vt.kind, ElementKind::Symbol | ElementKind::Combination);
        let element_names: HashSet<&str> = if symbolic {
            vt.elements.iter().map(String::as_str).collect()
        } else {
            HashSet::new()
        };
        for e in elements {
            self.check_expr_with(scope, e, &element_names);
        }
    }

    fn check_expr(&mut self, scope: &Scope, e: &Expr) {
        self.check_expr_with(scope, e, &HashSet::new());
    }

    fn check_expr_with(&mut self, scope: &Scope, e: &Expr, symbols: &HashSet<&str>) {
        let file = scope.obj.file.clone();
        match e {
            Expr::Number(..) | Expr::Str(..) => {}
            Expr::Name(id) => {
                let n = id.name.as_str();
                if symbols.contains(n) || scope.locals.contains(n) || scope.obj.var(n).is_some() {
                    return;
                }
                if let Some(p) = scope.obj.proc(n) {
                    if !p.params.is_empty() {
                        self.err(
                            &file,
                            id.span,
                            format!(
                                "procedure `{n}` takes {} argument(s), none given",
                                p.params.len()
                            ),
                        );
                    }
                    return;
                }
                if let Some(&t) = scope.obj.includes.get(n) {
                    let k = self.prog.objects[t].kind;
                    if matches!(k, ObjKind::Hardware | ObjKind::La) {
                        self.err(
                            &file,
                            id.span,
                            format!("`{n}` is not a value; read its parameters as `{n}.NAME`"),
                        );
                    }
                    return;
                }
                self.err(
                    &file,
                    id.span,
                    format!("undefined name `{n}` in `{}`", scope.obj.name),
                );
            }
            Expr::Index(id, i) => {
                if !scope.locals.contains(&id.name) && scope.obj.var(&id.name).is_none() {
                    self.err(&file, id.span, format!("undefined vector `{}`", id.name));
                }
                self.check_expr_with(scope, i, symbols);
            }
            Expr::Member(o, m) => self.check_member(scope, o, m),
            Expr::Call(f, args) => {
                if let Some(p) = scope.obj.proc(&f.name) {
                    if p.params.len() != args.len() {
                        self.err(
                            &file,
                            f.span,
                            format!(
                                "procedure `{}` takes {} argument(s), {} given",
                                f.name,
                                p.params.len(),
                                args.len()
                            ),
                        );
                    }
                } else if let Some(arity) = function_arity(&f.name) {
                    if arity != args.len() {
                        self.err(
                            &file,
                            f.span,
                            format!(
                                "function `{}` takes {arity} argument(s), {} given",
                                f.name,
                                args.len()
                            ),
                        );
                    }
                } else {
                    self.err(
                        &file,
                        f.span,
                        format!("undefined procedure or function `{}`", f.name),
                    );
                }
                for a in args {
                    self.check_expr_with(scope, a, symbols);
                }
            }
            Expr::Neg(x, _) => self.check_expr_with(scope, x, symbols),
            Expr::Chain(first, links) => {
                self.check_expr_with(scope, first, symbols);
                for link in links {
                    self.check_expr_with(scope, &link.rhs, symbols);
                }
            }
        }
    }

    fn check_member(&mut self, scope: &Scope, o: &Ident, m: &Ident) {
        let file = scope.obj.file.clone();
        let Some(&t) = scope.obj.includes.get(&o.name) else {
            let msg = if self.prog.by_name.contains_key(&o.name) {
                format!("`{}` is not included by `{}`: an object reads only objects it includes, of lower layers (section 2, Figure 3)", o.name, scope.obj.name)
            } else {
                format!("undefined object `{}`", o.name)
            };
            self.err(&file, o.span, msg);
            return;
        };
        let target = &self.prog.objects[t];
        match target.kind {
            ObjKind::Hardware => {
                if let Some(h) = self.hardware {
                    if !h.parameters.iter().any(|(p, _)| *p == m.name) {
                        let names: Vec<&str> =
                            h.parameters.iter().map(|(p, _)| p.as_str()).collect();
                        self.err(
                            &file,
                            m.span,
                            format!(
                                "hardware model `{}` has no parameter `{}` (parameters: {})",
                                h.name,
                                m.name,
                                names.join(", ")
                            ),
                        );
                    }
                }
            }
            ObjKind::La => {
                if !LA_MEMBERS.iter().any(|(n, _)| *n == m.name) {
                    self.err(
                        &file,
                        m.span,
                        format!("`la` has no member `{}` (members: stage, nstage)", m.name),
                    );
                }
            }
            _ => match target.var(&m.name) {
                Some(v) if v.is_interface() => {}
                Some(v) => self.err(
                    &file,
                    m.span,
                    format!(
                        "`{}.{}` is hidden: group {} is not part of the interface (section 2)",
                        o.name, m.name, v.group
                    ),
                ),
                None => self.err(
                    &file,
                    m.span,
                    format!("`{}` has no interface variable `{}`", o.name, m.name),
                ),
            },
        }
    }
}
