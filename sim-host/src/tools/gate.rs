//! Cycle gates (issue 28): the sections of two measurements of the same
//! program compared trace by trace (`sim-host arp diff`, `sim-host suite
//! --baseline`). A section is matched by its trace (its section ids from
//! the outermost), never by its name: names of unlabelled sections move
//! with their source lines, ids do not. What is compared is the trace's
//! total (of cycles, as sim-host records them): it grows when each call
//! costs more and when there are more calls; count and mean are shown
//! beside it. The runs are deterministic, so a 0 % tolerance is usable.

use serde::{Serialize, Serializer};
use std::fmt::Write as _;

/// A trace's measurements.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Measure {
    pub count: u64,
    #[serde(serialize_with = "number")]
    pub mean: f64,
    #[serde(serialize_with = "number")]
    pub total: f64,
}

impl Measure {
    pub fn new(count: u64, total: f64) -> Measure {
        Measure {
            count,
            mean: if count == 0 {
                0.0
            } else {
                total / count as f64
            },
            total,
        }
    }
}

/// Whole numbers as JSON integers (cycle counts), others as they are.
pub fn number<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

fn optional_number<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => number(v, s),
        None => s.serialize_none(),
    }
}

/// What became of a section between the two measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Grew,
    Shrank,
    Same,
    /// Only in the new measurement.
    Appeared,
    /// Only in the base.
    Vanished,
}

/// One section trace, before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub path: Vec<u16>,
    /// Its name for people (`observe::section_names`), when known.
    pub name: Option<String>,
    pub base: Option<Measure>,
    pub new: Option<Measure>,
}

impl Change {
    /// The change of the total (a missing side counts as 0).
    pub fn delta(&self) -> f64 {
        self.new.map_or(0.0, |m| m.total) - self.base.map_or(0.0, |m| m.total)
    }

    /// The change in percent of the base's total; `None` without a base
    /// (or a base of 0 that grew).
    pub fn percent(&self) -> Option<f64> {
        let base = self.base?.total;
        let delta = self.delta();
        if base == 0.0 {
            return (delta == 0.0).then_some(0.0);
        }
        Some(delta / base * 100.0)
    }

    pub fn status(&self) -> Status {
        match (self.base, self.new) {
            (None, _) => Status::Appeared,
            (_, None) => Status::Vanished,
            _ if self.delta() > 0.0 => Status::Grew,
            _ if self.delta() < 0.0 => Status::Shrank,
            _ => Status::Same,
        }
    }

    /// Whether it is in both and its total grew by more than `tolerance`
    /// percent of the base's.
    pub fn over(&self, tolerance: f64) -> bool {
        match (self.base, self.new) {
            (Some(b), Some(n)) => n.total > b.total + b.total * tolerance / 100.0,
            _ => false,
        }
    }

    /// `8 > 7 > 1 ato_kernel_fir` (the report's form), or the ids alone.
    pub fn label(&self) -> String {
        let ids = path_text(&self.path, " > ");
        match &self.name {
            Some(n) => format!("{ids} {n}"),
            None => ids,
        }
    }

    /// `12214 -> 29592 cycles (+17378, +142.3%)`.
    pub fn numbers(&self, unit: &str) -> String {
        let side =
            |m: Option<Measure>| m.map_or("-".to_owned(), |m| arpsim::tools::number(m.total));
        format!(
            "{} -> {} {unit} ({}, {})",
            side(self.base),
            side(self.new),
            signed(self.delta()),
            percent_text(self.percent(), self.status())
        )
    }
}

/// `+17378`, `-12`, `0`.
pub fn signed(v: f64) -> String {
    let text = arpsim::tools::number(v.abs());
    if v > 0.0 {
        format!("+{text}")
    } else if v < 0.0 {
        format!("-{text}")
    } else {
        text
    }
}

/// `+142.3%`; `new` or `gone` for a section on one side only.
pub fn percent_text(percent: Option<f64>, status: Status) -> String {
    match (status, percent) {
        (Status::Appeared, _) => "new".into(),
        (Status::Vanished, _) => "gone".into(),
        (_, Some(p)) => format!("{p:+.1}%"),
        (_, None) => "-".into(),
    }
}

/// Section ids joined by `sep` (`8/7/1`, `8 > 7 > 1`).
pub fn path_text(path: &[u16], sep: &str) -> String {
    let ids: Vec<String> = path.iter().map(u16::to_string).collect();
    ids.join(sep)
}

/// A section key as people write it (`budget` keys): a path of ids
/// (`8/7/1`, `8 > 7 > 1`, `1`) or nothing (then it is a name).
pub fn parse_path(key: &str) -> Option<Vec<u16>> {
    let parts: Vec<&str> = key
        .split(|c: char| c == '/' || c == '>' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        return None;
    }
    parts.iter().map(|p| p.parse::<u16>().ok()).collect()
}

/// A trace as compared: its path, its name (if known) and its measure.
pub type Measured = (Vec<u16>, Option<String>, Measure);

/// `measured` with each trace once (issue 45: a trace given twice, as
/// records of one path from several sources can be, was listed twice and
/// matched only its first copy): the counts and totals of a trace's
/// copies added up, in the order traces first appear, the first name
/// kept.
pub fn one_per_trace(measured: &[Measured]) -> Vec<Measured> {
    let mut out: Vec<Measured> = Vec::with_capacity(measured.len());
    let mut at: std::collections::HashMap<&[u16], usize> = std::collections::HashMap::new();
    for (path, name, m) in measured {
        match at.get(path.as_slice()) {
            Some(&i) => {
                let (_, first_name, sum) = &mut out[i];
                *sum = Measure::new(sum.count + m.count, sum.total + m.total);
                if first_name.is_none() {
                    first_name.clone_from(name);
                }
            }
            None => {
                at.insert(path, out.len());
                out.push((path.clone(), name.clone(), *m));
            }
        }
    }
    out
}

/// Every trace of `base` and `new`, matched by path, the largest absolute
/// change of the total first (then by path).
pub fn compare(base: &[Measured], new: &[Measured]) -> Vec<Change> {
    let (base, new) = (&one_per_trace(base)[..], &one_per_trace(new)[..]);
    let mut changes: Vec<Change> = Vec::new();
    for (path, name, m) in new {
        let before = base.iter().find(|(p, _, _)| p == path);
        changes.push(Change {
            path: path.clone(),
            name: name.clone().or_else(|| before.and_then(|b| b.1.clone())),
            base: before.map(|b| b.2),
            new: Some(*m),
        });
    }
    for (path, name, m) in base {
        if !new.iter().any(|(p, _, _)| p == path) {
            changes.push(Change {
                path: path.clone(),
                name: name.clone(),
                base: Some(*m),
                new: None,
            });
        }
    }
    changes.sort_by(|a, b| {
        b.delta()
            .abs()
            .total_cmp(&a.delta().abs())
            .then_with(|| a.path.cmp(&b.path))
    });
    changes
}

/// A tolerance or limit in percent: `5`, `5%`, `2.5%` (at least 0).
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "`{text}`: expected a percentage of at least 0, e.g. 0%, 2.5%"
        )),
    }
}

/// The comparison as a table: section, count, mean and total before and
/// after, the change and its percentage; `limit` marks the sections that
/// grew past it.
pub fn table(changes: &[Change], limit: Option<f64>) -> String {
    table_of(changes, limit, "total cycles")
}

/// [`table`] with `figure` naming what is compared (`total cycles`,
/// `self cycles`).
pub fn table_of(changes: &[Change], limit: Option<f64>, figure: &str) -> String {
    let labels: Vec<String> = changes.iter().map(Change::label).collect();
    let width = labels.iter().map(String::len).max().unwrap_or(0).max(7);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$}  {:>13}  {:>25}  {:>27}  {:>12}  {:>8}",
        "section", "count", "mean cycles", figure, "change", "%"
    );
    let pair = |a: Option<String>, b: Option<String>| {
        format!(
            "{} -> {}",
            a.unwrap_or_else(|| "-".into()),
            b.unwrap_or_else(|| "-".into())
        )
    };
    for (c, label) in changes.iter().zip(&labels) {
        let count = pair(
            c.base.map(|m| m.count.to_string()),
            c.new.map(|m| m.count.to_string()),
        );
        let mean = pair(
            c.base.map(|m| arpsim::tools::number(round1(m.mean))),
            c.new.map(|m| arpsim::tools::number(round1(m.mean))),
        );
        let total = pair(
            c.base.map(|m| arpsim::tools::number(m.total)),
            c.new.map(|m| arpsim::tools::number(m.total)),
        );
        let flag = if limit.is_some_and(|l| c.over(l)) {
            "  OVER"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{label:<width$}  {count:>13}  {mean:>25}  {total:>27}  {:>12}  {:>8}{flag}",
            signed(c.delta()),
            percent_text(c.percent(), c.status()),
        );
    }
    out
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The comparison as JSON (`arp diff --json`).
#[derive(Debug, Serialize)]
pub struct DiffJson<'a> {
    pub base: String,
    pub new: String,
    /// `--fail-over`, in percent.
    pub fail_over_percent: Option<f64>,
    /// `self_cycles` with `--self` (absent when totals are compared, as
    /// before issue 45).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compared: Option<&'static str>,
    /// Whether a section grew past `fail_over_percent`.
    pub failed: bool,
    pub sections: Vec<ChangeJson<'a>>,
}

#[derive(Debug, Serialize)]
pub struct ChangeJson<'a> {
    pub path: &'a [u16],
    pub name: Option<&'a str>,
    pub status: Status,
    pub base: Option<Measure>,
    pub new: Option<Measure>,
    #[serde(serialize_with = "number")]
    pub change: f64,
    #[serde(serialize_with = "optional_number")]
    pub change_percent: Option<f64>,
    pub over_limit: bool,
}

impl<'a> ChangeJson<'a> {
    pub fn of(c: &'a Change, limit: Option<f64>) -> ChangeJson<'a> {
        ChangeJson {
            path: &c.path,
            name: c.name.as_deref(),
            status: c.status(),
            base: c.base,
            new: c.new,
            change: c.delta(),
            change_percent: c.percent(),
            over_limit: limit.is_some_and(|l| c.over(l)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(count: u64, total: f64) -> Measure {
        Measure::new(count, total)
    }

    #[test]
    fn changes_are_matched_by_path_and_sorted_by_impact() {
        let base = vec![
            (vec![1], Some("ato_kernel_fir".into()), m(1, 12214.0)),
            (vec![2], None, m(4, 400.0)),
            (vec![3], None, m(1, 50.0)),
        ];
        let new = vec![
            (vec![1], None, m(1, 29592.0)),
            (vec![2], Some("main (fir.c:70)".into()), m(4, 396.0)),
            (vec![9], None, m(2, 10.0)),
        ];
        let c = compare(&base, &new);
        let paths: Vec<&[u16]> = c.iter().map(|c| c.path.as_slice()).collect();
        assert_eq!(paths, [&[1][..], &[3], &[9], &[2]]);
        assert_eq!(c[0].name.as_deref(), Some("ato_kernel_fir"));
        assert_eq!(c[0].status(), Status::Grew);
        assert_eq!(
            c[0].numbers("cycles"),
            "12214 -> 29592 cycles (+17378, +142.3%)"
        );
        assert!(c[0].over(0.0) && c[0].over(142.0) && !c[0].over(142.5));
        assert_eq!(c[1].status(), Status::Vanished);
        assert_eq!(c[2].status(), Status::Appeared);
        assert!(!c[1].over(0.0) && !c[2].over(0.0));
        assert_eq!(c[3].status(), Status::Shrank);
        assert_eq!(c[3].percent(), Some(-1.0));
    }

    #[test]
    fn a_trace_given_twice_is_one_row_with_its_copies_added() {
        let base = vec![
            (vec![8, 2], None, m(2, 100.0)),
            (vec![8, 2], None, m(2, 60.0)),
        ];
        let new = vec![
            (vec![8, 2], Some("ato_profile_x".into()), m(4, 200.0)),
            (vec![8, 2, 1], None, m(8, 80.0)),
            (vec![8, 2], None, m(1, 10.0)),
        ];
        let c = compare(&base, &new);
        assert_eq!(c.len(), 2, "{c:?}");
        let parent = c.iter().find(|c| c.path == [8, 2]).unwrap();
        assert_eq!(parent.base, Some(m(4, 160.0)));
        assert_eq!(parent.new, Some(m(5, 210.0)));
        assert_eq!(parent.name.as_deref(), Some("ato_profile_x"));
    }

    #[test]
    fn percentages_and_paths_parse() {
        assert_eq!(parse_percent("0%"), Ok(0.0));
        assert_eq!(parse_percent("2.5"), Ok(2.5));
        assert_eq!(parse_percent(" 5 % "), Ok(5.0));
        assert!(parse_percent("-1%").is_err());
        assert!(parse_percent("nan").is_err());
        assert_eq!(parse_path("8/7/1"), Some(vec![8, 7, 1]));
        assert_eq!(parse_path("8 > 7 > 1"), Some(vec![8, 7, 1]));
        assert_eq!(parse_path("1"), Some(vec![1]));
        assert_eq!(parse_path("ato_kernel_fir"), None);
        assert_eq!(parse_path("main (fir.c:70)"), None);
        assert_eq!(parse_path(""), None);
    }

    #[test]
    fn whole_numbers_are_json_integers() {
        let c = Change {
            path: vec![1],
            name: None,
            base: Some(m(2, 10.0)),
            new: Some(m(2, 15.0)),
        };
        let json = serde_json::to_string(&ChangeJson::of(&c, Some(10.0))).unwrap();
        assert_eq!(
            json,
            "{\"path\":[1],\"name\":null,\"status\":\"grew\",\"base\":{\"count\":2,\"mean\":5,\"total\":10},\
             \"new\":{\"count\":2,\"mean\":7.5,\"total\":15},\"change\":5,\"change_percent\":50,\"over_limit\":true}"
        );
    }
}
