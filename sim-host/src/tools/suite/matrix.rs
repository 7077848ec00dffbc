//! Matrices: one `[[entry]]` table with a `matrix = { ... }` expands to
//! one entry per combination of the listed values.
//!
//! Keys, in the order they vary (the last fastest): `elf`, `target`,
//! `args`, `cores`, `mode`, `clock_hz`. An expanded entry's name is the table's name
//! (or its ELF's stem) followed by `.key=value` for each matrix key, e.g.
//! `filter.target=cortex-m4.args=1024.cores=2` (`args` values joined by
//! `_`, an ELF by its file stem). `{target}`, `{cores}` and `{mode}` in
//! `elf` and `expected_output` are replaced by the entry's values, so
//! `elf = "guests/{target}/filter.elf"` follows the target.

use super::error::SuiteError;
use serde::Deserialize;
use std::num::NonZeroU64;
use std::path::Path;

/// The `matrix` table of an entry as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MatrixFile {
    elf: Option<Vec<String>>,
    target: Option<Vec<String>>,
    args: Option<Vec<Vec<String>>>,
    cores: Option<Vec<usize>>,
    mode: Option<Vec<String>>,
    /// Clocks in Hz for the time columns (issue 45); zero is refused as
    /// the manifest is read.
    clock_hz: Option<Vec<NonZeroU64>>,
}

/// One `[[entry]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EntryFile {
    name: Option<String>,
    elf: Option<String>,
    target: Option<String>,
    args: Option<Vec<String>>,
    expected_output: Option<String>,
    exit_code: Option<i32>,
    cores: Option<usize>,
    mode: Option<String>,
    max_cycles: Option<u64>,
    timeout: Option<f64>,
    clock_hz: Option<NonZeroU64>,
    budget: Option<toml::Table>,
    matrix: Option<MatrixFile>,
}

/// One expanded entry, before its values are checked.
#[derive(Debug, Clone)]
pub(super) struct EntrySpec {
    /// The `[[entry]]` table it came from, from 1.
    pub table: usize,
    pub name: String,
    pub elf: Option<String>,
    pub target: Option<String>,
    pub args: Vec<String>,
    pub expected_output: Option<String>,
    pub exit_code: i32,
    pub cores: Option<usize>,
    pub mode: Option<String>,
    pub max_cycles: Option<u64>,
    pub timeout: Option<f64>,
    /// The clock its times are at (`clock_hz`), if the manifest gives one.
    pub clock_hz: Option<u64>,
    /// `budget = { SECTION = LIMIT, ... }` as written (every expanded
    /// entry has the table's).
    pub budget: Option<toml::Table>,
    /// The keys the matrix set (error messages say `matrix.<key>`).
    pub from_matrix: Vec<&'static str>,
}

impl EntrySpec {
    /// `field`, or `matrix.field` when the matrix set it.
    pub fn field(&self, field: &'static str) -> &'static str {
        if !self.from_matrix.contains(&field) {
            return field;
        }
        match field {
            "elf" => "matrix.elf",
            "target" => "matrix.target",
            "args" => "matrix.args",
            "cores" => "matrix.cores",
            "mode" => "matrix.mode",
            "clock_hz" => "matrix.clock_hz",
            other => other,
        }
    }
}

fn stem(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map_or("guest".into(), |s| s.to_string_lossy().into_owned())
}

/// The entries `table` (number `index`, from 1) stands for: itself, or
/// one per combination of its matrix values, in a fixed order.
/// The most entries a manifest expands to (issue 30, N16: a 2.7 KB
/// manifest describing 10^7 entries aborted at 3.5 GB). Checked from the
/// axes' lengths before anything is expanded.
pub const MAX_ENTRIES: usize = 100_000;

/// The table's entries; at most `room` of them (what [`MAX_ENTRIES`]
/// leaves after the tables before it), counted before expanding.
pub(super) fn expand(
    table: EntryFile,
    index: usize,
    file: &Path,
    room: usize,
) -> Result<Vec<EntrySpec>, SuiteError> {
    let base = table
        .name
        .clone()
        .or_else(|| table.elf.as_deref().map(stem))
        .unwrap_or_else(|| "unnamed".into());
    let error = |field: &'static str, message: &str| SuiteError::Field {
        file: file.to_owned(),
        index,
        name: base.clone(),
        field,
        message: message.to_owned(),
    };
    let outside = table_keys(&table);
    let matrix = table.matrix.unwrap_or_default();
    check_conflicts(&outside, &matrix).map_err(|(f, m)| error(f, m))?;
    let mut size: Option<usize> = Some(1);
    for axis in axes(&matrix) {
        let axis = axis.map_err(|(f, m)| error(f, m))?;
        size = size.and_then(|n| n.checked_mul(axis.values.len()));
    }
    if size.is_none_or(|n| n > room) {
        let size = size.map_or("more than 2^64".into(), |n| n.to_string());
        return Err(error(
            "matrix",
            &format!(
                "expands to {size} entries, more than the {room} a manifest has room for \
                 (at most {MAX_ENTRIES} in all): split it into several manifests"
            ),
        ));
    }
    let mut specs = vec![EntrySpec {
        table: index,
        name: base.clone(),
        elf: table.elf,
        target: table.target,
        args: table.args.unwrap_or_default(),
        expected_output: table.expected_output,
        exit_code: table.exit_code.unwrap_or(0),
        cores: table.cores,
        mode: table.mode,
        max_cycles: table.max_cycles,
        timeout: table.timeout,
        clock_hz: table.clock_hz.map(NonZeroU64::get),
        budget: table.budget,
        from_matrix: Vec::new(),
    }];
    let mut labels = vec![Vec::<String>::new()];
    for axis in axes(&matrix) {
        let axis = axis.map_err(|(f, m)| error(f, m))?;
        (specs, labels) = cross(specs, labels, &axis);
    }
    for (spec, label) in specs.iter_mut().zip(labels) {
        finish(spec, &label, table.name.is_some());
    }
    Ok(specs)
}

/// Which of the matrix keys the table also sets outside the matrix.
fn table_keys(t: &EntryFile) -> Vec<&'static str> {
    [
        ("elf", t.elf.is_some()),
        ("target", t.target.is_some()),
        ("args", t.args.is_some()),
        ("cores", t.cores.is_some()),
        ("mode", t.mode.is_some()),
        ("clock_hz", t.clock_hz.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect()
}

fn check_conflicts(
    outside: &[&'static str],
    matrix: &MatrixFile,
) -> Result<(), (&'static str, &'static str)> {
    for axis in axes(matrix).flatten() {
        if outside.contains(&axis.key) {
            return Err((
                axis.field,
                "also set outside the matrix: give it in one place",
            ));
        }
    }
    Ok(())
}

/// One matrix key and its values, each with the label its names show.
struct Axis {
    key: &'static str,
    field: &'static str,
    values: Vec<(Value, String)>,
}

#[derive(Clone)]
enum Value {
    Elf(String),
    Target(String),
    Args(Vec<String>),
    Cores(usize),
    Mode(String),
    Clock(u64),
}

type AxisResult = Result<Axis, (&'static str, &'static str)>;

/// The matrix's keys in their fixed order; an empty list is an error.
fn axes(m: &MatrixFile) -> impl Iterator<Item = AxisResult> + '_ {
    let elf = m.elf.as_ref().map(|v| {
        axis("elf", "matrix.elf", v, |e| {
            (Value::Elf(e.clone()), format!("elf={}", stem(e)))
        })
    });
    let target = m.target.as_ref().map(|v| {
        axis("target", "matrix.target", v, |t| {
            (Value::Target(t.clone()), format!("target={t}"))
        })
    });
    let args = m.args.as_ref().map(|v| {
        axis("args", "matrix.args", v, |a| {
            (Value::Args(a.clone()), format!("args={}", a.join("_")))
        })
    });
    let cores = m.cores.as_ref().map(|v| {
        axis("cores", "matrix.cores", v, |c| {
            (Value::Cores(*c), format!("cores={c}"))
        })
    });
    let mode = m.mode.as_ref().map(|v| {
        axis("mode", "matrix.mode", v, |s| {
            (Value::Mode(s.clone()), format!("mode={s}"))
        })
    });
    let clock = m.clock_hz.as_ref().map(|v| {
        axis("clock_hz", "matrix.clock_hz", v, |c| {
            (Value::Clock(c.get()), format!("clock_hz={c}"))
        })
    });
    [elf, target, args, cores, mode, clock]
        .into_iter()
        .flatten()
}

fn axis<T>(
    key: &'static str,
    field: &'static str,
    values: &[T],
    value: impl Fn(&T) -> (Value, String),
) -> AxisResult {
    if values.is_empty() {
        return Err((field, "an empty list: the entry would expand to nothing"));
    }
    Ok(Axis {
        key,
        field,
        values: values.iter().map(value).collect(),
    })
}

/// Every spec combined with every value of `axis` (the axis varies
/// fastest).
fn cross(
    specs: Vec<EntrySpec>,
    labels: Vec<Vec<String>>,
    axis: &Axis,
) -> (Vec<EntrySpec>, Vec<Vec<String>>) {
    let mut out = (Vec::new(), Vec::new());
    for (spec, label) in specs.into_iter().zip(labels) {
        for (value, text) in &axis.values {
            let mut s = spec.clone();
            s.from_matrix.push(axis.key);
            match value.clone() {
                Value::Elf(e) => s.elf = Some(e),
                Value::Target(t) => s.target = Some(t),
                Value::Args(a) => s.args = a,
                Value::Cores(c) => s.cores = Some(c),
                Value::Mode(m) => s.mode = Some(m),
                Value::Clock(c) => s.clock_hz = Some(c),
            }
            let mut l = label.clone();
            l.push(text.clone());
            out.0.push(s);
            out.1.push(l);
        }
    }
    out
}

/// Names the spec and fills the `{key}` placeholders of its paths.
fn finish(spec: &mut EntrySpec, label: &[String], named: bool) {
    let mut parts: Vec<String> = label.to_vec();
    if spec.from_matrix.contains(&"elf") && !named {
        // an unnamed entry with several ELFs: the ELF is the name's start
        spec.name = spec.elf.as_deref().map_or(spec.name.clone(), stem);
        parts.retain(|p| !p.starts_with("elf="));
    }
    if !parts.is_empty() {
        spec.name = format!("{}.{}", spec.name, parts.join("."));
    }
    if spec.from_matrix.is_empty() {
        return;
    }
    let target = spec.target.clone().unwrap_or_default();
    let cores = spec.cores.map_or(String::new(), |c| c.to_string());
    let mode = spec.mode.clone().unwrap_or_default();
    let fill = |text: &str| {
        text.replace("{target}", &target)
            .replace("{cores}", &cores)
            .replace("{mode}", &mode)
    };
    spec.elf = spec.elf.as_deref().map(fill);
    spec.expected_output = spec.expected_output.as_deref().map(fill);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(text: &str) -> Result<Vec<EntrySpec>, String> {
        #[derive(Deserialize)]
        struct M {
            entry: Vec<EntryFile>,
        }
        let m: M = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for (i, t) in m.entry.into_iter().enumerate() {
            out.extend(
                expand(t, i + 1, Path::new("m.toml"), MAX_ENTRIES).map_err(|e| e.to_string())?,
            );
        }
        Ok(out)
    }

    #[test]
    fn a_matrix_expands_in_a_fixed_order_with_names_that_show_the_values() {
        let s = specs(
            "[[entry]]\nelf = \"g/{target}/filter.elf\"\nexpected_output = \"{target}-{cores}.txt\"\n\
             matrix = { cores = [1, 2], target = [\"cortex-m0\", \"rv32imac\"], args = [[\"1024\"], [\"4\", \"x\"]] }\n",
        )
        .unwrap();
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "filter.target=cortex-m0.args=1024.cores=1",
                "filter.target=cortex-m0.args=1024.cores=2",
                "filter.target=cortex-m0.args=4_x.cores=1",
                "filter.target=cortex-m0.args=4_x.cores=2",
                "filter.target=rv32imac.args=1024.cores=1",
                "filter.target=rv32imac.args=1024.cores=2",
                "filter.target=rv32imac.args=4_x.cores=1",
                "filter.target=rv32imac.args=4_x.cores=2",
            ]
        );
        assert_eq!(s[2].args, ["4", "x"]);
        assert_eq!(s[5].elf.as_deref(), Some("g/rv32imac/filter.elf"));
        assert_eq!(s[5].expected_output.as_deref(), Some("rv32imac-2.txt"));
        assert_eq!(s[5].field("cores"), "matrix.cores");
        assert_eq!(s[5].field("exit_code"), "exit_code");
    }

    #[test]
    fn an_entry_without_matrix_is_itself() {
        let s = specs("[[entry]]\nelf = \"a/{target}/f.elf\"\ntarget = \"cortex-m4\"\n").unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, "f");
        // placeholders belong to matrices: a plain entry's path is as written
        assert_eq!(s[0].elf.as_deref(), Some("a/{target}/f.elf"));
    }

    #[test]
    fn an_elf_matrix_names_unnamed_entries_by_the_elf() {
        let s = specs(
            "[[entry]]\ntarget = \"cortex-m4\"\nmatrix = { elf = [\"a/filter.elf\", \"a/microbench.elf\"] }\n",
        )
        .unwrap();
        assert_eq!(s[0].name, "filter");
        assert_eq!(s[1].name, "microbench");
        let s = specs(
            "[[entry]]\nname = \"k\"\ntarget = \"cortex-m4\"\nmatrix = { elf = [\"a/filter.elf\"] }\n",
        )
        .unwrap();
        assert_eq!(s[0].name, "k.elf=filter");
    }

    #[test]
    fn matrix_errors_name_the_entry_and_key() {
        let e = specs(
            "[[entry]]\nname = \"x\"\nelf = \"e\"\ntarget = \"cortex-m4\"\nmatrix = { target = [\"cortex-m0\"] }\n",
        )
        .unwrap_err();
        assert!(
            e.contains("entry 1 (x): field `matrix.target`: also set outside"),
            "{e}"
        );
        let e =
            specs("[[entry]]\nname = \"y\"\nelf = \"e\"\nmatrix = { cores = [] }\n").unwrap_err();
        assert!(
            e.contains("entry 1 (y): field `matrix.cores`: an empty list"),
            "{e}"
        );
        let e = specs("[[entry]]\nelf = \"e\"\nmatrix = { colour = [1] }\n").unwrap_err();
        assert!(e.contains("colour"), "{e}");
    }

    /// issue 45: a clock per entry or as a matrix axis (the last to vary).
    #[test]
    fn clock_hz_is_a_field_and_a_matrix_axis() {
        let s = specs("[[entry]]\nelf = \"e\"\nclock_hz = 168000000\n").unwrap();
        assert_eq!(s[0].clock_hz, Some(168_000_000));
        let s = specs(
            "[[entry]]\nelf = \"f.elf\"\nmatrix = { clock_hz = [25000000, 150000000], cores = [1, 2] }\n",
        )
        .unwrap();
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "f.cores=1.clock_hz=25000000",
                "f.cores=1.clock_hz=150000000",
                "f.cores=2.clock_hz=25000000",
                "f.cores=2.clock_hz=150000000",
            ]
        );
        assert_eq!(s[3].clock_hz, Some(150_000_000));
        assert_eq!(s[3].field("clock_hz"), "matrix.clock_hz");
        let e = specs(
            "[[entry]]\nname = \"z\"\nelf = \"e\"\nclock_hz = 1\nmatrix = { clock_hz = [2] }\n",
        )
        .unwrap_err();
        assert!(
            e.contains("entry 1 (z): field `matrix.clock_hz`: also set outside"),
            "{e}"
        );
    }

    /// issue 30, N16: a small manifest describing 10^7 entries (here
    /// 10^10) aborted at 3.5 GB; the size is checked before expanding.
    #[test]
    fn a_matrix_too_large_is_refused_before_it_is_expanded() {
        let cores: Vec<String> = (1..=100).map(|c| c.to_string()).collect();
        let args: Vec<String> = (0..1000).map(|a| format!("[\"{a}\"]")).collect();
        let elfs: Vec<String> = (0..100).map(|e| format!("\"e{e}\"")).collect();
        let text = format!(
            "[[entry]]\nname = \"big\"\ntarget = \"cortex-m4\"\nmatrix = {{ cores = [{}], args = [{}], elf = [{}] }}\n",
            cores.join(","),
            args.join(","),
            elfs.join(",")
        );
        let e = specs(&text).unwrap_err();
        assert!(
            e.contains("field `matrix`: expands to 10000000 entries")
                && e.contains("at most 100000"),
            "{e}"
        );
    }
}
