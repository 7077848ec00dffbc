//! The streaming, defensive XML layer under both dialect parsers.
//!
//! It turns quick-xml events into a few simple items (start tag with resolved
//! namespaces, text, end) and enforces what both dialects share:
//!
//! * every item carries the line and column of its first character;
//! * a DOCTYPE with an internal subset is refused and no entity other than the
//!   five predefined ones and character references is ever resolved, so no
//!   entity-expansion or external-entity attack can work;
//! * input is read from a `BufRead` a piece at a time; apart from the model
//!   being built, memory is bounded by the largest single tag or text node,
//!   and [`ParseOptions`] caps input size, element count and nesting depth.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead};

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

use crate::annotation::{XMLNS_NS, XML_NS};
use crate::error::{ParseError, ParseErrorKind};
use crate::namespaces::ARP as ARP_NS;
use crate::position::Position;

/// Limits that keep hostile or runaway input from exhausting the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOptions {
    /// Deepest element nesting accepted (the root is depth 1). The dialect
    /// parsers recurse once per level, so keep this modest.
    pub max_depth: usize,
    /// Most elements accepted in one document.
    pub max_elements: u64,
    /// Most input bytes read; `None` for no limit. Also bounds the size of a
    /// single tag or text node, which is buffered whole.
    pub max_input_bytes: Option<u64>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_depth: 256,
            max_elements: 10_000_000,
            max_input_bytes: None,
        }
    }
}

/// An attribute with its namespace resolved.
#[derive(Debug, Clone)]
pub(crate) struct Attribute {
    /// `None` for unprefixed attributes (they belong to their element).
    pub namespace: Option<String>,
    pub prefix: Option<String>,
    pub local: String,
    pub value: String,
    /// Where the attribute's name starts.
    pub position: Position,
}

/// A start tag (or empty-element tag) with its namespace resolved.
#[derive(Debug, Clone)]
pub(crate) struct StartTag {
    pub namespace: Option<String>,
    pub local: String,
    pub attributes: Vec<Attribute>,
    pub position: Position,
    /// `<x/>`: no content and no end item follow.
    pub is_empty: bool,
}

#[derive(Debug)]
pub(crate) enum Item {
    Start(StartTag),
    /// Character data (text, CDATA, or a resolved reference) at `position`.
    Text(String, Position),
    End(Position),
    Eof(Position),
}

/// Counts lines and columns of the bytes quick-xml consumes, and stops
/// supplying bytes past `max_input_bytes`.
struct CountingReader<R> {
    inner: R,
    consumed: u64,
    line: u64,
    column: u64,
    limit: Option<u64>,
    /// The last byte consumed and where it was: quick-xml consumes the `<`
    /// (or `&`) that ends a text node as part of the text event.
    last_byte: Option<(u8, Position)>,
}

/// Marker carried inside the `io::Error` that the byte limit produces.
const INPUT_LIMIT_MESSAGE: &str = "input larger than max_input_bytes";

impl<R: BufRead> CountingReader<R> {
    fn position(&self) -> Position {
        Position::new(self.line, self.column)
    }
}

impl<R: BufRead> io::Read for CountingReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for CountingReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let limit = self.limit;
        let consumed = self.consumed;
        let buf = self.inner.fill_buf()?;
        match limit {
            Some(limit) if !buf.is_empty() => {
                let remaining = limit.saturating_sub(consumed);
                if remaining == 0 {
                    return Err(io::Error::other(INPUT_LIMIT_MESSAGE));
                }
                let n = usize::try_from(remaining)
                    .unwrap_or(usize::MAX)
                    .min(buf.len());
                Ok(&buf[..n])
            }
            _ => Ok(buf),
        }
    }

    fn consume(&mut self, amount: usize) {
        // The bytes being consumed are still the front of the inner buffer.
        if let Ok(buf) = self.inner.fill_buf() {
            for &byte in &buf[..amount.min(buf.len())] {
                self.last_byte = Some((byte, Position::new(self.line, self.column)));
                if byte == b'\n' {
                    self.line += 1;
                    self.column = 1;
                } else if byte & 0xC0 != 0x80 {
                    // Not a UTF-8 continuation byte: a new character.
                    self.column += 1;
                }
            }
        }
        self.consumed += amount as u64;
        self.inner.consume(amount);
    }
}

/// The event source both dialect parsers pull from.
pub(crate) struct XmlReader<R: BufRead> {
    reader: NsReader<CountingReader<R>>,
    buf: Vec<u8>,
    options: ParseOptions,
    depth: usize,
    elements: u64,
    root_seen: bool,
    root_closed: bool,
    /// Start of the next event when the previous text event already consumed
    /// its first byte.
    next_start: Option<Position>,
}

impl<R: BufRead> XmlReader<R> {
    pub fn new(input: R, options: &ParseOptions) -> Self {
        let counting = CountingReader {
            inner: input,
            consumed: 0,
            line: 1,
            column: 1,
            limit: options.max_input_bytes,
            last_byte: None,
        };
        let mut reader = NsReader::from_reader(counting);
        let config = reader.config_mut();
        config.check_end_names = true;
        config.check_comments = true;
        config.expand_empty_elements = false;
        config.trim_text_start = false;
        config.trim_text_end = false;
        XmlReader {
            reader,
            buf: Vec::new(),
            options: options.clone(),
            depth: 0,
            elements: 0,
            root_seen: false,
            root_closed: false,
            next_start: None,
        }
    }

    /// Position of the next unread byte.
    fn here(&self) -> Position {
        self.reader.get_ref().position()
    }

    fn error(&self, position: Position, kind: ParseErrorKind) -> ParseError {
        ParseError::new(position, kind)
    }

    /// The next item that matters to a dialect parser; comments, processing
    /// instructions and the XML declaration are consumed here.
    pub fn next_item(&mut self) -> Result<Item, ParseError> {
        // The event borrows the buffer; keeping the buffer outside `self`
        // leaves `self` free for the helpers.
        let mut buf = std::mem::take(&mut self.buf);
        let item = self.next_item_into(&mut buf);
        self.buf = buf;
        item
    }

    fn next_item_into(&mut self, buf: &mut Vec<u8>) -> Result<Item, ParseError> {
        loop {
            let position = self.next_start.take().unwrap_or_else(|| self.here());
            buf.clear();
            let event = self.reader.read_resolved_event_into(buf);
            let (namespace, event) = match event {
                Ok((ns, event)) => (owned_namespace(ns), event),
                Err(e) => {
                    let at = self.here();
                    return Err(self.error(at, classify_xml_error(&e)));
                }
            };
            if matches!(event, Event::Text(_)) {
                if let Some((b'<' | b'&', at)) = self.reader.get_ref().last_byte {
                    self.next_start = Some(at);
                }
            }
            if let Some(item) = self.item(namespace, event, position)? {
                return Ok(item);
            }
        }
    }

    /// The item an event starting at `position` makes; `None` for the
    /// events consumed here.
    fn item(
        &mut self,
        namespace: Result<Option<Vec<u8>>, String>,
        event: Event<'_>,
        position: Position,
    ) -> Result<Option<Item>, ParseError> {
        let item = match event {
            Event::Start(_) | Event::Empty(_) if self.root_closed => {
                return Err(self.error(position, ParseErrorKind::TrailingContent));
            }
            Event::Start(start) => {
                let tag = self.start_tag(namespace, &start, position, false)?;
                self.depth += 1;
                Item::Start(tag)
            }
            Event::Empty(start) => {
                let tag = self.start_tag(namespace, &start, position, true)?;
                if self.depth == 0 {
                    self.root_closed = true;
                }
                Item::Start(tag)
            }
            Event::End(_) => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.root_closed = true;
                }
                Item::End(position)
            }
            Event::Text(text) => {
                let text = decoded(text.decode(), position)?;
                if self.depth == 0 && text.trim().is_empty() {
                    return Ok(None);
                }
                self.character_data(text, position, "text")?
            }
            Event::CData(data) => {
                let text = decoded(data.decode(), position)?;
                self.character_data(text, position, "CDATA")?
            }
            Event::GeneralRef(reference) => {
                let text = resolve_reference(&reference, position)?;
                self.character_data(text, position, "reference")?
            }
            Event::DocType(doctype) => {
                // XML 1.0 section 2.8: an internal subset is the part in
                // brackets. Without one, the DOCTYPE names an external DTD
                // that is never fetched, so it is harmless and ignored.
                if doctype.contains(&b'[') {
                    return Err(self.error(position, ParseErrorKind::InternalSubset));
                }
                return Ok(None);
            }
            Event::Decl(decl) => {
                if let Some(Ok(encoding)) = decl.encoding() {
                    let encoding = String::from_utf8_lossy(&encoding).into_owned();
                    if !encoding.eq_ignore_ascii_case("utf-8")
                        && !encoding.eq_ignore_ascii_case("utf8")
                    {
                        return Err(self.error(position, ParseErrorKind::Encoding(encoding)));
                    }
                }
                return Ok(None);
            }
            Event::Comment(_) | Event::PI(_) => return Ok(None),
            Event::Eof => {
                if !self.root_closed {
                    return Err(self.error(position, ParseErrorKind::UnexpectedEof));
                }
                Item::Eof(position)
            }
        };
        Ok(Some(item))
    }

    /// Character data (`what`: text, CDATA, a reference), which only the
    /// root element may hold.
    fn character_data(
        &self,
        text: String,
        position: Position,
        what: &str,
    ) -> Result<Item, ParseError> {
        if self.depth == 0 {
            let message = format!("{what} outside the root element");
            return Err(self.error(position, ParseErrorKind::Malformed(message)));
        }
        Ok(Item::Text(text, position))
    }

    fn start_tag(
        &mut self,
        namespace: Result<Option<Vec<u8>>, String>,
        start: &BytesStart<'_>,
        position: Position,
        is_empty: bool,
    ) -> Result<StartTag, ParseError> {
        let tag_position = position;
        self.elements += 1;
        if self.elements > self.options.max_elements {
            return Err(self.error(
                position,
                ParseErrorKind::LimitExceeded(format!(
                    "more than {} elements",
                    self.options.max_elements
                )),
            ));
        }
        // `depth` counts open elements; this one would be at depth + 1.
        if self.depth + 1 > self.options.max_depth {
            return Err(self.error(
                position,
                ParseErrorKind::LimitExceeded(format!(
                    "nesting deeper than {} elements",
                    self.options.max_depth
                )),
            ));
        }
        if self.depth == 0 {
            if self.root_seen {
                return Err(self.error(position, ParseErrorKind::TrailingContent));
            }
            self.root_seen = true;
        }
        let namespace = namespace
            .map_err(|prefix| self.error(position, ParseErrorKind::UnboundPrefix(prefix)))?;
        let namespace = match namespace {
            Some(raw) => Some(namespace_uri(&raw, position)?),
            None => None,
        };
        let local = utf8(start.local_name().as_ref(), position)?;
        let element = utf8(start.name().as_ref(), position)?;

        let attributes = self.attributes(start, tag_position, &element)?;
        Ok(StartTag {
            namespace,
            local,
            attributes,
            position: tag_position,
            is_empty,
        })
    }

    /// The attributes of a start tag, namespaces resolved, in time linear in
    /// their number: duplicates are found through hash sets and positions by
    /// advancing from the previous attribute, not from the `<`.
    fn attributes(
        &mut self,
        start: &BytesStart<'_>,
        tag_position: Position,
        element: &str,
    ) -> Result<Vec<Attribute>, ParseError> {
        let mut attributes: Vec<Attribute> = Vec::new();
        let raw_tag: &[u8] = start;
        let mut raw_names: HashSet<&[u8]> = HashSet::new();
        let mut names: HashSet<(Option<String>, String)> = HashSet::new();
        let (mut scanned, mut position) = (0usize, advance(tag_position, b"<"));
        // The prefixes this very tag declares, looked up in a map: quick-xml
        // resolves a prefix by a scan of every binding in scope, quadratic
        // in the prefixed attributes of a tag that declares each of them
        // (issue 30, N22: 80k took 14.9 s). Declared here, they shadow any
        // outer binding; other prefixes are resolved by quick-xml.
        let mut declared: HashMap<&[u8], &[u8]> = HashMap::new();
        for attribute in start.attributes().with_checks(false).flatten() {
            if let Some(prefix) = attribute.key.into_inner().strip_prefix(b"xmlns:") {
                if let std::borrow::Cow::Borrowed(value) = attribute.value {
                    declared.insert(prefix, value);
                }
            }
        }
        // quick-xml's own duplicate check compares each key with all earlier
        // ones (quadratic); the sets below do the same job.
        for attribute in start.attributes().with_checks(false) {
            let attribute = attribute
                .map_err(|e| self.error(tag_position, ParseErrorKind::Malformed(e.to_string())))?;
            let key = attribute.key;
            // The key borrows from the tag's bytes: its offset there, counted
            // from the `<`, gives the attribute's line and column.
            let offset = (key.as_ref().as_ptr() as usize).wrapping_sub(raw_tag.as_ptr() as usize);
            if let Some(between) = raw_tag.get(scanned..offset) {
                position = advance(position, between);
                scanned = offset;
            }
            let qname = utf8(key.as_ref(), position)?;
            let duplicate = |reader: &Self| {
                reader.error(
                    position,
                    ParseErrorKind::DuplicateAttribute {
                        element: element.to_string(),
                        attribute: qname.clone(),
                    },
                )
            };
            if !raw_names.insert(key.into_inner()) {
                return Err(duplicate(self));
            }
            if qname == "xmlns" || qname.starts_with("xmlns:") {
                continue; // namespace declarations: the writer makes its own
            }
            let value = attribute
                .decode_and_unescape_value(self.reader.decoder())
                .map_err(|e| self.error(position, classify_xml_error(&e)))?
                .into_owned();
            let (prefix, local_name) = match qname.split_once(':') {
                Some((p, l)) => (Some(p.to_string()), l.to_string()),
                None => (None, qname.clone()),
            };
            let namespace = match &prefix {
                None => None,
                Some(p) if p == "xml" => Some(XML_NS.to_string()),
                Some(p) => match declared.get(p.as_bytes()) {
                    Some(ns) if !ns.is_empty() => Some(namespace_uri(ns, position)?),
                    Some(_) => {
                        return Err(self.error(position, ParseErrorKind::UnboundPrefix(p.clone())))
                    }
                    None => match self.reader.resolve_attribute(key).0 {
                        ResolveResult::Bound(ns) => Some(namespace_uri(ns.as_ref(), position)?),
                        _ => {
                            return Err(
                                self.error(position, ParseErrorKind::UnboundPrefix(p.clone()))
                            )
                        }
                    },
                },
            };
            if namespace.as_deref() == Some(XMLNS_NS) {
                continue;
            }
            if !names.insert((namespace.clone(), local_name.clone())) {
                return Err(duplicate(self));
            }
            check_arp_name(namespace.as_deref(), &local_name, &value, element, &qname)
                .map_err(|kind| self.error(position, kind))?;
            attributes.push(Attribute {
                namespace,
                prefix,
                local: local_name,
                value,
                position,
            });
        }
        Ok(attributes)
    }

    /// Skips the content of an element whose start tag was just read
    /// (used for foreign elements). Limits still apply inside.
    pub fn skip_element(&mut self, tag: &StartTag) -> Result<(), ParseError> {
        if tag.is_empty {
            return Ok(());
        }
        let mut open = 1usize;
        while open > 0 {
            match self.next_item()? {
                Item::Start(inner) if !inner.is_empty => open += 1,
                Item::End(_) => open -= 1,
                Item::Eof(p) => return Err(self.error(p, ParseErrorKind::UnexpectedEof)),
                _ => {}
            }
        }
        Ok(())
    }

    /// After the root element: only comments, PIs and whitespace may follow.
    pub fn expect_eof(&mut self) -> Result<(), ParseError> {
        match self.next_item()? {
            Item::Eof(_) => Ok(()),
            Item::Start(t) => Err(self.error(t.position, ParseErrorKind::TrailingContent)),
            Item::Text(_, p) | Item::End(p) => Err(self.error(p, ParseErrorKind::TrailingContent)),
        }
    }
}

/// Decoded character data, or an encoding error at `position`.
fn decoded<E: std::fmt::Display>(
    text: Result<std::borrow::Cow<'_, str>, E>,
    position: Position,
) -> Result<String, ParseError> {
    text.map(std::borrow::Cow::into_owned)
        .map_err(|e| ParseError::new(position, ParseErrorKind::Encoding(e.to_string())))
}

/// The text of a character reference or of one of the five predefined
/// entities; any other entity is refused, never expanded.
fn resolve_reference(
    reference: &quick_xml::events::BytesRef<'_>,
    position: Position,
) -> Result<String, ParseError> {
    let name = decoded(reference.decode(), position)?;
    match reference.resolve_char_ref() {
        Ok(Some(c)) => Ok(c.to_string()),
        Ok(None) => match quick_xml::escape::resolve_predefined_entity(&name) {
            Some(s) => Ok(s.to_string()),
            None => Err(ParseError::new(
                position,
                ParseErrorKind::CustomEntity(name),
            )),
        },
        Err(e) => Err(ParseError::new(
            position,
            ParseErrorKind::Malformed(e.to_string()),
        )),
    }
}

/// An empty `arp:name` would make every section path built from it start
/// with a separator, so it is refused where it is written.
fn check_arp_name(
    namespace: Option<&str>,
    local: &str,
    value: &str,
    element: &str,
    qname: &str,
) -> Result<(), ParseErrorKind> {
    if namespace == Some(ARP_NS) && local == "name" && value.trim().is_empty() {
        return Err(ParseErrorKind::InvalidValue {
            element: element.to_string(),
            attribute: qname.to_string(),
            value: value.to_string(),
            expected: "a section name (it must not be empty)".to_string(),
        });
    }
    Ok(())
}

/// The position after `bytes`, starting at `from`.
fn advance(from: Position, bytes: &[u8]) -> Position {
    let mut at = from;
    for &byte in bytes {
        if byte == b'\n' {
            at.line += 1;
            at.column = 1;
        } else if byte & 0xC0 != 0x80 {
            at.column += 1;
        }
    }
    at
}

fn utf8(bytes: &[u8], position: Position) -> Result<String, ParseError> {
    std::str::from_utf8(bytes)
        .map(str::to_string)
        .map_err(|e| ParseError::new(position, ParseErrorKind::Encoding(e.to_string())))
}

/// quick-xml resolves prefixes to the raw text of the `xmlns` attribute;
/// the namespace is that text with its references resolved.
fn namespace_uri(raw: &[u8], position: Position) -> Result<String, ParseError> {
    let text = utf8(raw, position)?;
    match quick_xml::escape::unescape(&text) {
        Ok(uri) => Ok(uri.into_owned()),
        Err(quick_xml::escape::EscapeError::UnrecognizedEntity(_, name)) => Err(ParseError::new(
            position,
            ParseErrorKind::CustomEntity(name),
        )),
        Err(e) => Err(ParseError::new(
            position,
            ParseErrorKind::Malformed(e.to_string()),
        )),
    }
}

/// `Ok(None)`: no namespace; `Err(prefix)`: the prefix is unbound.
fn owned_namespace(ns: ResolveResult<'_>) -> Result<Option<Vec<u8>>, String> {
    match ns {
        ResolveResult::Unbound => Ok(None),
        ResolveResult::Bound(ns) => Ok(Some(ns.as_ref().to_vec())),
        ResolveResult::Unknown(prefix) => Err(String::from_utf8_lossy(&prefix).into_owned()),
    }
}

fn classify_xml_error(error: &quick_xml::Error) -> ParseErrorKind {
    use quick_xml::escape::EscapeError;
    match error {
        quick_xml::Error::Io(e) if e.to_string().contains(INPUT_LIMIT_MESSAGE) => {
            ParseErrorKind::LimitExceeded(INPUT_LIMIT_MESSAGE.to_string())
        }
        quick_xml::Error::Io(e) => ParseErrorKind::Io(e.to_string()),
        quick_xml::Error::Encoding(e) => ParseErrorKind::Encoding(e.to_string()),
        quick_xml::Error::Escape(EscapeError::UnrecognizedEntity(_, name)) => {
            ParseErrorKind::CustomEntity(name.clone())
        }
        other => ParseErrorKind::Malformed(other.to_string()),
    }
}

/// Reads the attributes of a tag by name, remembering which were used so
/// that the rest can be reported as unknown or kept as annotations.
pub(crate) struct AttributeReader<'t> {
    tag: &'t StartTag,
    used: Vec<bool>,
}

impl<'t> AttributeReader<'t> {
    pub fn new(tag: &'t StartTag) -> Self {
        AttributeReader {
            tag,
            used: vec![false; tag.attributes.len()],
        }
    }

    fn error(&self, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.tag.position, kind)
    }

    /// Position of an unprefixed attribute, or of the tag when it is absent.
    fn position_of(&self, name: &str) -> Position {
        self.tag
            .attributes
            .iter()
            .find(|a| a.namespace.is_none() && a.local == name)
            .map_or(self.tag.position, |a| a.position)
    }

    /// An unprefixed attribute's value.
    pub fn optional(&mut self, name: &str) -> Option<String> {
        let index = self
            .tag
            .attributes
            .iter()
            .position(|a| a.namespace.is_none() && a.local == name)?;
        self.used[index] = true;
        Some(self.tag.attributes[index].value.clone())
    }

    pub fn required(&mut self, name: &str) -> Result<String, ParseError> {
        self.optional(name).ok_or_else(|| {
            self.error(ParseErrorKind::MissingAttribute {
                element: self.tag.local.clone(),
                attribute: name.to_string(),
            })
        })
    }

    /// An optional attribute converted by `parse`; `expected` names the type
    /// for the error message.
    pub fn optional_with<T>(
        &mut self,
        name: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, ParseError> {
        match self.optional(name) {
            None => Ok(None),
            Some(value) => match parse(&value) {
                Some(v) => Ok(Some(v)),
                None => Err(self.invalid(name, &value, expected)),
            },
        }
    }

    pub fn required_with<T>(
        &mut self,
        name: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ParseError> {
        let value = self.required(name)?;
        parse(&value).ok_or_else(|| self.invalid(name, &value, expected))
    }

    pub fn invalid(&self, name: &str, value: &str, expected: &str) -> ParseError {
        ParseError::new(
            self.position_of(name),
            ParseErrorKind::InvalidValue {
                element: self.tag.local.clone(),
                attribute: name.to_string(),
                value: value.to_string(),
                expected: expected.to_string(),
            },
        )
    }

    /// Ends reading: unprefixed attributes not read are unknown (the DTD's
    /// ATTLIST and the XSD's complexType are closed); attributes in a
    /// namespace other than `own_namespace` become annotations.
    pub fn finish(
        self,
        own_namespace: Option<&str>,
        annotations: &mut crate::annotation::Annotations,
        prefixes: &mut crate::annotation::PrefixHints,
    ) -> Result<(), ParseError> {
        for (attribute, used) in self.tag.attributes.iter().zip(&self.used) {
            if *used {
                continue;
            }
            match &attribute.namespace {
                Some(ns) if Some(ns.as_str()) != own_namespace => {
                    annotations.set(ns.clone(), attribute.local.clone(), attribute.value.clone());
                    if let Some(prefix) = &attribute.prefix {
                        prefixes.prefer(ns, prefix);
                    }
                }
                _ => {
                    let name = match &attribute.prefix {
                        Some(p) => format!("{p}:{}", attribute.local),
                        None => attribute.local.clone(),
                    };
                    return Err(ParseError::new(
                        attribute.position,
                        ParseErrorKind::UnknownAttribute {
                            element: self.tag.local.clone(),
                            attribute: name,
                        },
                    ));
                }
            }
        }
        Ok(())
    }
}

/// XML Schema `xs:boolean` restricted to the DTD enumeration `(true|false)`.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// XML Schema integer lexical space (whitespace collapsed, optional sign),
/// parsed into `T`; `None` when not an integer or out of `T`'s range.
pub(crate) fn parse_integer<T: std::str::FromStr>(s: &str) -> Option<T> {
    let s = s.trim();
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(xml: &str) -> Result<Vec<String>, ParseError> {
        let mut reader = XmlReader::new(xml.as_bytes(), &ParseOptions::default());
        let mut out = Vec::new();
        loop {
            match reader.next_item()? {
                Item::Start(t) => out.push(format!("<{}@{}", t.local, t.position)),
                Item::Text(t, p) => {
                    if !t.trim().is_empty() {
                        out.push(format!("'{t}'@{p}"))
                    }
                }
                Item::End(p) => out.push(format!(">@{p}")),
                Item::Eof(_) => return Ok(out),
            }
        }
    }

    #[test]
    fn positions_are_line_and_column_of_the_first_character() {
        let got = items("<?xml version=\"1.0\"?>\n<a>\n  <bé/>\n  <c>x</c>\n</a>\n").unwrap();
        assert_eq!(
            got,
            ["<a@2:1", "<bé@3:3", "<c@4:3", "'x'@4:6", ">@4:7", ">@5:1"]
        );
    }

    #[test]
    fn predefined_and_character_references_are_resolved() {
        let got = items("<a>&lt;&#65;&#x42;</a>").unwrap();
        assert_eq!(got, ["<a@1:1", "'<'@1:4", "'A'@1:8", "'B'@1:13", ">@1:19"]);
    }

    #[test]
    fn custom_entities_are_refused() {
        let err = items("<a>&lol;</a>").unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::CustomEntity("lol".into()));
        assert_eq!(err.position, Position::new(1, 4));
        let err = items("<a x=\"&lol;\"/>").unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::CustomEntity("lol".into()));
    }

    #[test]
    fn internal_subset_is_refused_but_external_doctype_is_ignored() {
        let attack = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]>\n<lolz>&lol2;</lolz>";
        let err = items(attack).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::InternalSubset);
        assert_eq!(err.position, Position::new(2, 1));
        assert!(items("<!DOCTYPE sir SYSTEM \"sir.dtd\"><sir/>").is_ok());
    }

    #[test]
    fn limits_stop_reading() {
        let deep = "<a>".repeat(10) + &"</a>".repeat(10);
        let options = ParseOptions {
            max_depth: 5,
            ..ParseOptions::default()
        };
        let mut reader = XmlReader::new(deep.as_bytes(), &options);
        let err = loop {
            match reader.next_item() {
                Err(e) => break e,
                Ok(Item::Eof(_)) => panic!("depth limit not applied"),
                Ok(_) => {}
            }
        };
        assert!(matches!(err.kind, ParseErrorKind::LimitExceeded(_)));
        assert_eq!(err.position, Position::new(1, 16));

        let options = ParseOptions {
            max_input_bytes: Some(8),
            ..ParseOptions::default()
        };
        let mut reader = XmlReader::new("<a><b/><c/></a>".as_bytes(), &options);
        let err = loop {
            match reader.next_item() {
                Err(e) => break e,
                Ok(Item::Eof(_)) => panic!("byte limit not applied"),
                Ok(_) => {}
            }
        };
        assert!(
            matches!(err.kind, ParseErrorKind::LimitExceeded(_)),
            "{err}"
        );
    }

    #[test]
    fn malformed_input_reports_a_position() {
        let err = items("<a>\n<b></a>").unwrap_err();
        assert!(matches!(err.kind, ParseErrorKind::Malformed(_)), "{err}");
        assert_eq!(err.position.line, 2);
        assert_eq!(items("").unwrap_err().kind, ParseErrorKind::UnexpectedEof);
        assert_eq!(
            items("<a/><b/>").unwrap_err().kind,
            ParseErrorKind::TrailingContent
        );
    }

    #[test]
    fn integers_follow_the_xml_schema_lexical_space() {
        assert_eq!(parse_integer::<u64>(" 12 "), Some(12));
        assert_eq!(parse_integer::<i64>("-3"), Some(-3));
        assert_eq!(parse_integer::<u64>("-3"), None);
        assert_eq!(parse_integer::<u64>("1e3"), None);
        assert_eq!(parse_integer::<u64>(""), None);
    }
}
