//! Evaluating the corrected memsort example (section 5) on the transputer
//! model for Nproc = 1, 2, 4, ..., 1024 (11 points).
//! Run: `cargo bench -p chips-eval --bench memsort`.

use chips_eval::{HardwareModel, LoadOptions, Program, RunOptions, Setting};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::path::PathBuf;

fn bench(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let hw = HardwareModel::load(&root.join("hardware/transputer-supercluster.toml")).unwrap();
    let app = root.join("tests/fixtures/memsort/memsort.la");
    let sweep = [Setting::parse("Nproc=1..1024:*2").unwrap()];
    let prog = Program::load(&app, &LoadOptions::default(), Some(&hw)).unwrap();
    c.bench_function(
        "memsort sweep Nproc=1..1024 (11 points, evaluation only)",
        |b| {
            b.iter(|| {
                chips_eval::run(black_box(&prog), &hw, &sweep, RunOptions::default()).unwrap()
            })
        },
    );
    c.bench_function(
        "memsort sweep Nproc=1..1024 (load, parse, check and evaluate)",
        |b| {
            b.iter(|| {
                let prog =
                    Program::load(black_box(&app), &LoadOptions::default(), Some(&hw)).unwrap();
                chips_eval::run(&prog, &hw, &sweep, RunOptions::default()).unwrap()
            })
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
