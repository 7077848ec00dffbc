//! Stack growth for the recursive walks over the model.
//!
//! Parsing, validating, writing and converting recurse once per nesting
//! level. In debug builds one level of the parser takes about 14 KiB of
//! stack, so a 2 MiB thread overflows near 150 levels. Each recursive step
//! runs through [`guarded`], which moves to a fresh heap-allocated stack
//! segment when little is left; depth is then bounded by
//! [`crate::ParseOptions::max_depth`] and memory, not by the thread's stack.

/// Stack that must remain before one more level may run on this segment.
const RED_ZONE: usize = 256 * 1024;
/// Size of each new segment.
const SEGMENT: usize = 4 * 1024 * 1024;

pub(crate) fn guarded<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
