//! The fuzz targets' harness: one target per input reader, run on stable
//! Rust as an ordinary `#[test]` (ARCHITECTURE.md, "Fuzzing").
//!
//! A target first reads every committed corpus file as it is (the seeds
//! and the regressions found so far), then a fixed number of inputs made
//! by editing them ([`mutate`]), drawn from a fixed seed so that a run is
//! the same everywhere. Each input goes to the reader on a worker thread
//! with the main thread's stack (8 MiB); the reader must return, within
//! [`CASE_TIMEOUT`], a value or an error its `check` accepts. A panic or a
//! rejected result shrinks to a smallest input; a hang is reported as it
//! came. Either way the input is saved in the target's scratch folder,
//! named in the failure, to be added to the corpus once fixed. Allocations
//! are capped by [`alloc::Capped`].
//!
//! `FUZZ_SCALE=N` runs N times the cases (`make fuzz-long`), `FUZZ_SEED`
//! draws other inputs.

pub mod alloc;
pub mod mutate;

use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

/// How long one input may take before it counts as a hang: far above
/// what any reader needs for inputs this small, even on a loaded machine.
pub const CASE_TIMEOUT: Duration = Duration::from_secs(20);

/// A reader's check: `Ok` when the reader gave a value or a clean error,
/// else what was wrong. Runs with the input and the target's scratch
/// folder (for readers that take a path).
pub type Check = dyn Fn(&[u8], &Path) -> Result<(), String> + Send + Sync;

/// One fuzz target.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its name: the corpus folder `fuzz/corpus/<name>/`.
    pub name: &'static str,
    /// Files of the repository (paths from its root) that are corpus too.
    pub shared: &'static [&'static str],
    /// Text the edits insert: keywords, tags, delimiters of the format.
    pub tokens: &'static [&'static str],
    /// Mutated inputs per run (times `FUZZ_SCALE`).
    pub cases: u32,
    /// Most edits per input.
    pub max_edits: usize,
    /// Inputs are cut to this many bytes.
    pub max_len: usize,
    /// How long one input may take before it counts as a hang.
    pub case_timeout: Duration,
}

impl Target {
    pub const fn new(name: &'static str) -> Target {
        Target {
            name,
            shared: &[],
            tokens: &[],
            cases: 256,
            max_edits: 6,
            max_len: 256 * 1024,
            case_timeout: CASE_TIMEOUT,
        }
    }
}

/// The repository's root.
pub fn repo_root() -> PathBuf {
    e2e_tests::repo_root()
}

/// The corpus of `target`: its folder's files, then its shared files,
/// each with its path (for messages).
pub fn corpus(target: &Target) -> Vec<(PathBuf, Vec<u8>)> {
    let folder = repo_root().join("fuzz/corpus").join(target.name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files.extend(target.shared.iter().map(|p| repo_root().join(p)));
    files
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect()
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The seed of `target`'s inputs: `FUZZ_SEED` or a fixed one, mixed with
/// the target's name so that targets draw different streams.
pub fn seed(target: &Target) -> u64 {
    let base = env_number("FUZZ_SEED").unwrap_or(0x5eed_a5f0_2026_0043);
    // FNV-1a of the name
    target
        .name
        .bytes()
        .fold(base ^ 0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}

/// Runs `target`: its corpus as it is, then its mutated inputs.
pub fn fuzz(
    target: &Target,
    check: impl Fn(&[u8], &Path) -> Result<(), String> + Send + Sync + 'static,
) {
    let scratch = e2e_tests::scratch(&format!("fuzz-{}", target.name));
    let corpus = corpus(target);
    assert!(!corpus.is_empty(), "fuzz target {}: no corpus", target.name);
    let worker = Worker::start(target, Arc::new(check), scratch.to_path_buf());
    for (file, bytes) in &corpus {
        if let Err(problem) = worker.run(bytes) {
            panic!(
                "fuzz target {}: corpus file {}: {problem}",
                target.name,
                file.display()
            );
        }
    }
    let material = mutate::Material {
        corpus: corpus.into_iter().map(|(_, bytes)| bytes).collect(),
        tokens: target.tokens,
        max_len: target.max_len,
    };
    let scale = env_number("FUZZ_SCALE").unwrap_or(1).max(1) as u32;
    let mut runner = TestRunner::new(Config {
        cases: target.cases.saturating_mul(scale),
        rng_seed: RngSeed::Fixed(seed(target)),
        failure_persistence: None,
        max_shrink_iters: 1024,
        ..Config::default()
    });
    let hung: Cell<Option<String>> = Cell::new(None);
    let result = runner.run(&mutate::inputs(material, target.max_edits), |input| {
        if has_hung(&hung) {
            // a stuck reader: no shrinking, the input that hung is reported
            return Ok(());
        }
        match worker.run(&input) {
            Ok(()) => Ok(()),
            Err(Problem::Hang(_)) => {
                hung.set(Some(save(&scratch, "hang", &input)));
                Err(TestCaseError::fail("hang"))
            }
            Err(problem) => Err(TestCaseError::fail(problem.to_string())),
        }
    });
    let failure = match result {
        Ok(()) => return,
        Err(TestError::Fail(why, input)) => match hung.take() {
            Some(saved) => format!(
                "no answer within {:?}; the input: {saved}",
                target.case_timeout
            ),
            None => format!(
                "{why}; the smallest input: {}",
                save(&scratch, "failure", &input)
            ),
        },
        Err(TestError::Abort(why)) => why.to_string(),
    };
    panic!(
        "fuzz target {} (seed {}): {failure}\nonce fixed, add the input to fuzz/corpus/{}/",
        target.name,
        seed(target),
        target.name
    );
}

fn has_hung(hung: &Cell<Option<String>>) -> bool {
    let saved = hung.take();
    let has = saved.is_some();
    hung.set(saved);
    has
}

/// Writes a failing input into the scratch folder; its path.
fn save(scratch: &Path, kind: &str, input: &[u8]) -> String {
    let path = scratch.join(format!("{kind}-input"));
    match std::fs::write(&path, input) {
        Ok(()) => format!("{} ({} bytes)", path.display(), input.len()),
        Err(e) => format!(
            "{} bytes, not saved ({e}): {:?}",
            input.len(),
            String::from_utf8_lossy(input)
        ),
    }
}

/// Why an input failed.
#[derive(Debug)]
enum Problem {
    Rejected(String),
    Panicked(String),
    Hang(Duration),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Rejected(why) => write!(f, "{why}"),
            Problem::Panicked(why) => write!(f, "the reader panicked: {why}"),
            Problem::Hang(wait) => write!(f, "no answer within {wait:?}"),
        }
    }
}

/// The thread that runs a target's inputs.
struct Worker {
    inputs: Sender<Vec<u8>>,
    results: Receiver<Result<(), Problem>>,
    timeout: Duration,
}

impl Worker {
    fn start(target: &Target, check: Arc<Check>, scratch: PathBuf) -> Worker {
        let name = target.name;
        let (inputs, inbox) = mpsc::channel::<Vec<u8>>();
        let (outbox, results) = mpsc::channel();
        std::thread::Builder::new()
            .name(format!("fuzz-{name}"))
            .stack_size(8 << 20)
            .spawn(move || {
                alloc::set_target(name);
                for input in inbox {
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        check(&input, &scratch)
                    }));
                    let result = match outcome {
                        Ok(checked) => checked.map_err(Problem::Rejected),
                        Err(panic) => Err(Problem::Panicked(panic_text(&panic))),
                    };
                    if outbox.send(result).is_err() {
                        return;
                    }
                }
            })
            .expect("a fuzz worker thread");
        Worker {
            inputs,
            results,
            timeout: target.case_timeout,
        }
    }

    fn run(&self, input: &[u8]) -> Result<(), Problem> {
        self.inputs
            .send(input.to_vec())
            .map_err(|_| Problem::Rejected("the worker is gone".into()))?;
        match self.results.recv_timeout(self.timeout) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => Err(Problem::Hang(self.timeout)),
            Err(RecvTimeoutError::Disconnected) => {
                Err(Problem::Rejected("the worker is gone".into()))
            }
        }
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A target whose corpus is one small file of the repository.
    const SELF: Target = Target {
        shared: &["fuzz/seeds/tiny.ld"],
        cases: 64,
        case_timeout: Duration::from_secs(1),
        ..Target::new("harness-self-test")
    };

    fn original() -> Vec<u8> {
        std::fs::read(repo_root().join(SELF.shared[0])).unwrap()
    }

    /// The self-tests one at a time: each removes the scratch folders its
    /// failing target kept.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// What `fuzz` panicked with, running `check` on `SELF`.
    fn failure(
        check: impl Fn(&[u8], &Path) -> Result<(), String> + Send + Sync + 'static,
    ) -> String {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fuzz(&SELF, check)))
            .expect_err("the target fails");
        let kept = format!("arpsim-e2e-fuzz-{}-{}-", SELF.name, std::process::id());
        for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
            if entry.file_name().to_string_lossy().starts_with(&kept) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        panic_text(&panic)
    }

    #[test]
    fn a_reader_that_accepts_everything_passes() {
        fuzz(&SELF, |_, _| Ok(()));
    }

    #[test]
    fn a_panic_on_any_edited_input_fails_the_target_with_the_input_saved() {
        let original = original();
        let message = failure(move |bytes, _| {
            assert_eq!(bytes, &original[..], "an edited input");
            Ok(())
        });
        assert!(
            message.contains("the reader panicked: assertion"),
            "{message}"
        );
        assert!(message.contains("failure-input"), "{message}");
        assert!(
            message.contains("fuzz/corpus/harness-self-test/"),
            "{message}"
        );
    }

    #[test]
    fn a_rejected_result_fails_the_target() {
        let original = original();
        let message = failure(move |bytes, _| match bytes == &original[..] {
            true => Ok(()),
            false => Err("the error names no file".into()),
        });
        assert!(message.contains("the error names no file"), "{message}");
    }

    #[test]
    fn a_reader_that_does_not_answer_is_a_hang() {
        let original = original();
        let message = failure(move |bytes, _| {
            if bytes != &original[..] {
                // an edited input never gets an answer
                loop {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            Ok(())
        });
        assert!(message.contains("no answer within 1s"), "{message}");
        assert!(message.contains("hang-input"), "{message}");
    }

    #[test]
    fn a_failing_corpus_file_is_named() {
        let message = failure(|_, _| Err("refused".into()));
        assert!(
            message.contains("corpus file") && message.contains("tiny.ld"),
            "{message}"
        );
    }

    #[test]
    fn the_same_seed_draws_the_same_inputs_and_another_seed_others() {
        use proptest::strategy::{Strategy, ValueTree};
        let draw = |seed: u64| {
            let mut runner = TestRunner::new(Config {
                rng_seed: RngSeed::Fixed(seed),
                ..Config::default()
            });
            let material = mutate::Material {
                corpus: vec![original()],
                tokens: &[],
                max_len: 4096,
            };
            let strategy = mutate::inputs(material, 6);
            (0..32)
                .map(|_| strategy.new_tree(&mut runner).unwrap().current())
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(seed(&SELF)), draw(seed(&SELF)));
        assert_ne!(draw(seed(&SELF)), draw(seed(&Target::new("other"))));
    }
}
