//! Pricing blocks from the guest's code as Unicorn translates them, and
//! the data-dependent instructions found before the run.

use super::blocks::Price;
use super::state::Uc;
use crate::image::elf::GuestImage;
use crate::model::cycles::{self, DynamicSite};
use crate::model::decode::Decoder;
use crate::model::target::{InsnClass, Target};

pub(super) fn price_at(uc: &mut Uc<'_>, addr: u64, size: u32) -> Price {
    let len = if size == 0 { 64 } else { size as usize };
    let mut code = vec![0u8; len];
    if uc.mem_read(addr, &mut code).is_err() {
        return Price::default();
    }
    let st = uc.get_data();
    let wait = st.target.region_of(addr, 1).map_or(0, |r| r.wait_states);
    let insns = st
        .decoder
        .decode(&code, addr, size == 0)
        .unwrap_or_default();
    let cost = cycles::price_block(&st.target, &insns, wait);
    Price {
        cycles: cost.cycles,
        instructions: cost.instructions,
        fallthrough: cost.fallthrough as u32,
        last_insn: insns.last().map_or(addr, |i| i.addr) as u32,
        taken_extra: cost.taken_extra as u16,
        // at most MAX_CLASS_CYCLES (target files are checked): never truncated
        entry_penalty: u16::try_from(cost.entry_penalty).unwrap_or(u16::MAX),
        intercept: 0,
    }
}

/// An intercepted function's block: it costs nothing, and its successor
/// is not reached by a branch the guest pays for.
pub(super) fn price_at_zero(emu: &mut Uc<'static>, addr: u64, intercept: u8) {
    emu.get_data_mut().cache.insert(
        addr as u32,
        Price {
            fallthrough: u32::MAX,
            last_insn: addr as u32,
            intercept,
            ..Price::default()
        },
    );
}

/// Data-dependent instructions (dividers, early-terminating multipliers)
/// in the image's functions, found before the run so their hooks exist
/// before any code is translated.
pub(super) fn dynamic_sites(
    image: &GuestImage,
    target: &Target,
    decoder: &Decoder,
) -> Vec<DynamicSite> {
    let mut sites = Vec::new();
    let dynamic_classes: Vec<InsnClass> = target
        .classes
        .iter()
        .filter(|(_, c)| c.dynamic.is_some())
        .map(|(k, _)| *k)
        .collect();
    if dynamic_classes.is_empty() {
        return sites;
    }
    for (i, f) in image.functions.iter().enumerate() {
        // assembly functions often have no size: decode up to the next one
        let size = if f.size > 0 {
            f.size
        } else {
            image
                .functions
                .get(i + 1)
                .map_or(0, |next| next.addr - f.addr)
                .min(4096)
        };
        let Some(code) = image.bytes_at(f.addr, size as usize) else {
            continue;
        };
        let Ok(insns) = decoder.decode(code, f.addr, false) else {
            continue;
        };
        let cost = cycles::price_block(target, &insns, 0);
        sites.extend(cost.dynamic);
    }
    sites.sort_by_key(|s| s.addr);
    sites.dedup_by_key(|s| s.addr);
    sites
}
