//! What the two dialect parsers share above content walking (`content`):
//! the state of one parse (reader, warnings, namespace prefixes seen) and
//! the grammar rules both dialects follow, written once: which root is
//! right, when a child is unknown or misplaced, which attributes become
//! annotations, what an EMPTY element may hold, which required child is
//! missing. A dialect says what differs in its [`Vocabulary`].

use std::io::BufRead;

use crate::annotation::{Annotations, PrefixHints};
use crate::content::{misplaced, next_child, read_root, text_content, Content};
use crate::diagnostic::{Diagnostic, Parsed};
use crate::error::{ParseError, ParseErrorKind};
use crate::position::Origin;
use crate::reader::{AttributeReader, ParseOptions, StartTag, XmlReader};

/// What a dialect tells the shared rules about itself.
pub(crate) struct Vocabulary {
    /// The dialect's name in messages.
    pub name: &'static str,
    /// The namespace of its elements and of its root `sir` (`None`: no
    /// namespace).
    pub namespace: Option<&'static str>,
    /// Every element name it declares; a child of another name is unknown.
    pub elements: &'static [&'static str],
    /// What declares its content models, in messages ("the DTD").
    pub grammar: &'static str,
}

/// A dialect's grammar as the shared parsing sees it.
pub(crate) trait Grammar {
    /// The model of a whole document.
    type Document;
    const VOCABULARY: &'static Vocabulary;
    /// Reads the root element, `sir`, and everything in it.
    fn read_root<R: BufRead>(
        xml: &mut DialectReader<'_, R>,
        root: StartTag,
    ) -> Result<Self::Document, ParseError>;
    /// Where the document keeps the prefixes the input gave annotation
    /// namespaces (the writer prefers them).
    fn prefixes(document: &mut Self::Document) -> &mut PrefixHints;
}

/// Parses a document of dialect `D`: its root must be `D`'s `sir`.
pub(crate) fn parse<D: Grammar, R: BufRead>(
    input: R,
    options: &ParseOptions,
) -> Result<Parsed<D::Document>, ParseError> {
    let mut reader = XmlReader::new(input, options);
    let root = read_root(&mut reader)?;
    if !is_root(D::VOCABULARY, &root) {
        return Err(wrong_root(&root));
    }
    parse_from_root::<D, R>(&mut reader, root)
}

/// Parses the rest of a document of dialect `D` whose root has been read;
/// only comments and whitespace may follow the root.
pub(crate) fn parse_from_root<D: Grammar, R: BufRead>(
    reader: &mut XmlReader<R>,
    root: StartTag,
) -> Result<Parsed<D::Document>, ParseError> {
    let mut xml = DialectReader::new(reader, D::VOCABULARY);
    let mut document = D::read_root(&mut xml, root)?;
    xml.reader.expect_eof()?;
    *D::prefixes(&mut document) = xml.prefixes;
    Ok(Parsed {
        document,
        warnings: xml.warnings,
    })
}

/// Whether `tag` is the root element of `vocabulary`'s dialect.
pub(crate) fn is_root(vocabulary: &Vocabulary, tag: &StartTag) -> bool {
    tag.local == "sir" && tag.namespace.as_deref() == vocabulary.namespace
}

/// The error for a root element that is not the `sir` of a dialect read.
pub(crate) fn wrong_root(root: &StartTag) -> ParseError {
    let found = match &root.namespace {
        Some(ns) => format!("<{}> in namespace {ns}", root.local),
        None => format!("<{}> in no namespace", root.local),
    };
    ParseError::new(root.position, ParseErrorKind::WrongRoot { found })
}

/// The error for an element that lacks the required child `child`; it
/// points at the element's start tag.
pub(crate) fn missing_child(tag: &StartTag, child: &str) -> ParseError {
    ParseError::new(
        tag.position,
        ParseErrorKind::MissingChild {
            parent: tag.local.clone(),
            child: child.to_string(),
        },
    )
}

/// One parse of one dialect in progress.
pub(crate) struct DialectReader<'r, R: BufRead> {
    reader: &'r mut XmlReader<R>,
    vocabulary: &'static Vocabulary,
    warnings: Vec<Diagnostic>,
    /// The prefixes the input gave annotation namespaces; the writer
    /// prefers them.
    prefixes: PrefixHints,
}

impl<'r, R: BufRead> DialectReader<'r, R> {
    fn new(reader: &'r mut XmlReader<R>, vocabulary: &'static Vocabulary) -> Self {
        DialectReader {
            reader,
            vocabulary,
            warnings: Vec::new(),
            prefixes: PrefixHints::new(),
        }
    }

    /// The next child of `parent` in the dialect's namespace; elements in
    /// other namespaces are skipped with a warning. In a dialect with a
    /// namespace a child in no namespace is an error, because its schema
    /// qualifies all elements.
    pub fn next(&mut self, parent: &StartTag) -> Result<Content, ParseError> {
        let namespace = self.vocabulary.namespace;
        let content = next_child(self.reader, parent, namespace, &mut self.warnings)?;
        if let (Content::Child(child), Some(namespace)) = (&content, namespace) {
            if child.namespace.is_none() {
                return Err(ParseError::new(
                    child.position,
                    ParseErrorKind::UnknownElement {
                        element: format!(
                            "{} (in no namespace; {} elements are in {namespace})",
                            child.local, self.vocabulary.name
                        ),
                        parent: parent.local.clone(),
                    },
                ));
            }
        }
        Ok(content)
    }

    /// The error for a child that `parent` does not allow: misplaced when
    /// the dialect declares the child's name, else unknown.
    pub fn not_allowed(&self, parent: &StartTag, child: &StartTag) -> ParseError {
        let vocabulary = self.vocabulary;
        if child.namespace.as_deref() == vocabulary.namespace
            && vocabulary.elements.contains(&child.local.as_str())
        {
            let reason = format!("{} does not allow it in this element", vocabulary.grammar);
            return misplaced(child, &parent.local, reason);
        }
        ParseError::new(
            child.position,
            ParseErrorKind::UnknownElement {
                element: child.local.clone(),
                parent: parent.local.clone(),
            },
        )
    }

    /// Ends reading a tag's attributes: unprefixed ones not read are
    /// unknown, prefixed ones in another namespace become `annotations`.
    pub fn finish(
        &mut self,
        attributes: AttributeReader<'_>,
        annotations: &mut Annotations,
    ) -> Result<(), ParseError> {
        attributes.finish(self.vocabulary.namespace, annotations, &mut self.prefixes)
    }

    /// The annotations of an element that declares no attributes.
    pub fn no_attributes(&mut self, tag: &StartTag) -> Result<Annotations, ParseError> {
        let mut annotations = Annotations::new();
        self.finish(AttributeReader::new(tag), &mut annotations)?;
        Ok(annotations)
    }

    /// The element `read` builds from `tag`'s attributes (and where the
    /// tag starts); the attributes it leaves go to the element's
    /// `annotations` or are unknown (see [`finish`](Self::finish)).
    pub fn element<T>(
        &mut self,
        tag: &StartTag,
        read: impl FnOnce(&mut AttributeReader<'_>, Origin) -> Result<T, ParseError>,
        annotations: fn(&mut T) -> &mut Annotations,
    ) -> Result<T, ParseError> {
        let mut attributes = AttributeReader::new(tag);
        let mut element = read(&mut attributes, Origin::at(tag.position))?;
        self.finish(attributes, annotations(&mut element))?;
        Ok(element)
    }

    /// [`element`](Self::element) for an element declared EMPTY: its
    /// content is read too and must be empty.
    pub fn empty_element<T>(
        &mut self,
        tag: &StartTag,
        read: impl FnOnce(&mut AttributeReader<'_>, Origin) -> Result<T, ParseError>,
        annotations: fn(&mut T) -> &mut Annotations,
    ) -> Result<T, ParseError> {
        let element = self.element(tag, read, annotations)?;
        self.empty(tag)?;
        Ok(element)
    }

    /// Consumes the content of an element declared EMPTY.
    pub fn empty(&mut self, tag: &StartTag) -> Result<(), ParseError> {
        match self.next(tag)? {
            Content::End => Ok(()),
            Content::Child(child) => Err(self.not_allowed(tag, &child)),
        }
    }

    /// The character content of an element declared `(#PCDATA)`.
    pub fn text(&mut self, tag: &StartTag) -> Result<String, ParseError> {
        text_content(self.reader, tag, &mut self.warnings)
    }

    pub fn warn(&mut self, warning: Diagnostic) {
        self.warnings.push(warning);
    }
}
