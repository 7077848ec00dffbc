//! What validation checks in the Periscope dialect.

use sir::diagnostic::{Rule, Severity};
use sir::periscope::{
    self, Array, CodeRegion, Language, RegionType, Sir, SourcePosition, Unit, UnitType,
};

fn program() -> Sir {
    let mut sir = Sir::new(Some(Language::C));
    let mut unit = Unit {
        kind: Some(UnitType::Function),
        name: Some("main".into()),
        id: Some("u1".into()),
        ..Unit::default()
    };
    unit.position = Some(SourcePosition::lines("main.c", 1, 30));
    let mut outer = CodeRegion::new(RegionType::Loop, SourcePosition::lines("main.c", 3, 20));
    outer.id = Some("r1".into());
    outer.code_regions.push(CodeRegion::new(
        RegionType::Call,
        SourcePosition::lines("main.c", 4, 4),
    ));
    unit.code_regions.push(outer);
    sir.units.push(unit);
    sir
}

#[test]
fn a_built_program_is_valid_and_round_trips() {
    let sir = program();
    assert!(sir.validate().diagnostics.is_empty(), "{}", sir.validate());
    let xml = periscope::write_string(&sir).unwrap();
    assert_eq!(periscope::parse_str(&xml).unwrap().document, sir);
}

#[test]
fn positive_integers_are_positive() {
    let mut sir = program();
    sir.units[0].code_regions[0].position.start_line = Some(0);
    sir.units[0].arrays.push(Array {
        nelts: Some(0),
        ..Array::default()
    });
    let rules: Vec<_> = sir
        .validate()
        .diagnostics
        .iter()
        .map(|d| (d.rule, d.attribute.clone().unwrap()))
        .collect();
    assert_eq!(
        rules,
        [
            (Rule::OutOfRange, "nelts".to_string()),
            (Rule::OutOfRange, "startLine".to_string())
        ]
    );

    let err = periscope::parse_str(
        "<sir xmlns=\"http://www.lrr.in.tum.de/Periscope\"><unit><position startLine=\"x\"><file/></position></unit></sir>",
    )
    .unwrap_err();
    assert!(matches!(
        err.kind,
        sir::error::ParseErrorKind::InvalidValue { .. }
    ));
}

#[test]
fn arrays_need_a_position_and_a_sir_needs_a_unit() {
    let mut sir = program();
    sir.units[0].position = None;
    sir.units[0].arrays.push(Array::default());
    let report = sir.validate();
    assert_eq!(
        report.with_rule(Rule::MissingRequired).count(),
        1,
        "{report}"
    );
    assert!(!Sir::new(None).validate().is_valid());
}

#[test]
fn repeated_ids_are_a_warning_because_the_schema_types_them_xs_string() {
    let mut sir = program();
    sir.units[0].code_regions[0].code_regions[0].id = Some("r1".into());
    let report = sir.validate();
    let found: Vec<_> = report
        .diagnostics
        .iter()
        .map(|d| (d.rule, d.severity))
        .collect();
    assert_eq!(found, [(Rule::DuplicateId, Severity::Warning)]);
    assert!(report.is_valid());
}

#[test]
fn reversed_line_ranges_are_a_warning() {
    let mut sir = program();
    sir.units[0].code_regions[0].position = SourcePosition::lines("main.c", 20, 3);
    let report = sir.validate();
    assert_eq!(report.warnings().count(), 1);
    assert!(report.is_valid());
}

#[test]
fn enumerations_are_case_sensitive_tokens() {
    assert_eq!(
        periscope::ArrayType::parse("DOUBLE"),
        Some(periscope::ArrayType::Double)
    );
    assert_eq!(periscope::ArrayType::parse("double"), None);
    assert_eq!(
        periscope::RegionType::parse(" taskWait "),
        Some(RegionType::TaskWait),
        "xs:token collapses whitespace"
    );
    assert_eq!(periscope::RegionType::ALL.len(), 22);
}
