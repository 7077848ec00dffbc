//! The suite's Markdown summary (`--summary-md`, issue 28), fit for a
//! GitHub step summary (`$GITHUB_STEP_SUMMARY`) or a merge-request
//! comment: the verdict, the changed sections against the baseline with
//! before, after and change (total cycles), the budgets, and the entries
//! that failed.

use super::baseline::Comparison;
use super::result::SuiteReport;
use crate::tools::gate::{percent_text, signed};
use std::fmt::Write as _;

/// Text for a table cell: pipes escaped, no line breaks.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// Inline code for a cell (names, entries): backticks cannot nest.
fn code(text: &str) -> String {
    format!("`{}`", cell(&text.replace('`', "'")))
}

fn number(v: f64) -> String {
    arpsim::tools::number(v)
}

/// The summary of `report`, with its baseline comparison if there is one.
pub fn markdown(report: &SuiteReport, comparison: Option<&Comparison>) -> String {
    let budgets_over: usize = report
        .entries
        .iter()
        .map(|e| e.budgets.iter().filter(|b| !b.passed).count())
        .sum();
    let over = comparison.map_or(0, |c| c.over().count());
    let passed = report.all_passed() && budgets_over == 0 && over == 0;
    let mut out = format!(
        "### sim-host suite {}: {}\n\n",
        code(&report.manifest),
        if passed { "passed" } else { "FAILED" }
    );
    let _ = write!(
        out,
        "{} entries: {} passed, {} failed",
        report.entries.len(),
        report.passed,
        report.failed
    );
    if let Some(signal) = &report.interrupted_by {
        let _ = write!(out, " (interrupted by {signal})");
    }
    out.push_str(".\n\n");
    if let Some(c) = comparison {
        changes(&mut out, c);
    }
    budgets(&mut out, report);
    failed_entries(&mut out, report);
    out
}

fn changes(out: &mut String, c: &Comparison) {
    let compared: usize = c.entries.iter().map(|e| e.changes.len()).sum();
    let changed: Vec<_> = c.changed().collect();
    let _ = writeln!(
        out,
        "Baseline {}, tolerance {}%: {compared} sections compared, {} changed, {} grew past the tolerance.\n",
        code(&c.baseline.display().to_string()),
        number(c.tolerance),
        changed.len(),
        c.over().count()
    );
    if !changed.is_empty() {
        out.push_str("| entry | section | before (cycles) | after (cycles) | change | |\n");
        out.push_str("|---|---|--:|--:|--:|---|\n");
        for (entry, ch) in &changed {
            let side = |m: Option<crate::tools::gate::Measure>| {
                m.map_or("–".to_owned(), |m| number(m.total))
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} ({}) | {} |",
                code(entry),
                code(&ch.label()),
                side(ch.base),
                side(ch.new),
                signed(ch.delta()),
                percent_text(ch.percent(), ch.status()),
                if ch.over(c.tolerance) { "**over**" } else { "" }
            );
        }
        out.push('\n');
    }
    for e in &c.new_entries {
        let _ = writeln!(out, "- new entry {} (not in the baseline)", code(e));
    }
    for e in &c.gone_entries {
        let _ = writeln!(
            out,
            "- entry {} of the baseline is not in the manifest",
            code(e)
        );
    }
    if !c.new_entries.is_empty() || !c.gone_entries.is_empty() {
        out.push('\n');
    }
}

fn budgets(out: &mut String, report: &SuiteReport) {
    let rows: Vec<_> = report
        .entries
        .iter()
        .flat_map(|e| e.budgets.iter().map(move |b| (e, b)))
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str("| entry | budget | limit | value | |\n|---|---|--:|--:|---|\n");
    for (e, b) in rows {
        for c in &b.checks {
            let value = c.value.map_or("did not run".to_owned(), number);
            let _ = writeln!(
                out,
                "| {} | {} | {} ≤ {} | {} | {} |",
                code(&e.name),
                code(&b.section),
                c.metric,
                number(c.limit),
                value,
                if c.passed { "" } else { "**over**" }
            );
        }
    }
    out.push('\n');
}

fn failed_entries(out: &mut String, report: &SuiteReport) {
    let failed: Vec<_> = report.entries.iter().filter(|e| !e.passed).collect();
    if failed.is_empty() {
        return;
    }
    out.push_str("Failed entries:\n\n");
    for e in failed {
        let _ = writeln!(out, "- {}: {}", code(&e.name), cell(&e.failures.join("; ")));
    }
    out.push('\n');
}
