//! Validation of a Periscope model: what the XML Schema demands beyond the
//! types (at least one unit, `xs:positiveInteger` ranges, a position before
//! arrays) plus a warning for repeated ids.

use std::collections::HashMap;

use crate::annotation::{check_annotations, Annotations};
use crate::diagnostic::{Collector, Report, Rule, Subject};
use crate::error::quote;
use crate::names::is_xml_text;
use crate::periscope::model::*;
use crate::position::Position;

impl Sir {
    pub fn validate(&self) -> Report {
        let mut checker = Checker {
            out: Collector::default(),
            ids: HashMap::new(),
        };
        let me = Subject {
            element: "sir",
            id: None,
            position: self.origin.position(),
        };
        check_annotations(&mut checker.out, me, &self.annotations);
        if self.units.is_empty() {
            checker.out.error(
                Rule::MissingRequired,
                me,
                None,
                "a sir needs at least one unit (schema: minOccurs=1)",
            );
        }
        for unit in &self.units {
            checker.unit(unit);
        }
        checker.out.into_report()
    }
}

struct Checker<'a> {
    out: Collector,
    ids: HashMap<&'a str, Option<Position>>,
}

impl<'a> Checker<'a> {
    fn common(
        &mut self,
        me: Subject<'_>,
        id: Option<&'a str>,
        strings: [(&str, Option<&str>); 3],
        annotations: &Annotations,
    ) {
        check_annotations(&mut self.out, me, annotations);
        for (attribute, value) in strings.into_iter().chain([("id", id)]) {
            if value.is_some_and(|v| !is_xml_text(v)) {
                self.out.error(
                    Rule::InvalidCharacter,
                    me,
                    Some(attribute),
                    "contains characters XML 1.0 cannot carry",
                );
            }
        }
        // The schema types ids as xs:string, not xs:ID: a repeat is legal
        // but makes the id useless to a tool, hence a warning.
        if let Some(id) = id {
            if let Some(first) = self.ids.get(id) {
                let at = first
                    .map(|p| format!(" (first at {p})"))
                    .unwrap_or_default();
                self.out.warning(
                    Rule::DuplicateId,
                    me,
                    Some("id"),
                    format!("id `{}` is used again{at}", quote(id)),
                );
            } else {
                self.ids.insert(id, me.position);
            }
        }
    }

    fn unit(&mut self, unit: &'a Unit) {
        crate::stack::guarded(|| {
            let me = Subject {
                element: "unit",
                id: unit.id.as_deref(),
                position: unit.origin.position(),
            };
            self.common(
                me,
                unit.id.as_deref(),
                [
                    ("name", unit.name.as_deref()),
                    ("datascopeclause", unit.datascopeclause.as_deref()),
                    ("type", None),
                ],
                &unit.annotations,
            );
            match &unit.position {
                Some(position) => self.position(position),
                None if !unit.arrays.is_empty() => self.out.error(
                    Rule::MissingRequired,
                    me,
                    None,
                    "arrays need a position before them (schema group pos_array)",
                ),
                None => {}
            }
            for array in &unit.arrays {
                self.array(array);
            }
            for inner in &unit.units {
                self.unit(inner);
            }
            for region in &unit.code_regions {
                self.region(region);
            }
        })
    }

    fn region(&mut self, region: &'a CodeRegion) {
        crate::stack::guarded(|| {
            let me = Subject {
                element: "codeRegion",
                id: region.id.as_deref(),
                position: region.origin.position(),
            };
            self.common(
                me,
                region.id.as_deref(),
                [
                    ("name", region.name.as_deref()),
                    ("datascopeclause", region.datascopeclause.as_deref()),
                    ("type", None),
                ],
                &region.annotations,
            );
            self.position(&region.position);
            for array in &region.arrays {
                self.array(array);
            }
            for inner in &region.code_regions {
                self.region(inner);
            }
        })
    }

    fn position(&mut self, position: &SourcePosition) {
        let me = Subject {
            element: "position",
            id: None,
            position: position.origin.position(),
        };
        check_annotations(&mut self.out, me, &position.annotations);
        for (attribute, value) in [
            ("startLine", position.start_line),
            ("endLine", position.end_line),
        ] {
            if value == Some(0) {
                self.out.error(
                    Rule::OutOfRange,
                    me,
                    Some(attribute),
                    "must be a positiveInteger",
                );
            }
        }
        if let (Some(start), Some(end)) = (position.start_line, position.end_line) {
            if start > end {
                self.out.warning(
                    Rule::OutOfRange,
                    me,
                    Some("endLine"),
                    format!("endLine {end} precedes startLine {start}"),
                );
            }
        }
        let file = Subject {
            element: "file",
            id: None,
            position: position.file.origin.position(),
        };
        check_annotations(&mut self.out, file, &position.file.annotations);
        if position
            .file
            .name
            .as_deref()
            .is_some_and(|n| !is_xml_text(n))
        {
            self.out.error(
                Rule::InvalidCharacter,
                file,
                Some("name"),
                "contains characters XML 1.0 cannot carry",
            );
        }
    }

    fn array(&mut self, array: &Array) {
        let me = Subject {
            element: "array",
            id: None,
            position: array.origin.position(),
        };
        check_annotations(&mut self.out, me, &array.annotations);
        if array.nelts == Some(0) {
            self.out.error(
                Rule::OutOfRange,
                me,
                Some("nelts"),
                "must be a positiveInteger",
            );
        }
        if array.name.as_deref().is_some_and(|n| !is_xml_text(n)) {
            self.out.error(
                Rule::InvalidCharacter,
                me,
                Some("name"),
                "contains characters XML 1.0 cannot carry",
            );
        }
    }
}
