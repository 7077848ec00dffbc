//! The guest's console output compared with what it should be
//! (`--expect-output`, a suite entry's `expected_output`) while the guest
//! writes it: the output itself is never held (issue 30, N03), only how
//! far it matched and on which line it first differed. The expected file
//! is read as the output arrives, a buffer at a time.

use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;
use std::sync::Arc;

/// What the guest's output must equal.
#[derive(Debug, Clone)]
pub enum ExpectedOutput {
    /// A file (`--expect-output`), opened when the run starts.
    File(PathBuf),
    /// Bytes in memory (a suite manifest's file, read under its cap).
    Bytes(Arc<[u8]>),
}

/// How many bytes an expectation holds, as far as it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    Exactly(u64),
    /// A FIFO or device: only that it held more than this.
    MoreThan(u64),
}

impl std::fmt::Display for Length {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Length::Exactly(n) => write!(f, "{n} bytes"),
            Length::MoreThan(n) => write!(f, "more than {n} bytes"),
        }
    }
}

/// The comparison's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputVerdict {
    pub matches: bool,
    /// Bytes the guest wrote.
    pub output_bytes: u64,
    pub expected: Length,
    /// The line (1-based, counted in the guest's output) of the first
    /// difference, when they differ.
    pub first_difference_line: Option<u64>,
}

/// A comparison in progress.
pub struct OutputCheck {
    source: Box<dyn BufRead>,
    /// The expectation's length, when known up front (a regular file).
    known_length: Option<u64>,
    /// Bytes of the guest's output seen.
    seen: u64,
    /// Bytes of the expectation that matched.
    matched: u64,
    /// The expectation ended before the output.
    ended_first: bool,
    /// Newlines in the output before the first difference (or so far).
    newlines: u64,
    /// The line of the first difference, once found.
    differs_at: Option<u64>,
    /// A read error of the expected file.
    error: Option<String>,
}

impl std::fmt::Debug for OutputCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputCheck")
            .field("seen", &self.seen)
            .field("differs_at", &self.differs_at)
            .finish_non_exhaustive()
    }
}

impl OutputCheck {
    /// Starts a comparison with `expected` (opens its file).
    pub fn open(expected: &ExpectedOutput) -> io::Result<OutputCheck> {
        let (source, known_length): (Box<dyn BufRead>, Option<u64>) = match expected {
            ExpectedOutput::File(path) => {
                let file = std::fs::File::open(path)?;
                let meta = file.metadata()?;
                if meta.is_dir() {
                    return Err(io::Error::new(
                        io::ErrorKind::IsADirectory,
                        "is a directory, not a file",
                    ));
                }
                let length = meta.is_file().then_some(meta.len());
                (Box::new(BufReader::with_capacity(64 * 1024, file)), length)
            }
            ExpectedOutput::Bytes(bytes) => {
                let length = bytes.len() as u64;
                (Box::new(io::Cursor::new(Arc::clone(bytes))), Some(length))
            }
        };
        Ok(OutputCheck {
            source,
            known_length,
            seen: 0,
            matched: 0,
            ended_first: false,
            newlines: 0,
            differs_at: None,
            error: None,
        })
    }

    /// Compares the next bytes the guest wrote.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.seen += bytes.len() as u64;
        while self.differs_at.is_none() && !bytes.is_empty() {
            let expected = match self.source.fill_buf() {
                Ok(b) => b,
                Err(e) => {
                    self.error = Some(e.to_string());
                    self.differs_at = Some(self.newlines + 1);
                    return;
                }
            };
            if expected.is_empty() {
                self.ended_first = true;
                self.differs_at = Some(self.newlines + 1);
                return;
            }
            let n = expected.len().min(bytes.len());
            let same = expected[..n]
                .iter()
                .zip(&bytes[..n])
                .position(|(a, b)| a != b)
                .unwrap_or(n);
            self.newlines += count_newlines(&bytes[..same]);
            if same < n {
                self.differs_at = Some(self.newlines + 1);
                return;
            }
            self.source.consume(n);
            self.matched += n as u64;
            bytes = &bytes[n..];
        }
    }

    /// The verdict once the guest has written everything.
    pub fn finish(mut self) -> OutputVerdict {
        if self.differs_at.is_none() {
            match self.source.fill_buf() {
                Ok(rest) if !rest.is_empty() => {
                    self.differs_at = Some(self.newlines + 1);
                }
                Ok(_) => {}
                Err(e) => {
                    self.error = Some(e.to_string());
                    self.differs_at = Some(self.newlines + 1);
                }
            }
        }
        let expected = match self.known_length {
            Some(n) => Length::Exactly(n),
            // a FIFO or device: what was read of it
            None if self.ended_first || self.differs_at.is_none() => Length::Exactly(self.matched),
            None => Length::MoreThan(self.matched),
        };
        OutputVerdict {
            matches: self.differs_at.is_none() && self.error.is_none(),
            output_bytes: self.seen,
            expected,
            first_difference_line: self.differs_at,
        }
    }
}

fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|b| **b == b'\n').count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(expected: &[u8], pieces: &[&[u8]]) -> OutputVerdict {
        let mut c = OutputCheck::open(&ExpectedOutput::Bytes(expected.into())).unwrap();
        for p in pieces {
            c.feed(p);
        }
        c.finish()
    }

    #[test]
    fn equal_output_in_any_pieces_matches() {
        let v = check(b"a\nbc\n", &[b"a", b"\nb", b"c\n"]);
        assert!(v.matches);
        assert_eq!(v.output_bytes, 5);
        assert_eq!(v.first_difference_line, None);
    }

    #[test]
    fn differences_are_found_on_their_line() {
        let v = check(b"a\nbc\nd\n", &[b"a\nbX\n", b"d\n"]);
        assert!(!v.matches);
        assert_eq!(v.first_difference_line, Some(2));
        // output longer than the expectation
        let v = check(b"a\n", &[b"a\nb\n"]);
        assert_eq!(v.first_difference_line, Some(2));
        // the expectation longer than the output
        let v = check(b"a\nb\n", &[b"a\n"]);
        assert_eq!(v.first_difference_line, Some(2));
        assert_eq!(v.expected, Length::Exactly(4));
    }
}
