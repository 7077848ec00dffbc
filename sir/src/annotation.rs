//! Extra attributes in other namespaces, carried on every model element.
//!
//! This is how measurements are attached to a SIR without changing its
//! dialect: `<codeRegion type="loop" id="r3" m:tripCountMax="100">` with
//! `xmlns:m="urn:arpsim:measure"` on the root. The parser keeps every
//! namespace-qualified attribute whose namespace is not the dialect's own,
//! the writer writes them back and declares their namespaces on the root,
//! and validation only checks that their names are writable.

use std::collections::BTreeMap;
use std::fmt::Display;

use crate::diagnostic::{Collector, Rule, Subject};
use crate::names::{is_ncname, is_xml_text};

/// Namespace of the measurement attributes written by this project.
pub const MEASURE_NS: &str = "urn:arpsim:measure";
/// The prefix the writer prefers for [`MEASURE_NS`].
pub const MEASURE_PREFIX: &str = "m";
/// XML Schema instance namespace (`xsi:schemaLocation` on Periscope roots).
pub const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";
/// The namespace bound to `xml:` by definition (XML Namespaces 1.0, section 3).
pub const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";
/// The namespace of `xmlns` declarations; never an annotation.
pub const XMLNS_NS: &str = "http://www.w3.org/2000/xmlns/";

/// A namespace-qualified attribute name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AnnotationName {
    pub namespace: String,
    pub local: String,
}

/// Extra namespaced attributes of one element, ordered by (namespace, name)
/// so that writing is deterministic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations {
    entries: BTreeMap<AnnotationName, String>,
}

impl Annotations {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `namespace`:`local` to `value`, replacing an earlier value.
    pub fn set(
        &mut self,
        namespace: impl Into<String>,
        local: impl Into<String>,
        value: impl Into<String>,
    ) -> &mut Self {
        let name = AnnotationName {
            namespace: namespace.into(),
            local: local.into(),
        };
        self.entries.insert(name, value.into());
        self
    }

    pub fn get(&self, namespace: &str, local: &str) -> Option<&str> {
        // BTreeMap lookups need an owned key; annotations are few per element.
        self.entries
            .iter()
            .find(|(k, _)| k.namespace == namespace && k.local == local)
            .map(|(_, v)| v.as_str())
    }

    pub fn remove(&mut self, namespace: &str, local: &str) -> Option<String> {
        let key = AnnotationName {
            namespace: namespace.to_string(),
            local: local.to_string(),
        };
        self.entries.remove(&key)
    }

    /// Sets a measurement in [`MEASURE_NS`].
    pub fn set_measure(&mut self, metric: Metric, value: impl Display) -> &mut Self {
        self.set(MEASURE_NS, metric.local_name(), value.to_string())
    }

    /// Reads a measurement in [`MEASURE_NS`], as written.
    pub fn measure(&self, metric: Metric) -> Option<&str> {
        self.get(MEASURE_NS, metric.local_name())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&AnnotationName, &str)> {
        self.entries.iter().map(|(k, v)| (k, v.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The measurements this project attaches to SIR elements (attribute local
/// names in [`MEASURE_NS`]). Values are written with `Display`; integers for
/// counts, decimal for means, `0x`-prefixed hex for addresses by convention
/// of the producer (this crate does not interpret them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Cycles spent in the element including everything it calls.
    InclusiveCycles,
    /// Cycles spent in the element itself, excluding callees and nested regions.
    ExclusiveCycles,
    /// Instructions executed (inclusive).
    Instructions,
    /// How many times the element was entered.
    ExecutionCount,
    /// Loop trip count per entry: minimum, mean, maximum.
    TripCountMin,
    TripCountMean,
    TripCountMax,
    /// Lowest and highest data address touched, and the dominant stride in bytes.
    AddressLow,
    AddressHigh,
    Stride,
}

impl Metric {
    pub const ALL: [Metric; 10] = [
        Metric::InclusiveCycles,
        Metric::ExclusiveCycles,
        Metric::Instructions,
        Metric::ExecutionCount,
        Metric::TripCountMin,
        Metric::TripCountMean,
        Metric::TripCountMax,
        Metric::AddressLow,
        Metric::AddressHigh,
        Metric::Stride,
    ];

    /// The attribute's local name, e.g. `inclusiveCycles`.
    pub fn local_name(self) -> &'static str {
        match self {
            Metric::InclusiveCycles => "inclusiveCycles",
            Metric::ExclusiveCycles => "exclusiveCycles",
            Metric::Instructions => "instructions",
            Metric::ExecutionCount => "executionCount",
            Metric::TripCountMin => "tripCountMin",
            Metric::TripCountMean => "tripCountMean",
            Metric::TripCountMax => "tripCountMax",
            Metric::AddressLow => "addressLow",
            Metric::AddressHigh => "addressHigh",
            Metric::Stride => "stride",
        }
    }
}

/// Namespace URI → preferred prefix, kept on the root of a model so that a
/// parsed file is written back with the prefixes it had.
///
/// Prefixes are presentation, not content (a prefix only stands for its
/// namespace): two `PrefixHints` always compare equal, like
/// [`crate::position::Origin`].
#[derive(Debug, Clone, Default)]
pub struct PrefixHints(pub BTreeMap<String, String>);

impl PrefixHints {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, namespace: &str) -> Option<&String> {
        self.0.get(namespace)
    }

    /// Records `prefix` for `namespace` unless one is already known.
    pub fn prefer(&mut self, namespace: &str, prefix: &str) {
        self.0
            .entry(namespace.to_string())
            .or_insert_with(|| prefix.to_string());
    }
}

impl PartialEq for PrefixHints {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for PrefixHints {}

/// Annotation names must be writable: a namespace URI and an NCName.
pub(crate) fn check_annotations(
    out: &mut Collector,
    subject: Subject<'_>,
    annotations: &Annotations,
) {
    for (name, value) in annotations.iter() {
        let attribute = format!("{{{}}}{}", name.namespace, name.local);
        if name.namespace.is_empty() || name.namespace == XMLNS_NS || !is_xml_text(&name.namespace)
        {
            out.error(
                Rule::InvalidAnnotation,
                subject,
                Some(&attribute),
                "annotation namespace must be a URI",
            );
        }
        if !is_ncname(&name.local) {
            out.error(
                Rule::InvalidAnnotation,
                subject,
                Some(&attribute),
                "annotation name must be an XML NCName",
            );
        }
        if !is_xml_text(value) {
            out.error(
                Rule::InvalidCharacter,
                subject,
                Some(&attribute),
                "contains characters XML 1.0 cannot carry",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_is_stored_in_the_measure_namespace() {
        let mut a = Annotations::new();
        a.set_measure(Metric::TripCountMax, 100);
        assert_eq!(a.get(MEASURE_NS, "tripCountMax"), Some("100"));
        assert_eq!(a.measure(Metric::TripCountMax), Some("100"));
        assert_eq!(a.measure(Metric::TripCountMin), None);
        assert_eq!(a.remove(MEASURE_NS, "tripCountMax").as_deref(), Some("100"));
        assert!(a.is_empty());
    }
}
