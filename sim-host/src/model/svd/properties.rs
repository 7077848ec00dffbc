//! Register properties (`size`, `resetValue`, `resetMask`) as CMSIS-SVD
//! inherits them: a register's own, else its clusters', else its
//! peripheral's, else the device's.
//!
//! svd-parser's own `expand_properties` skips `derivedFrom` peripherals
//! and registers, and bakes the device's defaults into the base
//! peripheral's registers before a derived peripheral can override them.
//! So the clusters' defaults are applied here before the expansion (which
//! flattens clusters), to the registers that are not derived, and the
//! peripheral's and device's after it, once a derived peripheral's own
//! defaults are merged over its base's.

use crate::model::peripherals::ResetValue;
use svd_parser::svd::{DeriveFrom, Device, RegisterCluster, RegisterProperties};

/// Registers' size when nothing says (SVD's own default, 32 bits).
pub(super) const DEFAULT_REGISTER_BITS: u32 = 32;

/// Before the expansion: each register not derived takes the defaults of
/// the clusters around it.
pub(super) fn apply_cluster_defaults(device: &mut Device) {
    for p in &mut device.peripherals {
        if let Some(list) = p.registers.as_mut() {
            within(list, &RegisterProperties::default());
        }
    }
}

fn within(list: &mut [RegisterCluster], default: &RegisterProperties) {
    for item in list {
        match item {
            RegisterCluster::Register(r) if r.derived_from.is_none() => {
                r.properties = r.properties.derive_from(default);
            }
            RegisterCluster::Register(_) => {}
            RegisterCluster::Cluster(c) => {
                let default = c.default_register_properties.derive_from(default);
                within(&mut c.children, &default);
            }
        }
    }
}

/// A register's size in bits and reset value from its properties, those
/// of its peripheral and device merged in (`inherited`); an error when
/// the reset value does not fit the size.
pub(super) fn reset_of(
    own: &RegisterProperties,
    inherited: &RegisterProperties,
) -> Result<(u32, Option<ResetValue>), String> {
    let props = own.derive_from(inherited);
    let bits = props.size.unwrap_or(DEFAULT_REGISTER_BITS);
    let width = width_mask(bits);
    let Some(value) = props.reset_value else {
        return Ok((bits, None));
    };
    if value & !width != 0 {
        return Err(format!(
            "resetValue {value:#x} is wider than the register's size, {bits} bits{}",
            size_source(own, inherited)
        ));
    }
    let mask = props.reset_mask.unwrap_or(u64::MAX) & width;
    Ok((bits, Some(ResetValue { value, mask })))
}

/// Where a register's size came from, when not from itself.
fn size_source(own: &RegisterProperties, inherited: &RegisterProperties) -> &'static str {
    match (own.size, inherited.size) {
        (Some(_), _) => "",
        (None, Some(_)) => " (the size of its peripheral or device)",
        (None, None) => " (SVD's default size)",
    }
}

/// The bits of a `bits`-wide register.
pub(super) fn width_mask(bits: u32) -> u64 {
    1u64.checked_shl(bits).map_or(u64::MAX, |b| b - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(size: Option<u32>, value: Option<u64>, mask: Option<u64>) -> RegisterProperties {
        RegisterProperties::new()
            .size(size)
            .reset_value(value)
            .reset_mask(mask)
    }

    #[test]
    fn the_register_first_then_what_it_inherits() {
        let none = props(None, None, None);
        let device = props(Some(32), Some(0), Some(0xffff_ffff));
        let reset = |value, mask| Some(ResetValue { value, mask });
        // the device's reset value and mask
        assert_eq!(reset_of(&none, &device), Ok((32, reset(0, 0xffff_ffff))));
        // the register's value over the device's, the device's mask
        let own = props(None, Some(0x83), None);
        assert_eq!(reset_of(&own, &device), Ok((32, reset(0x83, 0xffff_ffff))));
        // a 16-bit register without a mask: all 16 bits defined
        let half = props(Some(16), Some(0xabcd), None);
        assert_eq!(reset_of(&half, &none), Ok((16, reset(0xabcd, 0xffff))));
        // no value anywhere
        assert_eq!(reset_of(&none, &none), Ok((32, None)));
    }

    #[test]
    fn a_value_wider_than_the_size_is_refused() {
        let wide = props(None, Some(0x1ff), None);
        let byte = props(Some(8), None, None);
        let e = reset_of(&wide, &byte).unwrap_err();
        assert!(e.contains("resetValue 0x1ff"), "{e}");
        assert!(
            e.contains("8 bits (the size of its peripheral or device)"),
            "{e}"
        );
        let e = reset_of(&props(None, Some(1 << 32), None), &props(None, None, None));
        assert!(e.unwrap_err().contains("SVD's default size"));
        assert!(reset_of(&props(Some(64), Some(u64::MAX), None), &byte).is_ok());
    }
}
