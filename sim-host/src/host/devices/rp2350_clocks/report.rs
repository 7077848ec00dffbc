//! How the RP2350 tree names its sources in the report.

use super::*;

impl Rp2350Clocks {
    /// A source as the report names it, with how it is derived.
    pub(super) fn describe(&self, s: Src) -> String {
        match s {
            Src::Rosc => format!("ROSC {} (nominal)", format_hz(RP2350_ROSC_HZ)),
            Src::Xosc => format!("XOSC {}", format_hz(self.p.xosc_hz)),
            Src::PllSys => self.plls[0].describe("PLL_SYS", self.p.xosc_hz),
            Src::PllUsb => self.plls[1].describe("PLL_USB", self.p.xosc_hz),
            Src::Other(name) => name.into(),
            Src::Aux => "aux".into(),
            Src::Gen(g) => format!(
                "{} ({}{})",
                GEN_CLOCKS[g],
                self.describe(self.gen_input(g)),
                self.div_text(g)
            ),
        }
    }

    /// The divider as text (nothing for 1): INT, and FRAC in 65536ths.
    pub(super) fn div_text(&self, g: usize) -> String {
        let bits = GENS[g].div_bits;
        let div = self.gens[g].div & bits;
        let int_max = bits >> 16;
        let int = match div >> 16 {
            0 => int_max + 1,
            n => n,
        };
        match (int, div & 0xffff) {
            (1, 0) => String::new(),
            (int, 0) => format!(" / {int}"),
            (int, frac) => format!(" / {int} {frac}/65536"),
        }
    }
}
