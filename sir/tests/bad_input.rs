//! Hostile and broken input: clear errors with positions, never a panic,
//! never an expanded entity.

use sir::diagnostic::Rule;
use sir::error::ParseErrorKind;
use sir::position::Position;
use sir::{apart, periscope, ParseOptions};

fn apart_error(xml: &str) -> sir::error::ParseError {
    apart::parse_str(xml).expect_err("input must be refused")
}

#[test]
fn malformed_xml_is_reported_where_it_breaks() {
    let err = apart_error("<sir language=\"c\">\n  <unit id=\"u\" type=\"function\">\n</sir>");
    assert!(matches!(err.kind, ParseErrorKind::Malformed(_)), "{err}");
    assert_eq!(err.position.line, 3);

    let err = apart_error("<sir language=\"c\">\n  <unit id=\"u\" type=\"function\"/>\n");
    assert_eq!(err.kind, ParseErrorKind::UnexpectedEof);

    let err =
        apart_error("<sir language=\"c\" language=\"c\"><unit id=\"u\" type=\"function\"/></sir>");
    assert!(
        matches!(
            err.kind,
            ParseErrorKind::Malformed(_) | ParseErrorKind::DuplicateAttribute { .. }
        ),
        "{err}"
    );
}

#[test]
fn the_billion_laughs_document_is_refused_before_any_expansion() {
    let attack = r#"<?xml version="1.0"?>
<!DOCTYPE sir [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<sir language="c"><unit id="u" type="function" name="&lol3;"/></sir>"#;
    let err = apart_error(attack);
    assert_eq!(err.kind, ParseErrorKind::InternalSubset);
    assert_eq!(err.position, Position::new(2, 1));
}

#[test]
fn external_entities_and_undeclared_entities_are_refused() {
    let xxe = "<!DOCTYPE sir [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><sir language=\"c\"/>";
    assert_eq!(apart_error(xxe).kind, ParseErrorKind::InternalSubset);
    let err = apart_error(
        "<sir language=\"c\">\n<unit id=\"u\" type=\"function\" name=\"&xxe;\"/></sir>",
    );
    assert_eq!(err.kind, ParseErrorKind::CustomEntity("xxe".into()));
    assert_eq!(
        err.position,
        Position::new(2, 30),
        "the position of the attribute"
    );
    // The five predefined entities and character references are fine.
    let ok = apart::parse_str(
        "<sir language=\"c\"><unit id=\"u\" type=\"function\" name=\"a&lt;b&amp;&#99;\"/></sir>",
    )
    .unwrap();
    assert_eq!(ok.document.units()[0].name.as_deref(), Some("a<b&c"));
}

#[test]
fn unknown_elements_are_errors_in_either_dialect() {
    let err = apart_error(
        "<sir language=\"c\">\n  <unit id=\"u\" type=\"function\">\n    <loop/>\n  </unit>\n</sir>",
    );
    assert_eq!(
        err.kind,
        ParseErrorKind::UnknownElement {
            element: "loop".into(),
            parent: "unit".into()
        }
    );
    assert_eq!(err.position, Position::new(3, 5));

    // APART section 2.3 lists `arguments*` in the unit content model but
    // never declares the element: it is unknown.
    let err = apart_error(
        "<sir language=\"c\"><unit id=\"u\" type=\"function\"><arguments/></unit></sir>",
    );
    assert!(
        matches!(err.kind, ParseErrorKind::UnknownElement { .. }),
        "{err}"
    );

    let psc = "<sir xmlns=\"http://www.lrr.in.tum.de/Periscope\"><unit><region/></unit></sir>";
    let err = periscope::parse_str(psc).unwrap_err();
    assert!(
        matches!(err.kind, ParseErrorKind::UnknownElement { .. }),
        "{err}"
    );
    // An unqualified element inside a Periscope document is not Periscope.
    let psc = "<sir xmlns:p=\"http://www.lrr.in.tum.de/Periscope\" xmlns=\"\">\n<p:unit/></sir>";
    assert!(matches!(
        periscope::parse_str(psc).unwrap_err().kind,
        ParseErrorKind::WrongRoot { .. }
    ));
    let psc = "<p:sir xmlns:p=\"http://www.lrr.in.tum.de/Periscope\">\n  <unit/></p:sir>";
    let err = periscope::parse_str(psc).unwrap_err();
    assert!(
        matches!(err.kind, ParseErrorKind::UnknownElement { .. }),
        "{err}"
    );
    assert_eq!(err.position, Position::new(2, 3));
}

#[test]
fn elements_in_foreign_namespaces_are_skipped_with_a_warning() {
    let xml = "<sir language=\"c\" xmlns:x=\"urn:other\">\n  <unit id=\"u\" type=\"function\">\n    <x:note><x:deep/>text</x:note>\n  </unit>\n</sir>";
    let parsed = apart::parse_str(xml).unwrap();
    assert_eq!(parsed.warnings.len(), 1);
    assert_eq!(parsed.warnings[0].rule, Rule::ForeignElement);
    assert_eq!(parsed.warnings[0].position, Some(Position::new(3, 5)));
    assert!(parsed.document.validate().is_valid());
}

#[test]
fn unknown_attributes_and_bad_values_name_the_attribute() {
    let err =
        apart_error("<sir language=\"c\"><unit id=\"u\" type=\"function\" color=\"red\"/></sir>");
    assert_eq!(
        err.kind,
        ParseErrorKind::UnknownAttribute {
            element: "unit".into(),
            attribute: "color".into()
        }
    );
    assert_eq!(err.position, Position::new(1, 48));

    // Attributes on a later line of a tag are found there.
    let err =
        apart_error("<sir language=\"c\">\n  <unit id=\"u\"\n        type=\"procedure\"/></sir>");
    assert!(
        matches!(&err.kind, ParseErrorKind::InvalidValue { attribute, .. } if attribute == "type"),
        "{err}"
    );
    assert_eq!(err.position, Position::new(3, 9));

    let err = apart_error("<sir language=\"cobol\"><unit id=\"u\" type=\"function\"/></sir>");
    assert!(
        matches!(&err.kind, ParseErrorKind::InvalidValue { attribute, .. } if attribute == "language"),
        "{err}"
    );

    let err = apart_error("<sir language=\"c\"><unit type=\"function\"/></sir>");
    assert_eq!(
        err.kind,
        ParseErrorKind::MissingAttribute {
            element: "unit".into(),
            attribute: "id".into()
        }
    );

    let err = apart_error(
        "<sir language=\"c\"><variable id=\"v\"><location startLine=\"-3\"/></variable><unit id=\"u\" type=\"function\"/></sir>",
    );
    assert!(
        matches!(&err.kind, ParseErrorKind::InvalidValue { attribute, .. } if attribute == "startLine"),
        "{err}"
    );

    let err = periscope::parse_str(
        "<sir xmlns=\"http://www.lrr.in.tum.de/Periscope\"><unit><position><file/></position><array type=\"double\"/></unit></sir>",
    )
    .unwrap_err();
    assert!(
        matches!(&err.kind, ParseErrorKind::InvalidValue { attribute, .. } if attribute == "type"),
        "{err}"
    );

    let err = apart_error("<sir language=\"c\" x:y=\"1\"><unit id=\"u\" type=\"function\"/></sir>");
    assert_eq!(err.kind, ParseErrorKind::UnboundPrefix("x".into()));
}

#[test]
fn text_where_the_dtd_allows_none_is_an_error() {
    let err =
        apart_error("<sir language=\"c\"><unit id=\"u\" type=\"function\">\n  oops</unit></sir>");
    assert_eq!(
        err.kind,
        ParseErrorKind::UnexpectedText {
            element: "unit".into()
        }
    );
    assert_eq!(err.position.line, 1);
}

#[test]
fn a_wrong_root_is_named() {
    let err = apart_error("<program/>");
    assert!(matches!(err.kind, ParseErrorKind::WrongRoot { .. }));
    let err = sir::parse_str("<sir xmlns=\"urn:x\"/>").unwrap_err();
    assert!(matches!(err.kind, ParseErrorKind::WrongRoot { .. }));
    assert!(matches!(
        apart_error("<sir language=\"c\"/>").kind,
        ParseErrorKind::MissingChild { .. }
    ));
}

fn deep_document(depth: usize) -> String {
    let mut xml = String::from("<sir language=\"c\"><unit id=\"u\" type=\"function\">");
    for i in 0..depth {
        xml.push_str(&format!("<codeRegion id=\"r{i}\" type=\"loop\">"));
    }
    xml.push_str(&"</codeRegion>".repeat(depth));
    xml.push_str("</unit></sir>");
    xml
}

#[test]
fn nesting_depth_is_limited_and_configurable() {
    let err = apart_error(&deep_document(10_000));
    assert!(
        matches!(err.kind, ParseErrorKind::LimitExceeded(_)),
        "{err}"
    );

    let options = ParseOptions {
        max_depth: 20,
        ..ParseOptions::default()
    };
    let err = apart::parse(deep_document(30).as_bytes(), &options).unwrap_err();
    assert!(matches!(err.kind, ParseErrorKind::LimitExceeded(_)));
    assert!(apart::parse(deep_document(15).as_bytes(), &options).is_ok());
}

#[test]
fn element_count_and_input_size_are_limited() {
    let mut xml = String::from("<sir language=\"c\">");
    for i in 0..1000 {
        xml.push_str(&format!("<unit id=\"u{i}\" type=\"function\"/>"));
    }
    xml.push_str("</sir>");
    let options = ParseOptions {
        max_elements: 100,
        ..ParseOptions::default()
    };
    let err = apart::parse(xml.as_bytes(), &options).unwrap_err();
    assert!(matches!(err.kind, ParseErrorKind::LimitExceeded(_)));
    // The root is element 1, so unit u99 is the 101st.
    let column = xml.find("<unit id=\"u99\"").unwrap() as u64 + 1;
    assert_eq!(err.position, Position::new(1, column));

    let options = ParseOptions {
        max_input_bytes: Some(1000),
        ..ParseOptions::default()
    };
    let err = apart::parse(xml.as_bytes(), &options).unwrap_err();
    assert!(
        matches!(err.kind, ParseErrorKind::LimitExceeded(_)),
        "{err}"
    );
    assert!(apart::parse(xml.as_bytes(), &ParseOptions::default()).is_ok());
}

#[test]
fn a_large_document_streams_from_a_reader() {
    // ~4 MB generated on the fly: the reader pulls it through a BufRead.
    struct Generated {
        chunks: std::vec::IntoIter<Vec<u8>>,
        current: std::io::Cursor<Vec<u8>>,
    }
    impl std::io::Read for Generated {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            loop {
                let n = self.current.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                match self.chunks.next() {
                    Some(chunk) => self.current = std::io::Cursor::new(chunk),
                    None => return Ok(0),
                }
            }
        }
    }
    let units = 50_000;
    let mut chunks = vec![b"<sir language=\"c\">\n".to_vec()];
    for i in 0..units {
        chunks.push(
            format!("<unit id=\"u{i}\" type=\"function\"><location startLine=\"{i}\" uri=\"file:///a.c\"/></unit>\n")
                .into_bytes(),
        );
    }
    chunks.push(b"</sir>\n".to_vec());
    let source = Generated {
        chunks: chunks.into_iter(),
        current: std::io::Cursor::new(Vec::new()),
    };
    let parsed = apart::parse(std::io::BufReader::new(source), &ParseOptions::default()).unwrap();
    assert_eq!(parsed.document.members.len(), units);
    let last = parsed.document.units()[units - 1];
    assert_eq!(
        last.origin.position(),
        Some(Position::new(units as u64 + 1, 1))
    );
}

#[test]
fn content_model_order_is_enforced_with_positions() {
    // Figure 6 as printed: <alias> after <variable>.
    let err = apart_error(
        "<sir language=\"fortran\">\n<unit type=\"function\" name=\"IPHI\" arguments=\"v1\" id=\"f1\">\n  <variable name=\"X\" type=\"INTEGER\" id=\"v1\"/>\n  <alias>PHI</alias>\n</unit></sir>",
    );
    assert!(
        matches!(&err.kind, ParseErrorKind::Misplaced { element, .. } if element == "alias"),
        "{err}"
    );
    assert_eq!(err.position, Position::new(4, 3));

    // Figure 7 as printed: <callee> after <expression>.
    let err = apart_error(
        "<sir language=\"fortran\"><unit type=\"subroutine\" id=\"i1\">\n<codeRegion type=\"io\" id=\"i2\">\n<expression><codeRegion type=\"call\" id=\"i3\"><callee id=\"i1\"/></codeRegion></expression>\n<callee id=\"i1\"/>\n</codeRegion></unit></sir>",
    );
    assert!(
        matches!(&err.kind, ParseErrorKind::Misplaced { element, .. } if element == "callee"),
        "{err}"
    );
    assert_eq!(err.position, Position::new(4, 1));

    let err = apart_error(
        "<sir language=\"c\"><unit id=\"u\" type=\"function\"><location/><location/></unit></sir>",
    );
    assert!(
        matches!(err.kind, ParseErrorKind::Misplaced { .. }),
        "{err}"
    );

    let err = periscope::parse_str(
        "<sir xmlns=\"http://www.lrr.in.tum.de/Periscope\"><unit><codeRegion type=\"loop\"><array/></codeRegion></unit></sir>",
    )
    .unwrap_err();
    assert!(
        matches!(err.kind, ParseErrorKind::Misplaced { .. }),
        "{err}"
    );
    let err = periscope::parse_str(
        "<sir xmlns=\"http://www.lrr.in.tum.de/Periscope\"><unit><codeRegion type=\"loop\"/></unit></sir>",
    )
    .unwrap_err();
    assert_eq!(
        err.kind,
        ParseErrorKind::MissingChild {
            parent: "codeRegion".into(),
            child: "position".into()
        }
    );
}

#[test]
fn other_encodings_are_refused() {
    let err = apart_error("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><sir language=\"c\"/>");
    assert!(matches!(err.kind, ParseErrorKind::Encoding(_)), "{err}");
    let err = apart::parse(
        &b"<sir language=\"c\"><unit id=\"\xff\" type=\"function\"/></sir>"[..],
        &ParseOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err.kind,
            ParseErrorKind::Encoding(_) | ParseErrorKind::Malformed(_)
        ),
        "{err}"
    );
}

#[test]
fn deep_documents_within_the_limit_do_not_overflow_a_small_stack() {
    // Test threads have 2 MiB of stack; one debug-build parser level needs
    // about 14 KiB, so this only passes because the walks grow their stack.
    let depth = 2_000;
    let options = ParseOptions {
        max_depth: depth + 10,
        ..ParseOptions::default()
    };
    let parsed = apart::parse(deep_document(depth).as_bytes(), &options)
        .unwrap()
        .document;
    assert_eq!(parsed.code_regions().len(), depth);
    assert!(parsed.validate().is_valid());
    let written = apart::write_string(&parsed).unwrap();
    let converted = sir::convert::to_periscope(&parsed).document;
    assert!(converted.validate().is_valid());
    let psc = periscope::write_string(&converted).unwrap();
    assert_eq!(
        periscope::parse(
            psc.as_bytes(),
            &ParseOptions {
                max_depth: 3 * depth,
                ..options.clone()
            }
        )
        .unwrap()
        .document,
        converted
    );
    assert_eq!(
        apart::parse(written.as_bytes(), &options).unwrap().document,
        parsed
    );
}

/// `<sir language="c"><unit id="u" type="function" m:a0="0" ... {extra}/></sir>`
/// with `count` measure annotations on the unit, all on line 2.
fn unit_with_annotations(count: usize, extra: &str) -> String {
    let mut xml = String::from(
        "<sir language=\"c\" xmlns:m=\"urn:arpsim:measure\">\n<unit id=\"u\" type=\"function\"",
    );
    for i in 0..count {
        xml.push_str(&format!(" m:a{i}=\"{i}\""));
    }
    xml.push_str(extra);
    xml.push_str("/></sir>");
    xml
}

#[test]
fn an_element_with_a_hundred_thousand_attributes_parses() {
    // Took > 60 s when every attribute was compared with all earlier ones.
    let count = 100_000;
    let parsed = apart::parse_str(&unit_with_annotations(count, ""))
        .unwrap()
        .document;
    let unit = parsed.units()[0];
    assert_eq!(unit.annotations.len(), count);
    assert_eq!(
        unit.annotations.get(sir::annotation::MEASURE_NS, "a99999"),
        Some("99999")
    );
}

#[test]
fn a_duplicate_after_a_hundred_thousand_attributes_is_located() {
    let count = 100_000;
    let xml = unit_with_annotations(count, " m:a7=\"again\"");
    let err = apart_error(&xml);
    assert_eq!(
        err.kind,
        ParseErrorKind::DuplicateAttribute {
            element: "unit".into(),
            attribute: "m:a7".into()
        }
    );
    let line2 = xml.lines().nth(1).unwrap();
    let column = line2.rfind("m:a7").unwrap() + 1;
    assert_eq!(err.position, Position::new(2, column as u64));
}

#[test]
fn an_empty_arp_name_is_refused_where_it_is_written() {
    let xml = "<sir language=\"c\" xmlns:arp=\"urn:arpsim:arp\">\n\
               <unit id=\"u\" type=\"function\" arp:sid=\"3\" arp:name=\" \"/></sir>";
    let err = apart_error(xml);
    assert!(
        matches!(&err.kind, ParseErrorKind::InvalidValue { attribute, .. } if attribute == "arp:name"),
        "{err}"
    );
    assert_eq!(err.position, Position::new(2, 42));
}

#[test]
fn messages_quote_at_most_80_characters_of_the_input() {
    let long = "a".repeat(5_000);
    let err = apart_error(&format!("<sir language=\"c\" {long}=\"1\"/>"));
    assert_eq!(
        err.kind,
        ParseErrorKind::UnknownAttribute {
            element: "sir".into(),
            attribute: long.clone()
        },
        "the error keeps the whole name"
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!("`{}…`", &long[..80])),
        "{message}"
    );
    assert!(message.chars().count() < 150, "{message}");
}

#[test]
fn a_section_id_named_twice_is_an_error_naming_both_elements() {
    let xml = "<sir language=\"c\" xmlns:arp=\"urn:arpsim:arp\">\n\
               <unit id=\"u1\" type=\"function\" arp:sid=\"3\" arp:name=\"ato_kernel_fir\"/>\n\
               <unit id=\"u2\" type=\"function\" arp:sid=\"3\" arp:name=\"ato_kernel_iir\"/>\n\
               <unit id=\"u3\" type=\"function\" arp:sid=\"3\" arp:name=\"main:12\"/></sir>";
    let doc = sir::Document::Apart(apart::parse_str(xml).unwrap().document);
    let err = sir::arp::section_names(doc).unwrap_err().to_string();
    assert!(err.contains("section 3 is named twice"), "{err}");
    assert!(err.contains("u1") && err.contains("u2"), "{err}");
    // the same label on two elements (an inlined kernel), and generated
    // names beside it, are fine: the label names the section
    let same = xml.replace("ato_kernel_iir", "ato_kernel_fir");
    let doc = sir::Document::Apart(apart::parse_str(&same).unwrap().document);
    assert_eq!(sir::arp::section_names(doc).unwrap()[&3], "ato_kernel_fir");
}

/// issue 30, N22: a tag declaring a prefix for each of its attributes
/// (`xmlns:pN="..." pN:a="..."`) took time quadratic in them (80k: 14.9 s,
/// now 0.2 s): a prefix declared on the tag is looked up in a map. A
/// declaration on the tag shadows an outer one.
#[test]
fn a_tag_declaring_a_prefix_per_attribute_parses_in_linear_time() {
    let count = 80_000;
    let mut xml = String::from(
        "<sir language=\"c\" xmlns:p0=\"urn:outer\">\n<unit id=\"u\" type=\"function\"",
    );
    for i in 0..count {
        xml.push_str(&format!(" xmlns:p{i}=\"urn:n{i}\" p{i}:a=\"{i}\""));
    }
    xml.push_str("/></sir>");
    let parsed = apart::parse_str(&xml).unwrap().document;
    let unit = parsed.units()[0];
    assert_eq!(unit.annotations.len(), count);
    assert_eq!(unit.annotations.get("urn:n0", "a"), Some("0"));
    assert_eq!(unit.annotations.get("urn:outer", "a"), None);
    assert_eq!(unit.annotations.get("urn:n79999", "a"), Some("79999"));
}
