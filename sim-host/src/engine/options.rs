//! How a run is set up ([`RunOptions`]).

use super::api::{Counting, Observer};
use super::debug::Debugger;
use crate::host::arp_host::ArpOptions;
use crate::model::peripherals::MappedPeripheral;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::AtomicI32;
use std::sync::Arc;
use std::time::Duration;

/// How a run is set up.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub max_cycles: Option<u64>,
    pub timeout: Option<Duration>,
    /// The only host directory the guest may open files in.
    pub fs_root: Option<PathBuf>,
    /// Program name and arguments for SYS_GET_CMDLINE.
    pub cmdline: String,
    /// Print the guest's console output as it runs.
    pub echo: bool,
    /// The guest's output must equal this; compared while it is written.
    pub expect_output: Option<crate::host::expected::ExpectedOutput>,
    /// Set to a signal's number (by `signals::install`) to stop the run
    /// cleanly at the next block boundary.
    pub interrupt: Option<Arc<AtomicI32>>,
    /// Where to publish snapshots for a live status line (`progress`).
    pub progress: Option<Arc<crate::host::progress::ProgressShared>>,
    pub arp: ArpOptions,
    /// Profiling observers (none for a plain run).
    pub observers: Vec<Observer>,
    pub counting: Counting,
    /// Which path charges the blocks with `Counting::Blocks` (`None`: the
    /// one `SIM_HOST_CHARGE` names, by default the translation). Both
    /// count the same cycles and instructions.
    pub charge: Option<ChargePath>,
    /// Simulated cores (default: the target's).
    pub cores: Option<usize>,
    /// Stack size of each thread created by the guest (default 8 KiB).
    pub thread_stack: Option<u64>,
    /// Count instructions the cycle table does not price (as `alu`, with a
    /// warning) instead of stopping the run at the first one.
    pub allow_unpriced: bool,
    /// A debugger (`--gdb`) that controls the run: it is attached before
    /// the first instruction and called at every stop it asked for.
    pub debugger: Option<Rc<std::cell::RefCell<dyn Debugger>>>,
    /// The vendor peripherals sim-host does not model.
    pub peripherals: PeripheralOptions,
}

/// What an access to a vendor peripheral does (`--svd`, `--peripherals`).
#[derive(Debug, Clone, Default)]
pub struct PeripheralOptions {
    /// The peripherals of an SVD file, which name the register in faults.
    pub svd: Vec<MappedPeripheral>,
    /// Read the peripherals as 0 and drop writes (`--peripherals ignore`)
    /// instead of faulting.
    pub ignore: bool,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("max_cycles", &self.max_cycles)
            .field("timeout", &self.timeout)
            .field("fs_root", &self.fs_root)
            .field("cmdline", &self.cmdline)
            .field("arp", &self.arp)
            .field("observers", &self.observers.len())
            .field("counting", &self.counting)
            .field("charge", &self.charge)
            .field("debugger", &self.debugger.is_some())
            .field("peripherals", &self.peripherals)
            .finish()
    }
}

/// Which of the two paths charges the blocks (ARCHITECTURE.md decision 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChargePath {
    /// The translated code charges each block; the block hook only at
    /// boundaries and for the blocks it has to see.
    #[default]
    Translation,
    /// The block hook charges every block (the path before issue 31).
    Hook,
}

impl ChargePath {
    /// The path `SIM_HOST_CHARGE` names (`hook` or `translation`; the
    /// default otherwise), for comparing the two on one build.
    pub fn from_env() -> ChargePath {
        match std::env::var("SIM_HOST_CHARGE").as_deref() {
            Ok("hook") => ChargePath::Hook,
            _ => ChargePath::Translation,
        }
    }
}
