//! chips-eval: the CHIP3S language (in progress).
