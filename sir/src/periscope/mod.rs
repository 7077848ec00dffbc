//! The Periscope SIR dialect: the XML Schema in namespace
//! `http://www.lrr.in.tum.de/Periscope` as typed Rust.
//!
//! The schema declares every attribute optional (no `use="required"`), so
//! the model has `Option`s where the APART model has required fields. The
//! `pos_array` group (`position`, then `array*`) is flattened into the
//! `position` and `arrays` fields of units and code regions.

mod model;
mod parse;
mod validate;
mod write;

pub use model::*;
pub(crate) use parse::Periscope;
pub use parse::{parse, parse_str};
pub use write::{write, write_string};

pub use crate::namespaces::PERISCOPE as NAMESPACE;
