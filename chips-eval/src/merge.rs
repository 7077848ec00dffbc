//! `chips-eval merge`: the outputs of `run --shard K/N` put back together
//! as the output of the whole sweep (see [`crate::shard`]).
//!
//! Every file must be of one sweep (same hash, shard count, point count,
//! variables and format) and together they must hold every point exactly
//! once; what is missing or given twice is listed. The points are written
//! in sweep order from their text as the shards rendered it (CSV rows
//! verbatim; JSON objects read back exactly), so the result equals a
//! whole run's output byte for byte.

use crate::output::{Format, PointWriter, Rendered, ShardHeader, POINT_INDEX};
use crate::shard::Shard;
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why shard outputs could not be merged.
#[derive(Debug)]
pub enum MergeError {
    /// A file is unreadable, not a shard output, or of another sweep or
    /// split; the message names the file (and line).
    Invalid(String),
    /// The files are consistent but points are missing or duplicated: one
    /// line per problem.
    Incomplete(Vec<String>),
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::Invalid(message) => f.write_str(message),
            MergeError::Incomplete(problems) => write!(
                f,
                "the shards do not hold every point of the sweep exactly once (nothing written):\n  {}",
                problems.join("\n  ")
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// A shard's output as read.
#[derive(Debug, Clone)]
pub struct ShardOutput {
    pub file: PathBuf,
    pub format: Format,
    pub header: ShardHeader,
    pub variables: Vec<String>,
    /// (index in the sweep, the point as rendered), in file order.
    pub points: Vec<(u64, Rendered)>,
}

/// The merged sweep: its variables and every point in sweep order.
#[derive(Debug, Clone)]
pub struct Merged {
    pub format: Format,
    pub variables: Vec<String>,
    pub points: Vec<Rendered>,
}

impl Merged {
    /// Writes the points as a whole run writes them.
    pub fn write<W: io::Write>(&self, out: W) -> io::Result<W> {
        let mut writer = PointWriter::new(out, self.format, &self.variables);
        writer.begin()?;
        for p in &self.points {
            writer.rendered(p.clone())?;
        }
        writer.finish()
    }
}

fn invalid(file: &Path, message: impl fmt::Display) -> MergeError {
    MergeError::Invalid(format!("{}: {message}", file.display()))
}

/// Reads a shard's output, CSV or JSON (told apart by its first byte).
pub fn read(path: &Path) -> Result<ShardOutput, MergeError> {
    let text = arpsim::input::read_to_string(path, crate::MAX_SHARD_OUTPUT_BYTES)
        .map_err(|e| invalid(path, e))?;
    if text.trim_start().starts_with('{') {
        read_json(path, &text)
    } else {
        read_csv(path, &text)
    }
}

const CSV_MARK: &str = "# chips-eval shard ";

/// `# chips-eval shard K/N of sweep HASH, T points`.
fn csv_header_line(path: &Path, line: &str) -> Result<ShardHeader, MergeError> {
    let bad = || {
        invalid(
            path,
            format!(
                "line 1: not the output of `chips-eval run --shard` \
                 (expected `{CSV_MARK}K/N of sweep HASH, T points`)"
            ),
        )
    };
    let words: Vec<&str> = line
        .strip_prefix(CSV_MARK)
        .ok_or_else(bad)?
        .split(' ')
        .collect();
    let [shard, "of", "sweep", sweep, total, "points"] = words[..] else {
        return Err(bad());
    };
    Ok(ShardHeader {
        sweep: sweep.strip_suffix(',').ok_or_else(bad)?.to_owned(),
        shard: shard
            .parse()
            .map_err(|e| invalid(path, format!("line 1: {e}")))?,
        total_points: total.parse().map_err(|_| bad())?,
    })
}

/// CSV records with their first line number: a quoted cell may hold a
/// line end, so a record ends where its quotes balance.
fn csv_records(text: &str) -> Vec<(usize, String)> {
    let mut records = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let (start, mut record) = open.take().unwrap_or((i + 1, String::new()));
        if !record.is_empty() || start != i + 1 {
            record.push('\n');
        }
        record.push_str(line);
        if record.matches('"').count() % 2 == 0 {
            records.push((start, record));
        } else {
            open = Some((start, record));
        }
    }
    records.extend(open);
    records
}

fn read_csv(path: &Path, text: &str) -> Result<ShardOutput, MergeError> {
    let mut records = csv_records(text).into_iter();
    let first = records.next().map(|(_, r)| r).unwrap_or_default();
    let header = csv_header_line(path, &first)?;
    let columns = records.next().map(|(_, r)| r).unwrap_or_default();
    let mut names: Vec<String> = columns.split(',').map(str::to_owned).collect();
    if names.first().map(String::as_str) != Some(POINT_INDEX)
        || names.last().map(String::as_str) != Some("time_s")
    {
        return Err(invalid(
            path,
            format!("line 2: expected the columns {POINT_INDEX},VARIABLES...,time_s"),
        ));
    }
    names.pop();
    names.remove(0);
    let mut points = Vec::new();
    for (line, record) in records {
        let (index, row) = record.split_once(',').unwrap_or((&record, ""));
        let index = parse_index(path, line, index, &header)?;
        points.push((index, Rendered::CsvRow(row.to_owned())));
    }
    finish_read(path, Format::Csv, header, names, points)
}

/// A point's global index from a CSV row, which must lie in the sweep and
/// in the file's shard.
fn parse_index(
    path: &Path,
    line: usize,
    text: &str,
    header: &ShardHeader,
) -> Result<u64, MergeError> {
    let index: u64 = text.trim().parse().map_err(|_| {
        invalid(
            path,
            format!("line {line}: {POINT_INDEX} `{text}` is not a point number"),
        )
    })?;
    check_index(index, header).map_err(|m| invalid(path, format!("line {line}: {m}")))?;
    Ok(index)
}

fn check_index(index: u64, header: &ShardHeader) -> Result<(), String> {
    if index >= header.total_points {
        return Err(format!(
            "point {index} is beyond the sweep's {} points",
            header.total_points
        ));
    }
    let owner = Shard::of_point(index, header.shard.count);
    if owner != header.shard.index {
        return Err(format!(
            "point {index} belongs to shard {owner}/{}, not to this file's {}",
            header.shard.count, header.shard
        ));
    }
    Ok(())
}

fn read_json(path: &Path, text: &str) -> Result<ShardOutput, MergeError> {
    use serde_json::Value;
    let doc: Value = serde_json::from_str(text).map_err(|e| invalid(path, e))?;
    let field = |name: &str| {
        doc.get(name).ok_or_else(|| {
            invalid(
                path,
                format!("no field `{name}`: not the output of `chips-eval run --shard`"),
            )
        })
    };
    let number = |v: &Value, name: &str| {
        v.as_u64()
            .ok_or_else(|| invalid(path, format!("field `{name}` is not a whole number")))
    };
    let shard = field("shard")?;
    let index = number(shard.get("index").unwrap_or(&Value::Null), "shard.index")?;
    let count = number(shard.get("count").unwrap_or(&Value::Null), "shard.count")?;
    let header = ShardHeader {
        sweep: field("sweep")?
            .as_str()
            .ok_or_else(|| invalid(path, "field `sweep` is not a string"))?
            .to_owned(),
        shard: format!("{index}/{count}")
            .parse()
            .map_err(|e| invalid(path, format!("field `shard`: {e}")))?,
        total_points: number(field("total_points")?, "total_points")?,
    };
    let variables: Vec<String> = serde_json::from_value(field("variables")?.clone())
        .map_err(|e| invalid(path, format!("field `variables`: {e}")))?;
    let Some(items) = field("points")?.as_array() else {
        return Err(invalid(path, "field `points` is not an array"));
    };
    let mut points = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let mut object = item
            .as_object()
            .cloned()
            .ok_or_else(|| invalid(path, format!("points[{i}] is not an object")))?;
        let index = object
            .remove(POINT_INDEX)
            .and_then(|v| v.as_u64())
            .ok_or_else(|| invalid(path, format!("points[{i}] has no {POINT_INDEX}")))?;
        check_index(index, &header).map_err(|m| invalid(path, format!("points[{i}]: {m}")))?;
        points.push((index, Rendered::Json(object)));
    }
    finish_read(path, Format::Json, header, variables, points)
}

/// Refuses a file that holds one point twice.
fn finish_read(
    path: &Path,
    format: Format,
    header: ShardHeader,
    variables: Vec<String>,
    points: Vec<(u64, Rendered)>,
) -> Result<ShardOutput, MergeError> {
    let mut indices: Vec<u64> = points.iter().map(|(i, _)| *i).collect();
    indices.sort_unstable();
    if let Some(w) = indices.windows(2).find(|w| w[0] == w[1]) {
        return Err(invalid(path, format!("point {} appears twice", w[0])));
    }
    Ok(ShardOutput {
        file: path.to_owned(),
        format,
        header,
        variables,
        points,
    })
}

/// Merges shard outputs into the whole sweep's, with `format` (default:
/// the shards' own; it must be theirs, since only their own text is
/// byte-exact).
pub fn merge(parts: Vec<ShardOutput>, format: Option<Format>) -> Result<Merged, MergeError> {
    let Some(first) = parts.first() else {
        return Err(MergeError::Incomplete(
            vec!["no shard outputs given".into()],
        ));
    };
    for part in &parts[1..] {
        check_same_sweep(first, part)?;
    }
    if let Some(wanted) = format.filter(|f| *f != first.format) {
        return Err(MergeError::Invalid(format!(
            "--format {}: the shards are {}; merge writes the format they were run with \
             (run the shards with --format {})",
            format_name(wanted),
            format_name(first.format),
            format_name(wanted)
        )));
    }
    let problems = completeness_problems(&parts);
    if !problems.is_empty() {
        return Err(MergeError::Incomplete(problems));
    }
    let (format, variables) = (first.format, first.variables.clone());
    // Complete: every point once, so sorting by index gives sweep order.
    let mut points: Vec<(u64, Rendered)> = parts.into_iter().flat_map(|p| p.points).collect();
    points.sort_unstable_by_key(|(index, _)| *index);
    Ok(Merged {
        format,
        variables,
        points: points.into_iter().map(|(_, p)| p).collect(),
    })
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Table => "table",
        Format::Csv => "csv",
        Format::Json => "json",
    }
}

/// `part` is of `first`'s sweep, split and format.
fn check_same_sweep(first: &ShardOutput, part: &ShardOutput) -> Result<(), MergeError> {
    let (a, b) = (&first.header, &part.header);
    let differs = |what: &str, this: String, that: String| {
        invalid(
            &part.file,
            format!(
                "{what} {this}, but {} has {that}: outputs of different sweeps",
                first.file.display()
            ),
        )
    };
    if a.sweep != b.sweep {
        return Err(differs(
            "is of sweep",
            b.sweep.clone(),
            format!("{} (another model, hardware or --set)", a.sweep),
        ));
    }
    if a.shard.count != b.shard.count {
        return Err(differs(
            "is shard",
            b.shard.to_string(),
            format!("shard {} (split into another number of shards)", a.shard),
        ));
    }
    if a.total_points != b.total_points || first.variables != part.variables {
        return Err(differs(
            "has",
            format!("{} points of {:?}", b.total_points, part.variables),
            format!("{} points of {:?}", a.total_points, first.variables),
        ));
    }
    if first.format != part.format {
        return Err(differs(
            "is",
            format_name(part.format).into(),
            format_name(first.format).into(),
        ));
    }
    Ok(())
}

/// Shards missing or given twice, and points a shard's file lacks. The
/// work is bounded by the points the files hold, not by the counts their
/// headers claim.
fn completeness_problems(parts: &[ShardOutput]) -> Vec<String> {
    let header = &parts[0].header;
    let (count, total) = (header.shard.count, header.total_points);
    let mut by_shard: BTreeMap<u64, Vec<&ShardOutput>> = BTreeMap::new();
    for part in parts {
        by_shard
            .entry(part.header.shard.index)
            .or_default()
            .push(part);
    }
    let mut problems = missing_shards(&by_shard, count, total);
    for (&index, files) in &by_shard {
        let shard = Shard { index, count };
        match files.as_slice() {
            [one] => problems.extend(lacking_points(one, shard, total)),
            several => {
                let names: Vec<String> = several
                    .iter()
                    .map(|p| p.file.display().to_string())
                    .collect();
                problems.push(format!(
                    "shard {shard} is given {} times, so its points are duplicated: {}",
                    several.len(),
                    names.join(", ")
                ));
            }
        }
    }
    problems
}

/// The first 8 shards that hold points and no file gives, and how many
/// more. Shards beyond the number of points hold none and may be left out.
fn missing_shards(
    by_shard: &BTreeMap<u64, Vec<&ShardOutput>>,
    count: u64,
    total: u64,
) -> Vec<String> {
    let holding = count.min(total);
    let given = by_shard.keys().filter(|&&k| k <= holding).count() as u64;
    let missing = holding - given;
    let mut problems: Vec<String> = (1..=holding)
        .filter(|k| !by_shard.contains_key(k))
        .take(8)
        .map(|index| {
            let shard = Shard { index, count };
            let size = shard.size(total);
            format!(
                "shard {shard} is missing: no file holds its {size} points ({})",
                listing(shard.points(total), size)
            )
        })
        .collect();
    if missing > 8 {
        problems.push(format!("and {} more shards are missing", missing - 8));
    }
    problems
}

/// A shard's file that lacks some of the shard's points (cut short).
fn lacking_points(file: &ShardOutput, shard: Shard, total: u64) -> Option<String> {
    let expected = shard.size(total);
    let have = file.points.len() as u64;
    if have >= expected {
        return None;
    }
    let mut held: Vec<u64> = file.points.iter().map(|(i, _)| *i).collect();
    held.sort_unstable();
    let lacking = shard
        .points(total)
        .filter(|i| held.binary_search(i).is_err());
    Some(format!(
        "{}: shard {shard} lacks {} of its {expected} points ({}): an interrupted run?",
        file.file.display(),
        expected - have,
        listing(lacking, expected - have)
    ))
}

/// The first 8 of `count` point numbers, then how many more.
fn listing(points: impl Iterator<Item = u64>, count: u64) -> String {
    let shown: Vec<String> = points.take(8).map(|i| i.to_string()).collect();
    let noun = if count == 1 { "point" } else { "points" };
    match count.saturating_sub(8) {
        0 => format!("{noun} {}", shown.join(", ")),
        more => format!("{noun} {} and {more} more", shown.join(", ")),
    }
}
