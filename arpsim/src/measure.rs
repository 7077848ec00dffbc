//! Measurements read from `data.arp` files, for calibration (chips-eval)
//! and export (`extrap`): run specifications with parameter values
//! (`n=1024:RUN.arp`), the mean cost per execution of every measured
//! section, and section names (given on the command line, or read from a
//! SIR by the callers that know SIR).

use crate::text::quote;
use crate::types::{Mode, Sid};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why measurements could not be read.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("{path}: {source}")]
    Arp {
        path: String,
        source: crate::error::ArpError,
    },
    #[error("{path}: {message}")]
    Input { path: String, message: String },
    #[error("{0}")]
    Usage(String),
}

/// One recorded run: its file and the parameter values it was made with.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub path: PathBuf,
    /// Parameter values (`n=1024`), sorted by name.
    pub params: BTreeMap<String, f64>,
}

impl RunSpec {
    /// A run without parameters.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        RunSpec {
            path: path.into(),
            params: BTreeMap::new(),
        }
    }

    /// Parses `[NAME=VALUE[,NAME=VALUE]...:]PATH`, e.g. `n=1024:run.arp`
    /// or `n=1024,p=4:run.arp`. The part before the first `:` is read as
    /// parameters only if every comma-separated item is `NAME=NUMBER`
    /// with NAME an identifier; otherwise the whole text is the path.
    pub fn parse(spec: &str) -> Result<RunSpec, MeasureError> {
        if let Some((head, path)) = spec.split_once(':') {
            let items: Vec<&str> = head.split(',').collect();
            let looks_like_params = !head.is_empty()
                && items.iter().all(|i| {
                    i.split_once('=')
                        .is_some_and(|(n, _)| is_identifier(n.trim()))
                });
            if looks_like_params {
                let mut params = BTreeMap::new();
                for item in items {
                    let (name, value) = item.split_once('=').expect("checked above");
                    let v: f64 = value.trim().parse().map_err(|_| {
                        MeasureError::Usage(format!(
                            "--arp {spec}: parameter `{}` has value {}, not a number",
                            name.trim(),
                            quote(value)
                        ))
                    })?;
                    if !v.is_finite() {
                        return Err(MeasureError::Usage(format!(
                            "--arp {spec}: parameter `{}` must be finite",
                            name.trim()
                        )));
                    }
                    if params.insert(name.trim().to_string(), v).is_some() {
                        return Err(MeasureError::Usage(format!(
                            "--arp {spec}: parameter `{}` given twice",
                            name.trim()
                        )));
                    }
                }
                if path.is_empty() {
                    return Err(MeasureError::Usage(format!(
                        "--arp {spec}: no file name after `:`"
                    )));
                }
                return Ok(RunSpec {
                    path: PathBuf::from(path),
                    params,
                });
            }
        }
        if spec.is_empty() {
            return Err(MeasureError::Usage("--arp needs a file name".into()));
        }
        Ok(RunSpec::new(spec))
    }

    /// `n=1024 run.arp` for messages.
    pub fn describe(&self) -> String {
        if self.params.is_empty() {
            self.path.display().to_string()
        } else {
            format!("{} ({})", self.path.display(), format_params(&self.params))
        }
    }
}

/// `n=1024, p=4`.
pub fn format_params(params: &BTreeMap<String, f64>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// --------------------------------------------------------------- section names

/// Section id → name. Sections without a name are known by their id in
/// decimal (`"8"`), so a model may write `<is arp, "8">`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SectionNames {
    /// Name and where it was given.
    by_sid: BTreeMap<Sid, (String, String)>,
}

impl SectionNames {
    /// Adds `name` for `sid`; a different name for the same id, or the
    /// same name for another id, is an error.
    pub fn add(&mut self, sid: Sid, name: &str, origin: &str) -> Result<(), MeasureError> {
        if let Some((old, from)) = self.by_sid.get(&sid) {
            if old != name {
                return Err(MeasureError::Usage(format!(
                    "section {sid} is named {} ({from}) and {} ({origin})",
                    quote(old),
                    quote(name)
                )));
            }
            return Ok(());
        }
        if let Some((other, (_, from))) = self.by_sid.iter().find(|(_, (n, _))| n == name) {
            return Err(MeasureError::Usage(format!(
                "name {} is given to section {other} ({from}) and section {sid} ({origin})",
                quote(name)
            )));
        }
        self.by_sid
            .insert(sid, (name.to_string(), origin.to_string()));
        Ok(())
    }

    /// Parses `NAME=SID` (the `--section` option).
    pub fn add_spec(&mut self, spec: &str) -> Result<(), MeasureError> {
        let bad = || {
            MeasureError::Usage(format!(
                "--section {spec}: expected NAME=SID, e.g. ato_kernel_merge=8"
            ))
        };
        let (name, sid) = spec.split_once('=').ok_or_else(bad)?;
        let sid: Sid = sid.trim().parse().map_err(|_| bad())?;
        if name.trim().is_empty() {
            return Err(bad());
        }
        self.add(sid, name.trim(), "--section")
    }

    /// The name of `sid`: the given one or the id in decimal.
    pub fn name(&self, sid: Sid) -> String {
        self.by_sid
            .get(&sid)
            .map_or_else(|| sid.to_string(), |(n, _)| n.clone())
    }

    /// `ato_kernel_merge (section 8)` or `section 8`.
    pub fn describe(&self, sid: Sid) -> String {
        match self.by_sid.get(&sid) {
            Some((n, _)) => format!("{n} (section {sid})"),
            None => format!("section {sid}"),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_sid.is_empty()
    }
}

// ---------------------------------------------------------------- measurements

/// The cost of one section in one run: every trace whose innermost
/// (measured) section it is, whatever the call path.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionCost {
    pub sid: Sid,
    /// Executions.
    pub count: u64,
    /// Sum of the measured values (cycles).
    pub total: f64,
    /// Smallest and largest sample (`record_all` only).
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Distinct call paths (section-id stacks) it was measured under.
    pub paths: Vec<Vec<Sid>>,
}

impl SectionCost {
    /// Mean value per execution.
    pub fn mean(&self) -> f64 {
        self.total / self.count as f64
    }
}

/// One call path's cost in one run (for export).
#[derive(Debug, Clone, PartialEq)]
pub struct PathCost {
    pub path: Vec<Sid>,
    pub count: u64,
    pub mean: f64,
}

/// The measurements of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeasurements {
    pub spec: RunSpec,
    pub mode: Mode,
    pub sections: BTreeMap<Sid, SectionCost>,
    pub paths: Vec<PathCost>,
}

/// Reads one run: per measured section, executions and total of callback
/// set `value_set` (cycles when recorded by sim-host). Histogram files
/// hold no sums and are refused; negative samples are refused.
pub fn read_run(spec: &RunSpec, value_set: usize) -> Result<RunMeasurements, MeasureError> {
    let path = spec.path.display().to_string();
    let arp = |source| MeasureError::Arp {
        path: path.clone(),
        source,
    };
    let input = |message: String| MeasureError::Input {
        path: path.clone(),
        message,
    };
    let header = crate::codec::open(&spec.path)
        .map_err(arp)?
        .header()
        .clone();
    if header.mode == Mode::RecordHistogram {
        return Err(input(
            "a record_histogram file holds no means; record with record_all or record_average"
                .into(),
        ));
    }
    if value_set >= header.types.len() {
        return Err(input(format!(
            "callback set {value_set} asked for, but the file records {} set(s)",
            header.types.len()
        )));
    }
    let stats = crate::tools::stats(&spec.path).map_err(arp)?;
    let mut sections: BTreeMap<Sid, SectionCost> = BTreeMap::new();
    let mut paths = Vec::new();
    for t in stats {
        let Some(&sid) = t.path.last() else { continue };
        let s = &t.sets[value_set];
        if !s.total.is_finite() {
            return Err(input(format!(
                "section {sid}: the recorded values are not finite"
            )));
        }
        if s.min.is_some_and(|m| m < 0.0) || s.total < 0.0 {
            return Err(input(format!(
                "section {sid} (call path {}): negative measured values; a cost cannot be negative",
                join_path(&t.path)
            )));
        }
        if t.count == 0 {
            continue;
        }
        let too_many = || {
            input(format!(
                "section {sid} (call path {}): more than {} samples",
                join_path(&t.path),
                u64::MAX
            ))
        };
        let count = u64::try_from(t.count).map_err(|_| too_many())?;
        paths.push(PathCost {
            path: t.path.clone(),
            count,
            mean: s.total / t.count as f64,
        });
        let e = sections.entry(sid).or_insert_with(|| SectionCost {
            sid,
            count: 0,
            total: 0.0,
            min: None,
            max: None,
            paths: Vec::new(),
        });
        e.count = e.count.checked_add(count).ok_or_else(too_many)?;
        e.total += s.total;
        e.min = match (e.min, s.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        e.max = match (e.max, s.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        e.paths.push(t.path);
    }
    if sections.is_empty() {
        return Err(input("the file holds no measured section".into()));
    }
    Ok(RunMeasurements {
        spec: spec.clone(),
        mode: header.mode,
        sections,
        paths,
    })
}

fn join_path(p: &[Sid]) -> String {
    p.iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_specs_parse() {
        let r = RunSpec::parse("n=1024:runs/a.arp").unwrap();
        assert_eq!(r.path, PathBuf::from("runs/a.arp"));
        assert_eq!(r.params["n"], 1024.0);
        let r = RunSpec::parse("n=16,p=4:a.arp").unwrap();
        assert_eq!(r.params.len(), 2);
        assert_eq!(RunSpec::parse("a.arp").unwrap(), RunSpec::new("a.arp"));
        // A colon that does not follow parameters belongs to the path.
        assert_eq!(
            RunSpec::parse("C:/x.arp").unwrap(),
            RunSpec::new("C:/x.arp")
        );
        assert!(RunSpec::parse("n=abc:a.arp").is_err());
        assert!(RunSpec::parse("n=1,n=2:a.arp").is_err());
        assert!(RunSpec::parse("n=1:").is_err());
    }

    #[test]
    fn section_names_conflicts_are_errors() {
        let mut s = SectionNames::default();
        s.add_spec("ato_kernel_merge=8").unwrap();
        s.add_spec("ato_kernel_merge=8").unwrap();
        assert!(s.add_spec("other=8").is_err());
        assert!(s.add_spec("ato_kernel_merge=9").is_err());
        assert!(s.add_spec("nonsense").is_err());
        assert_eq!(s.name(8), "ato_kernel_merge");
        assert_eq!(s.name(9), "9");
    }

    #[test]
    fn reads_means_by_innermost_section() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.arp");
        // Section 1 under 8 (twice) and under 9 (once); 5 alone.
        std::fs::write(
            &p,
            "# Atomium record and playback data - format version 1.1.\n0 1 1 7\n4\n\
2 0 8@0 1@0: 10;\n2 1 1@1: 30;\n2 0 9@0 1@0: 20;\n1 0 5@0: 7;\n",
        )
        .unwrap();
        let m = read_run(&RunSpec::new(&p), 0).unwrap();
        let s1 = &m.sections[&1];
        assert_eq!((s1.count, s1.total, s1.mean()), (3, 60.0, 20.0));
        assert_eq!((s1.min, s1.max), (Some(10.0), Some(30.0)));
        assert_eq!(s1.paths.len(), 2);
        assert_eq!(m.sections[&5].mean(), 7.0);
        assert!(read_run(&RunSpec::new(&p), 1).is_err());
    }

    #[test]
    fn histogram_files_and_negative_values_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.arp");
        std::fs::write(
            &p,
            "# Atomium record and playback data - format version 1.1.\n0 2 1 7\n1\n2 0 8 1: 3 [2:3];\n",
        )
        .unwrap();
        let e = read_run(&RunSpec::new(&p), 0).unwrap_err();
        assert!(e.to_string().contains("record_histogram"), "{e}");
        std::fs::write(
            &p,
            "# Atomium record and playback data - format version 1.1.\n0 1 1 4\n1\n1 0 3@0: -5;\n",
        )
        .unwrap();
        let e = read_run(&RunSpec::new(&p), 0).unwrap_err();
        assert!(e.to_string().contains("negative"), "{e}");
        let e = read_run(&RunSpec::new(dir.path().join("missing.arp")), 0).unwrap_err();
        assert!(e.to_string().contains("missing.arp"), "{e}");
    }
}
