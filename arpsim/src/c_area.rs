//! A callback's data area as C sees it (manual 2.3, 6.1.1): 16 bytes,
//! aligned to 16, big enough for every `arp_data_type` including `long
//! double`, holding the value in the C representation of the host. Used by
//! the C library (libarp) and by sim-host's C plugin interface, which hand
//! such areas to C callbacks and convert them to and from [`Value`].

use crate::types::{DataType, Value};

/// A C data area.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CArea(pub [u8; 16]);

impl CArea {
    /// The area holding `v` (zero-filled beyond its size).
    pub fn from_value(v: &Value) -> CArea {
        let mut area = CArea([0; 16]);
        area.write(v);
        area
    }

    /// Stores `v` in the C representation of its type.
    pub fn write(&mut self, v: &Value) {
        let b = &mut self.0;
        *b = [0; 16];
        match *v {
            Value::Char(x) => b[0] = x as u8,
            Value::UChar(x) => b[0] = x,
            Value::Short(x) => b[..2].copy_from_slice(&x.to_ne_bytes()),
            Value::UShort(x) => b[..2].copy_from_slice(&x.to_ne_bytes()),
            Value::Int(x) => b[..4].copy_from_slice(&x.to_ne_bytes()),
            Value::UInt(x) => b[..4].copy_from_slice(&x.to_ne_bytes()),
            Value::Long(x) => {
                let c = x as std::ffi::c_long;
                b[..size_of::<std::ffi::c_long>()].copy_from_slice(&c.to_ne_bytes())
            }
            Value::ULong(x) => {
                let c = x as std::ffi::c_ulong;
                b[..size_of::<std::ffi::c_ulong>()].copy_from_slice(&c.to_ne_bytes())
            }
            Value::LLong(x) => b[..8].copy_from_slice(&x.to_ne_bytes()),
            Value::ULLong(x) => b[..8].copy_from_slice(&x.to_ne_bytes()),
            Value::Float(x) => b[..4].copy_from_slice(&x.to_ne_bytes()),
            Value::Double(x) => b[..8].copy_from_slice(&x.to_ne_bytes()),
            Value::LDouble(x) => ldouble::to_c(x, b),
        }
    }

    /// Reads the area as a value of type `ty`.
    pub fn read(&self, ty: DataType) -> Value {
        let b = &self.0;
        let n2 = [b[0], b[1]];
        let n4: [u8; 4] = b[..4].try_into().expect("4 bytes");
        let n8: [u8; 8] = b[..8].try_into().expect("8 bytes");
        match ty {
            DataType::Char => Value::Char(b[0] as i8),
            DataType::UChar => Value::UChar(b[0]),
            DataType::Short => Value::Short(i16::from_ne_bytes(n2)),
            DataType::UShort => Value::UShort(u16::from_ne_bytes(n2)),
            DataType::Int => Value::Int(i32::from_ne_bytes(n4)),
            DataType::UInt => Value::UInt(u32::from_ne_bytes(n4)),
            DataType::Long => Value::Long(if size_of::<std::ffi::c_long>() == 8 {
                i64::from_ne_bytes(n8)
            } else {
                i32::from_ne_bytes(n4) as i64
            }),
            DataType::ULong => Value::ULong(if size_of::<std::ffi::c_ulong>() == 8 {
                u64::from_ne_bytes(n8)
            } else {
                u32::from_ne_bytes(n4) as u64
            }),
            DataType::LLong => Value::LLong(i64::from_ne_bytes(n8)),
            DataType::ULLong => Value::ULLong(u64::from_ne_bytes(n8)),
            DataType::Float => Value::Float(f32::from_ne_bytes(n4)),
            DataType::Double => Value::Double(f64::from_ne_bytes(n8)),
            DataType::LDouble => Value::LDouble(ldouble::from_c(b)),
        }
    }
}

pub mod ldouble {
    //! `long double` in the data areas of C callbacks. The engine holds such
    //! values as `f64`; these convert to and from the C representation of
    //! the target (x86 80-bit extended, IEEE binary128 on AArch64/RISC-V,
    //! plain double elsewhere). f64 → long double is exact; the way back
    //! truncates extra mantissa bits.

    /// Writes `v` as a C `long double` into `out` (16 bytes).
    pub fn to_c(v: f64, out: &mut [u8; 16]) {
        *out = [0; 16];
        #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
        {
            let (sign, exp, mant) = split(v);
            // 64-bit mantissa with explicit integer bit, 15-bit exponent.
            let (e, m) = match exp {
                Exp::Zero => (0u16, 0u64),
                Exp::Inf => (0x7fff, 1 << 63),
                Exp::Nan => (0x7fff, 0xc000_0000_0000_0000),
                Exp::Normal(e) => ((e + 16383) as u16, (1u64 << 63) | (mant << 11)),
            };
            out[..8].copy_from_slice(&m.to_le_bytes());
            out[8..10].copy_from_slice(&(e | if sign { 0x8000 } else { 0 }).to_le_bytes());
        }
        #[cfg(any(target_arch = "aarch64", target_arch = "riscv64"))]
        {
            let (sign, exp, mant) = split(v);
            let (e, m) = match exp {
                Exp::Zero => (0u128, 0u128),
                Exp::Inf => (0x7fff, 0),
                Exp::Nan => (0x7fff, 1u128 << 111),
                Exp::Normal(e) => ((e + 16383) as u128, (mant as u128) << 60),
            };
            let bits = (u128::from(sign) << 127) | (e << 112) | m;
            out.copy_from_slice(&bits.to_le_bytes());
        }
        #[cfg(not(any(
            target_arch = "x86_64",
            target_arch = "x86",
            target_arch = "aarch64",
            target_arch = "riscv64"
        )))]
        out[..8].copy_from_slice(&v.to_le_bytes());
    }

    /// Reads a C `long double` from `bytes`.
    pub fn from_c(bytes: &[u8; 16]) -> f64 {
        #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
        {
            let m = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
            let se = u16::from_le_bytes([bytes[8], bytes[9]]);
            let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
            let e = (se & 0x7fff) as i32;
            if e == 0x7fff {
                return if m << 1 == 0 {
                    sign * f64::INFINITY
                } else {
                    f64::NAN
                };
            }
            if m == 0 {
                return sign * 0.0;
            }
            // value = m * 2^(e - 16383 - 63)
            sign * scale(m as f64, e - 16383 - 63)
        }
        #[cfg(any(target_arch = "aarch64", target_arch = "riscv64"))]
        {
            let bits = u128::from_le_bytes(*bytes);
            let sign = if bits >> 127 != 0 { -1.0 } else { 1.0 };
            let e = ((bits >> 112) & 0x7fff) as i32;
            let m = bits & ((1u128 << 112) - 1);
            if e == 0x7fff {
                return if m == 0 {
                    sign * f64::INFINITY
                } else {
                    f64::NAN
                };
            }
            if e == 0 && m == 0 {
                return sign * 0.0;
            }
            let top = (m >> 60) as u64 | if e == 0 { 0 } else { 1 << 52 };
            sign * scale(top as f64, e.max(1) - 16383 - 52)
        }
        #[cfg(not(any(
            target_arch = "x86_64",
            target_arch = "x86",
            target_arch = "aarch64",
            target_arch = "riscv64"
        )))]
        f64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
    }

    /// `x * 2^e` without intermediate underflow or overflow of `2^e`.
    #[allow(dead_code)]
    fn scale(x: f64, e: i32) -> f64 {
        let half = e / 2;
        x * 2f64.powi(half) * 2f64.powi(e - half)
    }

    #[allow(dead_code)]
    enum Exp {
        Zero,
        Inf,
        Nan,
        Normal(i32),
    }

    /// Sign, unbiased exponent and 52-bit fraction of a normalised `v`.
    #[allow(dead_code)]
    fn split(v: f64) -> (bool, Exp, u64) {
        let bits = v.to_bits();
        let sign = bits >> 63 != 0;
        let e = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        match (e, frac) {
            (0, 0) => (sign, Exp::Zero, 0),
            (0x7ff, 0) => (sign, Exp::Inf, 0),
            (0x7ff, _) => (sign, Exp::Nan, 0),
            (0, f) => {
                // Subnormal: normalise.
                let shift = f.leading_zeros() - 11;
                let f = (f << shift) & ((1 << 52) - 1);
                (sign, Exp::Normal(-1022 - shift as i32), f)
            }
            (e, f) => (sign, Exp::Normal(e - 1023), f),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn round_trip() {
            for v in [
                0.0,
                -0.0,
                1.0,
                -2.5,
                1e300,
                5e-324,
                3.0e-310,
                f64::INFINITY,
                f64::MAX,
                123456789.125,
            ] {
                let mut b = [0; 16];
                to_c(v, &mut b);
                assert_eq!(from_c(&b).to_bits(), v.to_bits(), "{v}");
            }
            let mut b = [0; 16];
            to_c(f64::NAN, &mut b);
            assert!(from_c(&b).is_nan());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_data_type_round_trips() {
        for v in [
            Value::Char(-3),
            Value::UChar(250),
            Value::Short(-30000),
            Value::UShort(60000),
            Value::Int(-2_000_000_000),
            Value::UInt(4_000_000_000),
            Value::Long(-5),
            Value::ULong(7),
            Value::LLong(i64::MIN),
            Value::ULLong(u64::MAX),
            Value::Float(1.5),
            Value::Double(-2.25e300),
            Value::LDouble(3.0e-300),
        ] {
            assert_eq!(CArea::from_value(&v).read(v.data_type()), v);
        }
    }
}
