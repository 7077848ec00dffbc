//! sir: SIR program-structure XML (in progress).
