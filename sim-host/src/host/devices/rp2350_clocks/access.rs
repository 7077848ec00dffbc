//! The RP2350 tree's registers: what a read answers, what a write does.

use super::*;

impl Rp2350Clocks {
    // ---- reads ----------------------------------------------------------

    /// A register's value (reads have no side effects here).
    pub(super) fn value(&self, block: Block, offset: u32) -> Result<u32, Refusal> {
        match block {
            Block::Resets => match offset {
                0x0 => Ok(self.reset),
                0x4 => Ok(self.wdsel),
                0x8 => Ok(self.reset_done()),
                _ => Err(self.unmodelled(block, offset)),
            },
            Block::Clocks => self.clocks_value(offset),
            Block::Xosc => self.xosc_value(offset),
            Block::PllSys => self.pll_value(0, offset),
            Block::PllUsb => self.pll_value(1, offset),
            Block::Ticks => self.ticks_value(offset),
        }
    }

    fn reset_done(&self) -> u32 {
        let mut done = !self.reset & RESET_ALL;
        for (bit, g) in RESET_CLOCKS {
            if self.gen_hz(g).is_none() {
                done &= !(1 << bit);
            }
        }
        done
    }

    fn clocks_value(&self, offset: u32) -> Result<u32, Refusal> {
        if offset >= GENS_END {
            if let Some(refusal) = self.refused_clocks_register(offset) {
                return Err(refusal);
            }
            return self.clocks_plain.read(offset);
        }
        let (g, reg) = ((offset / 12) as usize, offset % 12);
        let gen = &self.gens[g];
        Ok(match reg {
            0 if GENS[g].has_enabled && !self.gen_stopped(g) => gen.ctrl | ENABLED,
            0 => gen.ctrl,
            4 => gen.div,
            // one-hot of the glitchless mux's source; hardwired to 1
            // without one (clocks.h CLK_x_SELECTED)
            _ if GENS[g].src_bits != 0 => 1 << gen.selected,
            _ => 1,
        })
    }

    fn xosc_value(&self, offset: u32) -> Result<u32, Refusal> {
        let x = &self.xosc;
        match offset {
            0x00 => Ok(x.ctrl),
            0x04 => {
                let stable = self.xosc_stable_at().is_some_and(|t| t <= self.now);
                Ok((u32::from(stable) << 31)
                    | if x.badwrite { XOSC_BADWRITE } else { 0 }
                    | (u32::from(x.enabled_at.is_some()) << 12)
                    | (x.ctrl & 3))
            }
            0x08 => Err(self.dormant_refused()),
            0x0c => Ok(x.startup),
            0x10 => Ok(self.xosc_count()),
            _ => Err(self.unmodelled(Block::Xosc, offset)),
        }
    }

    /// XOSC.COUNT: "A down counter running at the xosc frequency which
    /// counts to zero and stops" (xosc.h), counting while it is stable.
    fn xosc_count(&self) -> u32 {
        let x = &self.xosc;
        let Some(stable) = self.xosc_stable_at() else {
            return x.count;
        };
        let from = x.count_at.max(stable);
        if self.now <= from {
            return x.count;
        }
        let elapsed = (self.now - from) * u128::from(self.p.xosc_hz) / PICOS_PER_SECOND;
        u128::from(x.count).saturating_sub(elapsed) as u32
    }

    fn pll_value(&self, i: usize, offset: u32) -> Result<u32, Refusal> {
        let pll = &self.plls[i];
        match offset {
            0x0 => {
                // LOCK_N (bit 30, "PLL is not locked. Ideally this is
                // cleared when PLL lock is seen and this should never
                // normally be set"): the model never loses lock
                let locked = self.pll_lock_at(i).is_some_and(|t| t <= self.now);
                Ok(pll.cs | if locked { PLL_LOCK } else { 0 })
            }
            0x4 => Ok(pll.pwr),
            0x8 => Ok(pll.fbdiv),
            0xc => Ok(pll.prim),
            0x18 => Err(self.pll_intf_refused(i)),
            _ => self.pll_ints[i].read(offset),
        }
    }

    /// TICKS (ticks.h): CTRL (ENABLE, RUNNING), CYCLES, COUNT per
    /// generator. COUNT counts down from CYCLES at the clk_ref in force
    /// from the generator's last start or CYCLES write (the model's
    /// assumption: earlier clk_ref changes are not followed).
    fn ticks_value(&self, offset: u32) -> Result<u32, Refusal> {
        let t = (offset / 12) as usize;
        let Some(tick) = self.ticks.get(t) else {
            return Err(self.unmodelled(Block::Ticks, offset));
        };
        Ok(match offset % 12 {
            0 => u32::from(tick.enabled) | (u32::from(self.tick_hz(t).is_some()) << 1),
            4 => tick.cycles,
            _ => {
                let (Some(ref_hz), Some(_)) = (self.gen_hz(REF), self.tick_hz(t)) else {
                    return Ok(tick.cycles);
                };
                let cycles = u128::from(tick.cycles);
                let elapsed =
                    self.now.saturating_sub(tick.since) * u128::from(ref_hz) / PICOS_PER_SECOND;
                (cycles - elapsed % cycles) as u32 & 0x1ff
            }
        })
    }

    // ---- refusals -------------------------------------------------------

    pub(super) fn unmodelled(&self, block: Block, offset: u32) -> Refusal {
        Refusal(format!(
            "{} offset {offset:#05x} ({:#010x}) is a register of {} the model does not answer",
            block.name(),
            self.base(block) + u64::from(offset),
            block.name()
        ))
    }

    fn refused(&self, block: Block, offset: u32, name: &str, why: &str) -> Refusal {
        Refusal(format!(
            "{}_{name} ({:#010x}): {why}",
            block.name(),
            self.base(block) + u64::from(offset)
        ))
    }

    fn dormant_refused(&self) -> Refusal {
        self.refused(
            Block::Xosc,
            0x08,
            "DORMANT",
            "dormant mode (RP2350 datasheet 8.2; xosc.h DORMANT) is not modelled",
        )
    }

    fn pll_intf_refused(&self, i: usize) -> Refusal {
        let block = [Block::PllSys, Block::PllUsb][i];
        self.refused(
            block,
            0x18,
            "INTF",
            "forcing the PLL's loss-of-lock interrupt is not modelled",
        )
    }

    /// CLOCKS registers a firmware may use that the model does not follow.
    fn refused_clocks_register(&self, offset: u32) -> Option<Refusal> {
        let name = match offset {
            0x78 => "DFTCLK_XOSC_CTRL",
            0x7c => "DFTCLK_ROSC_CTRL",
            0x80 => "DFTCLK_LPOSC_CTRL",
            0x8c => "FC0_REF_KHZ",
            0x90 => "FC0_MIN_KHZ",
            0x94 => "FC0_MAX_KHZ",
            0x98 => "FC0_DELAY",
            0x9c => "FC0_INTERVAL",
            0xa0 => "FC0_SRC",
            0xa4 => "FC0_STATUS",
            0xa8 => "FC0_RESULT",
            0xbc => "ENABLED0",
            0xc0 => "ENABLED1",
            0xcc => "INTF",
            _ => return None,
        };
        let why = match offset {
            0x78..=0x80 => "the DFT (test) clock inputs are not modelled",
            0x8c..=0xa8 => {
                "the frequency counter (RP2350 datasheet 8.1.3; clocks.h FC0) is not modelled"
            }
            0xcc => "forcing the resus interrupt is not modelled",
            _ => "which clocks the sleep and wake enables leave running is not modelled",
        };
        Some(self.refused(Block::Clocks, offset, name, why))
    }

    // ---- writes ---------------------------------------------------------

    /// A write of the whole register (after the alias's operation).
    pub(super) fn write_register(
        &mut self,
        block: Block,
        offset: u32,
        v: u32,
        fx: &mut Effects,
    ) -> Result<(), Refusal> {
        match block {
            Block::Resets => self.write_resets(offset, v, fx),
            Block::Clocks => self.write_clocks(offset, v, fx),
            Block::Xosc => self.write_xosc(offset, v, fx),
            Block::PllSys => self.write_pll(0, offset, v, fx),
            Block::PllUsb => self.write_pll(1, offset, v, fx),
            Block::Ticks => self.write_ticks(offset, v, fx),
        }
    }

    fn write_resets(&mut self, offset: u32, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        match offset {
            0x0 => {}
            0x4 => {
                self.wdsel = v & RESET_ALL;
                return Ok(());
            }
            0x8 => return Ok(()),
            _ => return Err(self.unmodelled(Block::Resets, offset)),
        }
        let new = v & RESET_ALL;
        let asserted = new & !self.reset;
        let released = self.reset & !new;
        for (i, bit) in RESET_PLLS.into_iter().enumerate() {
            if asserted & (1 << bit) != 0 {
                self.plls[i] = Pll::at_reset();
            }
        }
        self.reset = new;
        for (bit, g) in RESET_CLOCKS {
            if released & (1 << bit) != 0 && self.gen_hz(g).is_none() {
                fx.warnings.push(format!(
                    "RESETS.RESET releases {} while its clock {} is stopped: its RESET_DONE \
                     bit stays clear until {} runs (pico-sdk runtime_init.c keeps it in reset \
                     \"until we've configured clocks\")",
                    RESET_NAMES[bit as usize], GEN_CLOCKS[g], GEN_CLOCKS[g]
                ));
            }
        }
        Ok(())
    }

    fn write_clocks(&mut self, offset: u32, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        if offset < GENS_END {
            let g = (offset / 12) as usize;
            return match offset % 12 {
                0 => self.write_ctrl(g, v, fx),
                4 => {
                    self.gens[g].div = v & GENS[g].div_bits;
                    Ok(())
                }
                _ => Ok(()), // SELECTED is read-only
            };
        }
        if let Some(refusal) = self.refused_clocks_register(offset) {
            return Err(refusal);
        }
        if offset == RESUS_CTRL && v & (1 << 12) != 0 {
            return Err(self.refused(
                Block::Clocks,
                offset,
                "CLK_SYS_RESUS_CTRL.FRCE",
                "a forced resus (clocks.h: \"Force a resus, for test purposes only\") is not modelled",
            ));
        }
        self.clocks_plain.write(offset, v, u32::MAX)
    }

    /// The source a CTRL value's aux mux would select, refused when the
    /// model cannot run it.
    fn check_aux(&self, g: usize, new: u32) -> Result<(), Refusal> {
        let spec = &GENS[g];
        let aux = ((new & spec.aux_bits) >> AUX_SHIFT) as usize;
        let field = format!("{}_CTRL.AUXSRC", spec.name);
        match spec.aux.get(aux) {
            None => Err(self.refused(
                Block::Clocks,
                12 * g as u32,
                &field,
                &format!(
                    "{aux} selects no source (clocks.h lists 0 to {})",
                    spec.aux.len() - 1
                ),
            )),
            Some(Src::Other(name)) if g >= REF => Err(self.refused(
                Block::Clocks,
                12 * g as u32,
                &field,
                &format!("selects {name}: that clock input is not modelled"),
            )),
            Some(_) => Ok(()),
        }
    }

    fn write_ctrl(&mut self, g: usize, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        let spec = &GENS[g];
        let old = self.gens[g].ctrl;
        let mut new = v & spec.ctrl_bits;
        self.check_aux(g, new)?;
        if (new ^ old) & spec.aux_bits != 0 && self.aux_in_use(g) {
            fx.warnings.push(format!(
                "{}_CTRL.AUXSRC changed while its aux mux drives {}: the output glitches \
                 (RP2350 datasheet 8.1.2.2: \"Before switching the clock source of an \
                 auxiliary mux you must either: temporarily switch the glitchless mux away \
                 from aux ... temporarily disable the clock generator ... hold the \
                 destination in reset\")",
                spec.name, GEN_CLOCKS[g]
            ));
        }
        let src = new & spec.src_bits;
        if spec.src_bits != 0 {
            match spec.src.get(src as usize) {
                None => {
                    fx.warnings.push(format!(
                        "{}_CTRL.SRC = {src}: clocks.h lists no such source; the mux stays on {}",
                        spec.name,
                        self.describe(self.gen_input(g))
                    ));
                    new = (new & !spec.src_bits) | (old & spec.src_bits);
                }
                Some(Src::Other(name)) => {
                    return Err(self.refused(
                        Block::Clocks,
                        12 * g as u32,
                        &format!("{}_CTRL.SRC", spec.name),
                        &format!("selects {name}: that clock input is not modelled"),
                    ))
                }
                Some(_) => {}
            }
        }
        self.gens[g].ctrl = new;
        if spec.src_bits != 0 {
            self.request_switch(g, new & spec.src_bits, fx);
        }
        Ok(())
    }

    /// Whether a generator's aux mux output is in use: selected by the
    /// glitchless mux, or the generator enabled.
    fn aux_in_use(&self, g: usize) -> bool {
        let spec = &GENS[g];
        if spec.src_bits != 0 {
            let gen = &self.gens[g];
            let aux_selected = |src: u32| spec.src.get(src as usize) == Some(&Src::Aux);
            return aux_selected(gen.selected) || gen.pending.is_some_and(|p| aux_selected(p.to));
        }
        !self.gen_stopped(g)
    }

    /// SRC written: the glitchless mux switches when the old source has
    /// stopped and the new one given two cycles (see `switch_due`). The
    /// mux's target is compared, not CTRL's old SRC (clk_sys's differ at
    /// reset).
    fn request_switch(&mut self, g: usize, to: u32, fx: &mut Effects) {
        let gen = &self.gens[g];
        let target = gen.pending.map_or(gen.selected, |p| p.to);
        if to == target {
            return;
        }
        if to == gen.selected {
            self.gens[g].pending = None;
            return;
        }
        let old_hz = self.src_nominal_hz(self.gen_input(g));
        self.gens[g].pending = Some(Switch {
            to,
            asked_at: self.now,
            old_hz,
        });
        let target = self.src_of(g, to);
        if self.src_hz(target).is_none() {
            fx.warnings.push(format!(
                "{}_CTRL.SRC selects {}, which is not running: the glitchless mux needs \"two \
                 cycles of the new source to restart the output\" (RP2350 datasheet 8.1.2.2); \
                 {} stays on {} until it runs",
                GENS[g].name,
                self.describe(target),
                GEN_CLOCKS[g],
                self.describe(self.gen_input(g))
            ));
        }
    }

    fn write_xosc(&mut self, offset: u32, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        match offset {
            0x00 => self.write_xosc_ctrl(v, fx),
            0x04 => {
                // STATUS: only BADWRITE, write 1 to clear
                if v & XOSC_BADWRITE != 0 {
                    self.xosc.badwrite = false;
                }
            }
            0x08 => return Err(self.dormant_refused()),
            0x0c => self.xosc.startup = v & 0x0010_3fff,
            0x10 => {
                self.xosc.count = v & 0xffff;
                self.xosc.count_at = self.now;
            }
            _ => return Err(self.unmodelled(Block::Xosc, offset)),
        }
        Ok(())
    }

    /// XOSC.CTRL (xosc.h): ENABLE 0xfab enables, 0xd1e disables;
    /// FREQ_RANGE 0xaa0 to 0xaa3; for either field "an invalid setting
    /// will retain the previous value" and sets STATUS.BADWRITE.
    fn write_xosc_ctrl(&mut self, v: u32, fx: &mut Effects) {
        let mut enable = (v >> 12) & 0xfff;
        let mut range = v & 0xfff;
        if !(XOSC_RANGE_CODE..=XOSC_RANGE_CODE + 3).contains(&range) {
            self.xosc.badwrite = true;
            range = self.xosc.ctrl & 0xfff;
        }
        if enable != XOSC_ENABLE && enable != XOSC_DISABLE {
            self.xosc.badwrite = true;
            enable = (self.xosc.ctrl >> 12) & 0xfff;
        }
        self.xosc.ctrl = (enable << 12) | range;
        if enable != XOSC_ENABLE {
            self.xosc.enabled_at = None;
            self.xosc.settled = false;
            return;
        }
        if self.xosc.enabled_at.is_some() {
            return;
        }
        self.xosc.enabled_at = Some(self.now);
        let hz = self.p.xosc_hz;
        let index = range.saturating_sub(XOSC_RANGE_CODE) as usize;
        let (low, high) = XOSC_RANGES[index.min(3)];
        if !(low..=high).contains(&hz) {
            fx.warnings.push(format!(
                "XOSC enabled with a {} crystal ([clocks] xosc_hz) in FREQ_RANGE {range:#x} \
                 ({} to {}, xosc.h){}",
                format_hz(hz),
                format_hz(low),
                format_hz(high),
                if hz == 0 {
                    "; with none fitted STATUS.STABLE never sets"
                } else {
                    ""
                }
            ));
        }
    }

    fn write_pll(
        &mut self,
        i: usize,
        offset: u32,
        v: u32,
        fx: &mut Effects,
    ) -> Result<(), Refusal> {
        let name = ["PLL_SYS", "PLL_USB"][i];
        if offset == 0x18 {
            return Err(self.pll_intf_refused(i));
        }
        if offset > 0xc {
            return self.pll_ints[i].write(offset, v, u32::MAX);
        }
        if self.pll_in_reset(i) {
            fx.warnings.push(format!(
                "{name} written while RESETS.RESET holds it in reset: the write is lost (RP2350 \
                 datasheet 7.5)"
            ));
            return Ok(());
        }
        let powered = self.plls[i].powered();
        let pll = &mut self.plls[i];
        match offset {
            0x0 => {
                let old = pll.cs;
                pll.cs = v & 0x13f;
                if powered && (old ^ pll.cs) & 0x3f != 0 {
                    fx.warnings.push(format!(
                        "{name}_CS.REFDIV changed while the PLL runs: pll.h, \"PLL output will be \
                         unpredictable during refdiv changes, wait for lock=1 before using it\" \
                         (the model keeps it locked)"
                    ));
                }
            }
            0x4 => self.write_pll_pwr(i, v & 0x2d, fx),
            0x8 => {
                let old = pll.fbdiv;
                pll.fbdiv = v & 0xfff;
                if powered && old != pll.fbdiv {
                    fx.warnings.push(format!(
                        "{name}_FBDIV_INT changed while the PLL runs: its output is unpredictable \
                         until it locks again (pll.h; the model keeps it locked)"
                    ));
                }
            }
            _ => {
                pll.prim = v & 0x7_7000;
                if pll.pwr & PLL_POSTDIVPD == 0 {
                    self.check_postdivs(i, fx);
                }
            }
        }
        Ok(())
    }

    fn write_pll_pwr(&mut self, i: usize, new: u32, fx: &mut Effects) {
        let (vco_up, postdivs_up) = self.plls[i].write_pwr(new, self.now);
        let name = ["PLL_SYS", "PLL_USB"][i];
        if vco_up {
            let rule = "pll.h and RP2350 datasheet 8.6";
            fx.warnings
                .extend(self.plls[i].range_warnings(name, self.p.xosc_hz, rule));
        }
        if postdivs_up {
            self.check_postdivs(i, fx);
        }
    }

    /// POSTDIV1 and POSTDIV2 "divide by 1-7" (pll.h PRIM).
    fn check_postdivs(&self, i: usize, fx: &mut Effects) {
        let name = ["PLL_SYS", "PLL_USB"][i];
        let (a, b) = self.plls[i].postdivs();
        if a == 0 || b == 0 {
            fx.warnings.push(format!(
                "{name}_PRIM POSTDIV1 = {a}, POSTDIV2 = {b}: pll.h allows 1 to 7 each"
            ));
        }
    }

    fn write_ticks(&mut self, offset: u32, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        let t = (offset / 12) as usize;
        if t >= self.ticks.len() {
            return Err(self.unmodelled(Block::Ticks, offset));
        }
        let now = self.now;
        let tick = &mut self.ticks[t];
        match offset % 12 {
            0 => {
                let enable = v & 1 != 0;
                if enable && !tick.enabled {
                    tick.since = now;
                }
                tick.enabled = enable;
            }
            4 => {
                if tick.enabled {
                    fx.warnings.push(format!(
                        "TICKS_{}_CYCLES written while the tick generator runs: RP2350 \
                         datasheet 8.5, \"Before changing the cycle count, always stop the \
                         tick generator\"",
                        TICK_NAMES[t]
                    ));
                }
                tick.cycles = v & 0x1ff;
                tick.since = now;
            }
            _ => {} // COUNT is read-only
        }
        Ok(())
    }
}
