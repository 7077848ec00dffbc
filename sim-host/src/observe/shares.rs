//! The run report's section table with shares that sum to 100 % (issue
//! 45): the self column of every section trace, and a last row for the
//! cycles outside any section, as shares of the cycles the cores ran,
//! rounded so that the printed figures add up to 100.00 % exactly.
//!
//! Self cycles are a section's own task's cycles less those of the
//! sections nested in it, so no cycle is in two rows; what no section
//! holds (start-up, code between sections, other tasks) is the rest row.
//! The base is every core's busy cycles (on one core: the run's cycles,
//! the JSON `share`'s base; on several, the JSON `share` stays over the
//! run's span and can sum past 1, which this table does not).

use std::fmt::Write as _;

/// Hundredths of a percent of `parts` (each cycles of `base`, summing to
/// `base`), by largest remainder: each the floor of its exact share, the
/// units left to the largest remainders (the first on ties), so the
/// results sum to 10 000 exactly.
pub fn rounded_basis_points(parts: &[u64], base: u64) -> Vec<u64> {
    if parts.iter().all(|&p| p == 0) {
        return vec![0; parts.len()];
    }
    let base = u128::from(base.max(1));
    let exact: Vec<(u128, u128)> = parts
        .iter()
        .map(|&p| {
            let scaled = u128::from(p) * 10_000;
            (scaled / base, scaled % base)
        })
        .collect();
    let mut out: Vec<u64> = exact.iter().map(|&(q, _)| q as u64).collect();
    let given: u64 = out.iter().sum();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
    for &i in order.iter().take(10_000u64.saturating_sub(given) as usize) {
        out[i] += 1;
    }
    out
}

/// The text of a share in hundredths of a percent, as `{:>6.2}%` prints.
fn percent(basis_points: u64) -> String {
    format!(
        "{:>6}%",
        format!("{}.{:02}", basis_points / 100, basis_points % 100)
    )
}

/// `plain`, the section table (`report::sections_table`: a header, then
/// a row per section whose last 7 characters are its self share), with
/// the self column over `base` cycles from each row's `self_cycles`, a
/// rest row that makes it sum to 100 %, and a note that says what the
/// shares are of. `None` when the self cycles exceed `base` (no rest to
/// show: then the caller prints the plain table).
pub fn table(plain: &str, self_cycles: &[u64], base: u64, cores: usize) -> Option<String> {
    let inside: u64 = self_cycles.iter().sum();
    let rest = base.checked_sub(inside)?;
    let mut parts = self_cycles.to_vec();
    parts.push(rest);
    let shares = rounded_basis_points(&parts, base);
    let mut lines: Vec<String> = plain.lines().map(str::to_owned).collect();
    for (line, share) in lines.iter_mut().skip(1).zip(&shares) {
        // the self column is the last 7 characters of each row
        let keep = line.len().saturating_sub(7);
        line.truncate(keep);
        line.push_str(&percent(*share));
    }
    let before_self = lines[0].len() - 7;
    lines.push(format!(
        "{:<before_self$}{}",
        "(outside any section)",
        percent(shares[self_cycles.len()])
    ));
    let mut out = lines.join("\n") + "\n";
    let of = if cores > 1 {
        format!("the {base} cycles its {cores} cores ran")
    } else {
        format!("the run's {base} cycles")
    };
    let _ = writeln!(
        out,
        "self: cycles in a section and in no section nested in it, as a share of {of} \
         (the rows and the rest sum to 100 %); incl.: with its nested sections, of the run's \
         cycles (rows overlap)"
    );
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_remainders_make_the_shares_sum_to_100_percent() {
        // thirds: 3333.33.. each, one unit left for the first
        assert_eq!(rounded_basis_points(&[1, 1, 1], 3), [3334, 3333, 3333]);
        // the filter run's self cycles and rest: plain rounding printed
        // 29.38 + 24.09 + 46.35 + 0.04 + 0.05 + 0.07 = 99.98 %
        let parts = [4_372_752, 3_585_600, 6_899_200, 6_496, 6_976, 12_481];
        let base: u64 = parts.iter().sum();
        let bp = rounded_basis_points(&parts, base);
        assert_eq!(bp.iter().sum::<u64>(), 10_000, "{bp:?}");
        // no share moves by more than one unit from its exact value
        for (p, b) in parts.iter().zip(&bp) {
            let exact = *p as f64 * 10_000.0 / base as f64;
            assert!((exact - *b as f64).abs() < 1.0, "{exact} {b}");
        }
        assert_eq!(rounded_basis_points(&[0, 0], 0), [0, 0]);
        assert_eq!(percent(10_000), "100.00%");
        assert_eq!(percent(4), "  0.04%");
    }
}
