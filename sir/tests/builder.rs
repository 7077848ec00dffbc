//! Building a SIR in code the way `sim-host sir generate` does: units from
//! function symbols, loop and call regions with file and line positions,
//! ARP sections as regions, measurements as annotations; then validating and
//! writing both dialects.

use sir::annotation::{Metric, MEASURE_NS};
use sir::apart::{Callee, CodeRegion, Language, Location, RegionType, Sir, Unit, UnitType};
use sir::convert::to_periscope;
use sir::diagnostic::Rule;
use sir::{apart, periscope};

fn generated() -> Sir {
    let mut sir = Sir::new(Language::C);
    let source = "file:///src/kernel.c";

    let helper = Unit::new("u_helper", UnitType::Function)
        .with_name("helper")
        .with_location(Location::lines(source, 3, 9));
    let mut main = Unit::new("u_main", UnitType::Function)
        .with_name("main")
        .with_location(Location::lines(source, 11, 40));

    // An ARP section is a user region (custom type: the DTD's type is CDATA).
    let mut section = CodeRegion::new("s_148", RegionType::Other("arpSection".into()))
        .with_location(Location::lines(source, 14, 38));
    let mut outer =
        CodeRegion::new("l_1", RegionType::Loop).with_location(Location::lines(source, 15, 37));
    let mut inner =
        CodeRegion::new("l_2", RegionType::Loop).with_location(Location::lines(source, 16, 36));
    let mut call = CodeRegion::call("c_1", Callee::to_id("u_helper"))
        .with_location(Location::lines(source, 17, 17));
    call.annotations
        .set_measure(Metric::ExecutionCount, 4096)
        .set_measure(Metric::InclusiveCycles, 81920);
    inner.push_region(call);
    inner
        .annotations
        .set_measure(Metric::TripCountMin, 64)
        .set_measure(Metric::TripCountMean, 64.0)
        .set_measure(Metric::TripCountMax, 64)
        .set_measure(Metric::AddressLow, "0x20000000")
        .set_measure(Metric::AddressHigh, "0x20003ffc")
        .set_measure(Metric::Stride, 4);
    outer.push_region(inner);
    section.push_region(outer);
    main.push_region(section);
    main.annotations
        .set_measure(Metric::ExclusiveCycles, 1234)
        .set_measure(Metric::Instructions, 99_000);

    sir.push_unit(helper).push_unit(main);
    sir
}

#[test]
fn a_generated_model_validates_and_round_trips_with_its_measurements() {
    let mut sir = generated();
    // Measurements can also be added after building, by id.
    sir.code_region_mut("l_1")
        .unwrap()
        .annotations
        .set_measure(Metric::TripCountMax, 128);
    sir.unit_mut("u_helper")
        .unwrap()
        .annotations
        .set_measure(Metric::ExecutionCount, 4096);

    let report = sir.validate();
    assert!(report.diagnostics.is_empty(), "{report}");

    let xml = apart::write_string(&sir).unwrap();
    assert!(xml.contains("xmlns:m=\"urn:arpsim:measure\""), "{xml}");
    assert!(
        xml.contains("<codeRegion id=\"l_2\" type=\"loop\" m:addressHigh=\"0x20003ffc\""),
        "{xml}"
    );
    assert!(xml.contains("m:tripCountMax=\"128\""));

    let parsed = apart::parse_str(&xml).unwrap().document;
    assert_eq!(parsed, sir);
    assert_eq!(parsed.units().len(), 2);
    let inner = parsed
        .code_regions()
        .into_iter()
        .find(|r| r.id == "l_2")
        .unwrap();
    assert_eq!(inner.annotations.measure(Metric::TripCountMean), Some("64"));
    assert_eq!(inner.annotations.get(MEASURE_NS, "stride"), Some("4"));
    assert_eq!(inner.location.as_ref().unwrap().start_line, Some(16));
}

#[test]
fn the_same_model_is_written_as_periscope_with_its_measurements() {
    let converted = to_periscope(&generated());
    let psc = converted.document;
    assert!(psc.validate().is_valid(), "{}", psc.validate());
    // The ARP section has no Periscope type unless it is spelled userRegion:
    // it is dropped and reported, its loops move up.
    assert!(converted
        .losses
        .iter()
        .any(|l| l.id.as_deref() == Some("s_148")));
    let main = &psc.units[1];
    assert_eq!(main.name.as_deref(), Some("main"));
    let outer = &main.code_regions[0];
    assert_eq!(outer.kind, Some(periscope::RegionType::Loop));
    assert_eq!(outer.position.start_line, Some(15));
    assert_eq!(
        outer.position.file.name.as_deref(),
        Some("file:///src/kernel.c")
    );
    let call = &outer.code_regions[0].code_regions[0];
    assert_eq!(call.kind, Some(periscope::RegionType::Call));
    assert_eq!(
        call.name.as_deref(),
        Some("helper"),
        "call regions are named after the callee"
    );
    assert_eq!(
        call.annotations.measure(Metric::InclusiveCycles),
        Some("81920")
    );

    let xml = periscope::write_string(&psc).unwrap();
    assert!(xml.contains("xmlns=\"http://www.lrr.in.tum.de/Periscope\""));
    assert!(xml.contains("m:executionCount=\"4096\""));
    assert_eq!(periscope::parse_str(&xml).unwrap().document, psc);
}

#[test]
fn a_user_region_type_maps_to_periscope_user_region() {
    let mut sir = generated();
    sir.code_region_mut("s_148").unwrap().kind = RegionType::Other("userRegion".into());
    let converted = to_periscope(&sir);
    let section = &converted.document.units[1].code_regions[0];
    assert_eq!(section.kind, Some(periscope::RegionType::UserRegion));
    assert_eq!(section.id.as_deref(), Some("s_148"));
}

#[test]
fn mistakes_in_a_built_model_are_reported_without_positions() {
    let mut sir = generated();
    let main = sir.unit_mut("u_main").unwrap();
    main.push_region(CodeRegion::call("c_1", Callee::to_id("u_missing")));
    main.push_region(CodeRegion::new("r_if", RegionType::If));
    let report = sir.validate();
    let duplicate: Vec<_> = report.with_rule(Rule::DuplicateId).collect();
    assert_eq!(duplicate.len(), 1);
    assert_eq!(duplicate[0].id.as_deref(), Some("c_1"));
    assert_eq!(duplicate[0].position, None);
    assert_eq!(report.with_rule(Rule::DanglingReference).count(), 1);
    assert_eq!(report.with_rule(Rule::Nesting).count(), 1, "{report}");
    assert!(!report.is_valid());
}

#[test]
fn unwritable_annotation_names_are_refused() {
    let mut sir = generated();
    sir.annotations.set(MEASURE_NS, "not a name", "1");
    assert_eq!(sir.validate().with_rule(Rule::InvalidAnnotation).count(), 1);
    assert!(matches!(
        apart::write_string(&sir),
        Err(sir::error::WriteError::InvalidAnnotation { .. })
    ));
}

#[test]
fn annotation_namespaces_with_escaped_characters_round_trip() {
    // quick-xml hands namespace URIs over unescaped; the reader resolves
    // `&amp;` itself (found by the round-trip property test).
    let mut sir = generated();
    sir.annotations
        .set("http://example.com/ns?a=1&b=2", "tool", "x<y");
    let xml = apart::write_string(&sir).unwrap();
    assert!(
        xml.contains("xmlns:ns1=\"http://example.com/ns?a=1&amp;b=2\""),
        "{xml}"
    );
    let parsed = apart::parse_str(&xml).unwrap().document;
    assert_eq!(
        parsed
            .annotations
            .get("http://example.com/ns?a=1&b=2", "tool"),
        Some("x<y")
    );
}
