//! The Periscope model: one type per element type of the schema.

use crate::annotation::{Annotations, PrefixHints};
use crate::position::Origin;

macro_rules! token_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The enumeration value as the schema spells it.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Case-sensitive, as `xs:enumeration` is; `xs:token` collapses
            /// surrounding whitespace.
            pub fn parse(s: &str) -> Option<Self> {
                let s = s.trim();
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }

            /// The values, for error messages: `a|b|c`.
            pub fn choices() -> String {
                Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join("|")
            }
        }
    };
}

token_enum!(
    /// `psc:RegionType`.
    RegionType {
        UserRegion = "userRegion",
        Call = "call",
        Loop = "loop",
        Vect = "vect",
        Forall = "forall",
        Io = "io",
        ParallelRegion = "parallelRegion",
        ParallelLoop = "parallelLoop",
        ParallelSections = "parallelSections",
        ParallelSection = "parallelSection",
        ParallelSingle = "parallelSingle",
        ParallelWorkshare = "parallelWorkshare",
        ParallelMaster = "parallelMaster",
        ParallelCriticalSection = "parallelCriticalSection",
        ParallelAtomic = "parallelAtomic",
        ParallelBarrier = "parallelBarrier",
        ParallelOrdered = "parallelOrdered",
        Workshare = "workshare",
        WorkshareSections = "workshareSections",
        WorkshareLoop = "workshareLoop",
        ParallelTask = "parallelTask",
        TaskWait = "taskWait",
    }
);

token_enum!(
    /// `psc:UnitType`.
    UnitType { Program = "program", Subroutine = "subroutine", Function = "function" }
);

token_enum!(
    /// `psc:LanguagesType` (the `sir` declaration says `psc:LanguageType`,
    /// a type the schema never defines; the complete listing uses
    /// `psc:LanguagesType`, which is what this is).
    Language { C = "c", Fortran = "fortran" }
);

token_enum!(
    /// `psc:ArrayType`: Fortran data types.
    ArrayType {
        Integer = "INTEGER",
        Real = "REAL",
        Character = "CHARACTER",
        Logical = "LOGICAL",
        Complex = "COMPLEX",
        Double = "DOUBLE",
        Derived = "DERIVED",
    }
);

/// The root: `sir` with one or more units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sir {
    pub language: Option<Language>,
    pub units: Vec<Unit>,
    pub annotations: Annotations,
    pub prefixes: PrefixHints,
    pub origin: Origin,
}

impl Sir {
    pub fn new(language: Option<Language>) -> Self {
        Sir {
            language,
            units: Vec::new(),
            annotations: Annotations::new(),
            prefixes: PrefixHints::new(),
            origin: Origin::BUILT,
        }
    }
}

/// `psc:Unit`: `(pos_array?, unit*, codeRegion*)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unit {
    pub kind: Option<UnitType>,
    pub name: Option<String>,
    pub datascopeclause: Option<String>,
    pub id: Option<String>,
    /// The optional `pos_array` group: without a position there may be no
    /// arrays (validation checks).
    pub position: Option<SourcePosition>,
    pub arrays: Vec<Array>,
    pub units: Vec<Unit>,
    pub code_regions: Vec<CodeRegion>,
    pub annotations: Annotations,
    pub origin: Origin,
}

/// `psc:CodeRegionType`: `(pos_array, codeRegion*)`; the position is required.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRegion {
    pub kind: Option<RegionType>,
    pub name: Option<String>,
    pub datascopeclause: Option<String>,
    pub id: Option<String>,
    pub position: SourcePosition,
    pub arrays: Vec<Array>,
    pub code_regions: Vec<CodeRegion>,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl CodeRegion {
    pub fn new(kind: RegionType, position: SourcePosition) -> Self {
        CodeRegion {
            kind: Some(kind),
            name: None,
            datascopeclause: None,
            id: None,
            position,
            arrays: Vec::new(),
            code_regions: Vec::new(),
            annotations: Annotations::new(),
            origin: Origin::BUILT,
        }
    }
}

/// `psc:PositionType`: a `file` and a line range (`xs:positiveInteger`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourcePosition {
    pub start_line: Option<u64>,
    pub end_line: Option<u64>,
    pub file: File,
    pub annotations: Annotations,
    pub origin: Origin,
}

impl SourcePosition {
    pub fn lines(file: impl Into<String>, start_line: u64, end_line: u64) -> Self {
        SourcePosition {
            start_line: Some(start_line),
            end_line: Some(end_line),
            file: File {
                name: Some(file.into()),
                ..File::default()
            },
            ..SourcePosition::default()
        }
    }
}

/// The `file` element of a position.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct File {
    pub name: Option<String>,
    pub annotations: Annotations,
    pub origin: Origin,
}

/// An `array` of the `pos_array` group.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Array {
    pub kind: Option<ArrayType>,
    pub name: Option<String>,
    /// Number of elements, `xs:positiveInteger`.
    pub nelts: Option<u64>,
    pub annotations: Annotations,
    pub origin: Origin,
}
