//! Measurements read from `data.arp` files, for calibration: the reader
//! lives in `arpsim::measure` (it only concerns data.arp files); this
//! module adds section names read from a SIR.

pub use arpsim::measure::*;
use std::path::Path;

/// Adds the section names of a SIR (either dialect), as `sim-host sir`
/// writes them (`arp:sid` / `arp:name` on section regions; see
/// `sir::arp::section_names`).
pub fn add_sir_names(names: &mut SectionNames, path: &Path) -> Result<(), MeasureError> {
    let input = |message: String| MeasureError::Input {
        path: path.display().to_string(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| input(format!("cannot read: {e}")))?;
    let parsed = sir::parse(std::io::BufReader::new(file), &sir::ParseOptions::default())
        .map_err(|e| input(e.to_string()))?;
    let found = sir::arp::section_names(parsed.document).map_err(|e| input(e.to_string()))?;
    let origin = path.display().to_string();
    for (sid, name) in found {
        names.add(sid, &name, &origin)?;
    }
    Ok(())
}
