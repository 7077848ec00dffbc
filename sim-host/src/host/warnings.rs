//! A run's warnings, bounded: the first few of each kind are kept, the
//! repeats counted (issue 30, N11: every unexpected playback sample and
//! every refused `arp_set_file_name` once added a message of its own, so
//! an endless guest's warnings exhausted memory).
//!
//! A warning's kind is its text with every number replaced by `#`
//! (`... section 1 at trace 1@0` and `... section 2 at trace 2@5` are one
//! kind), so no call site has to name one.

/// Warnings kept of each kind; the rest are counted.
pub const KEPT_PER_KIND: usize = 8;
/// Kinds told apart; warnings of further kinds are only counted.
pub const KINDS: usize = 32;

/// Bytes of a warning's text that decide its kind.
const KIND_PREFIX: usize = 120;

#[derive(Debug, Default)]
struct Kind {
    key: String,
    kept: Vec<String>,
    total: u64,
}

/// The warnings of a run (see the module's documentation).
#[derive(Debug, Default)]
pub struct Warnings {
    kinds: Vec<Kind>,
    /// Warnings of kinds beyond [`KINDS`].
    uncounted_kinds: u64,
}

impl Warnings {
    pub fn new() -> Warnings {
        Warnings::default()
    }

    /// Adds a warning: kept if fewer than [`KEPT_PER_KIND`] of its kind
    /// are, else counted.
    pub fn push(&mut self, message: String) {
        let key = kind_of(&message);
        if let Some(kind) = self.kinds.iter_mut().find(|k| k.key == key) {
            kind.total += 1;
            if kind.kept.len() < KEPT_PER_KIND {
                kind.kept.push(message);
            }
        } else if self.kinds.len() < KINDS {
            self.kinds.push(Kind {
                key,
                kept: vec![message],
                total: 1,
            });
        } else {
            self.uncounted_kinds += 1;
        }
    }

    /// Every warning pushed, counting repeats.
    pub fn total(&self) -> u64 {
        self.kinds.iter().map(|k| k.total).sum::<u64>() + self.uncounted_kinds
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The messages kept, in the order their kinds first appeared, each
    /// kind followed by how many more there were.
    pub fn into_messages(self) -> Vec<String> {
        let mut out = Vec::new();
        for kind in self.kinds {
            let more = kind.total - kind.kept.len() as u64;
            let first = kind.kept.first().cloned().unwrap_or_default();
            out.extend(kind.kept);
            if more > 0 {
                out.push(format!("... and {more} more warnings like: {first}"));
            }
        }
        if self.uncounted_kinds > 0 {
            out.push(format!(
                "... and {} more warnings of other kinds (at most {KINDS} kinds are told apart)",
                self.uncounted_kinds
            ));
        }
        out
    }
}

/// The text with every run of digits replaced by `#`, up to
/// [`KIND_PREFIX`] bytes.
fn kind_of(message: &str) -> String {
    let mut key = String::with_capacity(KIND_PREFIX);
    let mut in_number = false;
    for c in message.chars() {
        if key.len() >= KIND_PREFIX {
            break;
        }
        if c.is_ascii_digit() {
            if !in_number {
                key.push('#');
            }
            in_number = true;
        } else {
            key.push(c);
            in_number = false;
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_counted_and_kinds_kept_apart() {
        let mut w = Warnings::new();
        for i in 0..1000 {
            w.push(format!("no recorded sample for section {i} at trace {i}@0"));
        }
        w.push("the guest calls arp_add_callbacks".into());
        assert_eq!(w.total(), 1001);
        let messages = w.into_messages();
        assert_eq!(messages.len(), KEPT_PER_KIND + 2);
        assert!(messages[KEPT_PER_KIND].starts_with("... and 992 more warnings like: no recorded"));
        assert_eq!(
            messages.last().unwrap(),
            "the guest calls arp_add_callbacks"
        );
    }

    #[test]
    fn kinds_beyond_the_limit_are_counted() {
        let mut w = Warnings::new();
        for i in 0..KINDS + 5 {
            w.push("x".repeat(i + 1));
        }
        let messages = w.into_messages();
        assert_eq!(messages.len(), KINDS + 1);
        assert!(messages
            .last()
            .unwrap()
            .contains("5 more warnings of other kinds"));
    }
}
