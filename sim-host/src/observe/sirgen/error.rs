//! Why a SIR could not be generated.

use crate::image::dwarf::DwarfError;

#[derive(Debug, thiserror::Error)]
pub enum SirGenError {
    #[error("cannot read the ELF: {0}")]
    Elf(String),
    #[error("cannot read the DWARF debug information: {0}")]
    Dwarf(String),
    #[error("cannot create the disassembler: {0}")]
    Decode(String),
    /// A bug of the generator: what it built does not validate.
    #[error("the generated SIR does not validate:\n{0}")]
    Invalid(String),
    #[error("cannot write the SIR: {0}")]
    Write(String),
    /// A SIR needs a unit (APART 2.1); units come from function symbols.
    #[error("{0}: no function symbols (a fully stripped ELF): nothing to describe")]
    NoFunctions(String),
}

impl From<DwarfError> for SirGenError {
    fn from(e: DwarfError) -> SirGenError {
        match e {
            DwarfError::Elf(m) => SirGenError::Elf(m),
            DwarfError::Dwarf(m) => SirGenError::Dwarf(m),
        }
    }
}
