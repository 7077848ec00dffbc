//! Writing XML text: escaping, indentation, and the prefixes of annotation
//! namespaces, shared by both dialect writers.

use std::collections::BTreeMap;

use crate::annotation::{
    Annotations, PrefixHints, MEASURE_NS, MEASURE_PREFIX, XMLNS_NS, XML_NS, XSI_NS,
};
use crate::error::WriteError;
use crate::names::{is_ncname, is_xml_text};

/// Escapes an attribute value so that parsing gives back exactly `value`:
/// whitespace other than space is written as character references because
/// attribute-value normalisation (XML 1.0 section 3.3.3) would turn it into
/// spaces.
pub(crate) fn escape_attribute(value: &str, out: &mut String) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
}

/// Escapes character data; `\r` as a reference because line-end
/// normalisation (XML 1.0 section 2.11) would drop it.
pub(crate) fn escape_text(value: &str, out: &mut String) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
}

/// An element's start tag being assembled.
pub(crate) struct Tag {
    name: &'static str,
    text: String,
}

impl Tag {
    pub fn new(name: &'static str) -> Self {
        let mut text = String::with_capacity(64);
        text.push('<');
        text.push_str(name);
        Tag { name, text }
    }

    pub fn attr(mut self, name: &str, value: &str) -> Self {
        self.text.push(' ');
        self.text.push_str(name);
        self.text.push_str("=\"");
        escape_attribute(value, &mut self.text);
        self.text.push('"');
        self
    }

    pub fn opt(self, name: &str, value: Option<&str>) -> Self {
        match value {
            Some(v) => self.attr(name, v),
            None => self,
        }
    }

    pub fn opt_display(self, name: &str, value: Option<impl std::fmt::Display>) -> Self {
        match value {
            Some(v) => self.attr(name, &v.to_string()),
            None => self,
        }
    }
}

/// Accumulates the body of a document; namespaces of annotations get
/// prefixes as they are met, and are declared on the root at the end.
pub(crate) struct XmlOut {
    body: String,
    depth: usize,
    hints: PrefixHints,
    /// namespace → prefix in use.
    prefixes: BTreeMap<String, String>,
}

impl XmlOut {
    pub fn new(hints: &PrefixHints) -> Self {
        XmlOut {
            body: String::new(),
            depth: 0,
            hints: hints.clone(),
            prefixes: BTreeMap::new(),
        }
    }

    fn prefix_for(&mut self, namespace: &str) -> String {
        if namespace == XML_NS {
            return "xml".into();
        }
        if let Some(p) = self.prefixes.get(namespace) {
            return p.clone();
        }
        let taken = |p: &str, prefixes: &BTreeMap<String, String>| {
            p == "xml" || p.starts_with("xmlns") || prefixes.values().any(|q| q == p)
        };
        let preferred = match namespace {
            MEASURE_NS => Some(MEASURE_PREFIX.to_string()),
            XSI_NS => Some("xsi".to_string()),
            _ => None,
        };
        let candidate = self
            .hints
            .get(namespace)
            .cloned()
            .filter(|p| is_ncname(p))
            .into_iter()
            .chain(preferred)
            .find(|p| !taken(p, &self.prefixes));
        let prefix = candidate.unwrap_or_else(|| {
            (1..)
                .map(|n| format!("ns{n}"))
                .find(|p| !taken(p, &self.prefixes))
                .unwrap_or_default()
        });
        self.prefixes.insert(namespace.to_string(), prefix.clone());
        prefix
    }

    /// Appends the annotation attributes to `tag`.
    pub fn annotate(&mut self, mut tag: Tag, annotations: &Annotations) -> Result<Tag, WriteError> {
        for (name, value) in annotations.iter() {
            let invalid = |reason: &str| WriteError::InvalidAnnotation {
                namespace: name.namespace.clone(),
                local: name.local.clone(),
                reason: reason.to_string(),
            };
            if name.namespace.is_empty() || name.namespace == XMLNS_NS {
                return Err(invalid(
                    "the namespace must be a non-empty URI other than the xmlns namespace",
                ));
            }
            if !is_ncname(&name.local) {
                return Err(invalid("the local name is not an XML NCName"));
            }
            if !is_xml_text(&name.namespace) || !is_xml_text(value) {
                return Err(invalid("contains characters XML cannot carry"));
            }
            let prefix = self.prefix_for(&name.namespace);
            tag = tag.attr(&format!("{prefix}:{}", name.local), value);
        }
        Ok(tag)
    }

    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.body.push_str("  ");
        }
    }

    /// `<tag .../>` on its own line.
    pub fn empty(&mut self, tag: Tag, annotations: &Annotations) -> Result<(), WriteError> {
        let tag = self.annotate(tag, annotations)?;
        self.indent();
        self.body.push_str(&tag.text);
        self.body.push_str("/>\n");
        Ok(())
    }

    /// `<tag ...>` on its own line; content follows indented. Returns the
    /// name for [`XmlOut::close`].
    pub fn open(
        &mut self,
        tag: Tag,
        annotations: &Annotations,
    ) -> Result<&'static str, WriteError> {
        let tag = self.annotate(tag, annotations)?;
        self.indent();
        self.body.push_str(&tag.text);
        self.body.push_str(">\n");
        self.depth += 1;
        Ok(tag.name)
    }

    pub fn close(&mut self, name: &'static str) {
        self.depth -= 1;
        self.indent();
        self.body.push_str("</");
        self.body.push_str(name);
        self.body.push_str(">\n");
    }

    /// `<tag>text</tag>` on one line.
    pub fn text_element(&mut self, tag: Tag, text: &str) {
        self.indent();
        self.body.push_str(&tag.text);
        self.body.push('>');
        escape_text(text, &mut self.body);
        self.body.push_str("</");
        self.body.push_str(tag.name);
        self.body.push_str(">\n");
    }

    /// The whole document: XML declaration, root start tag with namespace
    /// declarations (`default_namespace` as `xmlns`), the body, the root end.
    pub fn finish(
        self,
        root: Tag,
        default_namespace: Option<&str>,
        out: &mut dyn std::io::Write,
    ) -> Result<(), WriteError> {
        let mut root = root;
        if let Some(ns) = default_namespace {
            root = root.attr("xmlns", ns);
        }
        for (namespace, prefix) in &self.prefixes {
            root = root.attr(&format!("xmlns:{prefix}"), namespace);
        }
        out.write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")?;
        out.write_all(root.text.as_bytes())?;
        out.write_all(b">\n")?;
        out.write_all(self.body.as_bytes())?;
        out.write_all(b"</")?;
        out.write_all(root.name.as_bytes())?;
        out.write_all(b">\n")?;
        Ok(())
    }

    /// Prepares the root's own attributes (annotations included) before the
    /// body is written, so that its prefixes are chosen first.
    pub fn root(&mut self, tag: Tag, annotations: &Annotations) -> Result<Tag, WriteError> {
        self.depth = 1;
        self.annotate(tag, annotations)
    }
}
