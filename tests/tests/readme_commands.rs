//! Every command line of README.md's `sh` blocks that starts with `$S ` or
//! `sim-host ` runs, in order, from the repository root, and exits 0.
//!
//! A line is made runnable by rewriting it (see [`Rewrite`]): `$S` and a
//! leading `sim-host` become the built binary, `$G` the cortex-m4 guests;
//! the README's placeholders (`prog.elf`, `./energy.so`, ...) become the
//! repository's own guests and plugin; every bare file name (`data.arp`,
//! `r.json`, ...) moves into a scratch folder, so outputs land there and
//! later lines read them back; `[optional parts]` are kept, so the
//! optional flags are tested too; a `# comment` is cut. Lines run under
//! `bash -o pipefail`, so `$S arp dump data.arp | head` must exit 0 too.
//! The lines that load the C example plugin run in a test of their own,
//! which needs a host gcc to build it.

use e2e_tests::{guest, repo_root, require_tool, scratch, sim_host_bin};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Extensions of the file names the README's commands write and read.
const FILE_EXTENSIONS: [&str; 11] = [
    ".arp",
    ".json",
    ".jsonl",
    ".sir",
    ".callgrind",
    ".toml",
    ".svg",
    ".png",
    ".csv",
    ".xml",
    ".md",
];

/// `(line number, text)` of every command line in README.md's sh blocks.
fn readme_commands() -> Vec<(usize, String)> {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let mut in_sh = false;
    let mut commands = Vec::new();
    for (i, line) in readme.lines().enumerate() {
        match line.trim_end() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            text if in_sh && (text.starts_with("$S ") || text.starts_with("sim-host ")) => {
                commands.push((i + 1, text.to_string()))
            }
            _ => {}
        }
    }
    commands
}

/// How README lines become runnable commands.
struct Rewrite {
    bin: PathBuf,
    guests: PathBuf,
    scratch: PathBuf,
    /// Owns `scratch` (removed with it); none in the unit tests of the
    /// rewriting, whose paths are made up.
    _folder: Option<e2e_tests::Scratch>,
    /// The C example plugin, when the lines need it.
    plugin: Option<PathBuf>,
}

impl Rewrite {
    /// Rewriting into a fresh scratch folder; `plugin` builds the example
    /// plugin there, for the lines that load it.
    fn new(plugin: Option<fn(&Path) -> PathBuf>) -> Rewrite {
        let folder = scratch("readme-commands");
        std::fs::create_dir_all(folder.join("files")).unwrap();
        let guests = guest("cortex-m4", "filter").parent().unwrap().to_owned();
        let plugin = plugin.map(|build| build(&folder));
        Rewrite {
            bin: sim_host_bin(),
            guests,
            scratch: folder.to_path_buf(),
            _folder: Some(folder),
            plugin,
        }
    }

    /// The shell text of a README line.
    fn line(&self, line: &str) -> String {
        let line = line.split(" #").next().unwrap().replace(['[', ']'], "");
        let line = match line.strip_prefix("sim-host ") {
            Some(rest) => format!("$S {rest}"),
            None => line,
        };
        let mut words: Vec<String> = line.split_whitespace().map(|w| self.word(w)).collect();
        if let Some(new) = words.iter().position(|w| w == "new") {
            // `sim-host new NAME` creates the folder NAME: in the scratch folder.
            words.insert(new + 1, format!("--dir {}", self.scratch.display()));
        }
        words.join(" ")
    }

    /// One word, rewritten piece by piece between `:` and `=`
    /// (`n=1024:a.arp`, `./energy.so:pj_per_cycle=12`).
    fn word(&self, word: &str) -> String {
        let mut out = String::new();
        let mut piece = String::new();
        for c in word.chars() {
            if c == ':' || c == '=' {
                out.push_str(&self.piece(&piece));
                out.push(c);
                piece.clear();
            } else {
                piece.push(c);
            }
        }
        out.push_str(&self.piece(&piece));
        out
    }

    fn piece(&self, piece: &str) -> String {
        let guests = self.guests.display();
        let in_scratch = |name: &str| self.scratch.join(name).display().to_string();
        match piece {
            "$S" => self.bin.display().to_string(),
            // a guest that ends within the README's --max-cycles 10000000
            "prog.elf" => format!("{guests}/microbench.elf"),
            "./energy.so" => match &self.plugin {
                Some(plugin) => plugin.display().to_string(),
                None => piece.to_string(),
            },
            "./files" => in_scratch("files"),
            // Extra-P inputs: the two recordings of the lines above
            "a.arp" => in_scratch("data.arp"),
            "b.arp" => in_scratch("seq.arp"),
            "prog.sir" => in_scratch("filter.sir"),
            _ if piece.starts_with("$G/") => piece.replacen("$G", &guests.to_string(), 1),
            _ if is_bare_file_name(piece) => in_scratch(piece),
            // A repository path (`suites/examples.toml`): absolute, since
            // the commands run in the scratch folder.
            _ if is_repository_path(piece) => repo_root().join(piece).display().to_string(),
            _ => piece.to_string(),
        }
    }
}

fn is_repository_path(piece: &str) -> bool {
    piece.contains('/')
        && !piece.starts_with(['/', '$', '.', '-'])
        && repo_root().join(piece).exists()
}

fn is_bare_file_name(piece: &str) -> bool {
    !piece.contains('/') && FILE_EXTENSIONS.iter().any(|ext| piece.ends_with(ext))
}

fn build_c_plugin(dir: &Path) -> PathBuf {
    let so = dir.join("energy.so");
    let out = Command::new("gcc")
        .args(["-shared", "-fPIC", "-O2", "-I"])
        .arg(repo_root().join("sim-host/include"))
        .arg("-o")
        .arg(&so)
        .arg(repo_root().join("sim-host/plugins/example-c/energy.c"))
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    so
}

/// Files in the repository that git does not track, ignored ones too
/// (`*.arp` is ignored) but for the build folder: nothing a test runs may
/// add one, its outputs belong in its scratch folder.
fn untracked_files() -> Vec<String> {
    Command::new("git")
        .args([
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--ignored",
        ])
        .current_dir(repo_root())
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.starts_with("??") || l.starts_with("!!"))
                .filter(|l| !l.starts_with("!! target/") && !l.starts_with("!! .bootstrap"))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a README line needs the C example plugin (built with the host
/// gcc): those lines run in their own test.
fn needs_plugin(line: &str) -> bool {
    line.contains("./energy.so")
}

#[test]
fn every_readme_command_line_runs() {
    let commands: Vec<_> = readme_commands()
        .into_iter()
        .filter(|(_, text)| !needs_plugin(text))
        .collect();
    assert!(commands.len() >= 15, "{commands:?}");
    run_readme_lines(&commands, Rewrite::new(None));
}

#[test]
#[cfg_attr(
    not(has_gcc),
    ignore = "needs a host gcc for the C example plugin (scripts/bootstrap.sh installs it)"
)]
fn every_readme_plugin_line_runs() {
    require_tool("gcc");
    let commands: Vec<_> = readme_commands()
        .into_iter()
        .filter(|(_, text)| needs_plugin(text))
        .collect();
    assert!(!commands.is_empty(), "README.md shows a plugin run");
    let rewrite = Rewrite::new(Some(build_c_plugin));
    run_readme_lines(&commands, rewrite);
}

/// Runs README lines in order with `rewrite`; every one must exit 0 and
/// none may write into the repository.
fn run_readme_lines(commands: &[(usize, String)], rewrite: Rewrite) {
    let untracked_before = untracked_files();
    let mut failures = Vec::new();
    for (number, text) in commands {
        let shell = rewrite.line(text);
        // In the scratch folder: a run without -o writes data.arp where
        // it stands.
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", &shell])
            .current_dir(&rewrite.scratch)
            .env("SIM_HOST_SDK_DIR", rewrite.scratch.join("sdk"))
            .output()
            .expect("bash runs");
        if !out.status.success() {
            failures.push(format!(
                "README.md:{number}: {text}\n  ran: {shell}\n  status {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim_end()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let added: Vec<String> = untracked_files()
        .into_iter()
        .filter(|f| !untracked_before.contains(f))
        .collect();
    assert!(
        added.is_empty(),
        "README commands wrote into the repository: {added:?}"
    );
    let _ = std::fs::remove_dir_all(&rewrite.scratch);
}

#[test]
fn lines_are_rewritten_into_the_scratch_folder() {
    let rewrite = Rewrite {
        bin: "/b/sim-host".into(),
        guests: "/g".into(),
        scratch: "/s".into(),
        _folder: None,
        plugin: Some("/s/energy.so".into()),
    };
    assert_eq!(
        rewrite.line("$S run $G/filter.elf -o data.arp [--report-json r.json] # note"),
        "/b/sim-host run /g/filter.elf -o /s/data.arp --report-json /s/r.json"
    );
    assert_eq!(
        rewrite.line("$S arp export-extrap n=1024:a.arp --sir prog.sir -o x.jsonl"),
        "/b/sim-host arp export-extrap n=1024:/s/data.arp --sir /s/filter.sir -o /s/x.jsonl"
    );
    assert_eq!(
        rewrite.line("$S run prog.elf --plugin ./energy.so:pj_per_cycle=12"),
        "/b/sim-host run /g/microbench.elf --plugin /s/energy.so:pj_per_cycle=12"
    );
    assert_eq!(
        rewrite.line("sim-host new demo --target cortex-m4     # a C project"),
        "/b/sim-host new --dir /s demo --target cortex-m4"
    );
    assert_eq!(
        rewrite.line("$S suite suites/examples.toml --json suite.json"),
        format!(
            "/b/sim-host suite {} --json /s/suite.json",
            repo_root().join("suites/examples.toml").display()
        )
    );
}
