//! Periscope SIR from XML, checking the XML Schema as it reads: elements in
//! the Periscope namespace, sequence order and cardinality, declared
//! attributes, enumerations and `xs:positiveInteger` lexical form.

use std::io::BufRead;

use super::*;
use crate::content::{next_child, read_root, Content, Occurs, Sequence};
use crate::diagnostic::{Diagnostic, Parsed};
use crate::error::{ParseError, ParseErrorKind};
use crate::reader::{parse_integer, AttributeReader, ParseOptions, StartTag, XmlReader};

/// Parses a Periscope SIR document from a buffered reader.
pub fn parse<R: BufRead>(input: R, options: &ParseOptions) -> Result<Parsed<Sir>, ParseError> {
    let mut reader = XmlReader::new(input, options);
    let root = read_root(&mut reader)?;
    if root.namespace.as_deref() != Some(NAMESPACE) || root.local != "sir" {
        let found = crate::apart::parse_describe(&root);
        return Err(ParseError::new(
            root.position,
            ParseErrorKind::WrongRoot { found },
        ));
    }
    parse_from_root(&mut reader, root)
}

/// Parses a Periscope SIR document held in memory, with default limits.
pub fn parse_str(xml: &str) -> Result<Parsed<Sir>, ParseError> {
    parse(xml.as_bytes(), &ParseOptions::default())
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

const ELEMENTS: [&str; 6] = ["sir", "unit", "codeRegion", "position", "file", "array"];

struct Parser<'r, R: BufRead> {
    reader: &'r mut XmlReader<R>,
    warnings: Vec<Diagnostic>,
    prefixes: PrefixHints,
}

impl<R: BufRead> Parser<'_, R> {
    /// The next child in the Periscope namespace; a child in no namespace is
    /// an error because the schema qualifies all elements.
    fn next(&mut self, parent: &StartTag) -> Result<Content, ParseError> {
        let content = next_child(self.reader, parent, Some(NAMESPACE), &mut self.warnings)?;
        if let Content::Child(child) = &content {
            if child.namespace.is_none() {
                return Err(ParseError::new(
                    child.position,
                    ParseErrorKind::UnknownElement {
                        element: format!(
                            "{} (in no namespace; Periscope elements are in {NAMESPACE})",
                            child.local
                        ),
                        parent: parent.local.clone(),
                    },
                ));
            }
        }
        Ok(content)
    }

    fn not_allowed(&self, parent: &StartTag, child: &StartTag) -> ParseError {
        let kind = if ELEMENTS.contains(&child.local.as_str()) {
            ParseErrorKind::Misplaced {
                element: child.local.clone(),
                parent: parent.local.clone(),
                reason: "the schema does not allow it in this element".into(),
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
        attributes.finish(Some(NAMESPACE), annotations, &mut self.prefixes)
    }

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
                child: child.into(),
            },
        )
    }

    /// `sir`: `(unit+)`, attribute `language`.
    fn sir(&mut self, tag: StartTag) -> Result<Sir, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let expected = format!("one of {}", Language::choices());
        let language = attributes.optional_with("language", &expected, Language::parse)?;
        let mut sir = Sir::new(language);
        sir.origin = Origin::at(tag.position);
        self.finish(attributes, &mut sir.annotations)?;
        while let Content::Child(child) = self.next(&tag)? {
            match child.local.as_str() {
                "unit" => sir.units.push(self.unit(child)?),
                _ => return Err(self.not_allowed(&tag, &child)),
            }
        }
        if sir.units.is_empty() {
            return Err(Self::missing_child(&tag, "unit"));
        }
        Ok(sir)
    }

    /// `psc:Unit`: `(pos_array?, unit*, codeRegion*)`.
    fn unit(&mut self, tag: StartTag) -> Result<Unit, ParseError> {
        crate::stack::guarded(|| {
            let mut attributes = AttributeReader::new(&tag);
            let expected = format!("one of {}", UnitType::choices());
            let mut unit = Unit {
                kind: attributes.optional_with("type", &expected, UnitType::parse)?,
                name: attributes.optional("name"),
                datascopeclause: attributes.optional("datascopeclause"),
                id: attributes.optional("id"),
                origin: Origin::at(tag.position),
                ..Unit::default()
            };
            self.finish(attributes, &mut unit.annotations)?;
            const ORDER: &str = "((position, array*)?, unit*, codeRegion*)";
            let mut sequence = Sequence::new(&tag);
            while let Content::Child(child) = self.next(&tag)? {
                match child.local.as_str() {
                    "position" => {
                        sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                        unit.position = Some(self.position(child)?);
                    }
                    "array" => {
                        if unit.position.is_none() {
                            return Err(Self::misplaced(
                                &tag,
                                &child,
                                "an array must follow a position",
                            ));
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
                    _ => return Err(self.not_allowed(&tag, &child)),
                }
            }
            Ok(unit)
        })
    }

    fn misplaced(parent: &StartTag, child: &StartTag, reason: &str) -> ParseError {
        ParseError::new(
            child.position,
            ParseErrorKind::Misplaced {
                element: child.local.clone(),
                parent: parent.local.clone(),
                reason: reason.into(),
            },
        )
    }

    /// `psc:CodeRegionType`: `(pos_array, codeRegion*)`.
    fn code_region(&mut self, tag: StartTag) -> Result<CodeRegion, ParseError> {
        crate::stack::guarded(|| {
            let mut attributes = AttributeReader::new(&tag);
            let expected = format!("one of {}", RegionType::choices());
            let kind = attributes.optional_with("type", &expected, RegionType::parse)?;
            let name = attributes.optional("name");
            let datascopeclause = attributes.optional("datascopeclause");
            let id = attributes.optional("id");
            let mut annotations = Annotations::new();
            self.finish(attributes, &mut annotations)?;
            const ORDER: &str = "(position, array*, codeRegion*)";
            let mut sequence = Sequence::new(&tag);
            let mut position = None;
            let mut arrays = Vec::new();
            let mut code_regions = Vec::new();
            while let Content::Child(child) = self.next(&tag)? {
                match child.local.as_str() {
                    "position" => {
                        sequence.place(&child, 0, Occurs::Optional, ORDER)?;
                        position = Some(self.position(child)?);
                    }
                    "array" | "codeRegion" if position.is_none() => {
                        return Err(Self::misplaced(
                            &tag,
                            &child,
                            "the required position must come first",
                        ));
                    }
                    "array" => {
                        sequence.place(&child, 1, Occurs::Many, ORDER)?;
                        arrays.push(self.array(child)?);
                    }
                    "codeRegion" => {
                        sequence.place(&child, 2, Occurs::Many, ORDER)?;
                        code_regions.push(self.code_region(child)?);
                    }
                    _ => return Err(self.not_allowed(&tag, &child)),
                }
            }
            let position = position.ok_or_else(|| Self::missing_child(&tag, "position"))?;
            Ok(CodeRegion {
                kind,
                name,
                datascopeclause,
                id,
                position,
                arrays,
                code_regions,
                annotations,
                origin: Origin::at(tag.position),
            })
        })
    }

    /// `psc:PositionType`: `(file)`, `startLine`, `endLine`.
    fn position(&mut self, tag: StartTag) -> Result<SourcePosition, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        const NUMBER: &str = "a positiveInteger";
        let mut position = SourcePosition {
            start_line: attributes.optional_with("startLine", NUMBER, parse_integer::<u64>)?,
            end_line: attributes.optional_with("endLine", NUMBER, parse_integer::<u64>)?,
            origin: Origin::at(tag.position),
            ..SourcePosition::default()
        };
        self.finish(attributes, &mut position.annotations)?;
        let mut file = None;
        while let Content::Child(child) = self.next(&tag)? {
            match child.local.as_str() {
                "file" if file.is_some() => {
                    return Err(Self::misplaced(&tag, &child, "only one file is allowed"))
                }
                "file" => file = Some(self.file(child)?),
                _ => return Err(self.not_allowed(&tag, &child)),
            }
        }
        position.file = file.ok_or_else(|| Self::missing_child(&tag, "file"))?;
        Ok(position)
    }

    fn file(&mut self, tag: StartTag) -> Result<File, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let mut file = File {
            name: attributes.optional("name"),
            origin: Origin::at(tag.position),
            ..File::default()
        };
        self.finish(attributes, &mut file.annotations)?;
        self.empty(&tag)?;
        Ok(file)
    }

    fn array(&mut self, tag: StartTag) -> Result<Array, ParseError> {
        let mut attributes = AttributeReader::new(&tag);
        let expected = format!("one of {}", ArrayType::choices());
        let mut array = Array {
            kind: attributes.optional_with("type", &expected, ArrayType::parse)?,
            name: attributes.optional("name"),
            nelts: attributes.optional_with("nelts", "a positiveInteger", parse_integer::<u64>)?,
            origin: Origin::at(tag.position),
            ..Array::default()
        };
        self.finish(attributes, &mut array.annotations)?;
        self.empty(&tag)?;
        Ok(array)
    }
}
