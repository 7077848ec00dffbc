//! Axis ticks for plots fit for a paper: round values (1-2-5 steps on a
//! linear axis, powers of 10 or 2 on a log axis) and labels in plain
//! notation, the axis's SI prefix going into its label (`time (ms)`).

/// A step of the 1-2-5 sequence: `mantissa` × 10^`exponent`. Ticks are
/// computed as integers scaled by an exact power of ten, so 3 × 0.02 is
/// 0.06, not 0.060000000000000005.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Step {
    mantissa: i64,
    exponent: i32,
}

impl Step {
    fn value(self) -> f64 {
        scaled(self.mantissa as f64, self.exponent)
    }

    /// The `k`-th multiple of the step, correctly rounded.
    fn times(self, k: i64) -> f64 {
        scaled((k * self.mantissa) as f64, self.exponent)
    }

    fn next(self) -> Step {
        match self.mantissa {
            1 => Step {
                mantissa: 2,
                exponent: self.exponent,
            },
            2 => Step {
                mantissa: 5,
                exponent: self.exponent,
            },
            _ => Step {
                mantissa: 1,
                exponent: self.exponent + 1,
            },
        }
    }
}

/// `n` × 10^`e`; dividing by an exact power of ten keeps decimal values
/// such as 0.06 exact to the last bit.
fn scaled(n: f64, e: i32) -> f64 {
    if e >= 0 {
        n * 10f64.powi(e)
    } else {
        n / 10f64.powi(-e)
    }
}

/// Ticks covering `lo..=hi` at the smallest 1-2-5 step that needs at most
/// `max_intervals` intervals; the first tick is at or below `lo`, the last
/// at or above `hi` (the axis spans the ticks). An empty range is widened.
pub fn linear(lo: f64, hi: f64, max_intervals: usize) -> Vec<f64> {
    let (lo, hi) = widen(lo, hi);
    let max_intervals = max_intervals.max(1) as f64;
    let raw = (hi - lo) / max_intervals;
    let mut step = Step {
        mantissa: 1,
        exponent: raw.log10().floor() as i32 - 1,
    };
    loop {
        let first = (lo / step.value() + 1e-9).floor();
        let last = (hi / step.value() - 1e-9).ceil();
        if last - first <= max_intervals {
            return (first as i64..=last as i64)
                .map(|k| step.times(k))
                .collect();
        }
        step = step.next();
    }
}

/// [`linear`] for an axis of whole numbers (counts, sample and bin
/// numbers): no step below 1, so no tick falls between two values the
/// data can take (issue 45: a histogram's axes showed 0.5).
pub fn linear_whole(lo: f64, hi: f64, max_intervals: usize) -> Vec<f64> {
    let (lo, hi) = widen(lo, hi);
    let ticks = linear(lo, hi, max_intervals);
    let step = ticks.get(1).map_or(1.0, |b| b - ticks[0]);
    if step >= 1.0 {
        return ticks;
    }
    // a step of 1, where it fits; else the next 1-2-5 step past it
    let (first, last) = (lo.floor(), hi.ceil());
    if last - first <= max_intervals.max(1) as f64 {
        return (first as i64..=last as i64).map(|k| k as f64).collect();
    }
    linear(lo, hi, ((hi - lo) / 2.0).floor().max(1.0) as usize)
}

fn widen(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        let d = lo.abs() * 0.1;
        (lo - d, hi + d)
    }
}

/// Powers of ten from the one at or below `lo` to the one at or above
/// `hi` (both above 0), at least two.
pub fn log10(lo: f64, hi: f64) -> Vec<f64> {
    let first = (lo.log10() + 1e-9).floor() as i32;
    let last = ((hi.log10() - 1e-9).ceil() as i32).max(first + 1);
    (first..=last).map(|e| scaled(1.0, e)).collect()
}

/// Powers of two within `lo..=hi` (both above 0), every k-th when there
/// would be more than `max_ticks`; at least the ends when none lies inside.
pub fn log2(lo: f64, hi: f64, max_ticks: usize) -> Vec<f64> {
    let first = (lo.log2() - 1e-9).ceil() as i32;
    let last = (hi.log2() + 1e-9).floor() as i32;
    if last < first {
        return vec![lo, hi];
    }
    let count = (last - first + 1) as usize;
    let stride = count.div_ceil(max_ticks.max(1)).max(1);
    (first..=last)
        .step_by(stride)
        .map(|e| 2f64.powi(e))
        .collect()
}

/// The SI prefix for values up to `magnitude` so that the largest reads
/// between 1 and 1000: (factor to divide by, prefix).
pub fn si_prefix(magnitude: f64) -> (f64, &'static str) {
    const PREFIXES: [&str; 9] = ["p", "n", "µ", "m", "", "k", "M", "G", "T"];
    if magnitude == 0.0 || !magnitude.is_finite() {
        return (1.0, "");
    }
    let group = ((magnitude.log10() + 1e-9) / 3.0).floor() as i32;
    let group = group.clamp(-4, 4);
    (scaled(1.0, group * 3), PREFIXES[(group + 4) as usize])
}

/// A tick value in plain notation with as many decimals as `step` needs
/// (0.02 → two, 20 → none); never `-0`.
pub fn plain(value: f64, step: f64) -> String {
    let decimals = if step > 0.0 {
        (-step.log10() - 1e-9).ceil().max(0.0) as usize
    } else {
        0
    };
    let text = format!("{value:.decimals$}");
    match text.trim_start_matches('-').trim_matches(['0', '.']) {
        "" => "0".into(),
        _ => text,
    }
}

/// A power of `base` (10 or 2): plain when it reads well (`0.001` to
/// `100000`), else `10⁻⁶`-style with superscript digits.
pub fn power(value: f64, base: u32) -> String {
    if (1e-3..=1e5).contains(&value) {
        return plain(value, if value >= 1.0 { 1.0 } else { value });
    }
    let exponent = value.log(f64::from(base)).round() as i32;
    format!("{base}{}", superscript(exponent))
}

/// A power of two in plain notation (`1048576`, `0.125`) from 2⁻¹⁰ to
/// 2³⁰, where every digit is exact and short enough; `2³¹` beyond.
pub fn power_of_two(value: f64) -> String {
    let exponent = value.log2().round() as i32;
    if (-10..=30).contains(&exponent) {
        // 2⁻ᵉ has exactly e decimals.
        let decimals = (-exponent).max(0) as usize;
        format!("{value:.decimals$}")
    } else {
        format!("2{}", superscript(exponent))
    }
}

fn superscript(n: i32) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let digits = n.unsigned_abs().to_string();
    let sign = if n < 0 { "⁻" } else { "" };
    let raised: String = digits
        .bytes()
        .map(|d| DIGITS[usize::from(d - b'0')])
        .collect();
    format!("{sign}{raised}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// issue 45: a histogram of 0 to 2 samples had ticks at 0.5.
    #[test]
    fn whole_ticks_never_step_below_one() {
        assert_eq!(linear(0.0, 2.0, 8), [0.0, 0.5, 1.0, 1.5, 2.0]);
        assert_eq!(linear_whole(0.0, 2.0, 8), [0.0, 1.0, 2.0]);
        assert_eq!(linear_whole(10.0, 13.0, 8), [10.0, 11.0, 12.0, 13.0]);
        // a wide range is as before
        assert_eq!(linear_whole(0.0, 1000.0, 5), linear(0.0, 1000.0, 5));
        assert_eq!(linear_whole(3.0, 3.0, 4), [2.0, 3.0, 4.0]);
    }

    #[test]
    fn a_small_time_range_gets_steps_of_two_hundredths() {
        assert_eq!(
            linear(0.0, 0.1407, 8),
            [0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16]
        );
    }

    #[test]
    fn steps_follow_one_two_five() {
        assert_eq!(linear(0.0, 8.87, 8), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear(0.0, 1.0, 8), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(linear(0.0, 16.1, 8), [0.0, 5.0, 10.0, 15.0, 20.0]);
        assert_eq!(
            linear(1.0, 10.0, 10),
            (1..=10).map(f64::from).collect::<Vec<_>>()
        );
        assert_eq!(linear(-3.0, 3.0, 8), [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0]);
        assert_eq!(
            linear(-7.0, 7.0, 8),
            [-8.0, -6.0, -4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]
        );
    }

    #[test]
    fn ticks_are_exact_decimals() {
        for t in linear(0.0, 3.3e-7, 8) {
            let text = format!("{t}");
            assert!(text.len() < 12, "{text}");
        }
    }

    #[test]
    fn an_empty_range_is_widened() {
        assert_eq!(linear(0.0, 0.0, 8).first(), Some(&0.0));
        assert!(linear(5.0, 5.0, 8).len() >= 2);
    }

    #[test]
    fn log_ticks_are_powers_of_ten() {
        assert_eq!(log10(1.0, 1e6), [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        assert_eq!(log10(0.003, 0.2), [0.001, 0.01, 0.1, 1.0]);
        assert_eq!(log10(2.0, 3.0), [1.0, 10.0]);
    }

    #[test]
    fn log2_ticks_are_powers_of_two() {
        assert_eq!(log2(1.0, 64.0, 12), [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        assert_eq!(log2(3.0, 100.0, 12), [4.0, 8.0, 16.0, 32.0, 64.0]);
        assert_eq!(log2(1.0, 1024.0, 6), [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0]);
    }

    #[test]
    fn si_prefixes_keep_labels_between_one_and_a_thousand() {
        assert_eq!(si_prefix(0.16), (1e-3, "m"));
        assert_eq!(si_prefix(10.0), (1.0, ""));
        assert_eq!(si_prefix(1.0), (1.0, ""));
        assert_eq!(si_prefix(3e-6), (1e-6, "µ"));
        assert_eq!(si_prefix(2e6), (1e6, "M"));
    }

    #[test]
    fn labels_are_plain_never_exponential() {
        assert_eq!(plain(0.06, 0.02), "0.06");
        assert_eq!(plain(160.0, 20.0), "160");
        assert_eq!(plain(0.4, 0.2), "0.4");
        assert_eq!(plain(-0.0, 0.2), "0");
        assert_eq!(plain(0.0, 0.05), "0");
        assert_eq!(power(1000.0, 10), "1000");
        assert_eq!(power(0.01, 10), "0.01");
        assert_eq!(power(1e6, 10), "10⁶");
        assert_eq!(power(1e-6, 10), "10⁻⁶");
        assert_eq!(power_of_two(1048576.0), "1048576");
        assert_eq!(power_of_two(0.125), "0.125");
        assert_eq!(power_of_two(2f64.powi(40)), "2⁴⁰");
    }
}
