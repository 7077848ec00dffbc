//! Benchmarks of the arpsim engine and formats. Targets (see
//! BENCHMARKS-arpsim.md): enter+leave of a kernel with one cycle-count set
//! <= 100 ns (record_average), <= 150 ns (record_all, streamed write);
//! ASCII write and parse >= 5 M records/s; gzip write >= 2 M records/s.

use arpsim::ascii::{self, AsciiReader, AsciiWriter};
use arpsim::codec::OutputSpec;
use arpsim::engine::{CallbackSet, Engine};
use arpsim::playback::{PlaybackIndex, ROOT};
use arpsim::record::{Header, Payload, Record, RecordRead, RecordWrite};
use arpsim::types::{DataType, FileFormat, Mode, Sid, StackEntry, Tid, Value};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::cell::Cell;
use std::hint::black_box;
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

struct Cycles(Rc<Cell<u64>>);

impl CallbackSet for Cycles {
    fn data_type(&self) -> DataType {
        DataType::ULong
    }
    fn enter(&mut self, _: Tid, _: Sid, data: &mut Value) {
        *data = Value::ULong(self.0.get());
    }
    fn leave(&mut self, _: Tid, _: Sid, data: &mut Value) {
        if let Value::ULong(start) = *data {
            *data = Value::ULong(self.0.get() - start);
        }
    }
}

/// An engine in `mode` measuring a shared clock, through the built-in
/// counter set (`fast`, as sim-host records) or a general callback set.
fn engine(mode: Mode, dir: &std::path::Path, fast: bool) -> (Engine, Rc<Cell<u64>>) {
    let clock = Rc::new(Cell::new(0));
    let mut e = Engine::new();
    if fast {
        e.add_counter_set(clock.clone()).unwrap();
    } else {
        e.add_callbacks(Box::new(Cycles(clock.clone()))).unwrap();
    }
    e.set_file_name(dir.join("bench.arp")).unwrap();
    e.start(1, 8, mode).unwrap();
    // A realistic context: three enclosing sections.
    e.enter_plain(1, 8, 0).unwrap();
    e.enter_plain(1, 7, 0).unwrap();
    e.enter_profiled(1, 2, 0).unwrap();
    (e, clock)
}

fn enter_leave(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("kernel_enter_leave");
    g.throughput(Throughput::Elements(1));
    // the built-in set (the fast path) under the mode's name, a general
    // callback set under `general_<mode>`
    for fast in [true, false] {
        for mode in [Mode::RecordAverage, Mode::RecordAll, Mode::RecordHistogram] {
            let (mut e, clock) = engine(mode, dir.path(), fast);
            let name = match fast {
                true => mode.name().to_owned(),
                false => format!("general_{}", mode.name()),
            };
            g.bench_function(name, |b| {
                b.iter(|| {
                    e.enter_kernel(1, 1, 0).unwrap();
                    clock.set(clock.get() + 17);
                    e.leave_kernel(1, 1).unwrap();
                })
            });
            e.finish_partial().unwrap();
        }
    }
    // Playback: record N samples, then play them back in a loop.
    const N: i32 = 1 << 20;
    let (mut rec, _) = engine(Mode::RecordAll, dir.path(), false);
    for _ in 0..N {
        rec.enter_kernel(1, 1, 0).unwrap();
        rec.leave_kernel(1, 1).unwrap();
    }
    rec.leave_profiled(1, 2).unwrap();
    rec.leave_plain(1, 7).unwrap();
    rec.leave_plain(1, 8).unwrap();
    rec.finish().unwrap();
    let index = PlaybackIndex::load(&dir.path().join("bench.arp")).unwrap();
    let mut pb = Engine::new();
    pb.add_callbacks(Box::new(Cycles(Rc::new(Cell::new(0)))))
        .unwrap();
    pb.start_playback(1, 8, index).unwrap();
    let open = |pb: &mut Engine| {
        pb.enter_plain(1, 8, 0).unwrap();
        pb.enter_plain(1, 7, 0).unwrap();
        pb.enter_profiled(1, 2, 0).unwrap();
    };
    open(&mut pb);
    let mut played = 0;
    g.bench_function("playback", |b| {
        // Only the kernel enter+leave pairs are timed; restarting the run
        // when all N samples were played is not.
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let n = left.min((N - played) as u64);
                let t = Instant::now();
                for _ in 0..n {
                    pb.enter_kernel(1, 1, 0).unwrap();
                    pb.leave_kernel(1, 1).unwrap();
                }
                total += t.elapsed();
                left -= n;
                played += n as i32;
                if played == N {
                    pb.finish_partial().unwrap();
                    let mut ix = pb.take_playback_index().unwrap();
                    ix.reset_plays();
                    pb.start_playback(1, 8, ix).unwrap();
                    open(&mut pb);
                    played = 0;
                }
            }
            total
        })
    });
    g.finish();
}

fn sample_records(n: usize) -> (Header, Vec<Record>) {
    let header = Header {
        format: FileFormat::Ascii,
        mode: Mode::RecordAll,
        types: vec![DataType::ULong],
        count: n as u64,
        partial: false,
    };
    let e = |sid, idx| StackEntry { sid, idx };
    let records = (0..n)
        .map(|i| Record {
            stack: vec![
                e(8, 0),
                e(7, (i / 1000) as i32),
                e(3, 0),
                e(2, 0),
                e(1, (i % 1000) as i32),
            ],
            payload: Payload::Sample(vec![Value::ULong(2000 + (i as u64 * 7919) % 1000)]),
        })
        .collect();
    (header, records)
}

fn formats(c: &mut Criterion) {
    const N: usize = 100_000;
    let (header, records) = sample_records(N);
    let text = ascii::to_bytes(&header, &records);
    let mut g = c.benchmark_group("ascii");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("write", |b| {
        let mut out = Vec::with_capacity(text.len());
        b.iter(|| {
            out.clear();
            let mut w = AsciiWriter::new(&mut out);
            for r in &records {
                let Payload::Sample(v) = &r.payload else {
                    unreachable!()
                };
                w.write_sample(&r.stack, v).unwrap();
            }
            w.finish().unwrap();
        })
    });
    g.bench_function("parse", |b| {
        b.iter(|| {
            let mut r = AsciiReader::new(&text[..]).unwrap();
            let mut rec = Record {
                stack: Vec::new(),
                payload: Payload::Sample(Vec::new()),
            };
            let mut n = 0;
            while r.read_into(&mut rec).unwrap() {
                n += 1;
            }
            black_box(n)
        })
    });
    g.bench_function("gzip_write", |b| {
        b.iter_batched(
            || Vec::with_capacity(text.len() / 4),
            |out| {
                let gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
                let mut w = AsciiWriter::new(gz);
                for r in &records {
                    let Payload::Sample(v) = &r.payload else {
                        unreachable!()
                    };
                    w.write_sample(&r.stack, v).unwrap();
                }
                w.finish().unwrap();
                let mut gz = w.into_inner().unwrap();
                gz.flush().unwrap();
                black_box(gz.finish().unwrap().len())
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
    // Keep the spec type in use so the streamed path is documented here.
    let _ = OutputSpec::default();
}

fn playback_memory(c: &mut Criterion) {
    // Not a timing: prints bytes per recorded sample of the index.
    let (header, records) = sample_records(1_000_000);
    let index = PlaybackIndex::from_records(&header, &records).unwrap();
    println!(
        "playback index: {} samples, {} bytes, {:.1} bytes/sample",
        index.samples(),
        index.memory_bytes(),
        index.memory_bytes() as f64 / index.samples() as f64
    );
    let n8 = index.child(ROOT, 8, 0);
    let n7 = index.child(n8, 7, 500);
    let n3 = index.child(n7, 3, 0);
    let n2 = index.child(n3, 2, 0);
    c.bench_function("playback_index_lookup", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % 1000;
            black_box(index.lookup(n2, 1, i))
        })
    });
}

criterion_group!(benches, enter_leave, formats, playback_memory);
criterion_main!(benches);
