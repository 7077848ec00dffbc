//! Shared machinery of the two dialect parsers: walking an element's content
//! and checking it against a DTD/XSD-style sequence content model.

use std::io::BufRead;

use crate::diagnostic::{Diagnostic, Rule, Severity};
use crate::error::{ParseError, ParseErrorKind};
use crate::reader::{Item, StartTag, XmlReader};

/// The error for `child` where the content model of `parent` does not
/// allow it (wrong parent, wrong order, or too many).
pub(crate) fn misplaced(child: &StartTag, parent: &str, reason: impl Into<String>) -> ParseError {
    ParseError::new(
        child.position,
        ParseErrorKind::Misplaced {
            element: child.local.clone(),
            parent: parent.to_string(),
            reason: reason.into(),
        },
    )
}

/// A parser warning about the element `tag` (at its start tag).
pub(crate) fn warning(rule: Rule, tag: &StartTag, message: impl Into<String>) -> Diagnostic {
    Diagnostic {
        severity: Severity::Warning,
        rule,
        position: Some(tag.position),
        element: tag.local.clone(),
        attribute: None,
        id: None,
        message: message.into(),
    }
}

/// Reads the first element of the document.
pub(crate) fn read_root<R: BufRead>(reader: &mut XmlReader<R>) -> Result<StartTag, ParseError> {
    match reader.next_item()? {
        Item::Start(tag) => Ok(tag),
        Item::Eof(p) | Item::End(p) | Item::Text(_, p) => {
            Err(ParseError::new(p, ParseErrorKind::UnexpectedEof))
        }
    }
}

/// A child element met while walking content, or the reason to stop.
pub(crate) enum Content {
    /// A child in the dialect's namespace.
    Child(StartTag),
    /// The end tag of the parent was reached.
    End,
}

/// Walks the content of one element: whitespace text is ignored, other text
/// is an error (element-only or empty content), elements in foreign
/// namespaces are skipped with a warning.
pub(crate) fn next_child<R: BufRead>(
    reader: &mut XmlReader<R>,
    parent: &StartTag,
    own_namespace: Option<&str>,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Content, ParseError> {
    if parent.is_empty {
        return Ok(Content::End);
    }
    loop {
        match reader.next_item()? {
            Item::Start(tag) => {
                if tag.namespace.as_deref() == own_namespace {
                    return Ok(Content::Child(tag));
                }
                // Another vocabulary. In the Periscope dialect an element in
                // no namespace is a mistake, not an extension: it is reported
                // by the caller as unknown.
                if tag.namespace.is_none() {
                    return Ok(Content::Child(tag));
                }
                let message = format!(
                    "element in foreign namespace {} skipped",
                    tag.namespace.as_deref().unwrap_or("")
                );
                warnings.push(warning(Rule::ForeignElement, &tag, message));
                reader.skip_element(&tag)?;
            }
            Item::Text(text, position) => {
                if !text.trim().is_empty() {
                    return Err(ParseError::new(
                        position,
                        ParseErrorKind::UnexpectedText {
                            element: parent.local.clone(),
                        },
                    ));
                }
            }
            Item::End(_) => return Ok(Content::End),
            Item::Eof(p) => return Err(ParseError::new(p, ParseErrorKind::UnexpectedEof)),
        }
    }
}

/// Reads the character content of an element declared `(#PCDATA)`.
pub(crate) fn text_content<R: BufRead>(
    reader: &mut XmlReader<R>,
    tag: &StartTag,
    warnings: &mut Vec<Diagnostic>,
) -> Result<String, ParseError> {
    let mut text = String::new();
    if tag.is_empty {
        return Ok(text);
    }
    loop {
        match reader.next_item()? {
            Item::Text(t, _) => text.push_str(&t),
            Item::Start(child) if child.namespace.is_some() => {
                let message = "element in foreign namespace skipped";
                warnings.push(warning(Rule::ForeignElement, &child, message));
                reader.skip_element(&child)?;
            }
            Item::Start(child) => {
                return Err(misplaced(&child, &tag.local, "only text is allowed"))
            }
            Item::End(_) => return Ok(text),
            Item::Eof(p) => return Err(ParseError::new(p, ParseErrorKind::UnexpectedEof)),
        }
    }
}

/// Checks children against a sequence content model such as the DTD's
/// `(alias?, location?, variable*, ...)`: each child names its step in the
/// sequence; steps must not go backwards and `?` steps occur at most once.
pub(crate) struct Sequence {
    parent: String,
    step: usize,
    count_in_step: usize,
}

/// How often a step of a sequence may occur.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Occurs {
    /// `?`
    Optional,
    /// `*` or `+` (the `+` minimum is checked by the caller).
    Many,
}

impl Sequence {
    pub fn new(parent: &StartTag) -> Self {
        Sequence {
            parent: parent.local.clone(),
            step: 0,
            count_in_step: 0,
        }
    }

    pub fn place(
        &mut self,
        child: &StartTag,
        step: usize,
        occurs: Occurs,
        order: &str,
    ) -> Result<(), ParseError> {
        if step < self.step {
            let reason = format!("out of order; the content model is {order}");
            return Err(misplaced(child, &self.parent, reason));
        }
        if step > self.step {
            self.step = step;
            self.count_in_step = 0;
        }
        self.count_in_step += 1;
        if occurs == Occurs::Optional && self.count_in_step > 1 {
            let reason = format!("may occur at most once; the content model is {order}");
            return Err(misplaced(child, &self.parent, reason));
        }
        Ok(())
    }
}
