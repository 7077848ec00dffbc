//! Playback verification for people: the engine's per-tuple report
//! (missing, duplicated, unexpected counter tuples) grouped so the pattern
//! shows, e.g. "thread 3 replayed indices 0..99 of section 1 that thread 2
//! already replayed".
//!
//! Tuples are grouped by their trace's section ids, the threads involved
//! and the problem; within a group the innermost section's indices are
//! written as ranges, and the enclosing sections' indices likewise.

use arpsim::playback::{PlaybackReport, TupleReport};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Writes sorted integers as ranges: `0..99, 120, 130..131`.
pub fn ranges(mut values: Vec<i32>) -> String {
    values.sort_unstable();
    values.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let start = values[i];
        let mut end = start;
        while i + 1 < values.len() && values[i + 1] == end + 1 {
            i += 1;
            end = values[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}..{end}")
        });
        i += 1;
    }
    out.join(", ")
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Problem {
    Duplicated,
    Unexpected,
    Missing,
}

/// Key of a group: problem, section ids of the trace, threads.
type GroupKey = (Problem, Vec<u16>, Vec<u16>);

/// One line per group of tuples with the same problem, trace shape and
/// threads.
pub fn summarize(report: &PlaybackReport) -> Vec<String> {
    let mut groups: BTreeMap<GroupKey, Vec<&TupleReport>> = BTreeMap::new();
    let categories = [
        (Problem::Duplicated, &report.duplicated),
        (Problem::Unexpected, &report.unexpected),
        (Problem::Missing, &report.missing),
    ];
    for (problem, tuples) in categories {
        for t in tuples.iter() {
            let sids = t.path.iter().map(|e| e.sid).collect();
            // which thread happened to play first depends on interleaving:
            // group by the set of threads
            let mut tids = t.tids.clone();
            tids.sort_unstable();
            tids.dedup();
            groups.entry((problem, sids, tids)).or_default().push(t);
        }
    }
    groups
        .into_iter()
        .map(|((problem, sids, tids), tuples)| {
            let depth = sids.len();
            let innermost = sids[depth - 1];
            let indices = ranges(tuples.iter().map(|t| t.path[depth - 1].idx).collect());
            let mut context = String::new();
            for (d, sid) in sids[..depth - 1].iter().enumerate() {
                let at = ranges(tuples.iter().map(|t| t.path[d].idx).collect());
                let _ = write!(context, "{sid}@{at} ");
            }
            let context = match context.trim_end() {
                "" => "no enclosing section",
                c => c,
            };
            let count = tuples.len();
            let tid = |i: usize| tids.get(i).map_or("?".to_owned(), |t| t.to_string());
            match problem {
                Problem::Duplicated if tids.len() > 1 => {
                    let others: Vec<String> = tids.iter().skip(1).map(|t| t.to_string()).collect();
                    format!(
                        "thread {} replayed indices {indices} of section {innermost} that thread {} also replayed \
                         ({count} tuple(s), within {context})",
                        others.join(", "),
                        tid(0),
                    )
                }
                Problem::Duplicated => format!(
                    "thread {} replayed indices {indices} of section {innermost} more than once \
                     ({count} tuple(s), within {context})",
                    tid(0)
                ),
                Problem::Unexpected => format!(
                    "thread {} replayed indices {indices} of section {innermost}, which have no recorded sample \
                     ({count} tuple(s), within {context})",
                    tid(0)
                ),
                Problem::Missing => format!(
                    "indices {indices} of section {innermost} were recorded but never replayed \
                     ({count} tuple(s), within {context})"
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arpsim::types::StackEntry;

    fn tuple(path: &[(u16, i32)], plays: u32, tids: &[u16]) -> TupleReport {
        TupleReport {
            path: path
                .iter()
                .map(|&(sid, idx)| StackEntry { sid, idx })
                .collect(),
            plays,
            tids: tids.to_vec(),
        }
    }

    #[test]
    fn ranges_compress_runs() {
        assert_eq!(ranges(vec![3, 1, 2, 7, 9, 10]), "1..3, 7, 9..10");
        assert_eq!(ranges(vec![5]), "5");
        assert_eq!(ranges(vec![]), "");
    }

    #[test]
    fn overlapping_threads_are_one_line_per_pattern() {
        // both threads started at index 0: thread 3 repeats 0..99 of thread 2,
        // and 100..199 are never played, in images 0 and 1
        let mut report = PlaybackReport::default();
        for image in 0..2 {
            for i in 0..100 {
                report.duplicated.push(tuple(
                    &[(8, 0), (7, image), (2, 0), (1, i)],
                    2,
                    if i % 2 == 0 { &[2, 3] } else { &[3, 2] },
                ));
                report
                    .missing
                    .push(tuple(&[(8, 0), (7, image), (2, 0), (1, 100 + i)], 0, &[]));
            }
        }
        let lines = summarize(&report);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].starts_with(
                "thread 3 replayed indices 0..99 of section 1 that thread 2 also replayed"
            ),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("within 8@0 7@0..1 2@0"), "{}", lines[0]);
        assert!(
            lines[1].starts_with("indices 100..199 of section 1 were recorded but never replayed"),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn unexpected_tuples_name_the_thread() {
        let mut report = PlaybackReport::default();
        report.unexpected.push(tuple(&[(8, 0), (1, 200)], 1, &[4]));
        let lines = summarize(&report);
        assert_eq!(
            lines,
            ["thread 4 replayed indices 200 of section 1, which have no recorded sample (1 tuple(s), within 8@0)"]
        );
    }
}
