//! Pricing blocks from the guest's code as Unicorn translates them, and
//! the data-dependent instructions found before the run.

use super::api::{Stop, UnpricedStop};
use super::blocks::Price;
use super::state::{stop_with, Uc};
use crate::image::elf::GuestImage;
use crate::model::cycles::{self, DynamicSite, Insn, Unpriced};
use crate::model::decode::Decoder;
use crate::model::memsys::FlashSpec;
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
    let spans: Vec<(u64, u8)> = insns.iter().map(|i| (i.addr, i.size)).collect();
    let power = power_bits(crate::model::power::block_hints(
        st.arch, &code, addr, &spans,
    ));
    if !cost.unpriced.is_empty() {
        unpriced_block(uc, addr, &code, &cost.unpriced);
    }
    // not `||`: every model notes its blocks (on stm32f746 the ART and the
    // L1 caches, each on ranges of its own)
    let memory = note_flash_block(uc, addr, &insns)
        | super::l1cache::note_block(uc, addr, &insns)
        | note_xip_block(uc, addr, &insns);
    Price {
        cycles: cost.cycles,
        instructions: cost.instructions,
        fallthrough: cost.fallthrough as u32,
        last_insn: insns.last().map_or(addr, |i| i.addr) as u32,
        taken_extra: cost.taken_extra as u16,
        // at most MAX_CLASS_CYCLES (target files are checked): never truncated
        entry_penalty: u16::try_from(cost.entry_penalty).unwrap_or(u16::MAX),
        intercept: 0,
        unpriced: !cost.unpriced.is_empty(),
        branch: cost.branch as u8
            | if cost.flags_forwarded {
                crate::model::predictor::FLAGS_FORWARDED
            } else {
                0
            },
        memory,
        power,
    }
}

/// `Price::power` from what the block's power instructions ask.
fn power_bits(hints: crate::model::power::PowerHints) -> u8 {
    use super::blocks::{SENDS_EVENT, SLEEPS_FOR_EVENT, SLEEPS_FOR_INTERRUPT, TRAP_RETURN};
    use crate::model::power::Sleep;
    let sleep = match hints.sleep {
        Some(Sleep::Interrupt) => SLEEPS_FOR_INTERRUPT,
        Some(Sleep::Event) => SLEEPS_FOR_EVENT,
        None => 0,
    };
    sleep
        | if hints.sends_event { SENDS_EVENT } else { 0 }
        | if hints.trap_return { TRAP_RETURN } else { 0 }
}

/// When a block is priced: whether it runs from the accelerated flash,
/// and if so its lines are kept for `flash::fetch`.
pub(super) fn note_flash_block(uc: &mut Uc<'_>, addr: u64, insns: &[Insn]) -> bool {
    let st = uc.get_data_mut();
    let Some(flash) = st.flash.as_mut() else {
        return false;
    };
    if !flash.spec.contains(addr) || insns.is_empty() {
        return false;
    }
    let lines = block_lines(&st.target, &flash.spec, insns);
    flash.blocks.insert(addr as u32, lines.into_boxed_slice());
    true
}

/// When a block is priced: whether it runs from an XIP window, and if so
/// its lines are kept for `xip::fetch`.
fn note_xip_block(uc: &mut Uc<'_>, addr: u64, insns: &[Insn]) -> bool {
    let Some(xip) = uc.get_data_mut().xip.as_mut() else {
        return false;
    };
    let spans: Vec<(u64, u64)> = insns.iter().map(|i| (i.addr, u64::from(i.size))).collect();
    xip.note_block(addr, &spans)
}

/// The flash lines of a block's instructions in order, each with what its
/// instructions cost priced alone as a block (the rules inside a block,
/// `cycles::price_block`, applied to each line's run of instructions; no
/// wait states). An instruction is in the line of its first byte; one
/// that straddles two lines also touches the second.
fn block_lines(target: &Target, spec: &FlashSpec, insns: &[Insn]) -> Vec<(u32, u32)> {
    let mut lines: Vec<(u32, u32)> = Vec::new();
    let mut from = 0;
    while from < insns.len() {
        let line = spec.line(insns[from].addr);
        let to = insns[from..]
            .iter()
            .position(|i| spec.line(i.addr) != line)
            .map_or(insns.len(), |n| from + n);
        let run = &insns[from..to];
        lines.push((line, cycles::price_block(target, run, 0).cycles));
        let last = run.last().expect("non-empty run");
        let end_line = spec.line(last.addr + u64::from(last.size) - 1);
        if end_line != line
            && insns
                .get(to)
                .is_none_or(|next| spec.line(next.addr) != end_line)
        {
            lines.push((end_line, 0));
        }
        from = to;
    }
    lines
}

/// The running core's counters at the start of the instruction at `pc`
/// of the block being executed: blocks are charged whole when they start,
/// so what the block's instructions before `pc` cost is taken back out of
/// the rest (priced as the block's prefix, with the same rules). Outside
/// the charged block (an intercepted stub), the counters as they are.
pub(super) fn counters_at(uc: &Uc<'_>, pc: u64) -> (u64, u64) {
    let st = uc.get_data();
    let (cycles, instructions) = (st.clock.cycles, st.clock.instructions);
    let start = st.clock.block_start;
    let Some(price) = st.cache.peek(start as u32) else {
        return (cycles, instructions);
    };
    if pc < start || pc >= u64::from(price.fallthrough) {
        return (cycles, instructions);
    }
    let Some((prefix_cycles, prefix_instructions)) = prefix_cost(uc, start, pc) else {
        return (cycles, instructions);
    };
    (
        cycles - u64::from(price.cycles) + prefix_cycles,
        instructions - u64::from(price.instructions) + prefix_instructions,
    )
}

/// What the instructions from `start` up to `pc` cost as a block.
fn prefix_cost(uc: &Uc<'_>, start: u64, pc: u64) -> Option<(u64, u64)> {
    let mut code = vec![0u8; (pc - start) as usize];
    uc.mem_read(start, &mut code).ok()?;
    let st = uc.get_data();
    let wait = st.target.region_of(start, 1).map_or(0, |r| r.wait_states);
    let insns = st.decoder.decode(&code, start, false).ok()?;
    let cost = cycles::price_block(&st.target, &insns, wait);
    Some((u64::from(cost.cycles), u64::from(cost.instructions)))
}

/// A block with instructions the cycle table does not price: the run
/// stops at the first (exit status 125), or with `--allow-unpriced` the
/// block's unpriced mnemonics are noted for counting.
#[cold]
pub(super) fn unpriced_block(uc: &mut Uc<'_>, block: u64, code: &[u8], unpriced: &[Unpriced]) {
    let st = uc.get_data();
    let text = |u: &Unpriced| {
        let offset = (u.addr - block) as usize;
        let bytes = code.get(offset..).unwrap_or_default();
        (
            st.decoder
                .mnemonic(bytes, u.addr)
                .unwrap_or_else(|| "?".into()),
            st.decoder
                .disassemble_one(bytes, u.addr)
                .unwrap_or_else(|| "?".into()),
        )
    };
    if st.unpriced.allow {
        let mnemonics = unpriced.iter().map(|u| (text(u).0, u.class)).collect();
        uc.get_data_mut()
            .unpriced
            .blocks
            .insert(block as u32, (mnemonics, 0));
        return;
    }
    let first = unpriced[0];
    let (mnemonic, instruction) = text(&first);
    let source = crate::image::symbols::locate_all(&st.image, &[first.addr])
        .remove(&first.addr)
        .and_then(|l| l.file_line())
        .map_or_else(String::new, |place| format!(" at {place}"));
    let stop = Stop::Unpriced(UnpricedStop {
        instruction: instruction.trim_end().to_owned(),
        mnemonic,
        class: first.class,
        location: format!("{}{source}", st.image.describe(first.addr)),
        target: st.target.name.clone(),
    });
    stop_with(uc, stop);
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
