//! One symbolizer for the names the tools print: an address becomes the
//! function that contains it (the innermost inlined one, demangled) and its
//! source `file:line`, from the ELF's DWARF line tables (addr2line); without
//! debug information, the ELF's function symbols alone.

use crate::image::dwarf::{DebugInfo, Frame};
use crate::image::elf::{readable_name, GuestImage};
use std::collections::HashMap;
use std::path::Path;

/// Where an address is in the source.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SourceLocation {
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
}

impl SourceLocation {
    /// `function (file.c:42)` with the file's name only; what is known.
    pub fn short(&self) -> String {
        let place = match (&self.file, self.line) {
            (Some(f), Some(l)) => Some(format!("{}:{l}", file_name(f))),
            (Some(f), None) => Some(file_name(f).to_owned()),
            _ => None,
        };
        match (&self.function, place) {
            (Some(f), Some(p)) => format!("{f} ({p})"),
            (Some(f), None) => f.clone(),
            (None, Some(p)) => format!("({p})"),
            (None, None) => "?".into(),
        }
    }

    /// `path/file.c:42`, if the file is known.
    pub fn file_line(&self) -> Option<String> {
        let file = self.file.as_ref()?;
        Some(match self.line {
            Some(l) => format!("{file}:{l}"),
            None => file.clone(),
        })
    }
}

fn file_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}

/// Locates every address of `addrs` in `image` (reading its ELF for the
/// DWARF); addresses the debug information does not cover fall back to
/// the function symbol containing them.
pub fn locate_all(image: &GuestImage, addrs: &[u64]) -> HashMap<u64, SourceLocation> {
    let bytes = std::fs::read(&image.file).unwrap_or_default();
    let debug = DebugInfo::load(&bytes).ok().flatten();
    addrs
        .iter()
        .map(|&addr| (addr, locate(image, debug.as_ref(), addr)))
        .collect()
}

/// Locates `addr` in `image` with its loaded debug information (see
/// [`locate_all`]).
pub fn locate(image: &GuestImage, debug: Option<&DebugInfo<'_>>, addr: u64) -> SourceLocation {
    let symbol = || image.function_at(addr).map(|f| f.name.clone());
    let frame = debug.and_then(|d| source_frame(d, image, addr));
    match frame {
        Some(f) => SourceLocation {
            function: f.function.as_deref().map(readable_name).or_else(symbol),
            file: f.file,
            line: f.line,
        },
        None => SourceLocation {
            function: symbol(),
            file: None,
            line: None,
        },
    }
}

/// The frame to name at `addr`: the innermost one that is not the ARP
/// API's own (inlined) Rust wrappers; none when the debug information
/// contradicts the symbol table (the outermost frame is not the function
/// containing `addr`: the DWARF of a discarded function, left at address 0
/// by the linker, overlaps the code).
fn source_frame(debug: &DebugInfo<'_>, image: &GuestImage, addr: u64) -> Option<Frame> {
    let frames = debug.frames(addr);
    let outer = frames.last()?.function.as_deref().map(readable_name);
    let symbol = image.function_at(addr).map(|f| f.name.as_str());
    if symbol.is_some() && outer.as_deref() != symbol {
        return None;
    }
    frames.into_iter().find(|f| {
        !f.function
            .as_deref()
            .is_some_and(|n| readable_name(n).starts_with("arp_guest::"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_say_what_is_known() {
        let l = |function: Option<&str>, file: Option<&str>, line| SourceLocation {
            function: function.map(str::to_owned),
            file: file.map(str::to_owned),
            line,
        };
        assert_eq!(
            l(Some("main"), Some("/src/fir.c"), Some(44)).short(),
            "main (fir.c:44)"
        );
        assert_eq!(l(Some("main"), None, None).short(), "main");
        assert_eq!(l(None, Some("a/b.c"), Some(3)).short(), "(b.c:3)");
        assert_eq!(l(None, None, None).short(), "?");
        assert_eq!(
            l(Some("f"), Some("/src/fir.c"), Some(9))
                .file_line()
                .as_deref(),
            Some("/src/fir.c:9")
        );
    }
}
