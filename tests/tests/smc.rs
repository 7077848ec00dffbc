//! Self-modifying code stays correct (issue 19, the store path): the `smc`
//! guest writes small functions into RAM, calls them, rewrites them (after
//! data stores to the same page, with and without loads in between) and
//! calls them again. Every call must return the constant written last; a
//! stale translation returns the previous one. Checked on every
//! architecture, with sim-host's cycle counting and with bare Unicorn
//! (no hooks but semihosting), whose memory set-up is the same.

use e2e_tests::guest;
use sim_host::engine::{self, Counting, RunOptions, Stop};
use sim_host::image::elf::GuestImage;
use sim_host::model::target;

#[test]
fn rewritten_code_runs_in_its_new_version() {
    for name in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let t = target::builtin(name).unwrap();
        let image = GuestImage::load(&guest(name, "smc"), &t).unwrap();
        for counting in [Counting::Blocks, Counting::Off] {
            let options = RunOptions {
                counting,
                ..Default::default()
            };
            let outcome = engine::run(image.clone(), t.clone(), options).unwrap();
            let console = String::from_utf8(outcome.console.clone()).unwrap();
            // "smc: N calls, F fresh, sum S": every call fresh
            let words: Vec<&str> = console.split_whitespace().collect();
            assert!(
                words.len() >= 5 && words[0] == "smc:",
                "{name} {counting:?}: {console}"
            );
            let calls: u32 = words[1].parse().unwrap();
            let fresh: u32 = words[3].parse().unwrap();
            assert!(calls > 0, "{name} {counting:?}: {console}");
            assert_eq!(
                fresh, calls,
                "{name} {counting:?}: stale code ran: {console}"
            );
            assert_eq!(outcome.stop, Stop::Exit(0), "{name} {counting:?}");
        }
    }
}

/// Rewritten code is priced anew: `smc-prices-same` writes a function four
/// instructions longer over a short one, `smc-prices-apart` beside it; the
/// two variants run the same instructions (their code is identical, only a
/// datum differs), so their cycles and instructions must be equal. With
/// the short function's price kept, `-same` would count 4 instructions too
/// few for each of the long function's 100 calls.
#[test]
fn rewritten_code_is_priced_anew() {
    for name in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let t = target::builtin(name).unwrap();
        let counts = ["smc-prices-same", "smc-prices-apart"].map(|example| {
            let image = GuestImage::load(&guest(name, example), &t).unwrap();
            let options = RunOptions {
                // the same command line for both: picolibc copies it
                cmdline: "smc".into(),
                ..Default::default()
            };
            let outcome = engine::run(image, t.clone(), options).unwrap();
            assert_eq!(outcome.stop, Stop::Exit(0), "{name} {example}");
            (outcome.cycles, outcome.instructions)
        });
        assert_eq!(counts[0], counts[1], "{name}: same vs apart");
    }
}
