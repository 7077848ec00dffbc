//! The APART model: one type per element of sections 2.1–2.6, with its
//! content model and attributes as fields.

use crate::annotation::{Annotations, PrefixHints};
use crate::position::Origin;

/// Languages of the `language` attribute of `sir` and `unit` (section 2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Fortran,
    Java,
    C,
    Cpp,
}

impl Language {
    pub const ALL: [Language; 4] = [
        Language::Fortran,
        Language::Java,
        Language::C,
        Language::Cpp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Language::Fortran => "fortran",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// The root element (section 2.1): `(variable*, (group|unit)+)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sir {
    pub language: Language,
    pub message_passing: Option<bool>,
    pub shared_memory: Option<bool>,
    pub variables: Vec<Variable>,
    pub members: Vec<Member>,
    pub annotations: Annotations,
    /// Preferred prefixes of annotation namespaces, used by the writer.
    pub prefixes: PrefixHints,
    pub origin: Origin,
}

impl Sir {
    pub fn new(language: Language) -> Self {
        Sir {
            language,
            message_passing: None,
            shared_memory: None,
            variables: Vec::new(),
            members: Vec::new(),
            annotations: Annotations::new(),
            prefixes: PrefixHints::new(),
            origin: Origin::BUILT,
        }
    }

    pub fn push_unit(&mut self, unit: Unit) -> &mut Self {
        self.members.push(Member::Unit(unit));
        self
    }

    pub fn push_group(&mut self, group: Group) -> &mut Self {
        self.members.push(Member::Group(group));
        self
    }

    /// Every unit of the document, depth first, wherever it is nested.
    pub fn units(&self) -> Vec<&Unit> {
        let mut out = Vec::new();
        visit_members(&self.members, &mut |node| {
            if let Node::Unit(u) = node {
                out.push(u);
            }
        });
        out
    }

    /// Every code region of the document, depth first (including those in
    /// expressions and loop bounds).
    pub fn code_regions(&self) -> Vec<&CodeRegion> {
        let mut out = Vec::new();
        visit_members(&self.members, &mut |node| {
            if let Node::CodeRegion(r) = node {
                out.push(r);
            }
        });
        out
    }

    /// The code region with this id, mutably (to annotate it).
    pub fn code_region_mut(&mut self, id: &str) -> Option<&mut CodeRegion> {
        self.members
            .iter_mut()
            .find_map(|m| member_region_mut(m, id))
    }

    /// The unit with this id, mutably (to annotate it).
    pub fn unit_mut(&mut self, id: &str) -> Option<&mut Unit> {
        self.members.iter_mut().find_map(|m| member_unit_mut(m, id))
    }
}

fn member_region_mut<'a>(member: &'a mut Member, id: &str) -> Option<&'a mut CodeRegion> {
    crate::stack::guarded(|| match member {
        Member::Group(g) => group_region_mut(g, id),
        Member::Unit(u) => unit_region_mut(u, id),
    })
}

fn group_region_mut<'a>(group: &'a mut Group, id: &str) -> Option<&'a mut CodeRegion> {
    group
        .members
        .iter_mut()
        .find_map(|m| member_region_mut(m, id))
}

fn unit_region_mut<'a>(unit: &'a mut Unit, id: &str) -> Option<&'a mut CodeRegion> {
    unit.children.iter_mut().find_map(|c| match c {
        UnitChild::Group(g) => group_region_mut(g, id),
        UnitChild::Unit(u) => unit_region_mut(u, id),
        UnitChild::CodeRegion(r) => region_mut(r, id),
    })
}

fn region_mut<'a>(region: &'a mut CodeRegion, id: &str) -> Option<&'a mut CodeRegion> {
    crate::stack::guarded(|| {
        if region.id == id {
            return Some(region);
        }
        let in_evaluations = region
            .evaluations
            .iter_mut()
            .flat_map(|e| e.regions_mut())
            .find_map(|r| region_mut(r, id));
        in_evaluations.or_else(|| {
            region.children.iter_mut().find_map(|c| match c {
                RegionChild::CodeRegion(r) => region_mut(r, id),
                RegionChild::Group(g) => group_region_mut(g, id),
            })
        })
    })
}

fn member_unit_mut<'a>(member: &'a mut Member, id: &str) -> Option<&'a mut Unit> {
    crate::stack::guarded(|| match member {
        Member::Group(g) => g.members.iter_mut().find_map(|m| member_unit_mut(m, id)),
        Member::Unit(u) => unit_unit_mut(u, id),
    })
}

fn unit_unit_mut<'a>(unit: &'a mut Unit, id: &str) -> Option<&'a mut Unit> {
    crate::stack::guarded(|| {
        if unit.id == id {
            return Some(unit);
        }
        unit.children.iter_mut().find_map(|c| match c {
            UnitChild::Unit(u) => unit_unit_mut(u, id),
            UnitChild::Group(g) => g.members.iter_mut().find_map(|m| member_unit_mut(m, id)),
            UnitChild::CodeRegion(_) => None,
        })
    })
}

/// `(group|unit)`: what `sir` and `group` contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    Group(Group),
    Unit(Unit),
}

/// `type` of a group (section 2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupType {
    Module,
    Package,
    Class,
    Interface,
}

impl GroupType {
    pub const ALL: [GroupType; 4] = [
        GroupType::Module,
        GroupType::Package,
        GroupType::Class,
        GroupType::Interface,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GroupType::Module => "module",
            GroupType::Package => "package",
            GroupType::Class => "class",
            GroupType::Interface => "interface",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// An organisational unit (section 2.2):
/// `(inheritance*, location?, variable*, (group|unit)*)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub id: String,
    pub kind: GroupType,
    pub name: Option<String>,
    pub internal: Option<String>,
    pub inheritance: Vec<Inheritance>,
    pub location: Option<Location>,
    pub variables: Vec<Variable>,
    pub members: Vec<Member>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl Group {
    pub fn new(id: impl Into<String>, kind: GroupType) -> Self {
        Group {
            id: id.into(),
            kind,
            name: None,
            internal: None,
            inheritance: Vec::new(),
            location: None,
            variables: Vec::new(),
            members: Vec::new(),
            annotations: Annotations::new(),
            origin: Origin::BUILT,
        }
    }

    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A superclass or superinterface, by id or by name (section 2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inheritance {
    pub id: Option<String>,
    pub name: Option<String>,
    pub annotations: Annotations,
    pub origin: Origin,
}

/// `type` of a unit (section 2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnitType {
    Function,
    Subroutine,
    Program,
    Method,
}

impl UnitType {
    pub const ALL: [UnitType; 4] = [
        UnitType::Function,
        UnitType::Subroutine,
        UnitType::Program,
        UnitType::Method,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            UnitType::Function => "function",
            UnitType::Subroutine => "subroutine",
            UnitType::Program => "program",
            UnitType::Method => "method",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// A function, subroutine, method or main program (section 2.3):
/// `(alias?, location?, variable*, variableRef*, (group|unit|codeRegion)*)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub id: String,
    pub kind: UnitType,
    pub name: Option<String>,
    /// IDREFS of the argument variables, in signature order; empty when the
    /// attribute is absent.
    pub arguments: Vec<String>,
    pub is_virtual: Option<bool>,
    pub internal: Option<String>,
    pub language: Option<Language>,
    pub instrumentable: Option<bool>,
    /// Text of the `alias` element (Fortran generic names, Figure 6).
    pub alias: Option<String>,
    pub location: Option<Location>,
    pub variables: Vec<Variable>,
    pub variable_refs: Vec<VariableRef>,
    pub children: Vec<UnitChild>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl Unit {
    pub fn new(id: impl Into<String>, kind: UnitType) -> Self {
        Unit {
            id: id.into(),
            kind,
            name: None,
            arguments: Vec::new(),
            is_virtual: None,
            internal: None,
            language: None,
            instrumentable: None,
            alias: None,
            location: None,
            variables: Vec::new(),
            variable_refs: Vec::new(),
            children: Vec::new(),
            annotations: Annotations::new(),
            origin: Origin::BUILT,
        }
    }

    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    pub fn with_location(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    pub fn push_region(&mut self, region: CodeRegion) -> &mut Self {
        self.children.push(UnitChild::CodeRegion(region));
        self
    }

    /// The code regions directly inside this unit.
    pub fn regions(&self) -> impl Iterator<Item = &CodeRegion> {
        self.children.iter().filter_map(|c| match c {
            UnitChild::CodeRegion(r) => Some(r),
            _ => None,
        })
    }
}

/// `(group|unit|codeRegion)`: what a unit contains after its declarations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitChild {
    Group(Group),
    Unit(Unit),
    CodeRegion(CodeRegion),
}

/// `type` of a code region (section 2.4). The DTD makes it CDATA: the listed
/// types are a recommendation and tools may use their own (`Other`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RegionType {
    Assignment,
    Block,
    If,
    Switch,
    Loop,
    Jump,
    Call,
    Io,
    Try,
    Catch,
    Finally,
    Where,
    Forall,
    Vector,
    ParallelRegion,
    ParallelLoop,
    ParallelSections,
    ParallelSingle,
    ParallelWorkshare,
    ParallelMaster,
    ParallelCriticalSection,
    ParallelAtomic,
    ParallelBarrier,
    ParallelFlush,
    ParallelOrdered,
    /// Any other type, kept verbatim.
    Other(String),
}

impl RegionType {
    /// The recommended types of section 2.4 and Table 1, with their spelling.
    pub const RECOMMENDED: [(RegionType, &'static str); 25] = [
        (RegionType::Assignment, "assignment"),
        (RegionType::Block, "block"),
        (RegionType::If, "if"),
        (RegionType::Switch, "switch"),
        (RegionType::Loop, "loop"),
        (RegionType::Jump, "jump"),
        (RegionType::Call, "call"),
        (RegionType::Io, "io"),
        (RegionType::Try, "try"),
        (RegionType::Catch, "catch"),
        (RegionType::Finally, "finally"),
        (RegionType::Where, "where"),
        (RegionType::Forall, "forall"),
        (RegionType::Vector, "vector"),
        (RegionType::ParallelRegion, "parallelRegion"),
        (RegionType::ParallelLoop, "parallelLoop"),
        (RegionType::ParallelSections, "parallelSections"),
        (RegionType::ParallelSingle, "parallelSingle"),
        (RegionType::ParallelWorkshare, "parallelWorkshare"),
        (RegionType::ParallelMaster, "parallelMaster"),
        (
            RegionType::ParallelCriticalSection,
            "parallelCriticalSection",
        ),
        (RegionType::ParallelAtomic, "parallelAtomic"),
        (RegionType::ParallelBarrier, "parallelBarrier"),
        (RegionType::ParallelFlush, "parallelFlush"),
        (RegionType::ParallelOrdered, "parallelOrdered"),
    ];

    pub fn as_str(&self) -> &str {
        match self {
            RegionType::Other(s) => s,
            known => Self::RECOMMENDED
                .iter()
                .find(|(t, _)| t == known)
                .map(|(_, s)| *s)
                .unwrap_or(""),
        }
    }

    /// Never fails: unknown spellings become `Other`.
    pub fn parse(s: &str) -> Self {
        Self::RECOMMENDED
            .iter()
            .find(|(_, name)| *name == s)
            .map(|(t, _)| t.clone())
            .unwrap_or_else(|| RegionType::Other(s.to_string()))
    }

    pub fn is_parallel(&self) -> bool {
        self.as_str().starts_with("parallel")
    }
}

/// A sequence of statements or directives (section 2.4):
/// `(callee?, location?, variable*, variableRef*, scheduling?,
///   (expression|loopControl)*, (codeRegion|group)*)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRegion {
    pub id: String,
    pub kind: RegionType,
    pub critical_section_name: Option<String>,
    pub nowait: Option<bool>,
    pub callee: Option<Callee>,
    pub location: Option<Location>,
    pub variables: Vec<Variable>,
    pub variable_refs: Vec<VariableRef>,
    pub scheduling: Option<Scheduling>,
    pub evaluations: Vec<Evaluation>,
    pub children: Vec<RegionChild>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl CodeRegion {
    pub fn new(id: impl Into<String>, kind: RegionType) -> Self {
        CodeRegion {
            id: id.into(),
            kind,
            critical_section_name: None,
            nowait: None,
            callee: None,
            location: None,
            variables: Vec::new(),
            variable_refs: Vec::new(),
            scheduling: None,
            evaluations: Vec::new(),
            children: Vec::new(),
            annotations: Annotations::new(),
            origin: Origin::BUILT,
        }
    }

    /// A `call` region invoking `callee` (section 2.4, item call).
    pub fn call(id: impl Into<String>, callee: Callee) -> Self {
        let mut region = CodeRegion::new(id, RegionType::Call);
        region.callee = Some(callee);
        region
    }

    pub fn with_location(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    pub fn push_region(&mut self, region: CodeRegion) -> &mut Self {
        self.children.push(RegionChild::CodeRegion(region));
        self
    }

    /// The code regions directly nested (not those in expressions).
    pub fn regions(&self) -> impl Iterator<Item = &CodeRegion> {
        self.children.iter().filter_map(|c| match c {
            RegionChild::CodeRegion(r) => Some(r),
            RegionChild::Group(_) => None,
        })
    }
}

/// `(codeRegion|group)`: nested content of regions and expressions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionChild {
    CodeRegion(CodeRegion),
    Group(Group),
}

/// The invoked unit, by IDREF or by name (section 2.4, item call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callee {
    pub id: Option<String>,
    pub name: Option<String>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl Callee {
    pub fn to_id(id: impl Into<String>) -> Self {
        Callee {
            id: Some(id.into()),
            name: None,
            annotations: Annotations::new(),
            origin: Origin::BUILT,
        }
    }

    pub fn to_name(name: impl Into<String>) -> Self {
        Callee {
            id: None,
            name: Some(name.into()),
            annotations: Annotations::new(),
            origin: Origin::BUILT,
        }
    }
}

/// `(expression|loopControl)`: what is evaluated before a region executes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evaluation {
    Expression(Expression),
    LoopControl(LoopControl),
}

impl Evaluation {
    /// The code regions inside, in document order.
    pub fn regions(&self) -> Vec<&CodeRegion> {
        match self {
            Evaluation::Expression(e) => e
                .items
                .iter()
                .filter_map(|i| match i {
                    RegionChild::CodeRegion(r) => Some(r),
                    RegionChild::Group(_) => None,
                })
                .collect(),
            Evaluation::LoopControl(l) => l.bounds().flat_map(|b| b.regions.iter()).collect(),
        }
    }

    fn regions_mut(&mut self) -> Vec<&mut CodeRegion> {
        match self {
            Evaluation::Expression(e) => e
                .items
                .iter_mut()
                .filter_map(|i| match i {
                    RegionChild::CodeRegion(r) => Some(r),
                    RegionChild::Group(_) => None,
                })
                .collect(),
            Evaluation::LoopControl(l) => [&mut l.lower, &mut l.upper, &mut l.stride]
                .into_iter()
                .flatten()
                .flat_map(|b| b.regions.iter_mut())
                .collect(),
        }
    }
}

/// `expression ((codeRegion|group)+)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expression {
    pub items: Vec<RegionChild>,
    pub annotations: Annotations,
    pub origin: Origin,
}

/// `loopControl (lower?, upper?, stride?)`: start, stop and increment of a
/// counted loop (section 2.4, item loop; Figure 4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoopControl {
    pub lower: Option<Bound>,
    pub upper: Option<Bound>,
    pub stride: Option<Bound>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl LoopControl {
    pub fn bounds(&self) -> impl Iterator<Item = &Bound> {
        [&self.lower, &self.upper, &self.stride]
            .into_iter()
            .flatten()
    }
}

/// `lower`, `upper`, `stride`: `(codeRegion+)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub regions: Vec<CodeRegion>,
    pub annotations: Annotations,
    pub origin: Origin,
}

/// `type` of `scheduling` (section 2.4, item parallelLoop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchedulingType {
    Static,
    Dynamic,
    Guided,
    Runtime,
}

impl SchedulingType {
    pub const ALL: [SchedulingType; 4] = [
        SchedulingType::Static,
        SchedulingType::Dynamic,
        SchedulingType::Guided,
        SchedulingType::Runtime,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SchedulingType::Static => "static",
            SchedulingType::Dynamic => "dynamic",
            SchedulingType::Guided => "guided",
            SchedulingType::Runtime => "runtime",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduling {
    pub kind: SchedulingType,
    /// Table 2: `positiveInteger` (0 is rejected by validation).
    pub chunk: Option<u64>,
    pub annotations: Annotations,
    pub origin: Origin,
}

/// A variable declaration (section 2.5): `(location?, dimension*)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    pub id: String,
    pub name: Option<String>,
    /// Language-dependent type name, e.g. `int` or `REAL`.
    pub type_name: Option<String>,
    /// Number of dimensions; `None` for a scalar. Section 2.5 says `-1` also
    /// means scalar while Table 2 types the attribute `nonNegativeInteger`:
    /// the parser reads `-1` as `None`, the writer omits it.
    pub dimensions: Option<u64>,
    pub location: Option<Location>,
    pub dimension_bounds: Vec<Dimension>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl Variable {
    pub fn new(id: impl Into<String>) -> Self {
        Variable {
            id: id.into(),
            name: None,
            type_name: None,
            dimensions: None,
            location: None,
            dimension_bounds: Vec::new(),
            annotations: Annotations::new(),
            origin: Origin::BUILT,
        }
    }
}

/// Bounds of one array dimension (section 2.5; Table 2 types).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dimension {
    /// `positiveInteger`: which dimension, from 1.
    pub index: u64,
    pub lower_bound: i64,
    pub upper_bound: i64,
    pub annotations: Annotations,
    pub origin: Origin,
}

/// `accessType` of a variable reference (section 2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessType {
    Read,
    Write,
    ReadWrite,
}

impl AccessType {
    pub const ALL: [AccessType; 3] = [AccessType::Read, AccessType::Write, AccessType::ReadWrite];

    pub fn as_str(self) -> &'static str {
        match self {
            AccessType::Read => "read",
            AccessType::Write => "write",
            AccessType::ReadWrite => "readwrite",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// A use of a variable (section 2.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableRef {
    pub target_id: String,
    pub access: Option<AccessType>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl VariableRef {
    pub fn new(target_id: impl Into<String>, access: Option<AccessType>) -> Self {
        VariableRef {
            target_id: target_id.into(),
            access,
            annotations: Annotations::new(),
            origin: Origin::BUILT,
        }
    }
}

/// Where code is in a resource (section 2.6). All parts optional; Table 2
/// types lines and columns `nonNegativeInteger`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    pub start_line: Option<u64>,
    pub start_column: Option<u64>,
    pub end_line: Option<u64>,
    pub end_column: Option<u64>,
    /// Table 2 says `url`, the DTD says `uri`: the attribute is `uri`.
    pub uri: Option<String>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl Location {
    /// A line range in `uri` (e.g. `file:///src/main.c`).
    pub fn lines(uri: impl Into<String>, start_line: u64, end_line: u64) -> Self {
        Location {
            start_line: Some(start_line),
            end_line: Some(end_line),
            uri: Some(uri.into()),
            ..Location::default()
        }
    }
}

/// A borrowed view of any element that can carry an id, for walks.
#[derive(Debug, Clone, Copy)]
pub enum Node<'a> {
    Group(&'a Group),
    Unit(&'a Unit),
    CodeRegion(&'a CodeRegion),
}

/// Calls `f` on every group, unit and code region below `members`, parents
/// before children, in document order.
pub fn visit_members<'a>(members: &'a [Member], f: &mut dyn FnMut(Node<'a>)) {
    for member in members {
        match member {
            Member::Group(g) => visit_group(g, f),
            Member::Unit(u) => visit_unit(u, f),
        }
    }
}

fn visit_group<'a>(group: &'a Group, f: &mut dyn FnMut(Node<'a>)) {
    crate::stack::guarded(|| {
        f(Node::Group(group));
        visit_members(&group.members, f);
    })
}

fn visit_unit<'a>(unit: &'a Unit, f: &mut dyn FnMut(Node<'a>)) {
    crate::stack::guarded(|| {
        f(Node::Unit(unit));
        for child in &unit.children {
            match child {
                UnitChild::Group(g) => visit_group(g, f),
                UnitChild::Unit(u) => visit_unit(u, f),
                UnitChild::CodeRegion(r) => visit_region(r, f),
            }
        }
    })
}

fn visit_region<'a>(region: &'a CodeRegion, f: &mut dyn FnMut(Node<'a>)) {
    crate::stack::guarded(|| {
        f(Node::CodeRegion(region));
        for evaluation in &region.evaluations {
            match evaluation {
                Evaluation::Expression(e) => visit_region_children(&e.items, f),
                Evaluation::LoopControl(l) => {
                    for bound in l.bounds() {
                        for r in &bound.regions {
                            visit_region(r, f);
                        }
                    }
                }
            }
        }
        visit_region_children(&region.children, f);
    })
}

fn visit_region_children<'a>(children: &'a [RegionChild], f: &mut dyn FnMut(Node<'a>)) {
    for child in children {
        match child {
            RegionChild::CodeRegion(r) => visit_region(r, f),
            RegionChild::Group(g) => visit_group(g, f),
        }
    }
}
