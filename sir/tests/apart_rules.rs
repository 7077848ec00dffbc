//! The rules of APART sections 2.1–2.6 and Table 2 that validation checks,
//! one test per rule, each with an input that breaks it and one that keeps it.

use sir::apart::{self, ValidationOptions};
use sir::diagnostic::{Report, Rule, Severity};
use sir::error::ParseErrorKind;
use sir::position::Position;

fn validate(xml: &str) -> Report {
    apart::parse_str(xml)
        .unwrap_or_else(|e| panic!("{e}"))
        .document
        .validate()
}

/// (rule, severity, line) of every finding.
fn findings(report: &Report) -> Vec<(Rule, Severity, Option<u64>)> {
    report
        .diagnostics
        .iter()
        .map(|d| (d.rule, d.severity, d.position.map(|p| p.line)))
        .collect()
}

fn c_unit(body: &str) -> String {
    format!("<sir language=\"c\">\n<unit id=\"f\" type=\"function\" name=\"f\"/>\n<unit id=\"main\" type=\"function\">\n{body}\n</unit>\n</sir>")
}

#[test]
fn ids_are_unique_xml_names() {
    // Figure 2 as printed uses i1 for both Runnable and KeyListener.
    let xml = "<sir language=\"java\">\n<group type=\"interface\" name=\"Runnable\" id=\"i1\"/>\n<group type=\"interface\" name=\"KeyListener\" id=\"i1\"/>\n</sir>";
    let report = validate(xml);
    assert_eq!(
        findings(&report),
        [(Rule::DuplicateId, Severity::Error, Some(3))]
    );
    assert_eq!(report.diagnostics[0].attribute.as_deref(), Some("id"));
    assert_eq!(report.diagnostics[0].position, Some(Position::new(3, 1)));

    let report = validate("<sir language=\"c\"><unit id=\"42-1\" type=\"function\"/></sir>");
    assert_eq!(
        findings(&report),
        [(Rule::InvalidId, Severity::Error, Some(1))]
    );
}

#[test]
fn every_idref_resolves_to_the_right_kind_of_element() {
    // Figure 3 without the units f and g it assumes.
    let xml = "<sir language=\"c\"><unit id=\"main\" type=\"function\">\n<codeRegion type=\"call\" id=\"i3\">\n  <callee id=\"f\"/>\n</codeRegion></unit></sir>";
    let report = validate(xml);
    assert_eq!(
        findings(&report),
        [(Rule::DanglingReference, Severity::Error, Some(3))]
    );
    assert_eq!(report.diagnostics[0].element, "callee");

    let xml = c_unit("<variable id=\"v\"/><variableRef targetId=\"f\"/><codeRegion type=\"call\" id=\"c\"><callee id=\"v\"/></codeRegion>");
    let report = validate(&xml);
    let rules: Vec<_> = report
        .diagnostics
        .iter()
        .map(|d| (d.rule, d.element.as_str()))
        .collect();
    assert_eq!(
        rules,
        [
            (Rule::WrongReferenceTarget, "variableRef"),
            (Rule::WrongReferenceTarget, "callee")
        ]
    );

    let xml = "<sir language=\"c\"><unit id=\"u\" type=\"function\" arguments=\"v1 u\"><variable id=\"v1\"/></unit></sir>";
    let report = validate(xml);
    assert_eq!(
        findings(&report),
        [(Rule::WrongReferenceTarget, Severity::Error, Some(1))]
    );
    assert_eq!(
        report.diagnostics[0].attribute.as_deref(),
        Some("arguments")
    );

    let xml = "<sir language=\"java\"><group id=\"p\" type=\"package\"><group id=\"c\" type=\"class\"><inheritance id=\"p\"/></group></group></sir>";
    assert_eq!(
        validate(xml).with_rule(Rule::WrongReferenceTarget).count(),
        1
    );
}

#[test]
fn callee_and_inheritance_need_an_id_or_a_name() {
    let report = validate(&c_unit(
        "<codeRegion type=\"call\" id=\"c\"><callee/></codeRegion>",
    ));
    assert_eq!(
        findings(&report),
        [(Rule::MissingRequired, Severity::Error, Some(4))]
    );
    assert!(validate(&c_unit(
        "<codeRegion type=\"call\" id=\"c\"><callee name=\"printf\"/></codeRegion>"
    ))
    .is_valid());
    let xml = "<sir language=\"java\"><group id=\"c\" type=\"class\" name=\"A\"><inheritance/></group></sir>";
    assert_eq!(validate(xml).with_rule(Rule::MissingRequired).count(), 1);
}

#[test]
fn no_unit_inside_a_unit_in_c_or_cpp() {
    let xml = "<sir language=\"c\">\n<unit id=\"outer\" type=\"function\">\n  <unit id=\"inner\" type=\"function\"/>\n</unit></sir>";
    let report = validate(xml);
    assert_eq!(
        findings(&report),
        [(Rule::Nesting, Severity::Error, Some(3))]
    );
    assert_eq!(report.diagnostics[0].id.as_deref(), Some("inner"));

    // Sections 2.2/2.3 say "although this is not enforced": an option
    // turns these language rules into warnings.
    let lenient = apart::parse_str(xml)
        .unwrap()
        .document
        .validate_with(&ValidationOptions {
            language_rules_as_warnings: true,
        });
    assert_eq!(
        findings(&lenient),
        [(Rule::Nesting, Severity::Warning, Some(3))]
    );
    assert!(lenient.is_valid());

    let fortran = "<sir language=\"fortran\"><unit id=\"outer\" type=\"program\"><unit id=\"inner\" type=\"function\"/></unit></sir>";
    assert!(validate(fortran).is_valid());
}

#[test]
fn fortran_units_nest_two_levels_and_only_functions_or_subroutines() {
    let three = "<sir language=\"fortran\"><unit id=\"a\" type=\"program\"><unit id=\"b\" type=\"subroutine\">\n<unit id=\"c\" type=\"function\"/></unit></unit></sir>";
    assert_eq!(
        findings(&validate(three)),
        [(Rule::Nesting, Severity::Error, Some(2))]
    );
    let program_inside = "<sir language=\"fortran\"><unit id=\"a\" type=\"subroutine\"><unit id=\"b\" type=\"program\"/></unit></sir>";
    assert_eq!(validate(program_inside).with_rule(Rule::Nesting).count(), 1);
    let module = "<sir language=\"fortran\"><group id=\"m\" type=\"module\"><group id=\"n\" type=\"module\"/></group></sir>";
    assert_eq!(validate(module).with_rule(Rule::Nesting).count(), 1);
}

#[test]
fn group_nesting_follows_the_language() {
    let cpp = "<sir language=\"cpp\"><group id=\"ns\" type=\"package\"><group id=\"a\" type=\"class\"><group id=\"b\" type=\"class\"/></group></group></sir>";
    let report = validate(cpp);
    assert_eq!(report.with_rule(Rule::Nesting).count(), 1, "{report}");
    assert_eq!(report.diagnostics[0].id.as_deref(), Some("b"));

    let c_group_in_unit = c_unit("<group id=\"g\" type=\"class\"/>");
    assert_eq!(
        validate(&c_group_in_unit).with_rule(Rule::Nesting).count(),
        1
    );

    let java = "<sir language=\"java\"><group id=\"o\" type=\"class\" name=\"Top\"><inheritance name=\"java.lang.Object\"/>\
                <unit id=\"m\" type=\"method\"><group id=\"local\" type=\"class\" name=\"Local\"><inheritance id=\"o\"/></group></unit>\
                <unit id=\"f\" type=\"function\"/></group></sir>";
    let report = validate(java);
    // A class inside a method is fine; a plain (non-C) function in a class is not.
    assert_eq!(
        findings(&report),
        [(Rule::Nesting, Severity::Error, Some(1))]
    );
    assert_eq!(report.diagnostics[0].id.as_deref(), Some("f"));
}

#[test]
fn java_classes_declare_a_superclass_and_use_simple_names() {
    let xml = "<sir language=\"java\"><group id=\"p\" type=\"package\" name=\"lang\"><group id=\"o\" type=\"class\" name=\"Object\"/></group>\
               <group id=\"a\" type=\"class\" name=\"example.A\"/></sir>";
    let report = validate(xml);
    let ids: Vec<_> = report
        .diagnostics
        .iter()
        .map(|d| d.id.as_deref().unwrap())
        .collect();
    assert_eq!(ids, ["a", "a"], "{report}");
    assert!(report.diagnostics.iter().all(|d| d.rule == Rule::Nesting));
}

#[test]
fn an_if_region_holds_one_or_two_blocks_except_in_fortran() {
    let three = "<codeRegion type=\"if\" id=\"i\">\n<codeRegion type=\"block\" id=\"b1\"/><codeRegion type=\"block\" id=\"b2\"/><codeRegion type=\"block\" id=\"b3\"/></codeRegion>";
    let report = validate(&c_unit(three));
    assert_eq!(
        findings(&report),
        [(Rule::Nesting, Severity::Error, Some(4))]
    );
    let fortran =
        format!("<sir language=\"fortran\"><unit id=\"p\" type=\"program\">{three}</unit></sir>");
    assert!(validate(&fortran).is_valid(), "else-if chains are Fortran");

    let not_block =
        "<codeRegion type=\"if\" id=\"i\"><codeRegion type=\"assignment\" id=\"a\"/></codeRegion>";
    assert_eq!(
        validate(&c_unit(not_block))
            .with_rule(Rule::Nesting)
            .count(),
        1
    );
    let empty = "<codeRegion type=\"if\" id=\"i\"/>";
    assert_eq!(validate(&c_unit(empty)).with_rule(Rule::Nesting).count(), 1);
    // A unit's own language overrides the sir's.
    let c_in_fortran = format!("<sir language=\"fortran\"><unit id=\"p\" type=\"function\" language=\"c\">{three}</unit></sir>");
    assert_eq!(validate(&c_in_fortran).with_rule(Rule::Nesting).count(), 1);
}

#[test]
fn switch_sections_where_and_atomic_have_their_own_content_rules() {
    let switch = "<codeRegion type=\"switch\" id=\"s\"><codeRegion type=\"block\" id=\"b\"/><codeRegion type=\"jump\" id=\"j\"/></codeRegion>";
    assert_eq!(
        validate(&c_unit(switch)).with_rule(Rule::Nesting).count(),
        1
    );
    let sections = "<codeRegion type=\"parallelSections\" id=\"s\"><codeRegion type=\"loop\" id=\"l\"/></codeRegion>";
    assert_eq!(
        validate(&c_unit(sections)).with_rule(Rule::Nesting).count(),
        1
    );
    let atomic_ok = "<codeRegion type=\"parallelAtomic\" id=\"a\"><codeRegion type=\"assignment\" id=\"x\"/></codeRegion>";
    assert!(validate(&c_unit(atomic_ok)).is_valid());
    let atomic_bad = "<codeRegion type=\"parallelAtomic\" id=\"a\"><codeRegion type=\"call\" id=\"x\"><callee name=\"f\"/></codeRegion></codeRegion>";
    assert_eq!(
        validate(&c_unit(atomic_bad))
            .with_rule(Rule::Nesting)
            .count(),
        1
    );
    let where_three = "<sir language=\"fortran\"><unit id=\"p\" type=\"program\"><codeRegion type=\"where\" id=\"w\">\
        <codeRegion type=\"block\" id=\"b1\"/><codeRegion type=\"block\" id=\"b2\"/><codeRegion type=\"block\" id=\"b3\"/></codeRegion></unit></sir>";
    assert_eq!(validate(where_three).with_rule(Rule::Nesting).count(), 1);
}

#[test]
fn call_regions_have_a_callee_and_only_call_or_io_regions_have_one() {
    let report = validate(&c_unit("<codeRegion type=\"call\" id=\"c\"/>"));
    assert_eq!(
        findings(&report),
        [(Rule::MissingRequired, Severity::Error, Some(4))]
    );
    let report = validate(&c_unit(
        "<codeRegion type=\"loop\" id=\"l\"><callee id=\"f\"/></codeRegion>",
    ));
    assert_eq!(
        findings(&report),
        [(Rule::Nesting, Severity::Error, Some(4))]
    );
}

#[test]
fn loop_control_scheduling_and_their_regions() {
    let both = "<codeRegion type=\"loop\" id=\"l\"><expression><codeRegion type=\"assignment\" id=\"a\"/></expression>\
                <loopControl/></codeRegion>";
    assert_eq!(validate(&c_unit(both)).with_rule(Rule::Nesting).count(), 1);
    let control_in_if = "<codeRegion type=\"block\" id=\"b\"><loopControl/></codeRegion>";
    assert_eq!(
        validate(&c_unit(control_in_if))
            .with_rule(Rule::Nesting)
            .count(),
        1
    );
    let scheduling = "<codeRegion type=\"parallelLoop\" id=\"p\"><scheduling type=\"dynamic\" chunk=\"4\"/><codeRegion type=\"loop\" id=\"l\"/></codeRegion>";
    assert!(validate(&c_unit(scheduling)).is_valid());
    let misplaced =
        "<codeRegion type=\"parallelRegion\" id=\"p\"><scheduling type=\"static\"/></codeRegion>";
    assert_eq!(
        validate(&c_unit(misplaced))
            .with_rule(Rule::Nesting)
            .count(),
        1
    );
    let zero_chunk = "<codeRegion type=\"parallelLoop\" id=\"p\"><scheduling type=\"static\" chunk=\"0\"/></codeRegion>";
    assert_eq!(
        findings(&validate(&c_unit(zero_chunk))),
        [(Rule::OutOfRange, Severity::Error, Some(4))]
    );
    let nowait = "<codeRegion type=\"parallelMaster\" id=\"p\" nowait=\"true\"/>";
    assert_eq!(
        findings(&validate(&c_unit(nowait))),
        [(Rule::Nesting, Severity::Warning, Some(4))]
    );
}

#[test]
fn java_allows_only_critical_sections_among_parallel_regions() {
    let region = |kind: &str| {
        format!(
            "<sir language=\"java\"><group id=\"c\" type=\"class\" name=\"A\"><inheritance name=\"Object\"/>\
             <unit id=\"m\" type=\"method\"><codeRegion type=\"{kind}\" id=\"r\"/></unit></group></sir>"
        )
    };
    assert!(validate(&region("parallelCriticalSection")).is_valid());
    assert_eq!(
        validate(&region("parallelLoop"))
            .with_rule(Rule::Nesting)
            .count(),
        1
    );
}

#[test]
fn table_2_types_and_dimension_rules() {
    let xml = "<sir language=\"fortran\"><variable id=\"a\" dimensions=\"2\">\n\
               <dimension index=\"0\" lowerBound=\"1\" upperBound=\"10\"/>\n\
               <dimension index=\"3\" lowerBound=\"-5\" upperBound=\"5\"/>\n\
               <dimension index=\"3\" lowerBound=\"1\" upperBound=\"2\"/>\n\
               </variable><unit id=\"p\" type=\"program\"/></sir>";
    let lines: Vec<_> = findings(&validate(xml))
        .into_iter()
        .map(|(r, _, l)| (r, l.unwrap()))
        .collect();
    assert_eq!(
        lines,
        [
            (Rule::OutOfRange, 2),
            (Rule::OutOfRange, 3),
            (Rule::OutOfRange, 4),
            (Rule::OutOfRange, 4)
        ]
    );

    // Section 2.5: dimensions="-1" means scalar (Table 2 would forbid it):
    // read as absent, and written as absent.
    let scalar = apart::parse_str("<sir language=\"c\"><variable id=\"x\" dimensions=\"-1\"/><unit id=\"u\" type=\"function\"/></sir>")
        .unwrap()
        .document;
    assert_eq!(scalar.variables[0].dimensions, None);
    assert!(!apart::write_string(&scalar).unwrap().contains("dimensions"));
    let err = apart::parse_str("<sir language=\"c\"><variable id=\"x\" dimensions=\"-2\"/><unit id=\"u\" type=\"function\"/></sir>")
        .unwrap_err();
    assert!(matches!(err.kind, ParseErrorKind::InvalidValue { .. }));
    let err = apart::parse_str(
        "<sir language=\"c\"><variable id=\"x\"><dimension index=\"1\" lowerBound=\"a\" upperBound=\"2\"/></variable><unit id=\"u\" type=\"function\"/></sir>",
    )
    .unwrap_err();
    assert!(
        matches!(&err.kind, ParseErrorKind::InvalidValue { attribute, .. } if attribute == "lowerBound")
    );
}

#[test]
fn misspelled_recommended_types_are_kept_but_flagged() {
    // The DTD comment of section 2.4 spells `assign`, `ParallelFlush` and
    // `ParallelOrdered`; the text and figures use `assignment`,
    // `parallelFlush` and `parallelOrdered`.
    for spelling in ["assign", "ParallelFlush", "ParallelOrdered"] {
        let xml = c_unit(&format!("<codeRegion type=\"{spelling}\" id=\"r\"/>"));
        let report = validate(&xml);
        assert_eq!(
            findings(&report),
            [(Rule::NonCanonicalType, Severity::Warning, Some(4))],
            "{spelling}"
        );
        let parsed = apart::parse_str(&xml).unwrap().document;
        assert!(apart::write_string(&parsed)
            .unwrap()
            .contains(&format!("type=\"{spelling}\"")));
    }
    assert!(
        validate(&c_unit("<codeRegion type=\"myToolRegion\" id=\"r\"/>"))
            .diagnostics
            .is_empty()
    );
}

#[test]
fn figure_2_as_printed_is_refused_for_its_undeclared_attribute() {
    let xml = "<sir language=\"java\">\n<group type=\"package\" name=\"awt\" id=\"p3\" instrumentable=\"false\"/></sir>";
    let err = apart::parse_str(xml).unwrap_err();
    assert_eq!(
        err.kind,
        ParseErrorKind::UnknownAttribute {
            element: "group".into(),
            attribute: "instrumentable".into()
        }
    );
    // The position is the attribute's own.
    assert_eq!(err.position, Position::new(2, 42));
}

#[test]
fn diagnostics_print_position_element_and_attribute() {
    let report = validate(
        "<sir language=\"c\">\n  <unit id=\"u\" type=\"function\" arguments=\"nope\"/>\n</sir>",
    );
    assert_eq!(
        report.to_string(),
        "2:3: error: <unit id=\"u\"> attribute `arguments`: no element has id `nope`\n"
    );
}
