//! C ABI of arpsim (in progress).
