//! APART SIR from XML, checking the DTD of sections 2.1–2.6 as it reads:
//! content models (which children, in which order, how many), declared
//! attributes, `#REQUIRED` attributes, enumerations and the lexical types of
//! Table 2. Cross-element rules (ids, references, nesting by language) are
//! left to validation, which works on built models too.

use std::io::BufRead;

use super::*;
use crate::annotation::{Annotations, PrefixHints};
use crate::content::{next_child, read_root, text_content, Content, Occurs, Sequence};
use crate::diagnostic::{Diagnostic, Parsed};
use crate::error::{ParseError, ParseErrorKind};
use crate::position::Origin;
use crate::reader::{
    parse_bool, parse_integer, AttributeReader, ParseOptions, StartTag, XmlReader,
};

/// Parses an APART SIR document from a buffered reader.
pub fn parse<R: BufRead>(input: R, options: &ParseOptions) -> Result<Parsed<Sir>, ParseError> {
    let mut reader = XmlReader::new(input, options);
    let root = read_root(&mut reader)?;
    if root.namespace.is_some() || root.local != "sir" {
        return Err(ParseError::new(
            root.position,
            ParseErrorKind::WrongRoot {
                found: describe(&root),
            },
        ));
    }
    parse_from_root(&mut reader, root)
}

/// Parses an APART SIR document held in memory, with default limits.
pub fn parse_str(xml: &str) -> Result<Parsed<Sir>, ParseError> {
    parse(xml.as_bytes(), &ParseOptions::default())
}

pub(crate) fn describe(tag: &StartTag) -> String {
    match &tag.namespace {
        Some(ns) => format!("<{}> in namespace {ns}", tag.local),
        None => format!("<{}> in no namespace", tag.local),
    }
}

pub(crate) fn parse_from_root<R: BufRead>(
    reader: &mut XmlReader<R>,
    root: StartTag,
) -> Result<Parsed<Sir>, ParseError> {
    let mut parser = Parser {
        reader,
        warnings: Vec::new(),
        prefixes: PrefixHints::new(),
    };
    let mut sir = parser.sir(root)?;
    parser.reader.expect_eof()?;
    sir.prefixes = parser.prefixes;
    Ok(Parsed {
        document: sir,
        warnings: parser.warnings,
    })
}

/// Every element name the APART DTD declares; others are unknown.
const APART_ELEMENTS: [&str; 17] = [
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
];

struct Parser<'r, R: BufRead> {
    reader: &'r mut XmlReader<R>,
    warnings: Vec<Diagnostic>,
    prefixes: PrefixHints,
}

impl<R: BufRead> Parser<'_, R> {
    fn next(&mut self, parent: &StartTag) -> Result<Content, ParseError> {
        next_child(self.reader, parent, None, &mut self.warnings)
    }

    /// The error for a child that this parent does not allow.
    fn not_allowed(&self, parent: &StartTag, child: &StartTag) -> ParseError {
        let kind = if child.namespace.is_none() && APART_ELEMENTS.contains(&child.local.as_str()) {
            ParseErrorKind::Misplaced {
                element: child.local.clone(),
                parent: parent.local.clone(),
                reason: "the DTD does not allow it in this element".into(),
            }
        } else {
            ParseErrorKind::UnknownElement {
                element: child.local.clone(),
                parent: parent.local.clone(),
            }
        };
        ParseError::new(child.position, kind)
    }

    fn finish(
        &mut self,
        attributes: AttributeReader<'_>,
        annotations: &mut Annotations,
    ) -> Result<(), ParseError> {
        attributes.finish(None, annotations, &mut self.prefixes)
    }

    /// Consumes the content of an element declared EMPTY.
    fn empty(&mut self, tag: &StartTag) -> Result<(), ParseError> {
        match self.next(tag)? {
            Content::End => Ok(()),
            Content::Child(child) => Err(self.not_allowed(tag, &child)),
        }
    }

    fn missing_child(tag: &StartTag, child: &str) -> ParseError {
        ParseError::new(
            tag.position,
            ParseErrorKind::MissingChild {
                parent: tag.local.clone(),
                child: child.to_string(),
            },
        )
    }

    /// Section 2.1: `sir (variable*, (group|unit)+)`.
    fn sir(&mut self, tag: StartTag) -> Result<Sir, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let language =
            attributes.required_with("language", "one of fortran|java|c|cpp", Language::parse)?;
        let mut sir = Sir::new(language);
        sir.message_passing =
            attributes.optional_with("messagePassing", "true or false", parse_bool)?;
        sir.shared_memory =
            attributes.optional_with("sharedMemory", "true or false", parse_bool)?;
        sir.origin = Origin::at(tag.position);
        self.finish(attributes, &mut sir.annotations)?;
        const ORDER: &str = "(variable*, (group|unit)+)";
        let mut sequence = Sequence::new(&tag);
        while let Content::Child(child) = self.next(&tag)? {
            match child.local.as_str() {
                "variable" => {
                    sequence.place(&child, 0, Occurs::Many, ORDER)?;
                    sir.variables.push(self.variable(child)?);
                }
                "group" | "unit" => {
                    sequence.place(&child, 1, Occurs::Many, ORDER)?;
                    sir.members.push(self.member(child)?);
                }
                _ => return Err(self.not_allowed(&tag, &child)),
            }
        }
        if sir.members.is_empty() {
            return Err(Self::missing_child(&tag, "group|unit"));
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
            let mut attributes = AttributeReader::new(&tag);
            let id = attributes.required("id")?;
            let kind = attributes.required_with(
                "type",
                "one of module|package|class|interface",
                GroupType::parse,
            )?;
            let mut group = Group::new(id, kind);
            group.name = attributes.optional("name");
            group.internal = attributes.optional("internal");
            group.origin = Origin::at(tag.position);
            self.finish(attributes, &mut group.annotations)?;
            const ORDER: &str = "(inheritance*, location?, variable*, (group|unit)*)";
            let mut sequence = Sequence::new(&tag);
            while let Content::Child(child) = self.next(&tag)? {
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
                    _ => return Err(self.not_allowed(&tag, &child)),
                }
            }
            Ok(group)
        })
    }

    fn inheritance(&mut self, tag: StartTag) -> Result<Inheritance, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let mut inheritance = Inheritance {
            id: attributes.optional("id"),
            name: attributes.optional("name"),
            annotations: Annotations::new(),
            origin: Origin::at(tag.position),
        };
        self.finish(attributes, &mut inheritance.annotations)?;
        self.empty(&tag)?;
        Ok(inheritance)
    }

    /// Section 2.3: `unit (alias?, location?, variable*, variableRef*,
    /// (group|unit|codeRegion)*)`. The DTD also lists `arguments*`, but no
    /// element `arguments` is declared anywhere: `arguments` is the IDREFS
    /// attribute, and the element is treated as unknown.
    fn unit(&mut self, tag: StartTag) -> Result<Unit, ParseError> {
        crate::stack::guarded(|| {
            let mut attributes = AttributeReader::new(&tag);
            let id = attributes.required("id")?;
            let kind = attributes.required_with(
                "type",
                "one of function|subroutine|program|method",
                UnitType::parse,
            )?;
            let mut unit = Unit::new(id, kind);
            unit.name = attributes.optional("name");
            unit.arguments = attributes
                .optional("arguments")
                .map(|a| a.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
            unit.is_virtual = attributes.optional_with("virtual", "true or false", parse_bool)?;
            unit.internal = attributes.optional("internal");
            unit.language = attributes.optional_with(
                "language",
                "one of fortran|java|c|cpp",
                Language::parse,
            )?;
            unit.instrumentable =
                attributes.optional_with("instrumentable", "true or false", parse_bool)?;
            unit.origin = Origin::at(tag.position);
            self.finish(attributes, &mut unit.annotations)?;
            const ORDER: &str =
                "(alias?, location?, variable*, variableRef*, (group|unit|codeRegion)*)";
            let mut sequence = Sequence::new(&tag);
            while let Content::Child(child) = self.next(&tag)? {
                match child.local.as_str() {
                    "alias" => {
                        sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                        let mut ignored = Annotations::new();
                        self.finish(AttributeReader::new(&child), &mut ignored)?;
                        if !ignored.is_empty() {
                            // The model holds the alias as a plain string.
                            self.warnings.push(Diagnostic {
                                severity: crate::diagnostic::Severity::Warning,
                                rule: crate::diagnostic::Rule::InvalidAnnotation,
                                position: Some(child.position),
                                element: "alias".into(),
                                attribute: None,
                                id: None,
                                message: "annotations on <alias> are not kept".into(),
                            });
                        }
                        // Names have no significant surrounding whitespace.
                        let text = text_content(self.reader, &child, &mut self.warnings)?;
                        unit.alias = Some(text.trim().to_string());
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
                    _ => return Err(self.not_allowed(&tag, &child)),
                }
            }
            Ok(unit)
        })
    }

    /// Section 2.4: `codeRegion (callee?, location?, variable*, variableRef*,
    /// scheduling?, (expression|loopControl)*, (codeRegion|group)*)`.
    fn code_region(&mut self, tag: StartTag) -> Result<CodeRegion, ParseError> {
        crate::stack::guarded(|| {
            let mut attributes = AttributeReader::new(&tag);
            let id = attributes.required("id")?;
            let kind = RegionType::parse(&attributes.required("type")?);
            let mut region = CodeRegion::new(id, kind);
            region.critical_section_name = attributes.optional("criticalSectionName");
            region.nowait = attributes.optional_with("nowait", "true or false", parse_bool)?;
            region.origin = Origin::at(tag.position);
            self.finish(attributes, &mut region.annotations)?;
            const ORDER: &str = "(callee?, location?, variable*, variableRef*, scheduling?, \
                             (expression|loopControl)*, (codeRegion|group)*)";
            let mut sequence = Sequence::new(&tag);
            while let Content::Child(child) = self.next(&tag)? {
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
                    _ => return Err(self.not_allowed(&tag, &child)),
                }
            }
            Ok(region)
        })
    }

    fn callee(&mut self, tag: StartTag) -> Result<Callee, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let mut callee = Callee {
            id: attributes.optional("id"),
            name: attributes.optional("name"),
            annotations: Annotations::new(),
            origin: Origin::at(tag.position),
        };
        self.finish(attributes, &mut callee.annotations)?;
        self.empty(&tag)?;
        Ok(callee)
    }

    /// `expression ((codeRegion|group)+)`.
    fn expression(&mut self, tag: StartTag) -> Result<Expression, ParseError> {
        let mut annotations = Annotations::new();
        self.finish(AttributeReader::new(&tag), &mut annotations)?;
        let mut items = Vec::new();
        while let Content::Child(child) = self.next(&tag)? {
            match child.local.as_str() {
                "codeRegion" => items.push(RegionChild::CodeRegion(self.code_region(child)?)),
                "group" => items.push(RegionChild::Group(self.group(child)?)),
                _ => return Err(self.not_allowed(&tag, &child)),
            }
        }
        if items.is_empty() {
            return Err(Self::missing_child(&tag, "codeRegion|group"));
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
            origin: Origin::at(tag.position),
            ..LoopControl::default()
        };
        self.finish(AttributeReader::new(&tag), &mut control.annotations)?;
        const ORDER: &str = "(lower?, upper?, stride?)";
        let mut sequence = Sequence::new(&tag);
        while let Content::Child(child) = self.next(&tag)? {
            let step = match child.local.as_str() {
                "lower" => 0,
                "upper" => 1,
                "stride" => 2,
                _ => return Err(self.not_allowed(&tag, &child)),
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
        let mut annotations = Annotations::new();
        self.finish(AttributeReader::new(&tag), &mut annotations)?;
        let mut regions = Vec::new();
        while let Content::Child(child) = self.next(&tag)? {
            match child.local.as_str() {
                "codeRegion" => regions.push(self.code_region(child)?),
                _ => return Err(self.not_allowed(&tag, &child)),
            }
        }
        if regions.is_empty() {
            return Err(Self::missing_child(&tag, "codeRegion"));
        }
        Ok(Bound {
            regions,
            annotations,
            origin: Origin::at(tag.position),
        })
    }

    fn scheduling(&mut self, tag: StartTag) -> Result<Scheduling, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let kind = attributes.required_with(
            "type",
            "one of static|dynamic|guided|runtime",
            SchedulingType::parse,
        )?;
        let chunk = attributes.optional_with("chunk", "a positiveInteger", parse_integer::<u64>)?;
        let mut scheduling = Scheduling {
            kind,
            chunk,
            annotations: Annotations::new(),
            origin: Origin::at(tag.position),
        };
        self.finish(attributes, &mut scheduling.annotations)?;
        self.empty(&tag)?;
        Ok(scheduling)
    }

    /// Section 2.5: `variable (location?, dimension*)`.
    fn variable(&mut self, tag: StartTag) -> Result<Variable, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let mut variable = Variable::new(attributes.required("id")?);
        variable.name = attributes.optional("name");
        variable.type_name = attributes.optional("type");
        // Section 2.5: "-1 or omitted" means scalar; Table 2 otherwise
        // demands a nonNegativeInteger.
        variable.dimensions = match attributes.optional("dimensions") {
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
        variable.origin = Origin::at(tag.position);
        self.finish(attributes, &mut variable.annotations)?;
        const ORDER: &str = "(location?, dimension*)";
        let mut sequence = Sequence::new(&tag);
        while let Content::Child(child) = self.next(&tag)? {
            match child.local.as_str() {
                "location" => {
                    sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                    variable.location = Some(self.location(child)?);
                }
                "dimension" => {
                    sequence.place(&child, 1, Occurs::Many, ORDER)?;
                    variable.dimension_bounds.push(self.dimension(child)?);
                }
                _ => return Err(self.not_allowed(&tag, &child)),
            }
        }
        Ok(variable)
    }

    fn dimension(&mut self, tag: StartTag) -> Result<Dimension, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let index = attributes.required_with("index", "a positiveInteger", parse_integer::<u64>)?;
        let upper_bound =
            attributes.required_with("upperBound", "an integer", parse_integer::<i64>)?;
        let lower_bound =
            attributes.required_with("lowerBound", "an integer", parse_integer::<i64>)?;
        let mut dimension = Dimension {
            index,
            lower_bound,
            upper_bound,
            annotations: Annotations::new(),
            origin: Origin::at(tag.position),
        };
        self.finish(attributes, &mut dimension.annotations)?;
        self.empty(&tag)?;
        Ok(dimension)
    }

    fn variable_ref(&mut self, tag: StartTag) -> Result<VariableRef, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let target_id = attributes.required("targetId")?;
        let access = attributes.optional_with(
            "accessType",
            "one of read|write|readwrite",
            AccessType::parse,
        )?;
        let mut reference = VariableRef {
            target_id,
            access,
            annotations: Annotations::new(),
            origin: Origin::at(tag.position),
        };
        self.finish(attributes, &mut reference.annotations)?;
        self.empty(&tag)?;
        Ok(reference)
    }

    /// Section 2.6; Table 2 types the numbers `nonNegativeInteger`.
    fn location(&mut self, tag: StartTag) -> Result<Location, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        const NUMBER: &str = "a nonNegativeInteger";
        let mut location = Location {
            start_line: attributes.optional_with("startLine", NUMBER, parse_integer::<u64>)?,
            start_column: attributes.optional_with("startColumn", NUMBER, parse_integer::<u64>)?,
            end_line: attributes.optional_with("endLine", NUMBER, parse_integer::<u64>)?,
            end_column: attributes.optional_with("endColumn", NUMBER, parse_integer::<u64>)?,
            uri: attributes.optional("uri"),
            annotations: Annotations::new(),
            origin: Origin::at(tag.position),
        };
        self.finish(attributes, &mut location.annotations)?;
        self.empty(&tag)?;
        Ok(location)
    }
}
