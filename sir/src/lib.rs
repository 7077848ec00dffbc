//! # sir — the Standardized Intermediate Representation, both dialects
//!
//! SIR is how performance tools exchange program structure: units
//! (functions, subroutines, methods), code regions (loops, calls, branches,
//! OpenMP constructs, user regions) and where they are in the source. This
//! crate reads, checks, writes and converts the two published dialects:
//!
//! * **APART** ([`apart`]): the APART Working Group's SIR (Seragiotto, Truong,
//!   Mohr, Fahringer, Gerndt, Li), a DTD with prose rules, in no namespace.
//! * **Periscope** ([`periscope`]): TU München's XML Schema in namespace
//!   `http://www.lrr.in.tum.de/Periscope`.
//!
//! Measurements (cycles, instruction counts, trip counts, address ranges)
//! travel as [`annotation`]s: attributes in another namespace
//! (`urn:arpsim:measure`, prefix `m:`) on any element.
//!
//! ```
//! use sir::annotation::Metric;
//! use sir::apart::{Callee, CodeRegion, Language, Location, RegionType, Sir, Unit, UnitType};
//!
//! let mut sir = Sir::new(Language::C);
//! sir.push_unit(Unit::new("u_f", UnitType::Function).with_name("f"));
//! let mut main = Unit::new("u_main", UnitType::Function)
//!     .with_name("main")
//!     .with_location(Location::lines("file:///src/main.c", 10, 30));
//! let mut lp = CodeRegion::new("l1", RegionType::Loop).with_location(Location::lines("file:///src/main.c", 12, 20));
//! lp.push_region(CodeRegion::call("c1", Callee::to_id("u_f")));
//! lp.annotations.set_measure(Metric::TripCountMax, 100);
//! main.push_region(lp);
//! sir.push_unit(main);
//!
//! assert!(sir.validate().is_valid());
//! let xml = sir::apart::write_string(&sir).unwrap();
//! assert!(xml.contains("m:tripCountMax=\"100\""));
//! let periscope = sir::convert::to_periscope(&sir).document;
//! assert_eq!(sir::apart::parse_str(&xml).unwrap().document, sir);
//! # let _ = periscope;
//! ```
//!
//! ## Code map
//!
//! | module | concept |
//! | --- | --- |
//! | [`apart`] | APART model (`model.rs`), its parser, writer, validation |
//! | [`periscope`] | Periscope model, its parser, writer, validation |
//! | [`convert`] | conversion between the dialects, with the list of losses |
//! | [`annotation`] | namespaced extra attributes; the measurement vocabulary |
//! | [`reader`] | streaming, defensive XML layer over quick-xml; [`ParseOptions`] |
//! | `content` | content-model walking shared by both parsers |
//! | `dialect` | the parse state and grammar rules both parsers share (unknown, misplaced, EMPTY, root) |
//! | `xml_out` | escaping, indentation, namespace prefixes for both writers |
//! | [`diagnostic`] | validation findings ([`diagnostic::Report`]) |
//! | [`error`] | [`error::ParseError`], [`error::WriteError`] |
//! | [`position`] | line/column, and the [`position::Origin`] of model elements |
//! | `stack` | stack growth for the recursive walks |
//! | `names` | XML `Name`/`NCName`/`Char` rules |
//! | `namespaces` | the Periscope and ARP namespace URIs, below every module that names them |
//!
//! ## Invariants
//!
//! 1. **Parsing never panics** and never expands an entity. A DOCTYPE with an
//!    internal subset is refused, only the five predefined entities and
//!    character references are resolved, nothing is fetched. Every
//!    [`error::ParseError`] carries a 1-based line and column (columns count
//!    characters) and names the element and attribute concerned. Errors
//!    about an attribute point at the attribute's name; a missing attribute
//!    or child, at its element's start tag.
//! 2. **Parsing streams.** Input is pulled from a `BufRead`; memory beyond
//!    the model is bounded by the largest single tag or text node.
//!    [`ParseOptions`] caps nesting depth (default 256), element count
//!    (default 10 million) and input bytes (default unlimited).
//! 3. **Parsing checks the grammar, validation checks the rules.** The parser
//!    enforces what the DTD/XSD say about one element: which children, in
//!    which order, how many; which attributes, required ones, enumerations,
//!    lexical types (Table 2). It stops at the first error, because the
//!    typed model cannot hold an invalid tree. `validate()` checks what
//!    spans elements (unique ids, IDREFs resolving to the right kind of
//!    element), value ranges (positiveInteger), and the prose rules of APART
//!    sections 2.2–2.4; it works on built models too, whose findings have no
//!    position. A document is valid when the report has no `Error`.
//! 4. **Round trip.** For every model whose strings are XML text and whose
//!    annotation names are writable, `parse(write(m)) == m`. Equality ignores
//!    provenance: [`position::Origin`] and [`annotation::PrefixHints`]
//!    always compare equal. Whitespace-only differences in the text are not
//!    preserved (the writer indents canonically; an `alias` is trimmed).
//! 5. **Unknown vs foreign.** An element in the dialect's own namespace that
//!    the DTD/XSD does not allow is an error. An element in any *other*
//!    namespace is skipped with a warning ([`diagnostic::Rule::ForeignElement`]).
//!    An unprefixed attribute the element does not declare is an error; a
//!    prefixed attribute in another namespace is kept as an annotation and
//!    written back (namespaces declared on the root).
//! 6. **Conversion reports its losses.** [`convert::to_periscope`] and
//!    [`convert::to_apart`] return what they could not carry as
//!    [`convert::Loss`] entries; annotations always carry over.
//! 7. **Deep input does not overflow the stack.** The recursive walks
//!    (parse, validate, write, convert) grow their stack on the heap when it
//!    runs low. Dropping a model is recursive too; models nested thousands
//!    of levels deep should be avoided (the default depth limit keeps parsed
//!    ones far below that).
//!
//! The decisions taken where the specifications are ambiguous or wrong are
//! listed in `sir/README.md`; the fixes to the published examples in
//! `sir/tests/fixtures/NOTES.md`.

#![forbid(unsafe_code)]

pub mod annotation;
pub mod apart;
pub mod arp;
mod content;
pub mod convert;
pub mod diagnostic;
mod dialect;
mod document;
pub mod error;
pub(crate) mod names;
mod namespaces;
pub mod periscope;
pub mod position;
pub mod reader;
mod stack;
mod xml_out;

pub use document::{parse, parse_str, Dialect, Document};
pub use reader::ParseOptions;
