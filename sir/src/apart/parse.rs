//! APART SIR from XML, checking the DTD of sections 2.1–2.6 as it reads:
//! content models (which children, in which order, how many), declared
//! attributes, `#REQUIRED` attributes, enumerations and the lexical types of
//! Table 2. Cross-element rules (ids, references, nesting by language) are
//! left to validation, which works on built models too.

use std::io::BufRead;

use crate::annotation::{Annotations, PrefixHints};
use crate::apart::model::*;
use crate::content::{warning, Content, Occurs, Sequence};
use crate::diagnostic::{Parsed, Rule};
use crate::dialect::{self, missing_child, DialectReader, Grammar, Vocabulary};
use crate::error::ParseError;
use crate::position::Origin;
use crate::reader::{parse_bool, parse_integer, AttributeReader, ParseOptions, StartTag};

/// Parses an APART SIR document from a buffered reader.
pub fn parse<R: BufRead>(input: R, options: &ParseOptions) -> Result<Parsed<Sir>, ParseError> {
    dialect::parse::<Apart, R>(input, options)
}

/// Parses an APART SIR document held in memory, with default limits.
pub fn parse_str(xml: &str) -> Result<Parsed<Sir>, ParseError> {
    parse(xml.as_bytes(), &ParseOptions::default())
}

/// The APART dialect, for the parsing both dialects share.
pub(crate) struct Apart;

impl Grammar for Apart {
    type Document = Sir;
    /// APART elements are in no namespace; every element name the DTD
    /// declares is listed, others are unknown.
    const VOCABULARY: &'static Vocabulary = &Vocabulary {
        name: "APART",
        namespace: None,
        elements: &[
            "sir",
            "group",
            "inheritance",
            "unit",
            "alias",
            "codeRegion",
            "callee",
            "expression",
            "loopControl",
            "lower",
            "upper",
            "stride",
            "scheduling",
            "variable",
            "dimension",
            "variableRef",
            "location",
        ],
        grammar: "the DTD",
    };

    fn read_root<R: BufRead>(
        xml: &mut DialectReader<'_, R>,
        root: StartTag,
    ) -> Result<Sir, ParseError> {
        Parser { xml }.sir(root)
    }

    fn prefixes(sir: &mut Sir) -> &mut PrefixHints {
        &mut sir.prefixes
    }
}

struct Parser<'x, 'r, R: BufRead> {
    xml: &'x mut DialectReader<'r, R>,
}

impl<R: BufRead> Parser<'_, '_, R> {
    /// Section 2.1: `sir (variable*, (group|unit)+)`.
    fn sir(&mut self, tag: StartTag) -> Result<Sir, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            let language = attributes.required_with("language", LANGUAGES, Language::parse)?;
            Ok(Sir {
                message_passing: attributes.optional_with("messagePassing", BOOL, parse_bool)?,
                shared_memory: attributes.optional_with("sharedMemory", BOOL, parse_bool)?,
                origin,
                ..Sir::new(language)
            })
        };
        let mut sir = self.xml.element(&tag, read, |sir| &mut sir.annotations)?;
        const ORDER: &str = "(variable*, (group|unit)+)";
        let mut sequence = Sequence::new(&tag);
        while let Content::Child(child) = self.xml.next(&tag)? {
            match child.local.as_str() {
                "variable" => {
                    sequence.place(&child, 0, Occurs::Many, ORDER)?;
                    sir.variables.push(self.variable(child)?);
                }
                "group" | "unit" => {
                    sequence.place(&child, 1, Occurs::Many, ORDER)?;
                    sir.members.push(self.member(child)?);
                }
                _ => return Err(self.xml.not_allowed(&tag, &child)),
            }
        }
        if sir.members.is_empty() {
            return Err(missing_child(&tag, "group|unit"));
        }
        Ok(sir)
    }

    fn member(&mut self, tag: StartTag) -> Result<Member, ParseError> {
        if tag.local == "group" {
            Ok(Member::Group(self.group(tag)?))
        } else {
            Ok(Member::Unit(self.unit(tag)?))
        }
    }

    /// Section 2.2: `group (inheritance*, location?, variable*, (group|unit)*)`.
    fn group(&mut self, tag: StartTag) -> Result<Group, ParseError> {
        crate::stack::guarded(|| {
            let read = |attributes: &mut AttributeReader<'_>, origin| {
                let id = attributes.required("id")?;
                let expected = "one of module|package|class|interface";
                let kind = attributes.required_with("type", expected, GroupType::parse)?;
                Ok(Group {
                    name: attributes.optional("name"),
                    internal: attributes.optional("internal"),
                    origin,
                    ..Group::new(id, kind)
                })
            };
            let mut group = self
                .xml
                .element(&tag, read, |group| &mut group.annotations)?;
            const ORDER: &str = "(inheritance*, location?, variable*, (group|unit)*)";
            let mut sequence = Sequence::new(&tag);
            while let Content::Child(child) = self.xml.next(&tag)? {
                match child.local.as_str() {
                    "inheritance" => {
                        sequence.place(&child, 0, Occurs::Many, ORDER)?;
                        group.inheritance.push(self.inheritance(child)?);
                    }
                    "location" => {
                        sequence.place(&child, 1, Occurs::Optional, ORDER)?;
                        group.location = Some(self.location(child)?);
                    }
                    "variable" => {
                        sequence.place(&child, 2, Occurs::Many, ORDER)?;
                        group.variables.push(self.variable(child)?);
                    }
                    "group" | "unit" => {
                        sequence.place(&child, 3, Occurs::Many, ORDER)?;
                        group.members.push(self.member(child)?);
                    }
                    _ => return Err(self.xml.not_allowed(&tag, &child)),
                }
            }
            Ok(group)
        })
    }

    fn inheritance(&mut self, tag: StartTag) -> Result<Inheritance, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            Ok(Inheritance {
                id: attributes.optional("id"),
                name: attributes.optional("name"),
                annotations: Annotations::new(),
                origin,
            })
        };
        self.xml
            .empty_element(&tag, read, |inheritance| &mut inheritance.annotations)
    }

    /// Section 2.3: `unit (alias?, location?, variable*, variableRef*,
    /// (group|unit|codeRegion)*)`. The DTD also lists `arguments*`, but no
    /// element `arguments` is declared anywhere: `arguments` is the IDREFS
    /// attribute, and the element is treated as unknown.
    fn unit(&mut self, tag: StartTag) -> Result<Unit, ParseError> {
        crate::stack::guarded(|| {
            let mut unit = self
                .xml
                .element(&tag, unit_attributes, |unit| &mut unit.annotations)?;
            const ORDER: &str =
                "(alias?, location?, variable*, variableRef*, (group|unit|codeRegion)*)";
            let mut sequence = Sequence::new(&tag);
            while let Content::Child(child) = self.xml.next(&tag)? {
                match child.local.as_str() {
                    "alias" => {
                        sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                        unit.alias = Some(self.alias(child)?);
                    }
                    "location" => {
                        sequence.place(&child, 1, Occurs::Optional, ORDER)?;
                        unit.location = Some(self.location(child)?);
                    }
                    "variable" => {
                        sequence.place(&child, 2, Occurs::Many, ORDER)?;
                        unit.variables.push(self.variable(child)?);
                    }
                    "variableRef" => {
                        sequence.place(&child, 3, Occurs::Many, ORDER)?;
                        unit.variable_refs.push(self.variable_ref(child)?);
                    }
                    "group" => {
                        sequence.place(&child, 4, Occurs::Many, ORDER)?;
                        unit.children.push(UnitChild::Group(self.group(child)?));
                    }
                    "unit" => {
                        sequence.place(&child, 4, Occurs::Many, ORDER)?;
                        unit.children.push(UnitChild::Unit(self.unit(child)?));
                    }
                    "codeRegion" => {
                        sequence.place(&child, 4, Occurs::Many, ORDER)?;
                        unit.children
                            .push(UnitChild::CodeRegion(self.code_region(child)?));
                    }
                    _ => return Err(self.xml.not_allowed(&tag, &child)),
                }
            }
            Ok(unit)
        })
    }

    /// `alias (#PCDATA)`, trimmed: names have no significant surrounding
    /// whitespace. The model holds the alias as a plain string, so
    /// annotations on it are dropped with a warning.
    fn alias(&mut self, tag: StartTag) -> Result<String, ParseError> {
        if !self.xml.no_attributes(&tag)?.is_empty() {
            let message = "annotations on <alias> are not kept";
            self.xml
                .warn(warning(Rule::InvalidAnnotation, &tag, message));
        }
        Ok(self.xml.text(&tag)?.trim().to_string())
    }

    /// Section 2.4: `codeRegion (callee?, location?, variable*, variableRef*,
    /// scheduling?, (expression|loopControl)*, (codeRegion|group)*)`.
    fn code_region(&mut self, tag: StartTag) -> Result<CodeRegion, ParseError> {
        crate::stack::guarded(|| {
            let read = |attributes: &mut AttributeReader<'_>, origin| {
                let id = attributes.required("id")?;
                let kind = RegionType::parse(&attributes.required("type")?);
                Ok(CodeRegion {
                    critical_section_name: attributes.optional("criticalSectionName"),
                    nowait: attributes.optional_with("nowait", BOOL, parse_bool)?,
                    origin,
                    ..CodeRegion::new(id, kind)
                })
            };
            let mut region = self
                .xml
                .element(&tag, read, |region| &mut region.annotations)?;
            const ORDER: &str = "(callee?, location?, variable*, variableRef*, scheduling?, \
                             (expression|loopControl)*, (codeRegion|group)*)";
            let mut sequence = Sequence::new(&tag);
            while let Content::Child(child) = self.xml.next(&tag)? {
                match child.local.as_str() {
                    "callee" => {
                        sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                        region.callee = Some(self.callee(child)?);
                    }
                    "location" => {
                        sequence.place(&child, 1, Occurs::Optional, ORDER)?;
                        region.location = Some(self.location(child)?);
                    }
                    "variable" => {
                        sequence.place(&child, 2, Occurs::Many, ORDER)?;
                        region.variables.push(self.variable(child)?);
                    }
                    "variableRef" => {
                        sequence.place(&child, 3, Occurs::Many, ORDER)?;
                        region.variable_refs.push(self.variable_ref(child)?);
                    }
                    "scheduling" => {
                        sequence.place(&child, 4, Occurs::Optional, ORDER)?;
                        region.scheduling = Some(self.scheduling(child)?);
                    }
                    "expression" => {
                        sequence.place(&child, 5, Occurs::Many, ORDER)?;
                        region
                            .evaluations
                            .push(Evaluation::Expression(self.expression(child)?));
                    }
                    "loopControl" => {
                        sequence.place(&child, 5, Occurs::Many, ORDER)?;
                        region
                            .evaluations
                            .push(Evaluation::LoopControl(self.loop_control(child)?));
                    }
                    "codeRegion" => {
                        sequence.place(&child, 6, Occurs::Many, ORDER)?;
                        region
                            .children
                            .push(RegionChild::CodeRegion(self.code_region(child)?));
                    }
                    "group" => {
                        sequence.place(&child, 6, Occurs::Many, ORDER)?;
                        region.children.push(RegionChild::Group(self.group(child)?));
                    }
                    _ => return Err(self.xml.not_allowed(&tag, &child)),
                }
            }
            Ok(region)
        })
    }

    fn callee(&mut self, tag: StartTag) -> Result<Callee, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            Ok(Callee {
                id: attributes.optional("id"),
                name: attributes.optional("name"),
                annotations: Annotations::new(),
                origin,
            })
        };
        self.xml
            .empty_element(&tag, read, |callee| &mut callee.annotations)
    }

    /// `expression ((codeRegion|group)+)`.
    fn expression(&mut self, tag: StartTag) -> Result<Expression, ParseError> {
        let annotations = self.xml.no_attributes(&tag)?;
        let mut items = Vec::new();
        while let Content::Child(child) = self.xml.next(&tag)? {
            match child.local.as_str() {
                "codeRegion" => items.push(RegionChild::CodeRegion(self.code_region(child)?)),
                "group" => items.push(RegionChild::Group(self.group(child)?)),
                _ => return Err(self.xml.not_allowed(&tag, &child)),
            }
        }
        if items.is_empty() {
            return Err(missing_child(&tag, "codeRegion|group"));
        }
        Ok(Expression {
            items,
            annotations,
            origin: Origin::at(tag.position),
        })
    }

    /// `loopControl (lower?, upper?, stride?)`.
    fn loop_control(&mut self, tag: StartTag) -> Result<LoopControl, ParseError> {
        let mut control = LoopControl {
            annotations: self.xml.no_attributes(&tag)?,
            origin: Origin::at(tag.position),
            ..LoopControl::default()
        };
        const ORDER: &str = "(lower?, upper?, stride?)";
        let mut sequence = Sequence::new(&tag);
        while let Content::Child(child) = self.xml.next(&tag)? {
            let step = match child.local.as_str() {
                "lower" => 0,
                "upper" => 1,
                "stride" => 2,
                _ => return Err(self.xml.not_allowed(&tag, &child)),
            };
            sequence.place(&child, step, Occurs::Optional, ORDER)?;
            let bound = Some(self.bound(child)?);
            match step {
                0 => control.lower = bound,
                1 => control.upper = bound,
                _ => control.stride = bound,
            }
        }
        Ok(control)
    }

    /// `lower`, `upper`, `stride`: `(codeRegion+)`.
    fn bound(&mut self, tag: StartTag) -> Result<Bound, ParseError> {
        let annotations = self.xml.no_attributes(&tag)?;
        let mut regions = Vec::new();
        while let Content::Child(child) = self.xml.next(&tag)? {
            match child.local.as_str() {
                "codeRegion" => regions.push(self.code_region(child)?),
                _ => return Err(self.xml.not_allowed(&tag, &child)),
            }
        }
        if regions.is_empty() {
            return Err(missing_child(&tag, "codeRegion"));
        }
        Ok(Bound {
            regions,
            annotations,
            origin: Origin::at(tag.position),
        })
    }

    fn scheduling(&mut self, tag: StartTag) -> Result<Scheduling, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            let expected = "one of static|dynamic|guided|runtime";
            Ok(Scheduling {
                kind: attributes.required_with("type", expected, SchedulingType::parse)?,
                chunk: attributes.optional_with("chunk", "a positiveInteger", parse_integer)?,
                annotations: Annotations::new(),
                origin,
            })
        };
        self.xml
            .empty_element(&tag, read, |scheduling| &mut scheduling.annotations)
    }

    /// Section 2.5: `variable (location?, dimension*)`.
    fn variable(&mut self, tag: StartTag) -> Result<Variable, ParseError> {
        let mut variable = self.xml.element(&tag, variable_attributes, |variable| {
            &mut variable.annotations
        })?;
        const ORDER: &str = "(location?, dimension*)";
        let mut sequence = Sequence::new(&tag);
        while let Content::Child(child) = self.xml.next(&tag)? {
            match child.local.as_str() {
                "location" => {
                    sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                    variable.location = Some(self.location(child)?);
                }
                "dimension" => {
                    sequence.place(&child, 1, Occurs::Many, ORDER)?;
                    variable.dimension_bounds.push(self.dimension(child)?);
                }
                _ => return Err(self.xml.not_allowed(&tag, &child)),
            }
        }
        Ok(variable)
    }

    fn dimension(&mut self, tag: StartTag) -> Result<Dimension, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            const INTEGER: &str = "an integer";
            let index = attributes.required_with("index", "a positiveInteger", parse_integer)?;
            let upper_bound = attributes.required_with("upperBound", INTEGER, parse_integer)?;
            let lower_bound = attributes.required_with("lowerBound", INTEGER, parse_integer)?;
            Ok(Dimension {
                index,
                lower_bound,
                upper_bound,
                annotations: Annotations::new(),
                origin,
            })
        };
        self.xml
            .empty_element(&tag, read, |dimension| &mut dimension.annotations)
    }

    fn variable_ref(&mut self, tag: StartTag) -> Result<VariableRef, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            let target_id = attributes.required("targetId")?;
            let expected = "one of read|write|readwrite";
            Ok(VariableRef {
                target_id,
                access: attributes.optional_with("accessType", expected, AccessType::parse)?,
                annotations: Annotations::new(),
                origin,
            })
        };
        self.xml
            .empty_element(&tag, read, |reference| &mut reference.annotations)
    }

    /// Section 2.6; Table 2 types the numbers `nonNegativeInteger`.
    fn location(&mut self, tag: StartTag) -> Result<Location, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            const NUMBER: &str = "a nonNegativeInteger";
            let mut number = |name| attributes.optional_with(name, NUMBER, parse_integer);
            Ok(Location {
                start_line: number("startLine")?,
                start_column: number("startColumn")?,
                end_line: number("endLine")?,
                end_column: number("endColumn")?,
                uri: attributes.optional("uri"),
                annotations: Annotations::new(),
                origin,
            })
        };
        self.xml
            .empty_element(&tag, read, |location| &mut location.annotations)
    }
}

const LANGUAGES: &str = "one of fortran|java|c|cpp";
const BOOL: &str = "true or false";

/// The attributes of a `unit` (section 2.3).
fn unit_attributes(
    attributes: &mut AttributeReader<'_>,
    origin: Origin,
) -> Result<Unit, ParseError> {
    let id = attributes.required("id")?;
    let expected = "one of function|subroutine|program|method";
    let kind = attributes.required_with("type", expected, UnitType::parse)?;
    Ok(Unit {
        name: attributes.optional("name"),
        arguments: attributes
            .optional("arguments")
            .map(|a| a.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        is_virtual: attributes.optional_with("virtual", BOOL, parse_bool)?,
        internal: attributes.optional("internal"),
        language: attributes.optional_with("language", LANGUAGES, Language::parse)?,
        instrumentable: attributes.optional_with("instrumentable", BOOL, parse_bool)?,
        origin,
        ..Unit::new(id, kind)
    })
}

/// The attributes of a `variable` (section 2.5).
fn variable_attributes(
    attributes: &mut AttributeReader<'_>,
    origin: Origin,
) -> Result<Variable, ParseError> {
    let id = attributes.required("id")?;
    let name = attributes.optional("name");
    let type_name = attributes.optional("type");
    // Section 2.5: "-1 or omitted" means scalar; Table 2 otherwise
    // demands a nonNegativeInteger.
    let dimensions = match attributes.optional("dimensions") {
        None => None,
        Some(v) if v.trim() == "-1" => None,
        Some(v) => Some(parse_integer::<u64>(&v).ok_or_else(|| {
            attributes.invalid(
                "dimensions",
                &v,
                "a nonNegativeInteger (or -1 for a scalar)",
            )
        })?),
    };
    Ok(Variable {
        name,
        type_name,
        dimensions,
        origin,
        ..Variable::new(id)
    })
}
