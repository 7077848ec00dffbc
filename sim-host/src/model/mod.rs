//! What a core is and costs, with no emulator: target descriptions,
//! instruction decoding into classes, block pricing, and the tool's exit
//! statuses. Nothing here depends on a layer above.

pub mod cores;
pub mod cycles;
pub mod decode;
pub mod exit;
pub mod limits;
pub mod peripherals;
pub mod svd;
pub mod target;
