//! Findings of validation (and warnings of the parser): what is wrong, where,
//! and on which element and attribute.

use std::fmt;

use crate::position::Position;

/// How bad a finding is. A document is valid when it has no `Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

/// The rule a finding is about; tests and tools match on this, people read
/// the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// Two elements carry the same ID (DTD `ID` type; XML 1.0 "Validity
    /// constraint: ID").
    DuplicateId,
    /// An ID is not an XML `Name` (XML 1.0 production 5).
    InvalidId,
    /// An IDREF/IDREFS value names no element (XML 1.0 "Validity constraint: IDREF").
    DanglingReference,
    /// An IDREF resolves, but to the wrong kind of element (e.g. a `callee`
    /// naming a variable; APART 2.4, 2.5).
    WrongReferenceTarget,
    /// A required attribute or child is missing, or one of "either A or B" is
    /// absent (e.g. `callee` without `id` and `name`).
    MissingRequired,
    /// A number outside the range its XML Schema type allows (APART Table 2,
    /// Periscope `xs:positiveInteger`).
    OutOfRange,
    /// An element where the nesting rules of APART 2.2–2.4 do not allow it.
    Nesting,
    /// A string holds characters XML 1.0 cannot carry (production 2).
    InvalidCharacter,
    /// An annotation has an unusable namespace or local name.
    InvalidAnnotation,
    /// A code-region type that looks like a recommended one but is spelled
    /// differently (APART 2.4 lists `assign` and `ParallelFlush` in the DTD
    /// comment; the text uses `assignment` and `parallelFlush`).
    NonCanonicalType,
    /// An element in a foreign namespace that the parser skipped.
    ForeignElement,
}

/// One finding, with everything needed to find it in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub rule: Rule,
    /// Position of the start tag of `element`, when the model was parsed.
    pub position: Option<Position>,
    /// Element name, e.g. `codeRegion`.
    pub element: String,
    /// The attribute concerned, if any.
    pub attribute: Option<String>,
    /// The `id` of the element, if it has one; helps to find built elements.
    pub id: Option<String>,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "{p}: ")?,
            None => write!(f, "(built): ")?,
        }
        let severity = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{severity}: <{}", self.element)?;
        if let Some(id) = &self.id {
            write!(f, " id=\"{id}\"")?;
        }
        write!(f, ">")?;
        if let Some(attribute) = &self.attribute {
            write!(f, " attribute `{attribute}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// All findings of one validation run, in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// True when there is no error (warnings allowed).
    pub fn is_valid(&self) -> bool {
        self.errors().next().is_none()
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
    }

    /// Findings about one rule; convenient in tests.
    pub fn with_rule(&self, rule: Rule) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(move |d| d.rule == rule)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.diagnostics {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Builds diagnostics while walking a model.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    pub diagnostics: Vec<Diagnostic>,
}

/// What a finding is about: element name, its id, and where it was parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Subject<'a> {
    pub element: &'a str,
    pub id: Option<&'a str>,
    pub position: Option<Position>,
}

impl Collector {
    pub fn push(
        &mut self,
        severity: Severity,
        rule: Rule,
        subject: Subject<'_>,
        attribute: Option<&str>,
        message: impl Into<String>,
    ) {
        self.diagnostics.push(Diagnostic {
            severity,
            rule,
            position: subject.position,
            element: subject.element.to_string(),
            attribute: attribute.map(str::to_string),
            id: subject.id.map(str::to_string),
            message: message.into(),
        });
    }

    pub fn error(
        &mut self,
        rule: Rule,
        subject: Subject<'_>,
        attribute: Option<&str>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Error, rule, subject, attribute, message);
    }

    pub fn warning(
        &mut self,
        rule: Rule,
        subject: Subject<'_>,
        attribute: Option<&str>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Warning, rule, subject, attribute, message);
    }

    pub fn into_report(self) -> Report {
        Report {
            diagnostics: self.diagnostics,
        }
    }
}

/// A parsed document with the parser's warnings (e.g. skipped foreign
/// elements). Validation findings are separate: see `validate()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<T> {
    pub document: T,
    pub warnings: Vec<Diagnostic>,
}

impl<T> Parsed<T> {
    /// The same parse with the document converted by `f`.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Parsed<U> {
        Parsed {
            document: f(self.document),
            warnings: self.warnings,
        }
    }
}
