//! # arpsim — the ATOMIUM Record & Playback engine
//!
//! A faithful implementation of the ARP library of the ATOMIUM manual
//! (`seeds/004_e4816c0084434776.txt`, sections 2, 3, 4 and 6) for use by
//! an instruction set simulator (`sim-host`) and, through the `libarp`
//! crate, by native C programs.
//!
//! ## Modules
//!
//! | module | concept |
//! | --- | --- |
//! | [`types`] | the manual's types (6.1.1): ids, data types, modes, formats, [`types::Value`], [`types::StackEntry`] |
//! | [`text`] | how a message quotes input ([`text::quote`]) |
//! | [`error`] | [`error::ArpError`] with the manual's severities (`arp_error_t`), [`error::FormatError`] with line/column |
//! | [`engine`] | [`engine::Engine`]: section stacks, counters, callback sets ([`engine::CallbackSet`]), modes |
//! | [`paths`] | [`paths::PathInterner`]: section-id paths (traces) as numbers, one step per enter |
//! | [`playback`] | [`playback::PlaybackIndex`]: recorded samples by counter tuple, play counts, [`playback::PlaybackReport`] |
//! | [`record`] | a file's content independent of format: [`record::Header`], [`record::Record`], [`record::Payload`], [`record::Histogram`]; the interface of every format ([`record::RecordRead`], [`record::RecordWrite`]) |
//! | [`ascii`] | the ASCII format 1.1 (manual 6.5) |
//! | [`binary`] | the binary format (FORMAT.md) |
//! | [`writer`] | the record layout both formats share: [`writer::RecordWriter`] over a format's [`writer::Encoding`] |
//! | [`c_area`], [`c_callbacks`] | a data area as C sees it; a callback set of C functions (libarp's and sim-host's plugins'), the crate's only `unsafe` code |
//! | [`codec`] | format/gzip detection, atomic writes, the streamed `record_all` output |
//! | [`query`] | the query API of manual 6.4: [`query::Dataset`], [`query::Trace`] |
//! | [`shard`] | [`shard::Shard`]: `--shard K/N` for the tools that spread work over machines |
//! | [`tools`] | `dump`, `stats`, `convert` for the `sim-host arp` subcommands |
//!
//! No module uses a module that uses it, directly or through others:
//! `text` and `types` are at the bottom, then `error`, `record`, the two
//! formats and their `writer`, `codec`, and the engine, query and tools
//! on top. A rule two modules need goes into the lower one, or into a
//! small module of its own (`text`, `writer`).
//!
//! ## Driving the engine (sim-host)
//!
//! ```no_run
//! use arpsim::engine::{CallbackSet, Engine};
//! use arpsim::types::{DataType, Mode, Sid, Tid, Value};
//! use std::{cell::Cell, rc::Rc};
//!
//! struct Cycles(Rc<Cell<u64>>);
//! impl CallbackSet for Cycles {
//!     fn data_type(&self) -> DataType { DataType::ULong }
//!     fn enter(&mut self, _tid: Tid, _sid: Sid, data: &mut Value) {
//!         *data = Value::ULong(self.0.get());
//!     }
//!     fn leave(&mut self, _tid: Tid, _sid: Sid, data: &mut Value) {
//!         let start = data.as_u64_saturating();
//!         *data = Value::ULong(self.0.get() - start);
//!     }
//! }
//!
//! # fn main() -> Result<(), arpsim::error::ArpError> {
//! let clock = Rc::new(Cell::new(0u64));
//! let mut engine = Engine::new();
//! engine.add_callbacks(Box::new(Cycles(clock.clone())))?;
//! engine.set_file_name("data.arp")?;           // `.gz` => gzip
//! engine.start(1, 8, Mode::RecordAll)?;        // arpsim_start(tid, sid, mode)
//! engine.enter_plain(1, 8, 0)?;                // arp_enter
//! engine.enter_kernel(1, 1, 0)?;               // arp_enter_kernel
//! clock.set(clock.get() + 120);
//! engine.leave_kernel(1, 1)?;
//! engine.leave_plain(1, 8)?;
//! let summary = engine.finish()?;              // or finish_partial() on interruption
//! # let _ = summary; Ok(()) }
//! ```
//!
//! In playback the enter callback receives the recorded value (manual
//! 6.2): a simulator advances its clock by it. Start with
//! [`engine::Engine::start`] (`Mode::Playback` loads the file set by
//! `set_file_name`) or [`engine::Engine::start_playback`] with a
//! [`playback::PlaybackIndex::load`]ed index; after the run,
//! [`engine::FinishSummary::playback`] / [`engine::Engine::playback_report`]
//! list missing, duplicated and unexpected tuples and
//! [`playback::PlaybackIndex::play_counts`] gives every tuple's count.
//!
//! ## Invariants
//!
//! * **Counters (DESIGN.md decision 3, manual 4.3/4.4).** Per thread and
//!   section, the counter restarts at the `lidx` of the enter call when
//!   the enclosing section *instance* differs from the one of the
//!   section's previous entry in that thread (another call path, or the
//!   enclosing section entered again); otherwise it is incremented. Every
//!   section execution gets a fresh instance id; a thread started by
//!   `spawned(parent, child)` begins with a copy of the parent's frames
//!   (same instance ids) and no counter history, so start indices split a
//!   loop across threads into exactly the sequential tuples.
//! * **Traces (decision 6).** A record's stack lists the active sections
//!   outermost first; its last entry is the kernel or profiled section the
//!   value belongs to; every entry carries its counter (`sid@idx`).
//! * **Callbacks.** Enter/leave callbacks run for kernel and profiled
//!   sections only, for every set in registration order, each set with its
//!   own data area per section execution; spawn/join callbacks run for
//!   every set. The engine takes no locks.
//! * **Rules.** Kernels never nest (statically or dynamically); a leave
//!   names the innermost section its thread entered, of the same kind; ids
//!   stay within the maxima given to `start`; nothing is recorded before
//!   `start`; `finish` refuses open sections. A call refused with a fatal
//!   error changes no state; the non-fatal ones that concern something
//!   already done are reported after the call took effect (a playback
//!   tuple without a sample is entered with zeroed data; a thread joined
//!   with open sections ends anyway).
//! * **Bounded memory.** `record_all` streams records to disk as sections
//!   complete: memory is bounded by stack depth × threads. Readers stream
//!   too; the playback index keeps ≤ 48 bytes per sample for loop kernels.
//! * **Files.** Written to a temporary file in the destination directory
//!   and renamed at the end: the destination holds either its previous
//!   content or a complete file; a file written by `finish_partial` says
//!   `partial` in its header. Readers detect gzip and the binary format
//!   from the content, never the name, and return a [`error::FormatError`]
//!   with line (and column) or byte offset for any malformed input; they
//!   never panic.
//!
//! ## Decisions where the manual is open
//!
//! See FORMAT.md for the file formats. Records are written when their
//! section is left (completion order), so a kernel's record precedes that
//! of an enclosing profiled section. `long` is 64-bit and `long double` is
//! held as `f64`. Histogram bins are log2 ([`record::Histogram`]).
//! Playback needs a `record_all` file whose callback-set types equal the
//! registered sets'.

#![deny(unsafe_code)]

pub mod ascii;
pub mod binary;
pub mod c_area;
// The one module with unsafe code: it calls C functions.
#[allow(unsafe_code)]
pub mod c_callbacks;
pub mod codec;
pub mod engine;
pub mod error;
pub mod extrap;
pub mod input;
pub mod measure;
pub mod output;
pub mod paths;
pub mod playback;
pub mod query;
pub mod record;
pub mod shard;
pub mod text;
pub mod tools;
pub mod types;
pub mod writer;

pub use engine::{CallbackSet, Engine, FinishSummary, SectionKind};
pub use error::{ArpError, FormatError, Severity};
pub use playback::{PlaybackIndex, PlaybackReport, TupleReport};
pub use query::{Dataset, Trace, TraceValue};
pub use types::{DataType, FileFormat, Lidx, Mode, Sid, StackEntry, Tid, Value};
