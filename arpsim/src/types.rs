//! The manual's type definitions (section 6.1.1) as Rust types, and the
//! data values that callback sets measure.

use std::fmt;

/// Thread id (`arp_tid`, manual 6.1.1).
pub type Tid = u16;
/// Section id (`arp_sid`, manual 6.1.1).
pub type Sid = u16;

/// The most callback sets a run may add: what every `data.arp` format
/// holds (the binary format stores the count in one byte; FORMAT.md).
pub const MAX_CALLBACK_SETS: usize = 255;
/// Loop index / section counter (`arp_lidx`, manual 6.1.1).
pub type Lidx = i32;

/// The data type of one callback set (`arp_data_type`, manual 6.1.1).
///
/// The discriminants are the type codes of the `data.arp` header (manual
/// 6.5: "5 = unsigned int"). C `long` is taken as 64 bits (LP64) and
/// `long double` is held as an `f64` (see FORMAT.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DataType {
    Char = 0,
    UChar = 1,
    Short = 2,
    UShort = 3,
    Int = 4,
    UInt = 5,
    Long = 6,
    ULong = 7,
    LLong = 8,
    ULLong = 9,
    Float = 10,
    Double = 11,
    LDouble = 12,
}

impl DataType {
    /// All 13 types, in code order.
    pub const ALL: [DataType; 13] = [
        DataType::Char,
        DataType::UChar,
        DataType::Short,
        DataType::UShort,
        DataType::Int,
        DataType::UInt,
        DataType::Long,
        DataType::ULong,
        DataType::LLong,
        DataType::ULLong,
        DataType::Float,
        DataType::Double,
        DataType::LDouble,
    ];

    /// The type with header code `code`, if any.
    pub fn from_code(code: u32) -> Option<DataType> {
        Self::ALL.get(code as usize).copied()
    }

    /// The header code of this type.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The C name of the type (for dumps).
    pub fn c_name(self) -> &'static str {
        match self {
            DataType::Char => "char",
            DataType::UChar => "unsigned char",
            DataType::Short => "short",
            DataType::UShort => "unsigned short",
            DataType::Int => "int",
            DataType::UInt => "unsigned int",
            DataType::Long => "long",
            DataType::ULong => "unsigned long",
            DataType::LLong => "long long",
            DataType::ULLong => "unsigned long long",
            DataType::Float => "float",
            DataType::Double => "double",
            DataType::LDouble => "long double",
        }
    }

    /// Size in bytes of one value in the binary format.
    pub fn binary_size(self) -> usize {
        match self {
            DataType::Char | DataType::UChar => 1,
            DataType::Short | DataType::UShort => 2,
            DataType::Int | DataType::UInt | DataType::Float => 4,
            _ => 8,
        }
    }

    /// Whether values of this type are floating point.
    pub fn is_float(self) -> bool {
        matches!(self, DataType::Float | DataType::Double | DataType::LDouble)
    }
}

/// Operation mode (`arp_mode`, manual 6.1.1 and 6.2). The discriminants
/// are the mode codes of the `data.arp` header (manual 6.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Mode {
    RecordAverage = 0,
    RecordAll = 1,
    RecordHistogram = 2,
    Playback = 3,
}

impl Mode {
    /// All four modes, in code order.
    pub const ALL: [Mode; 4] = [
        Mode::RecordAverage,
        Mode::RecordAll,
        Mode::RecordHistogram,
        Mode::Playback,
    ];

    /// The modes a `data.arp` file can hold (every mode but playback), in
    /// code order.
    pub const RECORDING: [Mode; 3] = [Mode::RecordAverage, Mode::RecordAll, Mode::RecordHistogram];

    /// The mode with code `code`, if any.
    pub fn from_code(code: u32) -> Option<Mode> {
        Self::ALL.get(code as usize).copied()
    }

    /// The manual's name (`record_average`, ...): what the tools write
    /// (dumps, reports, manifests) and show as the expected spelling.
    pub fn name(self) -> &'static str {
        match self {
            Mode::RecordAverage => "record_average",
            Mode::RecordAll => "record_all",
            Mode::RecordHistogram => "record_histogram",
            Mode::Playback => "playback",
        }
    }

    /// Parses a mode as every tool accepts it: the manual's name
    /// ([`Mode::name`]) or that name without `record_` (`average`, `all`,
    /// `histogram`).
    pub fn from_name(name: &str) -> Option<Mode> {
        Self::ALL.into_iter().find(|m| {
            let full = m.name();
            full == name || full.strip_prefix("record_") == Some(name)
        })
    }

    /// The names of `modes` for a message: `record_average, record_all,
    /// record_histogram or playback` for [`Mode::ALL`].
    pub fn expected(modes: &[Mode]) -> String {
        crate::text::one_of(modes.iter().map(|m| m.name()))
    }
}

/// A name [`Mode::from_name`] or [`FileFormat::from_name`] does not know,
/// with the names it does.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: expected {expected}", crate::text::quote(name))]
pub struct UnknownName {
    pub name: String,
    pub expected: String,
}

impl std::str::FromStr for Mode {
    type Err = UnknownName;
    /// [`Mode::from_name`], with the expected names in the error.
    fn from_str(name: &str) -> Result<Mode, UnknownName> {
        Mode::from_name(name).ok_or_else(|| UnknownName {
            name: name.to_owned(),
            expected: Mode::expected(&Mode::ALL),
        })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Output file format (`arp_file_format`, manual 6.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum FileFormat {
    #[default]
    Ascii = 0,
    Binary = 1,
}

impl FileFormat {
    /// Both formats, in code order.
    pub const ALL: [FileFormat; 2] = [FileFormat::Ascii, FileFormat::Binary];

    /// The format with code `code`, if any.
    pub fn from_code(code: u32) -> Option<FileFormat> {
        Self::ALL.get(code as usize).copied()
    }

    /// The name the tools take and show: `ascii` or `binary`.
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Ascii => "ascii",
            FileFormat::Binary => "binary",
        }
    }

    /// Parses a name written by [`FileFormat::name`].
    pub fn from_name(name: &str) -> Option<FileFormat> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl std::str::FromStr for FileFormat {
    type Err = UnknownName;
    /// [`FileFormat::from_name`], with the expected names in the error.
    fn from_str(name: &str) -> Result<FileFormat, UnknownName> {
        FileFormat::from_name(name).ok_or_else(|| UnknownName {
            name: name.to_owned(),
            expected: crate::text::one_of(FileFormat::ALL.iter().map(|f| f.name())),
        })
    }
}

impl fmt::Display for FileFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One measured value, typed by its callback set's [`DataType`].
///
/// `LDouble` is held as an `f64`: Rust has no extended-precision type; the
/// C library converts at the boundary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Char(i8),
    UChar(u8),
    Short(i16),
    UShort(u16),
    Int(i32),
    UInt(u32),
    Long(i64),
    ULong(u64),
    LLong(i64),
    ULLong(u64),
    Float(f32),
    Double(f64),
    LDouble(f64),
}

impl Value {
    /// The zero of `ty`: the content of a fresh data area when recording.
    pub fn zero(ty: DataType) -> Value {
        Value::from_raw(ty, 0)
    }

    /// The data type of this value.
    pub fn data_type(&self) -> DataType {
        match self {
            Value::Char(_) => DataType::Char,
            Value::UChar(_) => DataType::UChar,
            Value::Short(_) => DataType::Short,
            Value::UShort(_) => DataType::UShort,
            Value::Int(_) => DataType::Int,
            Value::UInt(_) => DataType::UInt,
            Value::Long(_) => DataType::Long,
            Value::ULong(_) => DataType::ULong,
            Value::LLong(_) => DataType::LLong,
            Value::ULLong(_) => DataType::ULLong,
            Value::Float(_) => DataType::Float,
            Value::Double(_) => DataType::Double,
            Value::LDouble(_) => DataType::LDouble,
        }
    }

    /// The value as an `f64` (for averages, histograms and statistics).
    pub fn as_f64(&self) -> f64 {
        match *self {
            Value::Char(v) => v as f64,
            Value::UChar(v) => v as f64,
            Value::Short(v) => v as f64,
            Value::UShort(v) => v as f64,
            Value::Int(v) => v as f64,
            Value::UInt(v) => v as f64,
            Value::Long(v) | Value::LLong(v) => v as f64,
            Value::ULong(v) | Value::ULLong(v) => v as f64,
            Value::Float(v) => v as f64,
            Value::Double(v) | Value::LDouble(v) => v,
        }
    }

    /// The value as a `u64`, saturating (negative and NaN give 0); what a
    /// simulator adds to its clock in playback mode.
    pub fn as_u64_saturating(&self) -> u64 {
        match *self {
            Value::UChar(v) => v as u64,
            Value::UShort(v) => v as u64,
            Value::UInt(v) => v as u64,
            Value::ULong(v) | Value::ULLong(v) => v,
            Value::Char(v) => v.max(0) as u64,
            Value::Short(v) => v.max(0) as u64,
            Value::Int(v) => v.max(0) as u64,
            Value::Long(v) | Value::LLong(v) => v.max(0) as u64,
            Value::Float(_) | Value::Double(_) | Value::LDouble(_) => self.as_f64() as u64,
        }
    }

    /// 64 raw bits that [`Value::from_raw`] turns back into this value:
    /// integers sign- or zero-extended, floats as `f64` bits.
    pub fn to_raw(&self) -> u64 {
        match *self {
            Value::Char(v) => v as i64 as u64,
            Value::UChar(v) => v as u64,
            Value::Short(v) => v as i64 as u64,
            Value::UShort(v) => v as u64,
            Value::Int(v) => v as i64 as u64,
            Value::UInt(v) => v as u64,
            Value::Long(v) | Value::LLong(v) => v as u64,
            Value::ULong(v) | Value::ULLong(v) => v,
            Value::Float(v) => (v as f64).to_bits(),
            Value::Double(v) | Value::LDouble(v) => v.to_bits(),
        }
    }

    /// Inverse of [`Value::to_raw`] (integers are truncated to the type).
    pub fn from_raw(ty: DataType, raw: u64) -> Value {
        match ty {
            DataType::Char => Value::Char(raw as i8),
            DataType::UChar => Value::UChar(raw as u8),
            DataType::Short => Value::Short(raw as i16),
            DataType::UShort => Value::UShort(raw as u16),
            DataType::Int => Value::Int(raw as i32),
            DataType::UInt => Value::UInt(raw as u32),
            DataType::Long => Value::Long(raw as i64),
            DataType::ULong => Value::ULong(raw),
            DataType::LLong => Value::LLong(raw as i64),
            DataType::ULLong => Value::ULLong(raw),
            DataType::Float => Value::Float(f64::from_bits(raw) as f32),
            DataType::Double => Value::Double(f64::from_bits(raw)),
            DataType::LDouble => Value::LDouble(f64::from_bits(raw)),
        }
    }

    /// Parses the ASCII spelling of a value of type `ty` (FORMAT.md,
    /// "Values"). Integers must fit the type; floats must be finite unless
    /// spelled `inf`, `-inf` or `NaN`.
    pub fn parse(ty: DataType, text: &str) -> Result<Value, String> {
        use crate::text::quote;
        fn int<T: std::str::FromStr>(ty: DataType, text: &str) -> Result<T, String> {
            text.parse::<T>().map_err(|_| {
                if !text.is_empty()
                    && text
                        .trim_start_matches(['-', '+'])
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                    && text.len() > 1
                {
                    format!("value {} overflows {}", quote(text), ty.c_name())
                } else {
                    format!("{} is not a valid {} value", quote(text), ty.c_name())
                }
            })
        }
        fn float(ty: DataType, text: &str) -> Result<f64, String> {
            let v: f64 = text
                .parse()
                .map_err(|_| format!("{} is not a valid {} value", quote(text), ty.c_name()))?;
            let explicit_inf = text.trim_start_matches(['-', '+']).to_ascii_lowercase();
            let explicit_inf = explicit_inf == "inf" || explicit_inf == "infinity";
            let overflow = if ty == DataType::Float {
                (v as f32).is_infinite()
            } else {
                v.is_infinite()
            };
            if overflow && !explicit_inf {
                return Err(format!("value {} overflows {}", quote(text), ty.c_name()));
            }
            Ok(v)
        }
        Ok(match ty {
            DataType::Char => Value::Char(int(ty, text)?),
            DataType::UChar => Value::UChar(int(ty, text)?),
            DataType::Short => Value::Short(int(ty, text)?),
            DataType::UShort => Value::UShort(int(ty, text)?),
            DataType::Int => Value::Int(int(ty, text)?),
            DataType::UInt => Value::UInt(int(ty, text)?),
            DataType::Long => Value::Long(int(ty, text)?),
            DataType::ULong => Value::ULong(int(ty, text)?),
            DataType::LLong => Value::LLong(int(ty, text)?),
            DataType::ULLong => Value::ULLong(int(ty, text)?),
            DataType::Float => Value::Float(float(ty, text)? as f32),
            DataType::Double => Value::Double(float(ty, text)?),
            DataType::LDouble => Value::LDouble(float(ty, text)?),
        })
    }

    /// Appends the ASCII spelling (FORMAT.md, "Values") to `out`.
    pub fn write_ascii(&self, out: &mut Vec<u8>) {
        let mut buf = itoa::Buffer::new();
        let text = match *self {
            Value::Char(v) => buf.format(v),
            Value::UChar(v) => buf.format(v),
            Value::Short(v) => buf.format(v),
            Value::UShort(v) => buf.format(v),
            Value::Int(v) => buf.format(v),
            Value::UInt(v) => buf.format(v),
            Value::Long(v) | Value::LLong(v) => buf.format(v),
            Value::ULong(v) | Value::ULLong(v) => buf.format(v),
            Value::Float(v) => {
                let text = if plain_float(v as f64) {
                    v.to_string()
                } else {
                    format!("{v:e}")
                };
                out.extend_from_slice(text.as_bytes());
                return;
            }
            Value::Double(v) | Value::LDouble(v) => {
                write_f64(v, out);
                return;
            }
        };
        out.extend_from_slice(text.as_bytes());
    }
}

/// Whether a float is written in plain decimal (else in `1e-300` form).
fn plain_float(v: f64) -> bool {
    let a = v.abs();
    a == 0.0 || !a.is_finite() || (1e-5..1e16).contains(&a)
}

/// Appends the shortest spelling of `v` that parses back to the same
/// bits: plain decimal for moderate magnitudes, exponent form otherwise
/// (FORMAT.md, "Values").
pub fn write_f64(v: f64, out: &mut Vec<u8>) {
    let text = if plain_float(v) {
        v.to_string()
    } else {
        format!("{v:e}")
    };
    out.extend_from_slice(text.as_bytes());
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Vec::new();
        self.write_ascii(&mut out);
        f.write_str(&String::from_utf8_lossy(&out))
    }
}

/// One entry of a trace's stack: a section and its counter (`sid@idx`,
/// manual 6.5). In average and histogram records `idx` is 0 and unused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackEntry {
    pub sid: Sid,
    pub idx: Lidx,
}

impl fmt::Display for StackEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.sid, self.idx)
    }
}

/// Formats a stack as `sid@idx sid@idx ...` (outermost first).
pub fn format_path(stack: &[StackEntry]) -> String {
    stack
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Most stack entries [`format_path_tail`] shows.
pub const MESSAGE_PATH_ENTRIES: usize = 8;

/// The innermost [`MESSAGE_PATH_ENTRIES`] entries of `stack` for a message;
/// a deeper trace starts with `… (N outer)` so that messages stay short.
pub fn format_path_tail(stack: &[StackEntry]) -> String {
    let cut = stack.len().saturating_sub(MESSAGE_PATH_ENTRIES);
    let tail = format_path(&stack[cut..]);
    if cut == 0 {
        tail
    } else {
        format!("… ({cut} outer) {tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_codes_follow_the_manual_enum_order() {
        assert_eq!(DataType::UInt.code(), 5); // manual 6.5: "5 = unsigned int"
        assert_eq!(DataType::from_code(12), Some(DataType::LDouble));
        assert_eq!(DataType::from_code(13), None);
    }

    #[test]
    fn values_round_trip_through_ascii_and_raw() {
        let samples = [
            Value::Char(-128),
            Value::UChar(255),
            Value::Short(-3),
            Value::UShort(65535),
            Value::Int(i32::MIN),
            Value::UInt(u32::MAX),
            Value::Long(i64::MIN),
            Value::ULong(u64::MAX),
            Value::LLong(-1),
            Value::ULLong(7),
            Value::Float(1.5e-7),
            Value::Double(0.1),
            Value::LDouble(-2.5e300),
            Value::Double(5e-324),
            Value::Float(3.4e38),
            Value::Double(-0.0),
        ];
        assert_eq!(Value::Double(-1e-300).to_string(), "-1e-300");
        assert_eq!(Value::Double(2560.0).to_string(), "2560");
        for v in samples {
            let text = v.to_string();
            assert_eq!(Value::parse(v.data_type(), &text), Ok(v), "{text}");
            assert_eq!(Value::from_raw(v.data_type(), v.to_raw()), v);
        }
    }

    #[test]
    fn overflowing_values_are_refused() {
        assert!(Value::parse(DataType::UChar, "256")
            .unwrap_err()
            .contains("overflows"));
        assert!(Value::parse(DataType::UInt, "-1").is_err());
        assert!(Value::parse(DataType::Float, "1e39")
            .unwrap_err()
            .contains("overflows"));
        assert!(Value::parse(DataType::Int, "12x").is_err());
        assert_eq!(
            Value::parse(DataType::Double, "inf"),
            Ok(Value::Double(f64::INFINITY))
        );
    }

    #[test]
    fn mode_names_cover_every_spelling_the_tools_accept() {
        for m in Mode::ALL {
            assert_eq!(Mode::from_name(m.name()), Some(m));
            assert_eq!(m.name().parse::<Mode>(), Ok(m));
            assert_eq!(Mode::from_code(m as u32), Some(m));
        }
        for (alias, m) in [
            ("average", Mode::RecordAverage),
            ("all", Mode::RecordAll),
            ("histogram", Mode::RecordHistogram),
        ] {
            assert_eq!(Mode::from_name(alias), Some(m));
        }
        for bad in ["record_playback", "Record_all", "", "record_", "avg"] {
            assert_eq!(Mode::from_name(bad), None, "{bad}");
        }
        assert_eq!(
            "x".parse::<Mode>().unwrap_err().to_string(),
            "`x`: expected record_average, record_all, record_histogram or playback"
        );
        assert_eq!(
            Mode::expected(&Mode::RECORDING),
            "record_average, record_all or record_histogram"
        );
        assert_eq!(Mode::RecordAll.to_string(), "record_all");
    }

    #[test]
    fn file_format_names_round_trip() {
        for f in FileFormat::ALL {
            assert_eq!(f.name().parse::<FileFormat>(), Ok(f));
            assert_eq!(FileFormat::from_code(f as u32), Some(f));
        }
        assert_eq!(FileFormat::from_code(2), None);
        assert_eq!(
            "ASCII".parse::<FileFormat>().unwrap_err().to_string(),
            "`ASCII`: expected ascii or binary"
        );
    }
}
