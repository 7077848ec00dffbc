//! Conversion between the dialects where they overlap.
//!
//! Both describe units and nested code regions with source positions; the
//! rest differs. Every conversion returns the list of what it could not
//! carry over ([`Loss`]), so a tool can tell the user. What is lost in each
//! direction is listed in the crate's README.

use std::collections::{HashMap, HashSet, VecDeque};

use thiserror::Error;

use crate::annotation::Annotations;
use crate::apart::{self, Language as ALanguage, RegionType as ART};
use crate::error::quote;
use crate::names::is_xml_name;
use crate::periscope::{self, RegionType as PRT};
use crate::position::Origin;

/// A converted document and what did not survive the conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted<T> {
    pub document: T,
    pub losses: Vec<Loss>,
}

/// Something of the source document that the target dialect cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loss {
    /// Element of the source document, e.g. `group`.
    pub element: String,
    /// Its id, when it has one.
    pub id: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConversionError {
    /// APART requires `language` on `sir`; the Periscope schema does not.
    #[error("the Periscope document has no language, which an APART sir requires")]
    MissingLanguage,
}

struct Losses(Vec<Loss>);

impl Losses {
    fn push(&mut self, element: &str, id: Option<&str>, message: impl Into<String>) {
        self.0.push(Loss {
            element: element.into(),
            id: id.map(str::to_string),
            message: message.into(),
        });
    }
}

// ---------------------------------------------------------------- APART → Periscope

/// Converts an APART SIR to a Periscope SIR. Never fails: what Periscope
/// cannot express is dropped and listed.
pub fn to_periscope(sir: &apart::Sir) -> Converted<periscope::Sir> {
    let mut converter = ToPeriscope::new(sir);
    let language = match sir.language {
        ALanguage::C => Some(periscope::Language::C),
        ALanguage::Fortran => Some(periscope::Language::Fortran),
        other => {
            converter.losses.push(
                "sir",
                None,
                format!(
                    "language `{}` has no Periscope value; omitted",
                    other.as_str()
                ),
            );
            None
        }
    };
    let mut out = periscope::Sir::new(language);
    out.annotations = sir.annotations.clone();
    out.prefixes = sir.prefixes.clone();
    if !sir.variables.is_empty() {
        converter.losses.push(
            "sir",
            None,
            format!("{} global variables dropped", sir.variables.len()),
        );
    }
    if sir.message_passing.is_some() || sir.shared_memory.is_some() {
        converter
            .losses
            .push("sir", None, "messagePassing/sharedMemory dropped");
    }
    for member in &sir.members {
        converter.member(member, None, &mut out.units);
    }
    Converted {
        document: out,
        losses: converter.losses.0,
    }
}

struct ToPeriscope<'a> {
    variables: HashMap<&'a str, &'a apart::Variable>,
    unit_names: HashMap<&'a str, &'a str>,
    losses: Losses,
}

impl<'a> ToPeriscope<'a> {
    fn new(sir: &'a apart::Sir) -> Self {
        let mut variables = HashMap::new();
        let mut unit_names = HashMap::new();
        let mut add_variables = |vars: &'a [apart::Variable]| {
            for v in vars {
                variables.insert(v.id.as_str(), v);
            }
        };
        add_variables(&sir.variables);
        apart::visit_members(&sir.members, &mut |node| match node {
            apart::Node::Group(g) => add_variables(&g.variables),
            apart::Node::Unit(u) => {
                add_variables(&u.variables);
                if let Some(name) = &u.name {
                    unit_names.insert(u.id.as_str(), name.as_str());
                }
            }
            apart::Node::CodeRegion(r) => add_variables(&r.variables),
        });
        ToPeriscope {
            variables,
            unit_names,
            losses: Losses(Vec::new()),
        }
    }

    /// Groups have no Periscope counterpart: their units move to `units`.
    fn member(
        &mut self,
        member: &'a apart::Member,
        uri: Option<&str>,
        units: &mut Vec<periscope::Unit>,
    ) {
        match member {
            apart::Member::Unit(u) => units.push(self.unit(u, uri)),
            apart::Member::Group(g) => self.group(g, uri, units),
        }
    }

    fn group(
        &mut self,
        group: &'a apart::Group,
        uri: Option<&str>,
        units: &mut Vec<periscope::Unit>,
    ) {
        crate::stack::guarded(|| {
            self.losses.push(
                "group",
                Some(&group.id),
                "group flattened: its units are kept at the enclosing level",
            );
            let uri = group
                .location
                .as_ref()
                .and_then(|l| l.uri.as_deref())
                .or(uri);
            for member in &group.members {
                self.member(member, uri, units);
            }
        })
    }

    fn position(
        location: Option<&apart::Location>,
        uri: Option<&str>,
    ) -> Option<periscope::SourcePosition> {
        let location = location?;
        // Section 2.6: a location without uri is in the container's resource.
        let file = location.uri.as_deref().or(uri).map(str::to_string);
        Some(periscope::SourcePosition {
            // positiveInteger: line 0 (allowed by APART) cannot be carried.
            start_line: location.start_line.filter(|&l| l > 0),
            end_line: location.end_line.filter(|&l| l > 0),
            file: periscope::File {
                name: file,
                ..periscope::File::default()
            },
            annotations: location.annotations.clone(),
            origin: Origin::BUILT,
        })
    }

    fn arrays(
        &mut self,
        variables: &'a [apart::Variable],
        refs: &'a [apart::VariableRef],
    ) -> Vec<periscope::Array> {
        let mut arrays: Vec<periscope::Array> = Vec::new();
        let referenced = refs
            .iter()
            .filter_map(|r| self.variables.get(r.target_id.as_str()).copied());
        for variable in variables.iter().chain(referenced) {
            let is_array =
                variable.dimensions.is_some_and(|d| d > 0) || !variable.dimension_bounds.is_empty();
            if !is_array || arrays.iter().any(|a| a.name == variable.name) {
                continue;
            }
            let kind = variable
                .type_name
                .as_deref()
                .and_then(|t| periscope::ArrayType::parse(&t.to_ascii_uppercase()));
            let sizes: Option<Vec<u64>> = variable
                .dimension_bounds
                .iter()
                .map(|d| {
                    u64::try_from(d.upper_bound.checked_sub(d.lower_bound)?.checked_add(1)?).ok()
                })
                .collect();
            let complete = variable
                .dimensions
                .is_none_or(|n| n as usize == variable.dimension_bounds.len());
            let nelts = sizes
                .filter(|s| complete && !s.is_empty())
                .and_then(|s| s.into_iter().try_fold(1u64, |acc, n| acc.checked_mul(n)))
                .filter(|&n| n > 0);
            arrays.push(periscope::Array {
                kind,
                name: variable.name.clone(),
                nelts,
                annotations: Annotations::new(),
                origin: Origin::BUILT,
            });
        }
        arrays
    }

    fn unit(&mut self, unit: &'a apart::Unit, uri: Option<&str>) -> periscope::Unit {
        crate::stack::guarded(|| {
            let id = Some(unit.id.as_str());
            let kind = match unit.kind {
                apart::UnitType::Function => periscope::UnitType::Function,
                apart::UnitType::Subroutine => periscope::UnitType::Subroutine,
                apart::UnitType::Program => periscope::UnitType::Program,
                apart::UnitType::Method => {
                    self.losses.push("unit", id, "method written as function");
                    periscope::UnitType::Function
                }
            };
            let dropped: Vec<&str> = [
                ("arguments", !unit.arguments.is_empty()),
                ("virtual", unit.is_virtual.is_some()),
                ("internal", unit.internal.is_some()),
                ("language", unit.language.is_some()),
                ("instrumentable", unit.instrumentable.is_some()),
                ("alias", unit.alias.is_some()),
            ]
            .into_iter()
            .filter_map(|(name, present)| present.then_some(name))
            .collect();
            if !dropped.is_empty() {
                self.losses
                    .push("unit", id, format!("dropped: {}", dropped.join(", ")));
            }
            let uri = unit
                .location
                .as_ref()
                .and_then(|l| l.uri.as_deref())
                .or(uri);
            let arrays = self.arrays(&unit.variables, &unit.variable_refs);
            let mut position = Self::position(unit.location.as_ref(), uri);
            if position.is_none() && !arrays.is_empty() {
                // pos_array: arrays need a position before them.
                position = Self::position(Some(&apart::Location::default()), uri);
            }
            let mut out = periscope::Unit {
                kind: Some(kind),
                name: unit.name.clone(),
                id: Some(unit.id.clone()),
                position,
                arrays,
                annotations: unit.annotations.clone(),
                ..periscope::Unit::default()
            };
            for child in &unit.children {
                match child {
                    apart::UnitChild::Unit(u) => out.units.push(self.unit(u, uri)),
                    apart::UnitChild::Group(g) => self.group(g, uri, &mut out.units),
                    apart::UnitChild::CodeRegion(r) => {
                        self.region(r, None, uri, &mut out.code_regions)
                    }
                }
            }
            out
        })
    }

    /// The Periscope type of an APART region type, if any.
    fn region_type(kind: &ART, parent: Option<&ART>) -> Option<PRT> {
        Some(match kind {
            ART::Call => PRT::Call,
            ART::Loop => PRT::Loop,
            ART::Forall => PRT::Forall,
            ART::Io => PRT::Io,
            ART::Vector => PRT::Vect,
            ART::ParallelRegion => PRT::ParallelRegion,
            ART::ParallelLoop => PRT::ParallelLoop,
            ART::ParallelSections => PRT::ParallelSections,
            ART::ParallelSingle => PRT::ParallelSingle,
            ART::ParallelWorkshare => PRT::ParallelWorkshare,
            ART::ParallelMaster => PRT::ParallelMaster,
            ART::ParallelCriticalSection => PRT::ParallelCriticalSection,
            ART::ParallelAtomic => PRT::ParallelAtomic,
            ART::ParallelBarrier => PRT::ParallelBarrier,
            ART::ParallelOrdered => PRT::ParallelOrdered,
            // APART 2.4: the blocks of parallelSections are its sections.
            ART::Block if parent == Some(&ART::ParallelSections) => PRT::ParallelSection,
            ART::Other(name) => return PRT::parse(name),
            _ => return None,
        })
    }

    /// Converts `region` into `out`; a region with no Periscope type is
    /// dropped and its nested regions take its place.
    fn region(
        &mut self,
        region: &'a apart::CodeRegion,
        parent: Option<&ART>,
        uri: Option<&str>,
        out: &mut Vec<periscope::CodeRegion>,
    ) {
        crate::stack::guarded(|| {
            let id = Some(region.id.as_str());
            let uri = region
                .location
                .as_ref()
                .and_then(|l| l.uri.as_deref())
                .or(uri);
            let Some(kind) = Self::region_type(&region.kind, parent) else {
                self.losses.push(
                    "codeRegion",
                    id,
                    format!(
                        "type `{}` has no Periscope type: region dropped, nested regions kept",
                        region.kind.as_str()
                    ),
                );
                self.nested(region, uri, out);
                return;
            };
            let name = match kind {
                PRT::Call => region.callee.as_ref().and_then(|c| {
                    c.name.clone().or_else(|| {
                        c.id.as_deref()
                            .and_then(|i| self.unit_names.get(i))
                            .map(|n| n.to_string())
                    })
                }),
                PRT::ParallelCriticalSection => region.critical_section_name.clone(),
                _ => None,
            };
            if region.nowait.is_some() || region.scheduling.is_some() {
                self.losses
                    .push("codeRegion", id, "nowait/scheduling dropped");
            }
            if !region.evaluations.is_empty() {
                self.losses.push(
                    "codeRegion",
                    id,
                    "expression/loopControl flattened into nested regions",
                );
            }
            let arrays = self.arrays(&region.variables, &region.variable_refs);
            let position = Self::position(region.location.as_ref(), uri)
                .or_else(|| Self::position(Some(&apart::Location::default()), uri))
                .unwrap_or_default();
            let mut converted = periscope::CodeRegion {
                kind: Some(kind),
                name,
                datascopeclause: None,
                id: Some(region.id.clone()),
                position,
                arrays,
                code_regions: Vec::new(),
                annotations: region.annotations.clone(),
                origin: Origin::BUILT,
            };
            self.nested(region, uri, &mut converted.code_regions);
            out.push(converted);
        })
    }

    /// Regions inside expressions, loop bounds and the body, in document order.
    fn nested(
        &mut self,
        region: &'a apart::CodeRegion,
        uri: Option<&str>,
        out: &mut Vec<periscope::CodeRegion>,
    ) {
        for evaluation in &region.evaluations {
            for inner in evaluation.regions() {
                self.region(inner, Some(&region.kind), uri, out);
            }
        }
        for child in &region.children {
            match child {
                apart::RegionChild::CodeRegion(r) => self.region(r, Some(&region.kind), uri, out),
                apart::RegionChild::Group(g) => {
                    self.losses
                        .push("group", Some(&g.id), "group inside a code region dropped");
                }
            }
        }
    }
}

// ---------------------------------------------------------------- Periscope → APART

/// Converts a Periscope SIR to an APART SIR.
///
/// Ids that are not XML Names (the Periscope example uses `42-1`; APART ids
/// are DTD `ID`s) get a `_` prefix, missing or repeated ids are generated,
/// and every rewrite is listed as a loss.
pub fn to_apart(sir: &periscope::Sir) -> Result<Converted<apart::Sir>, ConversionError> {
    let language = match sir.language {
        Some(periscope::Language::C) => ALanguage::C,
        Some(periscope::Language::Fortran) => ALanguage::Fortran,
        None => return Err(ConversionError::MissingLanguage),
    };
    let mut converter = ToApart {
        language,
        used: HashSet::new(),
        counter: 0,
        unit_ids: HashMap::new(),
        reserved: VecDeque::new(),
        losses: Losses(Vec::new()),
    };
    // Callees are named in Periscope; link them to units by name.
    converter.reserve_unit_ids(&sir.units);
    let mut out = apart::Sir::new(language);
    out.annotations = sir.annotations.clone();
    out.prefixes = sir.prefixes.clone();
    for unit in &sir.units {
        out.push_unit(converter.unit(unit));
    }
    Ok(Converted {
        document: out,
        losses: converter.losses.0,
    })
}

/// The variables standing for one unit's arrays, one per array name.
#[derive(Default)]
struct ArrayVariables {
    /// Array name → variable id.
    ids: HashMap<String, String>,
    variables: Vec<apart::Variable>,
}

struct ToApart {
    language: ALanguage,
    used: HashSet<String>,
    counter: u64,
    /// Unit name → the APART id given to the first unit of that name.
    unit_ids: HashMap<String, String>,
    /// Ids given to units by `reserve_unit_ids`, not yet used.
    reserved: VecDeque<String>,
    losses: Losses,
}

impl ToApart {
    /// An APART id for an element whose Periscope id is `wanted`.
    fn id(&mut self, element: &str, wanted: Option<&str>, prefix: &str) -> String {
        if let Some(w) = wanted {
            if is_xml_name(w) && self.used.insert(w.to_string()) {
                return w.to_string();
            }
            let sanitised: String = w
                .chars()
                .map(|c| {
                    if is_xml_name(&format!("a{c}")) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let candidate = format!("_{sanitised}");
            if self.used.insert(candidate.clone()) {
                self.losses.push(
                    element,
                    Some(w),
                    format!(
                        "id `{}` is not a unique XML Name; written as `{}`",
                        quote(w),
                        quote(&candidate)
                    ),
                );
                return candidate;
            }
        }
        loop {
            self.counter += 1;
            let candidate = format!("{prefix}{}", self.counter);
            if self.used.insert(candidate.clone()) {
                if let Some(w) = wanted {
                    self.losses.push(
                        element,
                        Some(w),
                        format!(
                            "id `{}` repeated; written as `{}`",
                            quote(w),
                            quote(&candidate)
                        ),
                    );
                }
                return candidate;
            }
        }
    }

    /// Gives every unit its id up front, in the order [`ToApart::unit`]
    /// visits them (pre-order), so that calls can name units defined later.
    fn reserve_unit_ids(&mut self, units: &[periscope::Unit]) {
        for unit in units {
            let id = self.id("unit", unit.id.as_deref(), "unit");
            if let Some(name) = unit.name.as_deref().filter(|n| !n.is_empty()) {
                self.unit_ids
                    .entry(name.to_string())
                    .or_insert_with(|| id.clone());
            }
            self.reserved.push_back(id);
            self.reserve_unit_ids(&unit.units);
        }
    }

    fn location(position: &periscope::SourcePosition) -> apart::Location {
        apart::Location {
            start_line: position.start_line,
            end_line: position.end_line,
            uri: position.file.name.clone(),
            annotations: position.annotations.clone(),
            ..apart::Location::default()
        }
    }

    fn unit(&mut self, unit: &periscope::Unit) -> apart::Unit {
        crate::stack::guarded(|| {
            let wanted = unit.id.as_deref();
            // Named units got their id when callees were linked.
            let id = match self.reserved.pop_front() {
                Some(id) => id,
                None => self.id("unit", wanted, "unit"),
            };
            let kind = match unit.kind {
                Some(periscope::UnitType::Program) => apart::UnitType::Program,
                Some(periscope::UnitType::Subroutine) => apart::UnitType::Subroutine,
                Some(periscope::UnitType::Function) => apart::UnitType::Function,
                None => {
                    self.losses
                        .push("unit", wanted, "no type: written as function");
                    apart::UnitType::Function
                }
            };
            if unit.datascopeclause.is_some() {
                self.losses.push("unit", wanted, "datascopeclause dropped");
            }
            let mut out = apart::Unit::new(id, kind);
            out.name = unit.name.clone();
            out.annotations = unit.annotations.clone();
            out.location = unit.position.as_ref().map(Self::location);

            // Arrays of the unit and its regions become variables of the unit;
            // regions refer to them.
            let mut arrays = ArrayVariables::default();
            for array in &unit.arrays {
                self.array_variable(&mut arrays, array);
            }
            let mut regions = Vec::new();
            for region in &unit.code_regions {
                regions.push(self.region(region, &mut arrays));
            }
            out.variables = arrays.variables;
            for inner in &unit.units {
                let converted = self.unit(inner);
                out.children.push(apart::UnitChild::Unit(converted));
            }
            out.children
                .extend(regions.into_iter().map(apart::UnitChild::CodeRegion));
            out
        })
    }

    /// The id of the variable standing for `array` in the current unit,
    /// declaring it on first use.
    fn array_variable(&mut self, arrays: &mut ArrayVariables, array: &periscope::Array) -> String {
        let key = array.name.clone().unwrap_or_default();
        if let Some(id) = arrays.ids.get(&key) {
            return id.clone();
        }
        let id = self.id("array", None, "v");
        let mut variable = apart::Variable::new(id.clone());
        variable.name = array.name.clone();
        variable.type_name = array.kind.map(|k| k.as_str().to_string());
        variable.dimensions = Some(1);
        variable.annotations = array.annotations.clone();
        // Default lower bounds: 1 in Fortran, 0 in C.
        let lower: i64 = if self.language == ALanguage::Fortran {
            1
        } else {
            0
        };
        let upper = array
            .nelts
            .and_then(|n| i64::try_from(n).ok())
            .and_then(|n| lower.checked_add(n - 1));
        if let Some(upper) = upper {
            variable.dimension_bounds.push(apart::Dimension {
                index: 1,
                lower_bound: lower,
                upper_bound: upper,
                annotations: Annotations::new(),
                origin: Origin::BUILT,
            });
        }
        arrays.variables.push(variable);
        arrays.ids.insert(key, id.clone());
        id
    }

    fn region(
        &mut self,
        region: &periscope::CodeRegion,
        arrays: &mut ArrayVariables,
    ) -> apart::CodeRegion {
        crate::stack::guarded(|| {
            let wanted = region.id.as_deref();
            let id = self.id("codeRegion", wanted, "r");
            let kind = match region.kind {
                None => {
                    self.losses
                        .push("codeRegion", wanted, "no type: written as block");
                    ART::Block
                }
                Some(PRT::Vect) => ART::Vector,
                Some(PRT::ParallelSection) => ART::Block,
                Some(other) => ART::parse(other.as_str()),
            };
            let mut out = apart::CodeRegion::new(id, kind.clone());
            out.location = Some(Self::location(&region.position));
            out.annotations = region.annotations.clone();
            let name = region.name.as_deref().filter(|n| !n.is_empty());
            match (&kind, name) {
                (ART::Call, Some(name)) => {
                    out.callee = Some(match self.unit_ids.get(name) {
                        Some(unit_id) => apart::Callee::to_id(unit_id.clone()),
                        None => apart::Callee::to_name(name),
                    });
                }
                (ART::Call, None) => {
                    self.losses.push(
                        "codeRegion",
                        wanted,
                        "call without a name: callee named `?`",
                    );
                    out.callee = Some(apart::Callee::to_name("?"));
                }
                (ART::ParallelCriticalSection, name) => {
                    out.critical_section_name = name.map(str::to_string)
                }
                (_, Some(name)) => self.losses.push(
                    "codeRegion",
                    wanted,
                    format!("name `{}` dropped", quote(name)),
                ),
                (_, None) => {}
            }
            if region.datascopeclause.is_some() {
                self.losses
                    .push("codeRegion", wanted, "datascopeclause dropped");
            }
            for array in &region.arrays {
                let variable = self.array_variable(arrays, array);
                if !out.variable_refs.iter().any(|r| r.target_id == variable) {
                    out.variable_refs
                        .push(apart::VariableRef::new(variable, None));
                }
            }
            for inner in &region.code_regions {
                let converted = self.region(inner, arrays);
                out.push_region(converted);
            }
            out
        })
    }
}
