//! Property tests: any model written and parsed again is the same model, and
//! no input, however broken, makes a parser panic.

use proptest::prelude::*;
use sir::annotation::Annotations;
use sir::apart::{self, *};
use sir::periscope;
use sir::ParseOptions;

/// Attribute text, including characters that need escaping and non-ASCII.
fn text() -> impl Strategy<Value = String> {
    prop::string::string_regex("[ -~\t\n\r\u{a0}-\u{17f}\u{4e2d}\u{1F600}]{0,12}").unwrap()
}

fn name() -> impl Strategy<Value = String> {
    prop::string::string_regex("[A-Za-z_][A-Za-z0-9_.-]{0,8}").unwrap()
}

fn annotations() -> impl Strategy<Value = Annotations> {
    let namespace = prop::sample::select(vec![
        "urn:arpsim:measure",
        "urn:other",
        "http://example.com/ns?a=1&b=2",
    ]);
    let local = prop::string::string_regex("[A-Za-z_][A-Za-z0-9_-]{0,6}").unwrap();
    prop::collection::vec((namespace, local, text()), 0..3).prop_map(|entries| {
        let mut annotations = Annotations::new();
        for (namespace, local, value) in entries {
            annotations.set(namespace, local, value);
        }
        annotations
    })
}

fn location() -> impl Strategy<Value = Location> {
    (
        any::<Option<u64>>(),
        any::<Option<u64>>(),
        any::<Option<u64>>(),
        any::<Option<u64>>(),
        prop::option::of(text()),
        annotations(),
    )
        .prop_map(
            |(start_line, start_column, end_line, end_column, uri, annotations)| Location {
                start_line,
                start_column,
                end_line,
                end_column,
                uri,
                annotations,
                ..Location::default()
            },
        )
}

fn variable() -> impl Strategy<Value = Variable> {
    let dimension = (any::<u64>(), any::<i64>(), any::<i64>(), annotations()).prop_map(
        |(index, lower_bound, upper_bound, annotations)| Dimension {
            index,
            lower_bound,
            upper_bound,
            annotations,
            origin: Default::default(),
        },
    );
    (
        name(),
        prop::option::of(text()),
        prop::option::of(text()),
        any::<Option<u64>>(),
        prop::option::of(location()),
        prop::collection::vec(dimension, 0..2),
        annotations(),
    )
        .prop_map(
            |(id, name, type_name, dimensions, location, dimension_bounds, annotations)| Variable {
                id,
                name,
                type_name,
                dimensions,
                location,
                dimension_bounds,
                annotations,
                origin: Default::default(),
            },
        )
}

fn variable_ref() -> impl Strategy<Value = VariableRef> {
    (
        name(),
        prop::option::of(prop::sample::select(AccessType::ALL.to_vec())),
        annotations(),
    )
        .prop_map(|(target, access, annotations)| VariableRef {
            annotations,
            ..VariableRef::new(target, access)
        })
}

fn region_type() -> impl Strategy<Value = RegionType> {
    prop_oneof![
        prop::sample::select(
            RegionType::RECOMMENDED
                .iter()
                .map(|(t, _)| t.clone())
                .collect::<Vec<_>>()
        ),
        // Custom types; none of them spells a recommended one.
        prop::string::string_regex("x[A-Za-z ]{0,6}")
            .unwrap()
            .prop_map(RegionType::Other),
    ]
}

fn leaf_region() -> impl Strategy<Value = CodeRegion> {
    let callee = (
        prop::option::of(name()),
        prop::option::of(text()),
        annotations(),
    )
        .prop_map(|(id, name, annotations)| Callee {
            id,
            name,
            annotations,
            origin: Default::default(),
        });
    let scheduling = (
        prop::sample::select(SchedulingType::ALL.to_vec()),
        any::<Option<u64>>(),
        annotations(),
    )
        .prop_map(|(kind, chunk, annotations)| Scheduling {
            kind,
            chunk,
            annotations,
            origin: Default::default(),
        });
    (
        (
            name(),
            region_type(),
            prop::option::of(text()),
            any::<Option<bool>>(),
        ),
        (
            prop::option::of(callee),
            prop::option::of(location()),
            prop::option::of(scheduling),
        ),
        (
            prop::collection::vec(variable(), 0..2),
            prop::collection::vec(variable_ref(), 0..2),
            annotations(),
        ),
    )
        .prop_map(
            |(
                (id, kind, critical, nowait),
                (callee, location, scheduling),
                (variables, variable_refs, annotations),
            )| {
                let mut region = CodeRegion::new(id, kind);
                region.critical_section_name = critical;
                region.nowait = nowait;
                region.callee = callee;
                region.location = location;
                region.scheduling = scheduling;
                region.variables = variables;
                region.variable_refs = variable_refs;
                region.annotations = annotations;
                region
            },
        )
}

fn group_leaf() -> impl Strategy<Value = Group> {
    let inheritance = (
        prop::option::of(name()),
        prop::option::of(text()),
        annotations(),
    )
        .prop_map(|(id, name, annotations)| Inheritance {
            id,
            name,
            annotations,
            origin: Default::default(),
        });
    (
        name(),
        prop::sample::select(GroupType::ALL.to_vec()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::collection::vec(inheritance, 0..2),
        prop::option::of(location()),
        annotations(),
    )
        .prop_map(
            |(id, kind, name, internal, inheritance, location, annotations)| {
                let mut group = Group::new(id, kind);
                group.name = name;
                group.internal = internal;
                group.inheritance = inheritance;
                group.location = location;
                group.annotations = annotations;
                group
            },
        )
}

fn region() -> impl Strategy<Value = CodeRegion> {
    leaf_region().prop_recursive(3, 24, 4, |inner| {
        let child = prop_oneof![
            4 => inner.clone().prop_map(RegionChild::CodeRegion),
            1 => group_leaf().prop_map(RegionChild::Group),
        ];
        let bound = (prop::collection::vec(inner.clone(), 1..3), annotations())
            .prop_map(|(regions, annotations)| Bound {
                regions,
                annotations,
                origin: Default::default(),
            })
            .boxed();
        let loop_control = (
            prop::option::of(bound.clone()),
            prop::option::of(bound.clone()),
            prop::option::of(bound),
            annotations(),
        )
            .prop_map(|(lower, upper, stride, annotations)| {
                Evaluation::LoopControl(LoopControl {
                    lower,
                    upper,
                    stride,
                    annotations,
                    origin: Default::default(),
                })
            });
        let expression = (prop::collection::vec(child.clone(), 1..3), annotations()).prop_map(
            |(items, annotations)| {
                Evaluation::Expression(Expression {
                    items,
                    annotations,
                    origin: Default::default(),
                })
            },
        );
        let evaluation = prop_oneof![expression, loop_control];
        (
            leaf_region(),
            prop::collection::vec(evaluation, 0..2),
            prop::collection::vec(child, 0..3),
        )
            .prop_map(|(mut region, evaluations, children)| {
                region.evaluations = evaluations;
                region.children = children;
                region
            })
    })
}

fn unit() -> impl Strategy<Value = Unit> {
    let leaf = (
        (
            name(),
            prop::sample::select(UnitType::ALL.to_vec()),
            prop::option::of(text()),
            prop::collection::vec(name(), 0..3),
        ),
        (
            any::<Option<bool>>(),
            prop::option::of(text()),
            prop::option::of(prop::sample::select(Language::ALL.to_vec())),
            any::<Option<bool>>(),
        ),
        (
            prop::option::of(name()),
            prop::option::of(location()),
            prop::collection::vec(variable(), 0..2),
            prop::collection::vec(variable_ref(), 0..2),
        ),
        annotations(),
    )
        .prop_map(
            |(
                (id, kind, name, arguments),
                (is_virtual, internal, language, instrumentable),
                (alias, location, variables, variable_refs),
                annotations,
            )| {
                let mut unit = Unit::new(id, kind);
                unit.name = name;
                unit.arguments = arguments;
                unit.is_virtual = is_virtual;
                unit.internal = internal;
                unit.language = language;
                unit.instrumentable = instrumentable;
                unit.alias = alias;
                unit.location = location;
                unit.variables = variables;
                unit.variable_refs = variable_refs;
                unit.annotations = annotations;
                unit
            },
        );
    leaf.prop_recursive(2, 12, 3, |inner| {
        let child = prop_oneof![
            3 => region().prop_map(UnitChild::CodeRegion),
            1 => inner.clone().prop_map(UnitChild::Unit),
            1 => group_leaf().prop_map(UnitChild::Group),
        ];
        (inner, prop::collection::vec(child, 0..3)).prop_map(|(mut unit, children)| {
            unit.children = children;
            unit
        })
    })
}

fn apart_sir() -> impl Strategy<Value = Sir> {
    let member = prop_oneof![
        3 => unit().prop_map(Member::Unit),
        1 => (group_leaf(), prop::collection::vec(unit(), 0..2)).prop_map(|(mut group, units)| {
            group.members = units.into_iter().map(Member::Unit).collect();
            Member::Group(group)
        }),
    ];
    (
        prop::sample::select(Language::ALL.to_vec()),
        any::<Option<bool>>(),
        any::<Option<bool>>(),
        prop::collection::vec(variable(), 0..2),
        prop::collection::vec(member, 1..3),
        annotations(),
    )
        .prop_map(
            |(language, message_passing, shared_memory, variables, members, annotations)| {
                let mut sir = Sir::new(language);
                sir.message_passing = message_passing;
                sir.shared_memory = shared_memory;
                sir.variables = variables;
                sir.members = members;
                sir.annotations = annotations;
                sir
            },
        )
}

fn psc_position() -> impl Strategy<Value = periscope::SourcePosition> {
    (
        any::<Option<u64>>(),
        any::<Option<u64>>(),
        prop::option::of(text()),
        annotations(),
        annotations(),
    )
        .prop_map(
            |(start_line, end_line, file, position_annotations, file_annotations)| {
                periscope::SourcePosition {
                    start_line,
                    end_line,
                    file: periscope::File {
                        name: file,
                        annotations: file_annotations,
                        ..Default::default()
                    },
                    annotations: position_annotations,
                    ..Default::default()
                }
            },
        )
}

fn psc_array() -> impl Strategy<Value = periscope::Array> {
    (
        prop::option::of(prop::sample::select(periscope::ArrayType::ALL.to_vec())),
        prop::option::of(text()),
        any::<Option<u64>>(),
        annotations(),
    )
        .prop_map(|(kind, name, nelts, annotations)| periscope::Array {
            kind,
            name,
            nelts,
            annotations,
            ..Default::default()
        })
}

fn psc_region() -> impl Strategy<Value = periscope::CodeRegion> {
    let leaf = (
        prop::option::of(prop::sample::select(periscope::RegionType::ALL.to_vec())),
        (
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(text()),
        ),
        psc_position(),
        prop::collection::vec(psc_array(), 0..2),
        annotations(),
    )
        .prop_map(
            |(kind, (name, datascopeclause, id), position, arrays, annotations)| {
                periscope::CodeRegion {
                    kind,
                    name,
                    datascopeclause,
                    id,
                    position,
                    arrays,
                    code_regions: Vec::new(),
                    annotations,
                    origin: Default::default(),
                }
            },
        );
    leaf.prop_recursive(3, 16, 3, |inner| {
        (psc_region_shell(), prop::collection::vec(inner, 0..3)).prop_map(
            |(mut region, children)| {
                region.code_regions = children;
                region
            },
        )
    })
}

/// A region without children, to which `prop_recursive` adds generated ones.
fn psc_region_shell() -> impl Strategy<Value = periscope::CodeRegion> {
    (
        prop::option::of(prop::sample::select(periscope::RegionType::ALL.to_vec())),
        psc_position(),
        prop::collection::vec(psc_array(), 0..2),
    )
        .prop_map(|(kind, position, arrays)| periscope::CodeRegion {
            kind,
            name: None,
            datascopeclause: None,
            id: None,
            position,
            arrays,
            code_regions: Vec::new(),
            annotations: Annotations::new(),
            origin: Default::default(),
        })
}

fn psc_unit() -> impl Strategy<Value = periscope::Unit> {
    let leaf = (
        prop::option::of(prop::sample::select(periscope::UnitType::ALL.to_vec())),
        (
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(text()),
        ),
        prop::option::of(psc_position()),
        prop::collection::vec(psc_region(), 0..3),
        annotations(),
    )
        .prop_flat_map(
            |(kind, (name, datascopeclause, id), position, code_regions, annotations)| {
                // Arrays only after a position (pos_array).
                let arrays = if position.is_some() {
                    prop::collection::vec(psc_array(), 0..2).boxed()
                } else {
                    Just(Vec::new()).boxed()
                };
                arrays.prop_map(move |arrays| periscope::Unit {
                    kind,
                    name: name.clone(),
                    datascopeclause: datascopeclause.clone(),
                    id: id.clone(),
                    position: position.clone(),
                    arrays,
                    units: Vec::new(),
                    code_regions: code_regions.clone(),
                    annotations: annotations.clone(),
                    origin: Default::default(),
                })
            },
        );
    leaf.prop_recursive(2, 8, 2, |inner| {
        (psc_unit_leaf(), prop::collection::vec(inner, 0..2)).prop_map(|(mut unit, units)| {
            unit.units = units;
            unit
        })
    })
}

fn psc_unit_leaf() -> impl Strategy<Value = periscope::Unit> {
    (
        prop::option::of(prop::sample::select(periscope::UnitType::ALL.to_vec())),
        prop::option::of(text()),
    )
        .prop_map(|(kind, name)| periscope::Unit {
            kind,
            name,
            ..Default::default()
        })
}

fn psc_sir() -> impl Strategy<Value = periscope::Sir> {
    (
        prop::option::of(prop::sample::select(periscope::Language::ALL.to_vec())),
        prop::collection::vec(psc_unit(), 1..3),
        annotations(),
    )
        .prop_map(|(language, units, annotations)| periscope::Sir {
            units,
            annotations,
            ..periscope::Sir::new(language)
        })
}

const FIXTURE: &str = include_str!("fixtures/apart/figure7_fortran_io_location.xml");
const PSC_FIXTURE: &str = include_str!("fixtures/periscope/add_f90.xml");

/// A valid document with a few bytes changed, inserted or removed: reaches
/// far deeper into the parsers than random bytes do.
fn mutated(base: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let edit = (any::<prop::sample::Index>(), any::<u8>(), 0u8..3);
    prop::collection::vec(edit, 1..6).prop_map(move |edits| {
        let mut bytes = base.as_bytes().to_vec();
        for (at, byte, op) in edits {
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => {
                    bytes.remove(i);
                }
            }
        }
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn apart_models_survive_write_and_parse(sir in apart_sir()) {
        let xml = apart::write_string(&sir).unwrap();
        let parsed = apart::parse_str(&xml);
        prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed.err(), xml);
        let parsed = parsed.unwrap();
        prop_assert!(parsed.warnings.is_empty());
        prop_assert_eq!(parsed.document, sir);
    }

    #[test]
    fn periscope_models_survive_write_and_parse(sir in psc_sir()) {
        let xml = periscope::write_string(&sir).unwrap();
        let parsed = periscope::parse_str(&xml);
        prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed.err(), xml);
        prop_assert_eq!(parsed.unwrap().document, sir);
    }

    #[test]
    fn any_periscope_model_converts_to_a_writable_apart_model(sir in psc_sir()) {
        match sir::convert::to_apart(&sir) {
            Ok(converted) => {
                let xml = apart::write_string(&converted.document).unwrap();
                let parsed = apart::parse_str(&xml);
                prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed.err(), xml);
                prop_assert_eq!(parsed.unwrap().document, converted.document);
            }
            Err(_) => prop_assert!(sir.language.is_none()),
        }
    }

    #[test]
    fn conversion_never_panics_and_periscope_output_is_writable(sir in apart_sir()) {
        let converted = sir::convert::to_periscope(&sir).document;
        let xml = periscope::write_string(&converted).unwrap();
        let has_units = sir.units().iter().any(|_| true);
        // Groups without units leave Periscope nothing to hold: the result
        // is invalid, and validation says so.
        prop_assert_eq!(converted.validate().is_valid(), has_units, "{}", converted.validate());
        if has_units {
            prop_assert_eq!(periscope::parse_str(&xml).unwrap().document, converted.clone());
        }
        if let (true, Ok(back)) = (has_units, sir::convert::to_apart(&converted)) {
            let xml = apart::write_string(&back.document).unwrap();
            let parsed = apart::parse_str(&xml);
            prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed.err(), xml);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_a_parser(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let options = ParseOptions { max_depth: 64, ..ParseOptions::default() };
        if let Ok(parsed) = sir::parse(&bytes[..], &options) {
            let _ = parsed.document.validate();
        }
        let _ = apart::parse(&bytes[..], &options);
        let _ = periscope::parse(&bytes[..], &options);
    }

    #[test]
    fn mutated_documents_never_panic_a_parser(bytes in prop_oneof![mutated(FIXTURE), mutated(PSC_FIXTURE)]) {
        if let Ok(parsed) = sir::parse(&bytes[..], &ParseOptions::default()) {
            let _ = parsed.document.validate();
            let mut out = Vec::new();
            let _ = parsed.document.write(&mut out);
        }
    }
}
