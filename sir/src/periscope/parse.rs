//! Periscope SIR from XML, checking the XML Schema as it reads: elements in
//! the Periscope namespace, sequence order and cardinality, declared
//! attributes, enumerations and `xs:positiveInteger` lexical form.

use std::io::BufRead;

use crate::annotation::{Annotations, PrefixHints};
use crate::content::{misplaced, Content, Occurs, Sequence};
use crate::diagnostic::Parsed;
use crate::dialect::{self, missing_child, DialectReader, Grammar, Vocabulary};
use crate::error::ParseError;
use crate::namespaces::PERISCOPE as NAMESPACE;
use crate::periscope::model::*;
use crate::reader::{parse_integer, AttributeReader, ParseOptions, StartTag};

/// Parses a Periscope SIR document from a buffered reader.
pub fn parse<R: BufRead>(input: R, options: &ParseOptions) -> Result<Parsed<Sir>, ParseError> {
    dialect::parse::<Periscope, R>(input, options)
}

/// Parses a Periscope SIR document held in memory, with default limits.
pub fn parse_str(xml: &str) -> Result<Parsed<Sir>, ParseError> {
    parse(xml.as_bytes(), &ParseOptions::default())
}

/// The Periscope dialect, for the parsing both dialects share.
pub(crate) struct Periscope;

impl Grammar for Periscope {
    type Document = Sir;
    /// Every element of the schema; all are in [`NAMESPACE`]
    /// (`elementFormDefault="qualified"`).
    const VOCABULARY: &'static Vocabulary = &Vocabulary {
        name: "Periscope",
        namespace: Some(NAMESPACE),
        elements: &["sir", "unit", "codeRegion", "position", "file", "array"],
        grammar: "the schema",
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
    /// `sir`: `(unit+)`, attribute `language`.
    fn sir(&mut self, tag: StartTag) -> Result<Sir, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            let language =
                enumerated(attributes, "language", Language::choices(), Language::parse)?;
            Ok(Sir {
                origin,
                ..Sir::new(language)
            })
        };
        let mut sir = self.xml.element(&tag, read, |sir| &mut sir.annotations)?;
        while let Content::Child(child) = self.xml.next(&tag)? {
            match child.local.as_str() {
                "unit" => sir.units.push(self.unit(child)?),
                _ => return Err(self.xml.not_allowed(&tag, &child)),
            }
        }
        if sir.units.is_empty() {
            return Err(missing_child(&tag, "unit"));
        }
        Ok(sir)
    }

    /// `psc:Unit`: `(pos_array?, unit*, codeRegion*)`.
    fn unit(&mut self, tag: StartTag) -> Result<Unit, ParseError> {
        crate::stack::guarded(|| {
            let read = |attributes: &mut AttributeReader<'_>, origin| {
                Ok(Unit {
                    kind: enumerated(attributes, "type", UnitType::choices(), UnitType::parse)?,
                    name: attributes.optional("name"),
                    datascopeclause: attributes.optional("datascopeclause"),
                    id: attributes.optional("id"),
                    origin,
                    ..Unit::default()
                })
            };
            let mut unit = self.xml.element(&tag, read, |unit| &mut unit.annotations)?;
            const ORDER: &str = "((position, array*)?, unit*, codeRegion*)";
            let mut sequence = Sequence::new(&tag);
            while let Content::Child(child) = self.xml.next(&tag)? {
                match child.local.as_str() {
                    "position" => {
                        sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                        unit.position = Some(self.position(child)?);
                    }
                    "array" => {
                        if unit.position.is_none() {
                            let reason = "an array must follow a position";
                            return Err(misplaced(&child, &tag.local, reason));
                        }
                        sequence.place(&child, 1, Occurs::Many, ORDER)?;
                        unit.arrays.push(self.array(child)?);
                    }
                    "unit" => {
                        sequence.place(&child, 2, Occurs::Many, ORDER)?;
                        unit.units.push(self.unit(child)?);
                    }
                    "codeRegion" => {
                        sequence.place(&child, 3, Occurs::Many, ORDER)?;
                        unit.code_regions.push(self.code_region(child)?);
                    }
                    _ => return Err(self.xml.not_allowed(&tag, &child)),
                }
            }
            Ok(unit)
        })
    }

    /// `psc:CodeRegionType`: `(pos_array, codeRegion*)`.
    fn code_region(&mut self, tag: StartTag) -> Result<CodeRegion, ParseError> {
        crate::stack::guarded(|| {
            let read = |attributes: &mut AttributeReader<'_>, origin| {
                Ok(CodeRegion {
                    kind: enumerated(attributes, "type", RegionType::choices(), RegionType::parse)?,
                    name: attributes.optional("name"),
                    datascopeclause: attributes.optional("datascopeclause"),
                    id: attributes.optional("id"),
                    // Read below: the schema requires it.
                    position: SourcePosition::default(),
                    arrays: Vec::new(),
                    code_regions: Vec::new(),
                    annotations: Annotations::new(),
                    origin,
                })
            };
            let mut region = self
                .xml
                .element(&tag, read, |region| &mut region.annotations)?;
            const ORDER: &str = "(position, array*, codeRegion*)";
            let mut sequence = Sequence::new(&tag);
            let mut position = None;
            while let Content::Child(child) = self.xml.next(&tag)? {
                match child.local.as_str() {
                    "position" => {
                        sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                        position = Some(self.position(child)?);
                    }
                    "array" | "codeRegion" if position.is_none() => {
                        let reason = "the required position must come first";
                        return Err(misplaced(&child, &tag.local, reason));
                    }
                    "array" => {
                        sequence.place(&child, 1, Occurs::Many, ORDER)?;
                        region.arrays.push(self.array(child)?);
                    }
                    "codeRegion" => {
                        sequence.place(&child, 2, Occurs::Many, ORDER)?;
                        region.code_regions.push(self.code_region(child)?);
                    }
                    _ => return Err(self.xml.not_allowed(&tag, &child)),
                }
            }
            region.position = position.ok_or_else(|| missing_child(&tag, "position"))?;
            Ok(region)
        })
    }

    /// `psc:PositionType`: `(file)`, `startLine`, `endLine`.
    fn position(&mut self, tag: StartTag) -> Result<SourcePosition, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            const NUMBER: &str = "a positiveInteger";
            Ok(SourcePosition {
                start_line: attributes.optional_with("startLine", NUMBER, parse_integer)?,
                end_line: attributes.optional_with("endLine", NUMBER, parse_integer)?,
                origin,
                ..SourcePosition::default()
            })
        };
        let mut position = self
            .xml
            .element(&tag, read, |position| &mut position.annotations)?;
        let mut file = None;
        while let Content::Child(child) = self.xml.next(&tag)? {
            match child.local.as_str() {
                "file" if file.is_some() => {
                    return Err(misplaced(&child, &tag.local, "only one file is allowed"))
                }
                "file" => file = Some(self.file(child)?),
                _ => return Err(self.xml.not_allowed(&tag, &child)),
            }
        }
        position.file = file.ok_or_else(|| missing_child(&tag, "file"))?;
        Ok(position)
    }

    fn file(&mut self, tag: StartTag) -> Result<File, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            Ok(File {
                name: attributes.optional("name"),
                origin,
                ..File::default()
            })
        };
        self.xml
            .empty_element(&tag, read, |file| &mut file.annotations)
    }

    fn array(&mut self, tag: StartTag) -> Result<Array, ParseError> {
        let read = |attributes: &mut AttributeReader<'_>, origin| {
            Ok(Array {
                kind: enumerated(attributes, "type", ArrayType::choices(), ArrayType::parse)?,
                name: attributes.optional("name"),
                nelts: attributes.optional_with("nelts", "a positiveInteger", parse_integer)?,
                origin,
                ..Array::default()
            })
        };
        self.xml
            .empty_element(&tag, read, |array| &mut array.annotations)
    }
}

/// An optional attribute of an enumerated schema type; `choices` lists its
/// values for the error message.
fn enumerated<T>(
    attributes: &mut AttributeReader<'_>,
    name: &str,
    choices: String,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>, ParseError> {
    attributes.optional_with(name, &format!("one of {choices}"), parse)
}
