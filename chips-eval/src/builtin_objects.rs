//! The special objects of section 2: `hardware` (the common interface of
//! the hardware model), `la` (run-time status) and the `sequential`
//! template, which is written in CHIP3S itself.

/// The `sequential` template: one stage with one cpu step lasting `Tx`,
/// the serial time a subtask links in (section 2, "covers the case of the
/// execution of a subtask on a single CPU").
pub const SEQUENTIAL_SOURCE: &str = r#"
(* Built-in sequential template: the subtask runs on one processor. *)
partmp sequential {
  include hardware;
  var dtdp numeric:
    Tx = 0;  (* serial execution time, seconds *)
  option { nstage = 1, seval = 0 }
  proc exec init {
    step cpu { confdev Tx; }
  }
}
"#;

/// Members of the `la` object (run-time status).
pub const LA_MEMBERS: &[(&str, &str)] = &[
    (
        "stage",
        "number of the template stage being evaluated, from 1",
    ),
    ("nstage", "number of stages of the template being evaluated"),
];

/// Options each object kind accepts (section 4.2 "pre-defined options").
pub const APPLICATION_OPTIONS: &[&str] = &["debug"];
pub const SUBTASK_OPTIONS: &[&str] = &["ptmp", "debug"];
pub const PARTMP_OPTIONS: &[&str] = &["nstage", "seval", "debug"];

/// Variable groups every object knows (section 4.2, plus `sysd` which the
/// example uses).
pub const PREDEFINED_GROUPS: &[&str] = &["dtdp", "rsus", "hrddev", "scope", "local", "sysd"];

/// Built-in mathematical functions callable from expressions, with their
/// number of arguments. Names match case-insensitively (`Log2`, `power`).
pub const FUNCTIONS: &[(&str, usize)] = &[
    ("log2", 1),
    ("log10", 1),
    ("log", 1),
    ("exp", 1),
    ("sqrt", 1),
    ("power", 2),
    ("floor", 1),
    ("ceiling", 1),
    ("round", 1),
    ("abs", 1),
    ("min", 2),
    ("max", 2),
    ("mod", 2),
];

pub fn function_arity(name: &str) -> Option<usize> {
    let lower = name.to_ascii_lowercase();
    FUNCTIONS.iter().find(|(n, _)| *n == lower).map(|(_, a)| *a)
}
