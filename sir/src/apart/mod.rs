//! The APART SIR dialect (APART Technical Report, Workpackage 1): elements of
//! sections 2.1–2.6 as typed Rust.
//!
//! Fields are public so that generators can build models directly; the
//! rules the types cannot express (unique ids, references, nesting) are
//! checked by [`Sir::validate`]. Every element carries an
//! [`Origin`](crate::position::Origin) (where it was parsed) and
//! [`Annotations`](crate::annotation::Annotations) (extra namespaced
//! attributes).

mod model;
mod parse;
mod validate;
mod write;

pub use model::*;
pub(crate) use parse::Apart;
pub use parse::{parse, parse_str};
pub use validate::ValidationOptions;
pub use write::{write, write_string};
