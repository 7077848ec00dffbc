//! The suite as JUnit XML (`--junit FILE`, issue 28), the test report CI
//! systems read (Jenkins, GitLab, GitHub test-report actions): one test
//! case per entry (failing with the entry's failures and its sections
//! that grew past the baseline's tolerance) and one per budgeted section
//! of an entry (failing with the numbers).
//!
//! The document keeps to the rules of both common schemas: the Apache Ant
//! JUnit schema (windyroad/JUnit-Schema, `JUnit.xsd`: `testsuites` without
//! attributes; each `testsuite` with `package`, `id`, `name`, `timestamp`
//! (no time zone), `hostname`, `tests`, `failures`, `errors`, `time`, then
//! `properties`, the `testcase`s, `system-out` and `system-err` in that
//! order; each `testcase` with `name`, `classname` and `time`, and at most
//! one `failure` or `error`, which has a `type`) and Jenkins' (the
//! xunit-plugin's `junit-10.xsd`, which allows no other attributes).
//! `tests/tests/gates.rs` validates written files against
//! `tests/schemas/junit.xsd` (those rules as an XSD) with xmllint.

use super::baseline::Comparison;
use super::result::{EntryResult, SuiteReport};
use std::fmt::Write as _;
use std::path::Path;
use std::time::SystemTime;

/// `text` for XML 1.0 (attribute or content): markup characters escaped,
/// characters XML cannot hold replaced.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || matches!(c, '\u{fffe}' | '\u{ffff}') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Seconds as `xs:decimal`: digits, a point, three decimals.
fn seconds(s: f64) -> String {
    format!("{:.3}", if s.is_finite() && s >= 0.0 { s } else { 0.0 })
}

/// `YYYY-MM-DDTHH:MM:SS` (UTC, no zone, as the Ant schema wants).
pub fn timestamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // civil date from days since 1970-01-01 (H. Hinnant's algorithm)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// This machine's name (`localhost` when it has none to give).
pub fn hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let name: Vec<&str> = name.split_whitespace().collect();
    if name.is_empty() {
        "localhost".into()
    } else {
        name.join("-")
    }
}

/// One test case.
struct Case {
    name: String,
    classname: String,
    time: f64,
    /// (element: failure or error, type, message, text)
    outcome: Option<(&'static str, &'static str, String, String)>,
}

fn entry_case(e: &EntryResult, seconds: f64, suite: &str, comparison: Option<&Comparison>) -> Case {
    let grew = comparison
        .map(|c| c.failures_of(&e.name))
        .unwrap_or_default();
    let outcome = if e.stop == "not_run" {
        let why = e.failures.join("\n");
        Some((
            "error",
            "not_run",
            e.failures.first().cloned().unwrap_or_default(),
            why,
        ))
    } else if !e.passed || !grew.is_empty() {
        let all: Vec<String> = e.failures.iter().chain(&grew).cloned().collect();
        let kind = if e.passed { "cycles" } else { "entry" };
        let message = match (e.passed, grew.len()) {
            (false, _) => all[0].clone(),
            (true, 1) => grew[0].clone(),
            (true, n) => format!("{n} sections grew past the baseline's tolerance"),
        };
        Some(("failure", kind, message, all.join("\n")))
    } else {
        None
    };
    Case {
        name: e.name.clone(),
        classname: format!("{suite}.entries"),
        time: seconds,
        outcome,
    }
}

fn budget_cases(e: &EntryResult, suite: &str) -> Vec<Case> {
    e.budgets
        .iter()
        .map(|b| Case {
            name: format!("{} budget {}", e.name, b.section),
            classname: format!("{suite}.budgets"),
            time: 0.0,
            outcome: b.failure().map(|f| {
                let checks: Vec<String> = b
                    .checks
                    .iter()
                    .map(|c| {
                        format!(
                            "{}: {} (limit {}){}",
                            c.metric,
                            c.value.map_or("did not run".into(), arpsim::tools::number),
                            arpsim::tools::number(c.limit),
                            if c.passed { "" } else { " OVER" }
                        )
                    })
                    .collect();
                ("failure", "budget", f, checks.join("\n"))
            }),
        })
        .collect()
}

/// The JUnit XML of `report` (and its baseline comparison), run at `when`
/// on `host`.
pub fn xml(
    report: &SuiteReport,
    comparison: Option<&Comparison>,
    when: SystemTime,
    host: &str,
) -> String {
    let suite = Path::new(&report.manifest)
        .file_stem()
        .map_or("suite".into(), |s| s.to_string_lossy().into_owned());
    let mut cases = Vec::new();
    for (i, e) in report.entries.iter().enumerate() {
        let seconds = report
            .host
            .entries
            .get(i)
            .map_or(e.host_seconds, |t| t.seconds);
        cases.push(entry_case(e, seconds, &suite, comparison));
        cases.extend(budget_cases(e, &suite));
    }
    let count = |element: &str| {
        cases
            .iter()
            .filter(|c| c.outcome.as_ref().is_some_and(|o| o.0 == element))
            .count()
    };
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" package=\"sim-host\" id=\"0\" timestamp=\"{}\" hostname=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{}\">",
        escape(&suite),
        timestamp(when),
        escape(host),
        cases.len(),
        count("failure"),
        count("error"),
        seconds(report.host.seconds)
    );
    out.push_str("    <properties>\n");
    let mut properties = vec![
        ("manifest", report.manifest.clone()),
        ("manifest_hash", report.manifest_hash.clone()),
    ];
    if let Some(c) = comparison {
        properties.push(("baseline", c.baseline.display().to_string()));
        properties.push(("tolerance_percent", arpsim::tools::number(c.tolerance)));
    }
    for (name, value) in properties {
        let _ = writeln!(
            out,
            "      <property name=\"{name}\" value=\"{}\"/>",
            escape(&value)
        );
    }
    out.push_str("    </properties>\n");
    for c in &cases {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
            escape(&c.name),
            escape(&c.classname),
            seconds(c.time)
        );
        match &c.outcome {
            None => out.push_str("/>\n"),
            Some((element, kind, message, text)) => {
                let _ = writeln!(
                    out,
                    ">\n      <{element} type=\"{kind}\" message=\"{}\">{}</{element}>\n    </testcase>",
                    escape(message),
                    escape(text)
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "    <system-out>{}</system-out>",
        escape(&report.to_text())
    );
    out.push_str("    <system-err></system-err>\n  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_without_a_zone() {
        let at = |s: u64| timestamp(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(at(1_700_000_000), "2023-11-14T22:13:20");
        assert_eq!(at(4_107_542_399), "2100-02-28T23:59:59");
    }

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"
        );
        assert_eq!(escape("x\u{1}y\r"), "x\u{fffd}y&#13;");
        assert_eq!(seconds(f64::NAN), "0.000");
        assert_eq!(seconds(1.23456), "1.235");
    }
}
