//! Every example of both specifications parses, validates without findings,
//! and survives a write/parse round trip.

use std::path::{Path, PathBuf};

use sir::{apart, periscope, Document};

fn fixtures(dialect: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dialect);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_apart_figure_parses_validates_and_round_trips() {
    let files = fixtures("apart");
    assert_eq!(files.len(), 8, "figures 1(b), 1(c), 2, 3, 4, 5, 6, 7");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = apart::parse_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            parsed.warnings.is_empty(),
            "{}: {:?}",
            path.display(),
            parsed.warnings
        );
        let report = parsed.document.validate();
        assert!(
            report.diagnostics.is_empty(),
            "{}:\n{report}",
            path.display()
        );
        let written = apart::write_string(&parsed.document).unwrap();
        let again = apart::parse_str(&written).unwrap().document;
        assert_eq!(
            again,
            parsed.document,
            "{}: round trip changed the model",
            path.display()
        );
        assert!(matches!(
            sir::parse_str(&text).unwrap().document,
            Document::Apart(_)
        ));
    }
}

#[test]
fn the_periscope_example_parses_validates_and_round_trips() {
    let files = fixtures("periscope");
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let parsed = periscope::parse_str(&text).unwrap();
    assert!(parsed.warnings.is_empty());
    let sir = &parsed.document;
    let report = sir.validate();
    assert!(report.diagnostics.is_empty(), "{report}");
    assert_eq!(sir.language, Some(periscope::Language::Fortran));
    assert_eq!(sir.units.len(), 1);
    let unit = &sir.units[0];
    assert_eq!(unit.id.as_deref(), Some("42-1"));
    assert_eq!(unit.position.as_ref().unwrap().end_line, Some(23));
    assert_eq!(unit.arrays[0].kind, Some(periscope::ArrayType::Double));
    assert_eq!(unit.arrays[0].nelts, Some(10000));
    let kinds: Vec<_> = unit.code_regions.iter().map(|r| r.kind.unwrap()).collect();
    assert_eq!(
        kinds,
        [
            periscope::RegionType::Call,
            periscope::RegionType::Forall,
            periscope::RegionType::Call
        ]
    );
    let nested_loop = &unit.code_regions[1].code_regions[0].code_regions[0];
    assert_eq!(nested_loop.kind, Some(periscope::RegionType::Loop));
    assert_eq!(nested_loop.position.start_line, Some(12));
    assert_eq!(nested_loop.position.file.name.as_deref(), Some("add.f90"));
    // xsi:schemaLocation is kept as an annotation and written back.
    assert_eq!(
        sir.annotations
            .get(sir::annotation::XSI_NS, "schemaLocation"),
        Some("http://www.lrr.in.tum.de/Periscope sir.xsd")
    );
    let written = periscope::write_string(sir).unwrap();
    assert!(written.contains("xsi:schemaLocation=\"http://www.lrr.in.tum.de/Periscope sir.xsd\""));
    assert_eq!(&periscope::parse_str(&written).unwrap().document, sir);
    assert!(matches!(
        sir::parse_str(&text).unwrap().document,
        Document::Periscope(_)
    ));
}
