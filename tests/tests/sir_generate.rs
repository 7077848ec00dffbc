//! SIR generation and profiling end to end on the ARP manual's image filter
//! (guest-shim/examples/filter): the structure of the generated SIR, its
//! validity in both dialects, and the trip counts, cycles and strides the
//! profile of a run writes into it.

use sim_host::engine::{self, RunOptions, Stop};
use sim_host::image::elf::GuestImage;
use sim_host::observe::profile::{annotate, Measure, ProfileCollector, ProfileData};
use sim_host::observe::sirgen::sir::annotation::Metric;
use sim_host::observe::sirgen::sir::apart::{CodeRegion, RegionType, Sir, Unit};
use sim_host::observe::sirgen::{self, Dialect, Generated, ARP_NS};
use std::cell::RefCell;
use std::rc::Rc;

const TARGETS: [&str; 2] = ["cortex-m4", "rv32imac"];

fn load(target_name: &str) -> (GuestImage, Vec<u8>, sim_host::model::target::Target) {
    let path = e2e_tests::guest(target_name, "filter");
    let target = sim_host::model::target::builtin(target_name).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let image = GuestImage::parse(&bytes, &path, &target).unwrap();
    (image, bytes, target)
}

fn generate(
    target_name: &str,
    dialect: Dialect,
) -> (Generated, GuestImage, sim_host::model::target::Target) {
    let (image, bytes, target) = load(target_name);
    let generated = sirgen::generate(&image, &bytes, &target, dialect).unwrap();
    (generated, image, target)
}

fn unit<'a>(sir: &'a Sir, name: &str) -> &'a Unit {
    sir.units()
        .into_iter()
        .find(|u| u.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no unit {name}"))
}

/// The region tree below `regions` as `kind(id)` strings, calls left out.
fn shape(regions: Vec<&CodeRegion>) -> Vec<String> {
    regions
        .into_iter()
        .filter(|r| r.kind != RegionType::Call)
        .map(|r| {
            let inner = shape(r.regions().collect());
            let name = match &r.kind {
                RegionType::Loop => "loop".to_string(),
                _ => r.annotations.get(ARP_NS, "name").unwrap_or("?").to_string(),
            };
            if inner.is_empty() {
                name
            } else {
                format!("{name}[{}]", inner.join(","))
            }
        })
        .collect()
}

fn lines(r: &CodeRegion) -> (u64, u64) {
    let l = r.location.as_ref().expect("a location");
    (l.start_line.unwrap(), l.end_line.unwrap())
}

#[test]
fn the_filter_sir_has_its_functions_loops_and_sections_nested_as_in_the_source() {
    for t in TARGETS {
        let (g, _, _) = generate(t, Dialect::Apart);
        let sir = &g.apart;
        let report = sir.validate();
        assert!(report.is_valid(), "{t}: {report}");
        assert!(g.warnings.is_empty(), "{t}: {:?}", g.warnings);

        let hor = unit(sir, "filter_horizontally");
        let loc = hor.location.as_ref().unwrap();
        assert!(
            loc.uri
                .as_deref()
                .unwrap()
                .ends_with("examples/filter/filter.c"),
            "{t}"
        );
        assert_eq!(loc.start_line, Some(75), "{t}: declaration line");
        assert_eq!(
            shape(hor.regions().collect()),
            ["ato_profile_filter_image_hor[loop[ato_kernel_filter_line_hor[loop]]]"],
            "{t}"
        );
        let vert = unit(sir, "filter_vertically");
        assert_eq!(
            shape(vert.regions().collect()),
            ["ato_profile_filter_image_vert[loop[ato_kernel_filter_line_vert[loop]]]"],
            "{t}"
        );
        // main: section 8 around the image loop, section 7 per image, in it
        // the inlined input() loops, sections 3 and 6 around the calls, and
        // the inlined output() loops.
        let main = unit(sir, "main");
        assert_eq!(
            shape(main.regions().collect()),
            ["main:128[loop[main:131[loop[loop],main:133,main:136,loop[loop]]]]"],
            "{t}"
        );

        // Sections carry their ids and kinds (file header of filter.c).
        for (label, sid, kind) in [
            ("ato_kernel_filter_line_hor", "1", "kernel"),
            ("ato_profile_filter_image_hor", "2", "profiled"),
            ("ato_kernel_filter_line_vert", "4", "kernel"),
            ("ato_profile_filter_image_vert", "5", "profiled"),
        ] {
            let r = sir
                .code_regions()
                .into_iter()
                .find(|r| r.id == label)
                .unwrap_or_else(|| panic!("{t}: no region {label}"));
            assert_eq!(r.annotations.get(ARP_NS, "sid"), Some(sid), "{t} {label}");
            assert_eq!(r.annotations.get(ARP_NS, "kind"), Some(kind), "{t} {label}");
            assert_eq!(g.map.section_sid(label), Some(sid.parse().unwrap()));
        }

        // Loops have the lines of their source loops: the x loop of
        // filter_horizontally is inside lines 85..92, the inlined input()
        // x loop at lines 59..60.
        let hor_section = hor.regions().next().unwrap();
        let y = hor_section.regions().next().unwrap();
        let x = y.regions().next().unwrap().regions().next().unwrap();
        let (start, end) = lines(x);
        assert!(
            (85..=92).contains(&start) && (85..=92).contains(&end),
            "{t}: x loop {start}..{end}"
        );
        let (start, end) = lines(y);
        assert!(
            (81..=93).contains(&start) && end <= 96,
            "{t}: y loop {start}..{end}"
        );
        // input() is inlined into main: its loops keep input's lines
        // (for y: 59, for x: 60, the assignment: 61).
        let t_loop = main
            .regions()
            .find(|r| r.kind != RegionType::Call)
            .unwrap()
            .regions()
            .next()
            .unwrap();
        let input_y = t_loop.regions().next().unwrap().regions().next().unwrap();
        assert_eq!(input_y.kind, RegionType::Loop);
        assert_eq!(lines(input_y), (59, 61), "{t}");
        assert_eq!(lines(input_y.regions().next().unwrap()), (60, 61), "{t}");

        // The calls of filter_horizontally / filter_vertically name their units.
        let callees: Vec<String> = sir
            .code_regions()
            .into_iter()
            .filter(|r| r.kind == RegionType::Call)
            .filter_map(|r| r.callee.as_ref()?.id.clone())
            .collect();
        assert!(
            callees.contains(&"u_filter_horizontally".to_string()),
            "{t}"
        );
        assert!(callees.contains(&"u_filter_vertically".to_string()), "{t}");

        // The map knows each loop's header and the unit's range.
        let range = g.map.unit_range(&hor.id).unwrap();
        assert_eq!(
            range.start,
            g.map
                .units
                .iter()
                .find(|u| u.name == "filter_horizontally")
                .unwrap()
                .start
        );
        let (header, body) = g.map.loop_region(&x.id).unwrap();
        assert!(body.contains(&header) && range.contains(&header), "{t}");
        let ranges = g.map.region_ranges(&x.id).unwrap();
        assert_eq!(ranges.len(), body.len());
        assert!(ranges
            .iter()
            .all(|r| range.contains(&r.start) && r.end <= range.end));
    }
}

#[test]
fn without_dwarf_the_sir_has_units_and_loops_but_no_positions() {
    let (image, bytes, target) = load("cortex-m4");
    // Hide the debug information: rename .debug_info in the section names.
    let mut stripped = bytes.clone();
    let name = b".debug_info\0";
    let at = stripped
        .windows(name.len())
        .position(|w| w == name)
        .expect("the guest has DWARF");
    stripped[at + 1] = b'n';
    let g = sirgen::generate(&image, &stripped, &target, Dialect::Apart).unwrap();
    assert_eq!(g.warnings.len(), 1, "{:?}", g.warnings);
    assert!(g.warnings[0].contains("no DWARF"), "{:?}", g.warnings);
    assert!(g.apart.validate().is_valid(), "{}", g.apart.validate());
    let hor = unit(&g.apart, "filter_horizontally");
    assert!(hor.location.is_none());
    // Sections are named after their call sites without labels.
    assert_eq!(
        shape(hor.regions().collect()),
        ["filter_horizontally+0xe[loop[filter_horizontally+0x20[loop]]]"]
    );
    assert!(g.apart.code_regions().iter().all(|r| r.location.is_none()));
}

#[test]
fn the_periscope_dialect_validates_and_names_the_sections() {
    for t in TARGETS {
        let (g, _, _) = generate(t, Dialect::Periscope);
        let sim_host::observe::sirgen::sir::Document::Periscope(psc) = &g.document else {
            panic!("{t}: not Periscope");
        };
        assert!(psc.validate().is_valid(), "{t}: {}", psc.validate());
        let hor = psc
            .units
            .iter()
            .find(|u| u.name.as_deref() == Some("filter_horizontally"))
            .unwrap();
        let section = &hor.code_regions[0];
        assert_eq!(
            section.name.as_deref(),
            Some("ato_profile_filter_image_hor"),
            "{t}"
        );
        let mut xml = Vec::new();
        g.write(&mut xml).unwrap();
        let xml = String::from_utf8(xml).unwrap();
        assert!(xml.contains("xmlns=\"http://www.lrr.in.tum.de/Periscope\""));
        let parsed = sim_host::observe::sirgen::sir::periscope::parse_str(&xml)
            .unwrap()
            .document;
        assert_eq!(&parsed, psc, "{t}: round trip");
    }
}

fn profile(t: &str, memory: bool) -> (Generated, ProfileData) {
    let (g, image, target) = generate(t, Dialect::Apart);
    let collector = Rc::new(RefCell::new(ProfileCollector::new(g.map.clone(), memory)));
    let options = RunOptions {
        observers: vec![collector.clone()],
        ..RunOptions::default()
    };
    let outcome = engine::run(image, target, options).unwrap();
    assert_eq!(outcome.stop, Stop::Exit(0), "{t}");
    let data = collector.borrow().data();
    assert_eq!(data.total_cycles, outcome.cycles, "{t}");
    assert_eq!(data.total_instructions, outcome.instructions, "{t}");
    (g, data)
}

fn region_in<'a>(
    sir: &'a Sir,
    data: &'a ProfileData,
    unit_name: &str,
    path: &[usize],
) -> (&'a CodeRegion, &'a Measure) {
    let mut r: &CodeRegion = unit(sir, unit_name)
        .regions()
        .filter(|r| r.kind != RegionType::Call)
        .nth(path[0])
        .unwrap();
    for i in &path[1..] {
        r = r
            .regions()
            .filter(|r| r.kind != RegionType::Call)
            .nth(*i)
            .unwrap();
    }
    (r, &data.regions[&r.id])
}

fn trips(m: &Measure) -> (u64, u64, u64, f64) {
    let t = m.trips.expect("a loop has trip counts");
    (t.entries, t.min, t.max, t.mean())
}

#[test]
fn the_profile_measures_the_loop_bounds_of_the_filter() {
    for t in TARGETS {
        let (g, data) = profile(t, false);
        let sir = &g.apart;
        // main: the image loop runs nImages = 4 times, once.
        let (_, image_loop) = region_in(sir, &data, "main", &[0, 0]);
        assert_eq!(trips(image_loop), (1, 4, 4, 4.0), "{t}");
        // input() inlined: y 200 per image, x 320 per line.
        let (_, y) = region_in(sir, &data, "main", &[0, 0, 0, 0]);
        assert_eq!(trips(y), (4, 200, 200, 200.0), "{t}");
        let (_, x) = region_in(sir, &data, "main", &[0, 0, 0, 0, 0]);
        assert_eq!(trips(x), (800, 320, 320, 320.0), "{t}");
        // filter_vertically: y 200, x 320.
        let (_, y) = region_in(sir, &data, "filter_vertically", &[0, 0]);
        assert_eq!(trips(y), (4, 200, 200, 200.0), "{t}");
        let (_, x) = region_in(sir, &data, "filter_vertically", &[0, 0, 0, 0]);
        assert_eq!(trips(x), (800, 320, 320, 320.0), "{t}");
        // filter_horizontally: gcc -O2 peels the last column (x = 319, whose
        // right neighbour is itself) out of the x loop, on both cores: the
        // machine loop runs 319 times per line.
        let (_, y) = region_in(sir, &data, "filter_horizontally", &[0, 0]);
        assert_eq!(trips(y), (4, 200, 200, 200.0), "{t}");
        let (_, x) = region_in(sir, &data, "filter_horizontally", &[0, 0, 0, 0]);
        assert_eq!(trips(x), (800, 319, 319, 319.0), "{t}");

        // Sections: entered as often as the manual's program enters them.
        for (label, entries) in [
            ("ato_profile_filter_image_hor", 4),
            ("ato_kernel_filter_line_hor", 800),
            ("ato_profile_filter_image_vert", 4),
            ("ato_kernel_filter_line_vert", 800),
        ] {
            assert_eq!(data.regions[label].executions, entries, "{t} {label}");
        }

        // Cycles nest: a kernel section holds its loop, the profiled section
        // its kernels, the call of filter_horizontally the whole function.
        let kernel = &data.regions["ato_kernel_filter_line_hor"];
        let x_loop = &data.regions[&region_in(sir, &data, "filter_horizontally", &[0, 0, 0, 0])
            .0
            .id];
        let profiled = &data.regions["ato_profile_filter_image_hor"];
        let hor = &data.units["u_filter_horizontally"];
        assert!(x_loop.inclusive_cycles > 0);
        assert!(kernel.inclusive_cycles >= x_loop.inclusive_cycles, "{t}");
        assert!(profiled.inclusive_cycles >= kernel.inclusive_cycles, "{t}");
        assert!(hor.inclusive_cycles >= profiled.inclusive_cycles, "{t}");
        assert_eq!(hor.executions, 4, "{t}");
        // The x loop is the innermost code: all its cycles are its own.
        assert_eq!(x_loop.exclusive_cycles, x_loop.inclusive_cycles, "{t}");
        // Every cycle is charged exactly once (exclusive cycles add up);
        // start-up code without a sized symbol is outside every unit.
        let sum: u64 = data
            .units
            .values()
            .chain(data.regions.values())
            .map(|m| m.exclusive_cycles)
            .sum();
        assert_eq!(sum + data.outside_cycles, data.total_cycles, "{t}");
        assert!(data.outside_cycles < data.total_cycles / 1000, "{t}");
        let main = &data.units["u_main"];
        assert!(main.inclusive_cycles > data.total_cycles * 9 / 10, "{t}");

        // Written into the SIR, which still validates.
        let mut doc = sim_host::observe::sirgen::sir::Document::Apart(g.apart.clone());
        assert!(annotate(&mut doc, &data) > 0);
        assert!(doc.validate().is_valid(), "{t}");
        let sim_host::observe::sirgen::sir::Document::Apart(annotated) = &doc else {
            unreachable!()
        };
        let x_id = region_in(sir, &data, "filter_vertically", &[0, 0, 0, 0])
            .0
            .id
            .clone();
        let x = annotated
            .code_regions()
            .into_iter()
            .find(|r| r.id == x_id)
            .unwrap();
        assert_eq!(
            x.annotations.measure(Metric::TripCountMax),
            Some("320"),
            "{t}"
        );
        assert_eq!(
            x.annotations.measure(Metric::TripCountMean),
            Some("320"),
            "{t}"
        );
        assert_eq!(
            x.annotations.measure(Metric::ExecutionCount),
            Some("800"),
            "{t}"
        );
        let mut xml = Vec::new();
        doc.write(&mut xml).unwrap();
        let reparsed =
            sim_host::observe::sirgen::sir::parse_str(std::str::from_utf8(&xml).unwrap()).unwrap();
        assert_eq!(reparsed.document, doc, "{t}: round trip");
    }
}

#[test]
fn memory_profiling_finds_the_rows_and_the_row_stride() {
    for t in TARGETS {
        let (g, data) = profile(t, true);
        let sir = &g.apart;
        let (_, x) = region_in(sir, &data, "filter_vertically", &[0, 0, 0, 0]);
        let (_, y) = region_in(sir, &data, "filter_vertically", &[0, 0]);
        // filter_vertically reads three rows of image_tmp and writes one of
        // image_out per x: consecutive bytes.
        let loads = x.loads.unwrap();
        let stores = x.stores.unwrap();
        assert_eq!(x.stride, Some(1), "{t}");
        assert_eq!(stores.stride, Some(1), "{t}");
        assert_eq!(stores.count, 4 * 200 * 320, "{t}");
        // Each image is 200 x 320 bytes.
        assert_eq!(stores.high - stores.low + 1, 200 * 320, "{t}");
        assert_eq!(loads.high - loads.low + 1, 200 * 320, "{t}");
        // The y loop's range covers its x loop's.
        let y_loads = y.loads.unwrap();
        assert!(
            y_loads.low <= loads.low && y_loads.high >= loads.high,
            "{t}"
        );
        // In filter_horizontally, the accesses of the y loop itself step a row.
        let (_, y) = region_in(sir, &data, "filter_horizontally", &[0, 0]);
        assert_eq!(y.stride, Some(320), "{t}");
    }
}

/// What `sim-host run --profile FILE [--profile-memory]` does.
#[test]
fn the_profiler_writes_an_annotated_sir_of_either_dialect() {
    for (t, dialect) in [
        ("cortex-m4", Dialect::Periscope),
        ("rv32imac", Dialect::Apart),
    ] {
        let (image, _, target) = load(t);
        let profiler =
            sim_host::observe::profile::Profiler::new(&image, &target, dialect, false).unwrap();
        let options = RunOptions {
            observers: vec![profiler.observer()],
            ..RunOptions::default()
        };
        let outcome = engine::run(image, target, options).unwrap();
        assert_eq!(outcome.stop, Stop::Exit(0));
        let dir = std::env::temp_dir().join(format!("sir-generate-{}-{t}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("profile.sir");
        profiler.write(&path).unwrap();
        let xml = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let parsed = sim_host::observe::sirgen::sir::parse_str(&xml)
            .unwrap()
            .document;
        assert_eq!(parsed.dialect(), dialect, "{t}");
        assert!(parsed.validate().is_valid(), "{t}: {}", parsed.validate());
        assert!(xml.contains("m:tripCountMax=\"320\""), "{t}");
        assert!(xml.contains("m:tripCountMax=\"200\""), "{t}");
        assert!(xml.contains("m:tripCountMax=\"4\""), "{t}");
        assert_eq!(parsed, profiler.annotated(), "{t}");
    }
}
