//! `chips-eval calibrate`: measured `data.arp` runs → calibrated hardware
//! model (the logic is `chips_eval::calibrate`).

use anyhow::Context;
use chips_eval::calibrate::{self, CalibrationInput, CalibrationOptions, InpcomRequest};
use chips_eval::measure::{RunSpec, SectionNames};
use chips_eval::{HardwareModel, LoadOptions, Program};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// A recorded run, `[NAME=VALUE[,NAME=VALUE]...:]FILE.arp`, e.g.
    /// `n=1024:sort-1024.arp`; repeatable.
    #[arg(long = "arp", value_name = "[PARAMS:]RUN.arp", required = true)]
    pub arp: Vec<String>,
    /// SIR naming the sections (as `sim-host sir` writes it): an element
    /// annotated `arp:sid="N"` names section N by its `arp:name`.
    #[arg(long, value_name = "PROG.sir")]
    pub sir: Option<PathBuf>,
    /// Names a section by hand, `NAME=SID`; repeatable.
    #[arg(long = "section", value_name = "NAME=SID")]
    pub section: Vec<String>,
    /// The application model (APP.la).
    #[arg(long, value_name = "APP.la")]
    pub model: PathBuf,
    /// Directory searched for included objects (NAME.la); repeatable.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Extra vector type definitions (vctdef syntax); repeatable.
    #[arg(long = "vectors", value_name = "FILE.vct")]
    pub vectors: Vec<PathBuf>,
    /// The base hardware model, edited into the output.
    #[arg(long, value_name = "BASE.toml")]
    pub hardware: PathBuf,
    /// Where to write the calibrated model.
    #[arg(short = 'o', long = "output", value_name = "CALIBRATED.toml")]
    pub output: PathBuf,
    /// Fit the cost table of this vector type (e.g. hllc, icc); repeatable.
    #[arg(long = "fit", value_name = "TYPE")]
    pub fit: Vec<String>,
    /// The procedure giving a kernel's usage, `KERNEL=OBJECT.PROC`
    /// (default: the procedure named like the kernel); repeatable.
    #[arg(long = "usage", value_name = "KERNEL=OBJECT.PROC")]
    pub usage: Vec<String>,
    /// Fit a kernel's cost as a law of a run parameter, `KERNEL=PARAM`; repeatable.
    #[arg(long = "law", value_name = "KERNEL=PARAM")]
    pub law: Vec<String>,
    /// Fit the inpcom device from a communication kernel, `KERNEL[=PARAM]`
    /// (PARAM: the run parameter holding the message size, default `size`).
    #[arg(long, value_name = "KERNEL[=PARAM]")]
    pub inpcom: Option<String>,
    /// The inpcom device to calibrate (default: the only one).
    #[arg(long, value_name = "NAME", requires = "inpcom")]
    pub inpcom_device: Option<String>,
    /// Links the measured messages crossed.
    #[arg(long, default_value_t = 1.0, requires = "inpcom")]
    pub inpcom_hops: f64,
    /// Clock (Hz) the runs were recorded at; must equal the model's clock.
    #[arg(long, value_name = "HZ")]
    pub recorded_clock: Option<f64>,
    /// Callback set holding the cycles.
    #[arg(long, default_value_t = 0)]
    pub value_set: usize,
}

fn pair<'a>(opt: &str, spec: &'a str, what: &str) -> anyhow::Result<(&'a str, &'a str)> {
    spec.split_once('=')
        .filter(|(a, b)| !a.trim().is_empty() && !b.trim().is_empty())
        .map(|(a, b)| (a.trim(), b.trim()))
        .with_context(|| format!("--{opt} {spec}: expected {what}"))
}

pub fn execute(a: CalibrateArgs) -> anyhow::Result<()> {
    let runs = a
        .arp
        .iter()
        .map(|s| RunSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut inputs: Vec<(&str, &Path)> = runs.iter().map(|r| ("--arp", r.path.as_path())).collect();
    inputs.extend([
        ("--model", a.model.as_path()),
        ("--hardware", a.hardware.as_path()),
    ]);
    inputs.extend(a.sir.as_deref().map(|p| ("--sir", p)));
    inputs.extend(a.vectors.iter().map(|v| ("--vectors", v.as_path())));
    arpsim::output::check_files(&[("-o", a.output.as_path())], &inputs)
        .map_err(anyhow::Error::msg)?;
    let mut names = SectionNames::default();
    if let Some(sir) = &a.sir {
        chips_eval::measure::add_sir_names(&mut names, sir)
            .with_context(|| format!("reading section names from {}", sir.display()))?;
    }
    for s in &a.section {
        names.add_spec(s)?;
    }
    let base_text = arpsim::input::read_to_string(&a.hardware, chips_eval::MAX_SOURCE_BYTES)
        .with_context(|| format!("reading {}", a.hardware.display()))?;
    let base_path = a.hardware.display().to_string();
    let base = HardwareModel::from_toml(&base_path, &base_text)?;
    let opts = LoadOptions {
        search_path: a.include.clone(),
        vector_files: a.vectors.clone(),
    };
    let program = Program::load(&a.model, &opts, Some(&base))
        .with_context(|| format!("loading the model {}", a.model.display()))?;
    let objects = chips_eval::shard::model_files(&program, &a.vectors);
    arpsim::output::check_files(&[("-o", a.output.as_path())], &objects)
        .map_err(anyhow::Error::msg)?;
    let mut usage = BTreeMap::new();
    for u in &a.usage {
        let (k, target) = pair("usage", u, "KERNEL=OBJECT.PROC")?;
        let (o, p) = target
            .split_once('.')
            .with_context(|| format!("--usage {u}: expected KERNEL=OBJECT.PROC"))?;
        usage.insert(k.to_string(), (o.to_string(), p.to_string()));
    }
    let mut laws = BTreeMap::new();
    for l in &a.law {
        let (k, p) = pair("law", l, "KERNEL=PARAM, e.g. ato_kernel_sort=n")?;
        laws.insert(k.to_string(), p.to_string());
    }
    let inpcom = a.inpcom.as_ref().map(|s| {
        let (kernel, parameter) = match s.split_once('=') {
            Some((k, p)) => (k.trim().to_string(), p.trim().to_string()),
            None => (s.trim().to_string(), "size".to_string()),
        };
        InpcomRequest {
            kernel,
            parameter,
            device: a.inpcom_device.clone(),
            hops: a.inpcom_hops,
        }
    });
    let options = CalibrationOptions {
        fit_tables: a.fit.clone(),
        usage,
        laws,
        inpcom,
        recorded_clock: a.recorded_clock,
        value_set: a.value_set,
    };
    let input = CalibrationInput {
        runs: &runs,
        names: &names,
        program: &program,
        base: &base,
        base_text: &base_text,
        base_path: &base_path,
    };
    let result = calibrate::calibrate(&input, &options)?;
    for w in &result.warnings {
        eprintln!("warning: {w}");
    }
    print!("{}", result.report);
    arpsim::output::write(&a.output, &result.toml)
        .with_context(|| format!("writing {}", a.output.display()))?;
    println!("wrote {}", a.output.display());
    Ok(())
}
