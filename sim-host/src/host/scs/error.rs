//! An access the System Control Space model refuses, naming the register.

use super::names::name_of;

/// An access the model refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScsError {
    pub register: String,
    pub message: String,
}

impl ScsError {
    /// A refused access to the register at `addr`.
    pub fn refuse(addr: u32, message: impl Into<String>) -> ScsError {
        ScsError {
            register: name_of(addr),
            message: message.into(),
        }
    }

    /// An access to a register this model does not implement.
    pub fn not_modelled(addr: u32) -> ScsError {
        ScsError::refuse(addr, "not modelled by sim-host")
    }
}

impl std::fmt::Display for ScsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.register, self.message)
    }
}
