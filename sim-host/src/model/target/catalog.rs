//! Where targets come from. The built-in targets are compiled into the
//! binary (`targets/*.toml`), so an installed or copied `sim-host` runs
//! anywhere and editing a file in the source tree never changes a built
//! binary. A user's own cores live in target files: one named with
//! `--target-file PATH.toml`, or folders of them listed in
//! `SIM_HOST_TARGET_PATH` (separated like `PATH`), searched before the
//! built-ins so a user can deliberately replace one (`sim-host targets`
//! shows where each comes from). All are validated by the same rules
//! (`target::load_by_name`); this module only finds their text.

use std::path::{Path, PathBuf};

/// The built-in target files, by name (a test checks this list against
/// the `targets/` folder).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "cortex-m0",
        include_str!("../../../../targets/cortex-m0.toml"),
    ),
    (
        "cortex-m0plus",
        include_str!("../../../../targets/cortex-m0plus.toml"),
    ),
    (
        "cortex-m3",
        include_str!("../../../../targets/cortex-m3.toml"),
    ),
    (
        "cortex-m33",
        include_str!("../../../../targets/cortex-m33.toml"),
    ),
    (
        "cortex-m4",
        include_str!("../../../../targets/cortex-m4.toml"),
    ),
    (
        "cortex-m4f",
        include_str!("../../../../targets/cortex-m4f.toml"),
    ),
    (
        "cortex-m7",
        include_str!("../../../../targets/cortex-m7.toml"),
    ),
    ("rp2040", include_str!("../../../../targets/rp2040.toml")),
    ("rp2350", include_str!("../../../../targets/rp2350.toml")),
    (
        "rp2350-arm",
        include_str!("../../../../targets/rp2350-arm.toml"),
    ),
    (
        "rv32imac",
        include_str!("../../../../targets/rv32imac.toml"),
    ),
    (
        "sifive-e31",
        include_str!("../../../../targets/sifive-e31.toml"),
    ),
    (
        "stm32f407",
        include_str!("../../../../targets/stm32f407.toml"),
    ),
    (
        "stm32f746",
        include_str!("../../../../targets/stm32f746.toml"),
    ),
];

/// The environment variable listing folders of the user's target files.
pub const PATH_VARIABLE: &str = "SIM_HOST_TARGET_PATH";

/// Where a target's description was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    BuiltIn,
    File(PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::BuiltIn => f.write_str("built-in"),
            Source::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// The folders of `SIM_HOST_TARGET_PATH`, in order.
fn search_path() -> Vec<PathBuf> {
    std::env::var_os(PATH_VARIABLE)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The text of the target named `name` and where it is from.
pub fn find(name: &str) -> Option<(String, Source)> {
    for dir in search_path() {
        let path = dir.join(format!("{name}.toml"));
        if let Ok(text) = std::fs::read_to_string(&path) {
            return Some((text, Source::File(path)));
        }
    }
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| ((*text).to_owned(), Source::BuiltIn))
}

/// Every target name known (search path and built-in), sorted, once each.
pub fn names() -> Vec<String> {
    let mut names: Vec<String> = BUILTIN.iter().map(|(n, _)| (*n).to_owned()).collect();
    for dir in search_path() {
        let entries = std::fs::read_dir(&dir).into_iter().flatten().flatten();
        names.extend(entries.filter_map(|e| {
            let p = e.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_owned))?
        }));
    }
    names.sort();
    names.dedup();
    names
}

/// The folder of the repository's target files, for tests that compare
/// the embedded list with it.
pub fn source_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../targets"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_list_is_the_targets_folder() {
        let mut on_disk: Vec<String> = std::fs::read_dir(source_dir())
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_owned))?
            })
            .collect();
        on_disk.sort();
        let embedded: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            on_disk, embedded,
            "add the new target file to catalog::BUILTIN"
        );
        for (name, text) in BUILTIN {
            let on_disk = std::fs::read_to_string(source_dir().join(format!("{name}.toml")));
            assert_eq!(on_disk.unwrap(), *text);
        }
    }
}
