//! What a core is and costs, with no emulator: target descriptions,
//! instruction decoding into classes, block pricing, branch prediction,
//! what code a core runs, and the tool's exit statuses. Nothing here
//! depends on a layer above.

pub mod clocks;
pub mod cores;
pub mod cycles;
pub mod decode;
pub mod devices;
pub mod exc_return;
pub mod exit;
pub mod isa;
pub mod l1cache;
pub mod limits;
pub mod memory_counters;
pub mod memsys;
pub mod peripherals;
pub mod power;
pub mod predictor;
pub mod svd;
pub mod target;
pub mod xip;
