//! Prints every executed block of a guest (address, function, instructions,
//! cycles charged): a debugging aid for the cycle model.
//!
//!     cargo run -p sim-host --release --example trace_blocks -- TARGET ELF [FUNCTION]
//!
//! With FUNCTION, only blocks inside that function are printed.

use sim_host::engine::{self, ExecutionObserver, RunOptions};
use sim_host::image::elf::GuestImage;
use std::cell::RefCell;
use std::rc::Rc;

struct Printer {
    image: Rc<GuestImage>,
    only: Option<String>,
}

impl ExecutionObserver for Printer {
    fn block(&mut self, addr: u64, instructions: u32, before: u64, after: u64) {
        let function = self.image.function_at(addr).map(|f| f.name.clone());
        if self.only.is_none() || self.only == function {
            println!(
                "{:>10} {:<40} {:>3} insns {:>5} cycles",
                format!("{addr:#x}"),
                self.image.describe(addr),
                instructions,
                after - before
            );
        }
    }

    /// Printed lines cannot be taken back: a reset just goes on printing.
    fn reset(&mut self) {}
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, elf, rest @ ..] = &args[..] else {
        anyhow::bail!("usage: trace_blocks TARGET ELF [FUNCTION]");
    };
    let target = sim_host::model::target::builtin(target)?;
    let image = GuestImage::load(elf.as_ref(), &target)?;
    let printer = Rc::new(RefCell::new(Printer {
        image: Rc::new(image.clone()),
        only: rest.first().cloned(),
    }));
    let dir = std::env::temp_dir().join(format!("trace-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let options = RunOptions {
        observers: vec![printer],
        arp: sim_host::host::arp_host::ArpOptions {
            file: Some(dir.join("data.arp")),
            ..Default::default()
        },
        ..Default::default()
    };
    let outcome = engine::run(image, target, options)?;
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{:?}: {} instructions, {} cycles",
        outcome.stop, outcome.instructions, outcome.cycles
    );
    Ok(())
}
