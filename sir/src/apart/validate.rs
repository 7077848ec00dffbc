//! Validation of an APART model: what the DTD says that the types cannot
//! (unique IDs, resolving IDREFs, Table 2 ranges) and the rules that sections
//! 2.2–2.4 state in prose (nesting by language, what `if`, `switch`, `call`
//! ... regions may contain).

use std::collections::{HashMap, HashSet};

use crate::annotation::{check_annotations, Annotations};
use crate::apart::model::*;
use crate::diagnostic::{Collector, Report, Rule, Severity, Subject};
use crate::error::quote;
use crate::names::{is_xml_name, is_xml_text};
use crate::position::Origin;

/// Choices of strictness.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationOptions {
    /// Sections 2.2 and 2.3 list language restrictions "one should assume
    /// ... are also respected ... (although this is not enforced)". This crate
    /// reads "not enforced" as "not expressible in the DTD" and reports them
    /// as errors; set this to report them as warnings instead.
    pub language_rules_as_warnings: bool,
}

impl Sir {
    /// Validates with the default (strict) options.
    pub fn validate(&self) -> Report {
        self.validate_with(&ValidationOptions::default())
    }

    pub fn validate_with(&self, options: &ValidationOptions) -> Report {
        let mut checker = Checker {
            options,
            language: self.language,
            ids: HashMap::new(),
            references: Vec::new(),
            out: Collector::default(),
        };
        checker.sir(self);
        checker.resolve_references();
        checker.out.into_report()
    }
}

/// What an ID names.
#[derive(Debug, Clone, Copy)]
enum Target<'a> {
    Group(&'a Group),
    Unit,
    CodeRegion,
    Variable,
}

impl Target<'_> {
    fn element(&self) -> &'static str {
        match self {
            Target::Group(_) => "group",
            Target::Unit => "unit",
            Target::CodeRegion => "codeRegion",
            Target::Variable => "variable",
        }
    }
}

/// What kind of element an IDREF must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// `inheritance id`: a class or interface group (section 2.2).
    ClassOrInterface,
    /// `callee id`: a unit (section 2.4, item call).
    Unit,
    /// `unit arguments`, `variableRef targetId`: variables (section 2.5).
    Variable,
}

struct Reference<'a> {
    expect: Expect,
    value: &'a str,
    subject: Subject<'a>,
    attribute: &'static str,
}

/// The element directly containing the one being checked.
#[derive(Debug, Clone, Copy)]
enum Parent<'a> {
    Root,
    Group(&'a Group),
    Unit(&'a Unit),
    CodeRegion,
}

struct Checker<'a, 'o> {
    options: &'o ValidationOptions,
    /// The language of the `sir` element: some rules are about "a sir
    /// element representing a C program", not about a unit's language.
    language: Language,
    ids: HashMap<&'a str, Target<'a>>,
    references: Vec<Reference<'a>>,
    out: Collector,
}

fn subject<'a>(element: &'a str, id: Option<&'a str>, origin: &Origin) -> Subject<'a> {
    Subject {
        element,
        id,
        position: origin.position(),
    }
}

impl<'a> Checker<'a, '_> {
    fn language_rule(&mut self, subject: Subject<'_>, message: String) {
        let severity = if self.options.language_rules_as_warnings {
            Severity::Warning
        } else {
            Severity::Error
        };
        self.out
            .push(severity, Rule::Nesting, subject, None, message);
    }

    fn register(&mut self, id: &'a str, target: Target<'a>, subject: Subject<'a>) {
        if !is_xml_name(id) {
            self.out.error(
                Rule::InvalidId,
                subject,
                Some("id"),
                format!("`{}` is not an XML Name", quote(id)),
            );
        }
        if let Some(previous) = self.ids.get(id) {
            let element = previous.element();
            self.out.error(
                Rule::DuplicateId,
                subject,
                Some("id"),
                format!("id `{}` is already used by a <{element}>", quote(id)),
            );
        } else {
            self.ids.insert(id, target);
        }
    }

    fn reference(
        &mut self,
        expect: Expect,
        value: &'a str,
        subject: Subject<'a>,
        attribute: &'static str,
    ) {
        self.references.push(Reference {
            expect,
            value,
            subject,
            attribute,
        });
    }

    fn resolve_references(&mut self) {
        for reference in std::mem::take(&mut self.references) {
            let Reference {
                expect,
                value,
                subject,
                attribute,
            } = reference;
            let Some(target) = self.ids.get(value).copied() else {
                self.out.error(
                    Rule::DanglingReference,
                    subject,
                    Some(attribute),
                    format!("no element has id `{}`", quote(value)),
                );
                continue;
            };
            let fits = match (expect, target) {
                (Expect::ClassOrInterface, Target::Group(g)) => {
                    matches!(g.kind, GroupType::Class | GroupType::Interface)
                }
                (Expect::Unit, Target::Unit) | (Expect::Variable, Target::Variable) => true,
                _ => false,
            };
            if !fits {
                let wanted = match expect {
                    Expect::ClassOrInterface => "a class or interface <group>",
                    Expect::Unit => "a <unit>",
                    Expect::Variable => "a <variable>",
                };
                let found = target.element();
                self.out.error(
                    Rule::WrongReferenceTarget,
                    subject,
                    Some(attribute),
                    format!("`{}` names a <{found}>, expected {wanted}", quote(value)),
                );
            }
        }
    }

    /// XML 1.0 production 2: text the writer could not put in a document.
    fn text(&mut self, subject: Subject<'_>, attribute: &str, value: Option<&str>) {
        if let Some(value) = value {
            if !is_xml_text(value) {
                self.out.error(
                    Rule::InvalidCharacter,
                    subject,
                    Some(attribute),
                    "contains characters XML 1.0 cannot carry",
                );
            }
        }
    }

    fn annotations(&mut self, subject: Subject<'_>, annotations: &Annotations) {
        check_annotations(&mut self.out, subject, annotations);
    }

    /// Section 2.1.
    fn sir(&mut self, sir: &'a Sir) {
        let me = subject("sir", None, &sir.origin);
        self.annotations(me, &sir.annotations);
        if sir.members.is_empty() {
            self.out.error(
                Rule::MissingRequired,
                me,
                None,
                "a sir needs at least one group or unit (section 2.1)",
            );
        }
        for variable in &sir.variables {
            self.variable(variable);
        }
        for member in &sir.members {
            self.member(member, Parent::Root, self.language, 0);
        }
    }

    fn member(
        &mut self,
        member: &'a Member,
        parent: Parent<'a>,
        language: Language,
        unit_level: usize,
    ) {
        match member {
            Member::Group(g) => self.group(g, parent, language),
            Member::Unit(u) => self.unit(u, parent, language, unit_level),
        }
    }

    /// Section 2.2.
    fn group(&mut self, group: &'a Group, parent: Parent<'a>, language: Language) {
        crate::stack::guarded(|| {
            let me = subject("group", Some(&group.id), &group.origin);
            self.register(&group.id, Target::Group(group), me);
            self.text(me, "name", group.name.as_deref());
            self.text(me, "internal", group.internal.as_deref());
            self.annotations(me, &group.annotations);

            match (self.language, parent) {
                (Language::Fortran, Parent::Group(p)) if p.kind == GroupType::Module => {
                    self.language_rule(
                        me,
                        "a Fortran module may not contain any group (section 2.2)".into(),
                    );
                }
                (Language::Cpp, Parent::Group(p)) if p.kind != GroupType::Package => {
                    self.language_rule(me, "a C++ group may be nested only in a namespace (package) group (section 2.2)".into());
                }
                _ => {}
            }
            // Section 2.3: a group inside a unit only for a Java class in a Java
            // method; section 2.4 allows a class declared inside a Java region.
            let java_class = self.language == Language::Java && group.kind == GroupType::Class;
            match parent {
            Parent::Unit(u) if !(java_class && u.kind == UnitType::Method) => self.language_rule(
                me,
                "a group may be nested in a unit only if it is a Java class inside a Java method (section 2.3)".into(),
            ),
            Parent::CodeRegion if !java_class => self.language_rule(
                me,
                "a group may be nested in a code region only if it is a Java class (section 2.4)".into(),
            ),
            _ => {}
        }
            if self.language == Language::Java {
                let is_object = group.name.as_deref() == Some("Object")
                    && matches!(parent, Parent::Group(p) if p.name.as_deref() == Some("lang"));
                if group.kind == GroupType::Class && group.inheritance.is_empty() && !is_object {
                    self.language_rule(
                        me,
                        "a Java class must specify its superclass with <inheritance> (section 2.2)"
                            .into(),
                    );
                }
                if matches!(group.kind, GroupType::Class | GroupType::Interface)
                    && group.name.as_deref().is_some_and(|n| n.contains('.'))
                {
                    self.language_rule(
                        me,
                        "a Java class or interface name must not be fully qualified (section 2.2)"
                            .into(),
                    );
                }
            }

            for inheritance in &group.inheritance {
                let it = subject("inheritance", None, &inheritance.origin);
                self.annotations(it, &inheritance.annotations);
                self.text(it, "name", inheritance.name.as_deref());
                match (&inheritance.id, &inheritance.name) {
                    (None, None) => self.out.error(
                        Rule::MissingRequired,
                        it,
                        None,
                        "inheritance needs the id or the name of the superclass (section 2.2)",
                    ),
                    (Some(id), _) => self.reference(Expect::ClassOrInterface, id, it, "id"),
                    _ => {}
                }
            }
            if let Some(location) = &group.location {
                self.location(location);
            }
            for variable in &group.variables {
                self.variable(variable);
            }
            for member in &group.members {
                if let (Member::Unit(u), true) = (member, java_class) {
                    // Section 2.3: only Java methods and C functions in a Java class.
                    let c_function =
                        u.language == Some(Language::C) && u.kind == UnitType::Function;
                    if u.kind != UnitType::Method && !c_function {
                        let it = subject("unit", Some(&u.id), &u.origin);
                        self.language_rule(
                        it,
                        "only methods and C functions may be nested in a Java class (section 2.3)".into(),
                    );
                    }
                }
                self.member(member, Parent::Group(group), language, 0);
            }
        })
    }

    /// Section 2.3. `unit_level` counts enclosing units.
    fn unit(&mut self, unit: &'a Unit, parent: Parent<'a>, inherited: Language, unit_level: usize) {
        crate::stack::guarded(|| {
            let me = subject("unit", Some(&unit.id), &unit.origin);
            let language = unit.language.unwrap_or(inherited);
            self.register(&unit.id, Target::Unit, me);
            self.text(me, "name", unit.name.as_deref());
            self.text(me, "internal", unit.internal.as_deref());
            self.text(me, "alias", unit.alias.as_deref());
            self.annotations(me, &unit.annotations);
            for argument in &unit.arguments {
                self.reference(Expect::Variable, argument, me, "arguments");
            }
            if let Parent::Unit(outer) = parent {
                match self.language {
                Language::C | Language::Cpp => self.language_rule(
                    me,
                    "a unit may not be nested within another unit in a C or C++ program (section 2.3)".into(),
                ),
                Language::Fortran => {
                    let outer_ok = matches!(outer.kind, UnitType::Function | UnitType::Subroutine | UnitType::Program);
                    let inner_ok = matches!(unit.kind, UnitType::Function | UnitType::Subroutine);
                    if !(outer_ok && inner_ok) {
                        self.language_rule(
                            me,
                            "only a Fortran function or subroutine may be nested in a Fortran function, \
                             subroutine or program (section 2.3)"
                                .into(),
                        );
                    }
                    if unit_level + 1 > 2 {
                        self.language_rule(me, "Fortran units nest at most 2 levels deep (section 2.3)".into());
                    }
                }
                Language::Java => {}
            }
            }
            if let Some(location) = &unit.location {
                self.location(location);
            }
            for variable in &unit.variables {
                self.variable(variable);
            }
            for reference in &unit.variable_refs {
                self.variable_ref(reference);
            }
            for child in &unit.children {
                match child {
                    UnitChild::Group(g) => self.group(g, Parent::Unit(unit), language),
                    UnitChild::Unit(u) => {
                        self.unit(u, Parent::Unit(unit), language, unit_level + 1)
                    }
                    UnitChild::CodeRegion(r) => self.region(r, language),
                }
            }
        })
    }

    /// Section 2.4.
    fn region(&mut self, region: &'a CodeRegion, language: Language) {
        crate::stack::guarded(|| {
            let me = subject("codeRegion", Some(&region.id), &region.origin);
            self.register(&region.id, Target::CodeRegion, me);
            self.text(me, "type", Some(region.kind.as_str()));
            self.text(
                me,
                "criticalSectionName",
                region.critical_section_name.as_deref(),
            );
            self.annotations(me, &region.annotations);
            self.region_type_rules(region, language, me);

            if let Some(callee) = &region.callee {
                let it = subject("callee", None, &callee.origin);
                self.annotations(it, &callee.annotations);
                self.text(it, "name", callee.name.as_deref());
                match (&callee.id, &callee.name) {
                    (None, None) => self.out.error(
                        Rule::MissingRequired,
                        it,
                        None,
                        "callee needs the id or the name of the invoked unit (section 2.4)",
                    ),
                    (Some(id), _) => self.reference(Expect::Unit, id, it, "id"),
                    _ => {}
                }
            }
            if let Some(location) = &region.location {
                self.location(location);
            }
            for variable in &region.variables {
                self.variable(variable);
            }
            for reference in &region.variable_refs {
                self.variable_ref(reference);
            }
            if let Some(scheduling) = &region.scheduling {
                let it = subject("scheduling", None, &scheduling.origin);
                self.annotations(it, &scheduling.annotations);
                if scheduling.chunk == Some(0) {
                    self.out.error(
                        Rule::OutOfRange,
                        it,
                        Some("chunk"),
                        "chunk must be a positiveInteger (Table 2)",
                    );
                }
            }
            for evaluation in &region.evaluations {
                match evaluation {
                    Evaluation::Expression(expression) => {
                        let it = subject("expression", None, &expression.origin);
                        self.annotations(it, &expression.annotations);
                        if expression.items.is_empty() {
                            self.out.error(
                                Rule::MissingRequired,
                                it,
                                None,
                                "expression needs at least one codeRegion or group",
                            );
                        }
                        self.region_children(&expression.items, language);
                    }
                    Evaluation::LoopControl(control) => {
                        self.annotations(
                            subject("loopControl", None, &control.origin),
                            &control.annotations,
                        );
                        for (element, bound) in [
                            ("lower", &control.lower),
                            ("upper", &control.upper),
                            ("stride", &control.stride),
                        ] {
                            let Some(bound) = bound else { continue };
                            let it = subject(element, None, &bound.origin);
                            self.annotations(it, &bound.annotations);
                            if bound.regions.is_empty() {
                                self.out.error(
                                    Rule::MissingRequired,
                                    it,
                                    None,
                                    format!("{element} needs at least one codeRegion"),
                                );
                            }
                            for inner in &bound.regions {
                                self.region(inner, language);
                            }
                        }
                    }
                }
            }
            self.region_children(&region.children, language);
        })
    }

    fn region_children(&mut self, children: &'a [RegionChild], language: Language) {
        for child in children {
            match child {
                RegionChild::CodeRegion(r) => self.region(r, language),
                RegionChild::Group(g) => self.group(g, Parent::CodeRegion, language),
            }
        }
    }

    /// The rules that section 2.4 attaches to the recommended types.
    fn region_type_rules(&mut self, region: &CodeRegion, language: Language, me: Subject<'_>) {
        self.type_spelling(&region.kind, me);
        self.content_rules(region, language, me);
        self.evaluation_rules(region, me);
        self.clause_rules(region, me);
        let kind = &region.kind;
        if self.language == Language::Java
            && kind.is_parallel()
            && *kind != RegionType::ParallelCriticalSection
        {
            self.out.error(
                Rule::Nesting,
                me,
                None,
                "parallelCriticalSection is the only parallel region allowed in a Java program (section 2.4)",
            );
        }
    }

    /// A custom type spelled like a recommended one.
    fn type_spelling(&mut self, kind: &RegionType, me: Subject<'_>) {
        if let RegionType::Other(other) = kind {
            let canonical = RegionType::RECOMMENDED.iter().map(|(_, s)| *s).find(|s| {
                s.eq_ignore_ascii_case(other) || (other == "assign" && *s == "assignment")
            });
            if let Some(canonical) = canonical {
                self.out.warning(
                    Rule::NonCanonicalType,
                    me,
                    Some("type"),
                    format!(
                        "`{}` is read as a custom type; the recommended spelling is `{canonical}`",
                        quote(other)
                    ),
                );
            }
        }
    }

    /// What a region of each recommended type holds: its callee and its
    /// nested regions.
    fn content_rules(&mut self, region: &CodeRegion, language: Language, me: Subject<'_>) {
        let kind = &region.kind;
        let nested: Vec<&CodeRegion> = region.regions().collect();
        let blocks_only = nested.iter().all(|r| r.kind == RegionType::Block);
        let name = kind.as_str();
        // Fig. 7 gives an io region a callee, so io may have one too.
        if region.callee.is_some() && !matches!(kind, RegionType::Call | RegionType::Io) {
            self.out.error(
                Rule::Nesting,
                me,
                None,
                format!("a callee may appear only in a call (or io) region, not in `{name}` (section 2.4)"),
            );
        }
        match kind {
            RegionType::Call if region.callee.is_none() => {
                self.out.error(
                    Rule::MissingRequired,
                    me,
                    None,
                    "a call region must contain one callee (section 2.4)",
                );
            }
            RegionType::If => {
                if nested.is_empty() || !blocks_only {
                    self.out.error(
                        Rule::Nesting,
                        me,
                        None,
                        "an if region has one or more nested code regions, all of type block (section 2.4)",
                    );
                }
                if language != Language::Fortran && nested.len() > 2 {
                    self.out.error(
                        Rule::Nesting,
                        me,
                        None,
                        format!(
                            "at most two blocks are allowed in an if region of a {} program; \
                             else-if chains exist only in Fortran (section 2.4)",
                            language.as_str()
                        ),
                    );
                }
            }
            RegionType::Switch | RegionType::ParallelSections if !blocks_only => {
                self.out.error(
                    Rule::Nesting,
                    me,
                    None,
                    format!("the code regions nested in a {name} region must be of type block (section 2.4)"),
                );
            }
            RegionType::Where if !blocks_only || nested.is_empty() || nested.len() > 2 => {
                self.out.error(
                    Rule::Nesting,
                    me,
                    None,
                    "a where region has one or two block regions (section 2.4)",
                );
            }
            RegionType::ParallelAtomic
                if nested.len() != 1 || nested[0].kind != RegionType::Assignment =>
            {
                self.out.error(
                    Rule::Nesting,
                    me,
                    None,
                    "a parallelAtomic region contains exactly one assignment region (section 2.4)",
                );
            }
            _ => {}
        }
    }

    /// `expression` and `loopControl`: one or the other in a loop, and
    /// `loopControl` only in loops.
    fn evaluation_rules(&mut self, region: &CodeRegion, me: Subject<'_>) {
        let kind = &region.kind;
        let name = kind.as_str();
        let has_expression = region
            .evaluations
            .iter()
            .any(|e| matches!(e, Evaluation::Expression(_)));
        let has_loop_control = region
            .evaluations
            .iter()
            .any(|e| matches!(e, Evaluation::LoopControl(_)));
        if *kind == RegionType::Loop && has_expression && has_loop_control {
            self.out.error(
                Rule::Nesting,
                me,
                None,
                "a loop region has either an expression or loopControl, not both (section 2.4)",
            );
        }
        let recommended = !matches!(kind, RegionType::Other(_));
        if has_loop_control && recommended && !matches!(kind, RegionType::Loop | RegionType::Forall)
        {
            self.out.error(
                Rule::Nesting,
                me,
                None,
                format!(
                    "loopControl belongs to loop and forall regions, not `{name}` (section 2.4)"
                ),
            );
        }
    }

    /// `scheduling`, `nowait` and `criticalSectionName`, each of which
    /// belongs to some parallel types.
    fn clause_rules(&mut self, region: &CodeRegion, me: Subject<'_>) {
        let kind = &region.kind;
        let name = kind.as_str();
        let recommended = !matches!(kind, RegionType::Other(_));
        if region.scheduling.is_some() && recommended && *kind != RegionType::ParallelLoop {
            self.out.error(
                Rule::Nesting,
                me,
                None,
                format!("scheduling belongs to parallelLoop regions, not `{name}` (section 2.4)"),
            );
        }
        let nowait_kinds = [
            RegionType::ParallelLoop,
            RegionType::ParallelSections,
            RegionType::ParallelSingle,
            RegionType::ParallelWorkshare,
        ];
        if region.nowait.is_some() && recommended && !nowait_kinds.contains(kind) {
            self.out.warning(
                Rule::Nesting,
                me,
                Some("nowait"),
                format!("nowait has no meaning on `{name}` (section 2.4)"),
            );
        }
        if region.critical_section_name.is_some()
            && recommended
            && *kind != RegionType::ParallelCriticalSection
        {
            self.out.warning(
                Rule::Nesting,
                me,
                Some("criticalSectionName"),
                format!("criticalSectionName has no meaning on `{name}` (section 2.4)"),
            );
        }
    }

    /// Section 2.5 and Table 2.
    fn variable(&mut self, variable: &'a Variable) {
        let me = subject("variable", Some(&variable.id), &variable.origin);
        self.register(&variable.id, Target::Variable, me);
        self.text(me, "name", variable.name.as_deref());
        self.text(me, "type", variable.type_name.as_deref());
        self.annotations(me, &variable.annotations);
        if let Some(location) = &variable.location {
            self.location(location);
        }
        let mut seen = HashSet::new();
        for dimension in &variable.dimension_bounds {
            let it = subject("dimension", None, &dimension.origin);
            self.annotations(it, &dimension.annotations);
            if dimension.index == 0 {
                self.out.error(
                    Rule::OutOfRange,
                    it,
                    Some("index"),
                    "index must be a positiveInteger (Table 2)",
                );
            }
            if let Some(dimensions) = variable.dimensions {
                if dimension.index > dimensions {
                    self.out.error(
                        Rule::OutOfRange,
                        it,
                        Some("index"),
                        format!(
                            "index {} exceeds the variable's {dimensions} dimensions",
                            dimension.index
                        ),
                    );
                }
            }
            if !seen.insert(dimension.index) {
                self.out.error(
                    Rule::OutOfRange,
                    it,
                    Some("index"),
                    format!("dimension {} is described twice", dimension.index),
                );
            }
        }
    }

    fn variable_ref(&mut self, reference: &'a VariableRef) {
        let me = subject("variableRef", None, &reference.origin);
        self.annotations(me, &reference.annotations);
        self.reference(Expect::Variable, &reference.target_id, me, "targetId");
    }

    /// Section 2.6; the numbers are unsigned by type.
    fn location(&mut self, location: &Location) {
        let me = subject("location", None, &location.origin);
        self.annotations(me, &location.annotations);
        self.text(me, "uri", location.uri.as_deref());
    }
}
