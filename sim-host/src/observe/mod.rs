//! What is made of a run: the report (text and JSON), SIR generation and
//! profiles, callgrind, trace events, section plots and names, and playback
//! findings.
//! Observers that watch a run implement the engine's `ExecutionObserver`.

pub mod callgrind;
pub mod profile;
pub mod report;
pub mod sample_histogram;
pub mod section_names;
pub mod section_plot;
pub mod shadow;
pub mod shares;
pub mod sirgen;
pub mod trace_events;
pub mod verify;
