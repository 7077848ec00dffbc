//! # chips-eval
//!
//! An evaluator for CHIP3S performance models ("Characterisation
//! Instrumentation for Performance Prediction of Parallel Systems",
//! version 1.50, 1995). It replaces the CHIP3S compiler, the Mathematica
//! run-time system and the hardware objects: a model is parsed, checked
//! and evaluated directly, against a hardware model read from TOML.
//!
//! ## Data flow
//!
//! ```text
//! APP.la + included NAME.la ──lexer──parser──► ast::Object per file
//!        ──program::Program::load (include, symbol tables, Figure 3 rules)──► Program
//! data.arp runs ──measure──fit/nnls──calibrate (edits BASE.toml)──► HW.toml
//! HW.toml ──hardware::HardwareModel──┐
//! --set ──sweep::Setting────────────┴► runtime::run ─► eval::Evaluator per point
//!        ──► output (table / csv / json / breakdown / trace), plot (SVG / PNG)
//! ```
//!
//! ## Modules
//!
//! * [`lexer`], [`parser`], [`ast`], [`diagnostic`]: the language of
//!   section 4 and Appendices A and B;
//! * [`vectypes`]: vector type definitions (`vctdef`, section 4.5);
//! * [`program`]: loading objects through `include` and the checker;
//! * [`builtin_objects`]: `hardware`, `la`, `sequential`, options, functions;
//! * [`hardware`]: hardware model files, costs, devices, topologies;
//! * [`eval`], [`value`]: the evaluation engine;
//! * [`sweep`], [`runtime`], [`output`], [`plot`]: the run-time services
//!   of Table 1 (settings, LaRun, outputs);
//! * [`shard`], [`merge`]: a sweep split over machines (`run --shard K/N`)
//!   and put back together (`merge`);
//! * [`measure`]: measurements from `data.arp` (through `arpsim`), run
//!   parameters, section names (from a SIR through `sir`);
//! * [`nnls`], [`fit`]: non-negative least squares, fit statistics,
//!   leave-one-out cross-validation, cost laws chosen Extra-P style;
//! * [`calibrate`]: `chips-eval calibrate`, runs → hardware model file;
//!
//! ## Invariants
//!
//! * The lexer and parser never panic on any input; every problem is a
//!   [`diagnostic::Diagnostic`] with file, line and column.
//! * A [`program::Program`] exists only if every file parsed and the
//!   checker found nothing: the evaluator may assume names resolve,
//!   includes go only downwards, and links follow section 4.2 (it still
//!   reports, never panics, on anything data-dependent).
//! * Evaluation is deterministic and bounded: a step budget and a call
//!   depth limit ([`eval::Limits`]) turn endless models into errors.
//!   Operator chains are flat ([`ast::Expr::Chain`]), so their length
//!   costs no stack; nesting is capped by the parser and the evaluator
//!   grows its stack on the heap, so no model overflows the stack. A run
//!   has at most [`RunOptions::max_points`] points, checked before any is
//!   evaluated, and streams them ([`runtime::run_each`]).
//! * Numbers stay finite: hardware figures are finite and non-negative at
//!   load, a literal or result that overflows is an error, and so is a
//!   negative resource usage.
//! * Every point of a sweep starts from the same state: all objects are
//!   reset to their declared defaults before the settings are applied.
//! * The library returns typed errors ([`error::Error`]); only the binary
//!   uses `anyhow`.
//!
//! ## Decisions on ambiguities of the document
//!
//! 1. Operator precedence is conventional (`* /` > `+ -` > relational >
//!    equality). Appendix A lists the groups in this order but with YACC
//!    semantics it would invert them, contradicting the example's
//!    `Pmrg0 + Pmrg1 / hardware.Nproc`.
//! 2. `>=`, `<=`, `==`, `!=` are lexed as tokens (Appendix B never
//!    produces GTE/LSE/EQL/NEQ). Comments do not nest.
//! 3. `if E then S else S` requires `then` in both forms; `step` names
//!    its device (`step cpu { ... }`); procedure parameters are optional.
//! 4. Inside `<is T, ...>` entries are parsed without relational
//!    operators. In a `symbol`/`combination` vector an entry that names
//!    no element is positional: `<is icc, 169, 20>` counts 169 of the
//!    first class and 20 of the second. Element names take precedence
//!    over variables inside such a vector.
//! 5. The `option` block is required (Appendix A); link and option
//!    bodies separate assignments with `,` or `;`.
//! 6. An application's link block is applied before its `init`; a
//!    subtask's after its `init` and only for the current template (and
//!    hardware), because the example's `Tx = Txsort()` needs the values
//!    `init` computes (Figure 5).
//! 7. A subtask's current template is option `ptmp = "NAME"` (a string),
//!    default `sequential`; a subtask's time is its template's time and
//!    the return value of its `init` is ignored. The application's time
//!    is the value its `init` returns.
//! 8. `nstage` must be a non-negative integer; 0 stages cost nothing
//!    (the example's `Log2(hardware.Nproc)` is 0 on one processor).
//!    `la.stage` counts from 1. With `seval = 0` stage 1 is evaluated and
//!    multiplied by `nstage`.
//! 9. A step's time: `cpu` sums its confdev times; `inpcom` prices all
//!    messages of the step as concurrent (see `hardware::Network`).
//!    Template time is the sum of its steps; its `init` return is ignored.
//! 10. Data vectors are indexed from 1 (Mathematica); `x[i] = e` assigns
//!     an element (an extension).
//! 11. Built-in functions (`Log2`, `power`, `Sqrt`, ...) match names
//!     case-insensitively; a procedure of the object shadows them.
//! 12. `exit` ends the evaluation of the current point; its time is
//!     reported as `exit`.
//! 13. The hardware model's own `name` may be included as an alias of
//!     `hardware`.
//! 14. A loop count below zero and a case probability outside 0..1 are
//!     errors (Mathematica would have evaluated the formula regardless);
//!     the example's regression `Pmrg0 + Pmrg1 / Nproc` exceeds 1 for
//!     `Nproc` <= 2, so the corrected fixture caps it with `Min`.
//! 15. `include NAME` looks for `NAME.la` in the including file's folder,
//!     then in the `-I` folders in order; the file must define `NAME`.
//! 16. Syntax errors do not stop loading: the checker also runs on the
//!     recovered objects, so one run reports both kinds of problem.
//! 17. The `debug` option is accepted for every object kind (section 4.2
//!     names it) but has no effect; use `--trace`.
//! 18. A measured kernel's cost law (`[kernels] K = { law = ... }`) is
//!     evaluated at its parameter's value where the `arp` vector is
//!     priced: a procedure local or variable of that object, else a
//!     hardware parameter; otherwise the evaluation is an error.

#![forbid(unsafe_code)]

/// Size caps of the files chips-eval reads whole, checked while reading
/// (issue 30, N18; ARCHITECTURE.md, "Caps"): a model or vector source, a
/// hardware file.
pub const MAX_SOURCE_BYTES: u64 = 16 * arpsim::input::MIB;
/// A shard's output read by `merge`.
pub const MAX_SHARD_OUTPUT_BYTES: u64 = 256 * arpsim::input::MIB;

pub mod ast;
pub mod builtin_objects;
pub mod calibrate;
pub mod diagnostic;
pub mod error;
pub mod eval;
pub mod fit;
pub mod hardware;
pub mod lexer;
pub mod measure;
pub mod merge;
pub mod nnls;
pub mod output;
pub mod parser;
pub mod plot;
pub mod program;
pub mod runtime;
pub mod shard;
pub mod sweep;
pub mod value;
pub mod vectypes;

pub use error::{Error, EvalError};
pub use eval::{Breakdown, Evaluator, Limits, Outcome};
pub use hardware::HardwareModel;
pub use program::{LoadOptions, Program};
pub use runtime::{run, RunOptions, RunResults};
pub use sweep::Setting;
pub use value::Value;
