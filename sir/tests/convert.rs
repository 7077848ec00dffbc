//! Conversion between the dialects: what is kept, what is reported lost.

use std::path::Path;

use sir::apart::{self, RegionType};
use sir::convert::{to_apart, to_periscope, ConversionError};
use sir::periscope;

fn fixture(path: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(path),
    )
    .unwrap()
}

#[test]
fn the_periscope_example_becomes_a_valid_apart_sir() {
    let psc = periscope::parse_str(&fixture("periscope/add_f90.xml"))
        .unwrap()
        .document;
    let converted = to_apart(&psc).unwrap();
    let sir = &converted.document;
    let report = sir.validate();
    assert!(report.diagnostics.is_empty(), "{report}");
    assert_eq!(sir.language, apart::Language::Fortran);

    let unit = sir.units()[0];
    // "42-1" is no XML Name (it starts with a digit): rewritten and reported.
    assert_eq!(unit.id, "_42-1");
    assert!(converted
        .losses
        .iter()
        .any(|l| l.id.as_deref() == Some("42-1") && l.message.contains("_42-1")));
    assert_eq!(unit.kind, apart::UnitType::Program);
    assert_eq!(
        unit.location.as_ref().unwrap().uri.as_deref(),
        Some("add.f90")
    );
    // The array becomes one Fortran variable, A(1:10000), referenced by the regions.
    assert_eq!(unit.variables.len(), 1);
    let array = &unit.variables[0];
    assert_eq!(array.name.as_deref(), Some("A"));
    assert_eq!(array.type_name.as_deref(), Some("DOUBLE"));
    assert_eq!(
        (
            array.dimension_bounds[0].lower_bound,
            array.dimension_bounds[0].upper_bound
        ),
        (1, 10000)
    );

    let regions: Vec<_> = unit.regions().collect();
    assert_eq!(regions.len(), 3);
    assert_eq!(regions[0].kind, RegionType::Call);
    assert_eq!(
        regions[0].callee.as_ref().unwrap().name.as_deref(),
        Some("MPI_INIT")
    );
    assert_eq!(regions[1].kind, RegionType::Forall);
    assert_eq!(regions[1].variable_refs[0].target_id, array.id);
    let user = regions[1].regions().next().unwrap();
    assert_eq!(user.kind, RegionType::Other("userRegion".into()));
    let inner_loop = user.regions().next().unwrap();
    assert_eq!(inner_loop.kind, RegionType::Loop);
    assert_eq!(inner_loop.location.as_ref().unwrap().start_line, Some(12));

    // Back to Periscope: the structure and positions come back.
    let back = to_periscope(sir).document;
    assert!(back.validate().is_valid());
    let forall = &back.units[0].code_regions[1];
    assert_eq!(forall.kind, Some(periscope::RegionType::Forall));
    assert_eq!(
        forall.code_regions[0].code_regions[0].position.start_line,
        Some(12)
    );
    assert_eq!(forall.arrays[0].nelts, Some(10000));
    assert_eq!(
        back.units[0].code_regions[0].name.as_deref(),
        Some("MPI_INIT")
    );
}

#[test]
fn a_periscope_sir_without_language_cannot_become_apart() {
    let psc = periscope::parse_str(
        "<sir xmlns=\"http://www.lrr.in.tum.de/Periscope\"><unit type=\"function\" name=\"f\"/></sir>",
    )
    .unwrap()
    .document;
    assert_eq!(
        to_apart(&psc).unwrap_err(),
        ConversionError::MissingLanguage
    );
}

#[test]
fn calls_to_units_of_the_document_become_idrefs() {
    let psc = periscope::parse_str(
        "<sir xmlns=\"http://www.lrr.in.tum.de/Periscope\" language=\"c\">\
           <unit type=\"function\" name=\"main\"><codeRegion type=\"call\" name=\"work\"><position><file name=\"m.c\"/></position></codeRegion></unit>\
           <unit type=\"function\" name=\"work\"/></sir>",
    )
    .unwrap()
    .document;
    let converted = to_apart(&psc).unwrap().document;
    assert!(converted.validate().is_valid(), "{}", converted.validate());
    let work = converted.units()[1];
    let call = converted.code_regions()[0];
    assert_eq!(
        call.callee.as_ref().unwrap().id.as_deref(),
        Some(work.id.as_str())
    );
}

#[test]
fn every_apart_figure_converts_to_a_valid_periscope_sir() {
    for name in [
        "figure1b_expression.xml",
        "figure1c_flattened.xml",
        "figure2_java_inheritance.xml",
        "figure3_c_if.xml",
        "figure4_fortran_forall.xml",
        "figure5_c_function_pointer.xml",
        "figure6_fortran_overload.xml",
        "figure7_fortran_io_location.xml",
    ] {
        let sir = apart::parse_str(&fixture(&format!("apart/{name}")))
            .unwrap()
            .document;
        let converted = to_periscope(&sir);
        let report = converted.document.validate();
        assert!(report.is_valid(), "{name}: {report}");
    }
}

#[test]
fn figure_3_keeps_its_calls_and_drops_the_if_structure() {
    let sir = apart::parse_str(&fixture("apart/figure3_c_if.xml"))
        .unwrap()
        .document;
    let converted = to_periscope(&sir);
    let main = &converted.document.units[2];
    let names: Vec<_> = main
        .code_regions
        .iter()
        .map(|r| r.name.as_deref().unwrap())
        .collect();
    assert_eq!(
        names,
        ["f", "g"],
        "the calls of the condition, hoisted out of if and block"
    );
    let dropped: Vec<_> = converted
        .losses
        .iter()
        .filter_map(|l| l.id.as_deref())
        .collect();
    for id in ["i1", "i2", "i5", "i6", "i7"] {
        assert!(dropped.contains(&id), "{id} not reported: {dropped:?}");
    }
}

#[test]
fn figure_7_locations_inherit_the_enclosing_uri() {
    let sir = apart::parse_str(&fixture("apart/figure7_fortran_io_location.xml"))
        .unwrap()
        .document;
    let converted = to_periscope(&sir).document;
    let f = &converted.units[2];
    assert_eq!(
        f.position.as_ref().unwrap().file.name.as_deref(),
        Some("file:///home/joe/programs/F1.f90")
    );
    let io = &f.code_regions[0];
    assert_eq!(io.kind, Some(periscope::RegionType::Io));
    assert_eq!(
        io.position.file.name.as_deref(),
        Some("file:///home/joe/programs/F2.f90")
    );
    // Section 2.6: the call's location has no uri, so it is in F2.f90 too.
    let call = &io.code_regions[0];
    assert_eq!(call.name.as_deref(), Some("foo"));
    assert_eq!(
        call.position.file.name.as_deref(),
        Some("file:///home/joe/programs/F2.f90")
    );
    assert_eq!(call.position.start_line, Some(1));
}

#[test]
fn java_groups_are_flattened_and_reported() {
    let sir = apart::parse_str(&fixture("apart/figure2_java_inheritance.xml"))
        .unwrap()
        .document;
    let converted = to_periscope(&sir);
    assert_eq!(converted.document.language, None);
    let names: Vec<_> = converted
        .document
        .units
        .iter()
        .map(|u| u.name.as_deref().unwrap())
        .collect();
    assert_eq!(names, ["Button", "MyClass"]);
    assert_eq!(
        converted.document.units[0].kind,
        Some(periscope::UnitType::Function)
    );
    assert!(converted
        .losses
        .iter()
        .any(|l| l.element == "sir" && l.message.contains("java")));
    assert_eq!(
        converted
            .losses
            .iter()
            .filter(|l| l.element == "group")
            .count(),
        10
    );
}

#[test]
fn parallel_sections_map_to_parallel_section_and_back() {
    let xml = "<sir language=\"c\"><unit id=\"m\" type=\"function\"><codeRegion type=\"parallelSections\" id=\"s\">\
               <codeRegion type=\"block\" id=\"b1\"/><codeRegion type=\"block\" id=\"b2\"/></codeRegion></unit></sir>";
    let sir = apart::parse_str(xml).unwrap().document;
    let psc = to_periscope(&sir).document;
    let sections = &psc.units[0].code_regions[0];
    assert_eq!(sections.kind, Some(periscope::RegionType::ParallelSections));
    let kinds: Vec<_> = sections
        .code_regions
        .iter()
        .map(|r| r.kind.unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            periscope::RegionType::ParallelSection,
            periscope::RegionType::ParallelSection
        ]
    );
    let back = to_apart(&psc).unwrap().document;
    assert!(back.validate().is_valid(), "{}", back.validate());
    let blocks: Vec<_> = back
        .code_regions()
        .iter()
        .skip(1)
        .map(|r| r.kind.clone())
        .collect();
    assert_eq!(blocks, [RegionType::Block, RegionType::Block]);
}
