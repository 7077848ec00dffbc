//! `sim-host sir generate|validate|convert`:
//!
//! - `generate ELF [--target NAME] [--dialect apart|periscope] -o OUT`: the
//!   SIR of a guest ELF (units, loops, calls, ARP sections with source
//!   positions), without running it. `sim-host run --profile` writes the
//!   same SIR annotated with measurements.
//! - `validate FILE... [--warnings-as-errors]`: checks SIR files of either
//!   dialect; every finding is printed on standard output as
//!   `FILE:LINE:COLUMN: error|warning: ...`, a summary on standard error;
//!   the status is 1 when any file has an error (or a warning, with
//!   `--warnings-as-errors`).
//! - `convert IN -o OUT --to apart|periscope`: converts between the
//!   dialects; what the target dialect cannot express is listed on
//!   standard error.

use anyhow::{bail, Context, Result};
use sim_host::image::elf::GuestImage;
use sim_host::model::target::{self, Target};
use sim_host::observe::sirgen::{self, Dialect};
use sir::convert::Loss;
use sir::diagnostic::{Diagnostic, Severity};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Subcommand)]
pub enum Command {
    /// Write the SIR (program structure) of a guest ELF.
    Generate(GenerateArgs),
    /// Check SIR files (APART or Periscope, recognised by the root element)
    /// and print every finding as FILE:LINE:COLUMN.
    Validate(ValidateArgs),
    /// Convert a SIR to the other dialect, listing what is lost on stderr.
    Convert(ConvertArgs),
}

/// The SIR dialect to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DialectArg {
    /// APART SIR (DTD, no namespace).
    Apart,
    /// Periscope SIR (XML Schema, namespace http://www.lrr.in.tum.de/Periscope).
    Periscope,
}

impl From<DialectArg> for Dialect {
    fn from(d: DialectArg) -> Dialect {
        match d {
            DialectArg::Apart => Dialect::Apart,
            DialectArg::Periscope => Dialect::Periscope,
        }
    }
}

impl DialectArg {
    fn title(self) -> &'static str {
        match self {
            DialectArg::Apart => "APART",
            DialectArg::Periscope => "Periscope",
        }
    }
}

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// The guest ELF (with -g for source positions).
    pub elf: PathBuf,
    /// Built-in target (see `sim-host targets`).
    #[arg(long, default_value = "cortex-m4", conflicts_with = "target_file")]
    pub target: String,
    /// A target description file instead of a built-in target.
    #[arg(long)]
    pub target_file: Option<PathBuf>,
    /// SIR dialect.
    #[arg(long, value_enum, default_value = "apart")]
    pub dialect: DialectArg,
    /// Where to write the SIR (`-` for standard output).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
}

#[derive(clap::Args)]
pub struct ValidateArgs {
    /// SIR files of either dialect.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Fail (status 1) on warnings too.
    #[arg(long)]
    pub warnings_as_errors: bool,
}

#[derive(clap::Args)]
pub struct ConvertArgs {
    /// The SIR to convert (either dialect).
    pub input: PathBuf,
    /// Where to write the converted SIR (`-` for standard output).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// The dialect to convert to.
    #[arg(long, value_enum)]
    pub to: DialectArg,
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Command::Generate(args) => generate(args),
        Command::Validate(args) => validate(&args),
        Command::Convert(args) => convert(&args),
    }
}

fn generate(args: GenerateArgs) -> Result<()> {
    let mut inputs = vec![("ELF", args.elf.as_path())];
    inputs.extend(args.target_file.as_deref().map(|p| ("--target-file", p)));
    arpsim::output::check_files(&[("-o", args.output.as_path())], &inputs)
        .map_err(anyhow::Error::msg)?;
    let target = match &args.target_file {
        Some(path) => Target::load(path)?,
        None => target::builtin(&args.target)?,
    };
    let bytes = arpsim::input::read(&args.elf, sim_host::model::limits::MAX_ELF_BYTES)
        .with_context(|| format!("reading {}", args.elf.display()))?;
    let image = GuestImage::parse(&bytes, &args.elf, &target)?;
    let generated = sirgen::generate(&image, &bytes, &target, args.dialect.into())
        .with_context(|| format!("generating the SIR of {}", args.elf.display()))?;
    for w in &generated.warnings {
        sim_host::say!("sim-host: warning: {w}");
    }
    let mut out = Vec::new();
    generated.write(&mut out)?;
    arpsim::output::write(&args.output, out)
        .with_context(|| format!("writing {}", args.output.display()))?;
    Ok(())
}

// ------------------------------------------------------------------ validate

/// Errors and warnings found in one or more files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    errors: usize,
    warnings: usize,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.errors += other.errors;
        self.warnings += other.warnings;
    }

    fn fails(self, warnings_as_errors: bool) -> bool {
        self.errors > 0 || (warnings_as_errors && self.warnings > 0)
    }
}

fn validate(args: &ValidateArgs) -> Result<()> {
    let mut total = Tally::default();
    let mut failed_files = 0;
    for file in &args.files {
        let tally = validate_file(file);
        if tally.fails(args.warnings_as_errors) {
            failed_files += 1;
        }
        total.add(tally);
    }
    let summary = format!(
        "{} file(s) checked: {} error(s), {} warning(s)",
        args.files.len(),
        total.errors,
        total.warnings
    );
    if failed_files == 0 {
        sim_host::say!("sim-host: {summary}");
        return Ok(());
    }
    let rule = if args.warnings_as_errors && total.errors == 0 {
        " (--warnings-as-errors)"
    } else {
        ""
    };
    bail!("{summary}; {failed_files} file(s) failed{rule}")
}

/// Parses and validates one file, printing every finding; a file that
/// cannot be read or parsed counts as one error.
fn validate_file(file: &Path) -> Tally {
    let input = match std::fs::File::open(file) {
        Ok(f) => std::io::BufReader::new(arpsim::input::Capped::new(
            f,
            sim_host::model::limits::MAX_SIR_BYTES,
        )),
        Err(e) => {
            sim_host::show!("{}: error: cannot read: {e}", file.display());
            return Tally {
                errors: 1,
                warnings: 0,
            };
        }
    };
    let parsed = match sir::parse(input, &sir::ParseOptions::default()) {
        Ok(parsed) => parsed,
        Err(e) => {
            sim_host::show!("{}:{}: error: {}", file.display(), e.position, e.kind);
            return Tally {
                errors: 1,
                warnings: 0,
            };
        }
    };
    let report = parsed.document.validate();
    let mut tally = Tally::default();
    for finding in parsed.warnings.iter().chain(&report.diagnostics) {
        show_finding(file, finding);
        match finding.severity {
            Severity::Error => tally.errors += 1,
            Severity::Warning => tally.warnings += 1,
        }
    }
    tally
}

/// `FILE:LINE:COLUMN: severity: <element id="..."> attribute `a`: message`
/// (a finding of a parsed document always has a position).
fn show_finding(file: &Path, finding: &Diagnostic) {
    match finding.position {
        Some(_) => sim_host::show!("{}:{finding}", file.display()),
        None => sim_host::show!("{}: {finding}", file.display()),
    }
}

// ------------------------------------------------------------------- convert

fn convert(args: &ConvertArgs) -> Result<()> {
    arpsim::output::check_files(&[("-o", &args.output)], &[("INPUT", &args.input)])
        .map_err(anyhow::Error::msg)?;
    let document = read_document(&args.input)?;
    let (converted, losses) = to_dialect(document, args.to)
        .with_context(|| format!("converting {}", args.input.display()))?;
    let mut xml = Vec::new();
    converted
        .write(&mut xml)
        .with_context(|| format!("writing the {} SIR", args.to.title()))?;
    arpsim::output::write(&args.output, xml)
        .with_context(|| format!("writing {}", args.output.display()))?;
    report_losses(args, &losses);
    Ok(())
}

/// Parses `path` as a SIR of either dialect; the error names the file,
/// line and column.
fn read_document(path: &Path) -> Result<sir::Document> {
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let file = arpsim::input::Capped::new(file, sim_host::model::limits::MAX_SIR_BYTES);
    let parsed = sir::parse(std::io::BufReader::new(file), &sir::ParseOptions::default())
        .map_err(|e| anyhow::anyhow!("{}:{}: {}", path.display(), e.position, e.kind))?;
    Ok(parsed.document)
}

/// What a conversion could not carry; `None` when the input was already in
/// the target dialect (it is then written as it is).
type Losses = Option<Vec<Loss>>;

/// The document in dialect `to` and what the conversion lost.
fn to_dialect(document: sir::Document, to: DialectArg) -> Result<(sir::Document, Losses)> {
    use sir::convert::{to_apart, to_periscope};
    use sir::Document::{Apart, Periscope};
    Ok(match (document, to) {
        (Apart(sir), DialectArg::Periscope) => {
            let converted = to_periscope(&sir);
            (Periscope(converted.document), Some(converted.losses))
        }
        (Periscope(sir), DialectArg::Apart) => {
            let converted = to_apart(&sir)?;
            (Apart(converted.document), Some(converted.losses))
        }
        (same, _) => (same, None),
    })
}

/// On stderr: one status line, then one line per loss.
fn report_losses(args: &ConvertArgs, losses: &Losses) {
    let (input, output, to) = (args.input.display(), args.output.display(), args.to.title());
    match losses.as_deref() {
        None => sim_host::say!(
            "sim-host: {input} is already in the {to} dialect: written as it is to {output}"
        ),
        Some([]) => {
            sim_host::say!("sim-host: converted {input} to {to} SIR {output}: nothing lost")
        }
        Some(losses) => {
            sim_host::say!(
                "sim-host: converted {input} to {to} SIR {output}; lost {} thing(s) {to} cannot express:",
                losses.len()
            );
            for loss in losses {
                sim_host::say!("  {}", loss_text(loss));
            }
        }
    }
}

/// `<element id="x">: message`, as validation findings name elements.
fn loss_text(loss: &Loss) -> String {
    match &loss.id {
        Some(id) => format!("<{} id=\"{id}\">: {}", loss.element, loss.message),
        None => format!("<{}>: {}", loss.element, loss.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_fail_only_when_asked() {
        let warned = Tally {
            errors: 0,
            warnings: 2,
        };
        assert!(!warned.fails(false));
        assert!(warned.fails(true));
        let erred = Tally {
            errors: 1,
            warnings: 0,
        };
        assert!(erred.fails(false));
    }

    #[test]
    fn losses_name_the_element_and_its_id() {
        let loss = Loss {
            element: "group".into(),
            id: Some("p1".into()),
            message: "flattened".into(),
        };
        assert_eq!(loss_text(&loss), "<group id=\"p1\">: flattened");
        let loss = Loss { id: None, ..loss };
        assert_eq!(loss_text(&loss), "<group>: flattened");
    }
}
