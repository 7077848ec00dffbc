//! A target file's `[cycles.predictor]`: the core's dynamic branch
//! predictor, in one of two organisations (`model::predictor` runs it).
//!
//! ```toml
//! # a table of direction counters, a target buffer, a return stack
//! [cycles.predictor]
//! entries = 0          # counters, by halfword address; 0: one per branch
//! counter_bits = 2
//! btb_entries = 0      # targets; 0: every target remembered
//! ras_entries = 4
//! penalty = 8
//! # optional: 6 when the flags were set 3 cycles before the branch
//! flag_forwarding = { distance = 3, penalty = 6 }
//! cite = "..."
//!
//! # Hazard3's: the last taken backward branch, in a one-entry buffer
//! [cycles.predictor]
//! organisation = "last-taken-backward"
//! penalty = 1
//! cite = "RP2350 datasheet 3.8.7.10 Branch predictor"
//! ```

use crate::model::limits::MAX_CLASS_CYCLES;
use serde::Deserialize;

/// A field's dotted name and what is wrong with it.
type FieldError = (String, String);

/// How a predictor is organised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Organisation {
    /// Saturating direction counters for conditional branches, a branch
    /// target buffer for taken branches and jumps, a return-address stack.
    Table {
        /// Counters, indexed by the branch's halfword address modulo
        /// `entries`; 0: one per branch (no aliasing).
        entries: u32,
        /// Bits of each counter (1: the last direction).
        counter_bits: u32,
        /// Targets, direct-mapped like the counters; 0: every target is
        /// remembered.
        btb_entries: u32,
        /// Return addresses; 0: returns are predicted by the target
        /// buffer like other indirect branches.
        ras_entries: u32,
    },
    /// Hazard3's (RP2350 datasheet 3.8.7.10): a single-entry buffer holds
    /// the last taken backward conditional branch, predicted taken when
    /// seen again; every other branch is predicted not taken; a predicted
    /// branch that falls through empties the buffer. Jumps are not
    /// predicted (their rows price them).
    LastTakenBackward,
}

/// A validated `[cycles.predictor]`: the engine keeps the predictor's
/// state during the run and charges `penalty` for every control-flow
/// instruction it mispredicts.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictorSpec {
    pub organisation: Organisation,
    /// Cycles a mispredicted control-flow instruction costs.
    pub penalty: u32,
    /// Flag forwarding: a mispredicted conditional branch whose flags were
    /// set at least `distance` cycles before it issued costs `penalty`
    /// instead (Cortex-M7, measured on silicon).
    pub forwarded: Option<FlagForwarding>,
    pub cite: String,
}

/// `[cycles.predictor] flag_forwarding`: the cheaper misprediction of a
/// conditional branch whose flags were set early enough.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlagForwarding {
    /// Cycles between the flag-setting instruction's issue and the
    /// branch's, at least.
    pub distance: u32,
    /// What the misprediction costs then.
    pub penalty: u32,
}

/// `[cycles.predictor]` as a file writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PredictorFile {
    #[serde(default)]
    organisation: OrganisationName,
    entries: Option<u32>,
    counter_bits: Option<u32>,
    btb_entries: Option<u32>,
    ras_entries: Option<u32>,
    penalty: u32,
    flag_forwarding: Option<FlagForwarding>,
    cite: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum OrganisationName {
    #[default]
    Table,
    LastTakenBackward,
}

const FIELD: &str = "cycles.predictor";

/// `[cycles.predictor]`, checked: the fields its organisation needs and
/// no others, counters of 1 to 8 bits, a cited penalty in range.
pub(super) fn parse_predictor(
    file: Option<PredictorFile>,
) -> Result<Option<PredictorSpec>, FieldError> {
    let Some(f) = file else {
        return Ok(None);
    };
    if f.penalty > MAX_CLASS_CYCLES {
        return Err((
            format!("{FIELD}.penalty"),
            format!("{} cycles: at most {MAX_CLASS_CYCLES}", f.penalty),
        ));
    }
    if f.cite.trim().is_empty() {
        return Err((
            format!("{FIELD}.cite"),
            "the predictor cites its source".into(),
        ));
    }
    if let Some(fw) = f.flag_forwarding {
        if fw.penalty > f.penalty || fw.distance > MAX_CLASS_CYCLES {
            return Err((
                format!("{FIELD}.flag_forwarding"),
                format!(
                    "penalty {} after {} cycles: at most the misprediction's {} cycles, \
                     a distance of at most {MAX_CLASS_CYCLES}",
                    fw.penalty, fw.distance, f.penalty
                ),
            ));
        }
    }
    let organisation = match f.organisation {
        OrganisationName::Table => table(&f)?,
        OrganisationName::LastTakenBackward => last_taken_backward(&f)?,
    };
    Ok(Some(PredictorSpec {
        organisation,
        penalty: f.penalty,
        forwarded: f.flag_forwarding,
        cite: f.cite,
    }))
}

/// A table predictor: its sizes are required (0 is a size: unlimited).
fn table(f: &PredictorFile) -> Result<Organisation, FieldError> {
    let required = |value: Option<u32>, name: &str| {
        value.ok_or_else(|| {
            (
                format!("{FIELD}.{name}"),
                "missing: a table predictor gives its size (0: one entry per branch)".to_string(),
            )
        })
    };
    let counter_bits = f.counter_bits.unwrap_or(2);
    if !(1..=8).contains(&counter_bits) {
        return Err((
            format!("{FIELD}.counter_bits"),
            format!("{counter_bits}: 1 to 8 bits"),
        ));
    }
    Ok(Organisation::Table {
        entries: required(f.entries, "entries")?,
        counter_bits,
        btb_entries: required(f.btb_entries, "btb_entries")?,
        ras_entries: f.ras_entries.unwrap_or(0),
    })
}

/// Hazard3's predictor has no tables: a size given for one is an error
/// rather than a number silently ignored.
fn last_taken_backward(f: &PredictorFile) -> Result<Organisation, FieldError> {
    let sizes = [
        ("entries", f.entries),
        ("counter_bits", f.counter_bits),
        ("btb_entries", f.btb_entries),
        ("ras_entries", f.ras_entries),
    ];
    if let Some((name, _)) = sizes.iter().find(|(_, v)| v.is_some()) {
        return Err((
            format!("{FIELD}.{name}"),
            "the last-taken-backward organisation has a single-entry buffer and no tables: \
             remove this field"
                .into(),
        ));
    }
    Ok(Organisation::LastTakenBackward)
}
