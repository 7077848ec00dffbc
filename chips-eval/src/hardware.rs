//! Hardware objects as TOML files (DESIGN.md decision 7).
//!
//! CHIP3S left hardware objects to Mathematica (section 4.1); here a
//! hardware model is data. The file format (serde structs with
//! `deny_unknown_fields`, a compatibility promise) is converted into the
//! internal [`HardwareModel`], which the evaluator uses:
//! * `[parameters]`: numbers visible as `hardware.X` and writable through
//!   `link` (`Nproc` and `clock` in Hz are required);
//! * `[costs.TYPE]`: the price of one element of a resource usage vector
//!   type, in `seconds` or `cycles` (divided by `hardware.clock`); numeric
//!   vector types (`time`) use `scale` per unit instead of `elements`;
//! * `[devices.NAME]`: `kind = "cpu"` (confdev time) or `kind = "inpcom"`
//!   (confdev size, source, destination over a topology);
//! * `[kernels.NAME]`: measured kernel costs for `arp` vectors: a fixed
//!   `cycles` or `seconds`, or a `law` of one parameter (a
//!   [`crate::fit::Law`] `constant + Σ c * n^i * log2(n)^j`, in cycles or
//!   seconds) evaluated at the value the model gives that parameter;
//! * `[provenance]`: free-form records of where calibrated numbers came
//!   from (written by `chips-eval calibrate`, ignored by the evaluator).

use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
#[error("{path}{}: {message}", .position.map_or_else(String::new, |(l, c)| format!(":{l}:{c}")))]
pub struct HardwareError {
    pub path: String,
    /// Line and column (1-based) of the field at fault, where known.
    pub position: Option<(usize, usize)>,
    pub message: String,
}

// ------------------------------------------------------------------ file format

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HardwareFile {
    name: String,
    #[serde(default)]
    description: String,
    /// Where the figures come from.
    #[serde(default)]
    sources: Vec<String>,
    parameters: BTreeMap<String, f64>,
    #[serde(default)]
    costs: BTreeMap<String, CostTableFile>,
    #[serde(default)]
    devices: BTreeMap<String, DeviceFile>,
    #[serde(default)]
    kernels: BTreeMap<String, KernelFile>,
    /// Where calibrated numbers came from; not interpreted.
    #[serde(default)]
    #[allow(dead_code)]
    provenance: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CostTableFile {
    unit: CostUnit,
    #[serde(default)]
    scale: Option<f64>,
    #[serde(default)]
    elements: BTreeMap<String, f64>,
    #[serde(default)]
    source: Option<String>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CostUnit {
    Seconds,
    Cycles,
}

/// A device. Flat rather than an enum tagged by `kind` (or flattened):
/// serde buffers such fields, and its errors then point at the table
/// header instead of the field. The network fields belong to `inpcom`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceFile {
    kind: DeviceKindName,
    #[serde(default)]
    source: Option<String>,
    topology: Option<Topology>,
    /// Software start-up cost of one message, seconds.
    startup_s: Option<f64>,
    /// Cost of passing one router/link, seconds.
    per_hop_s: Option<f64>,
    /// Bytes per second on one link.
    bandwidth_bytes_per_s: Option<f64>,
    switching: Option<Switching>,
    /// Columns of a 2-D mesh; default: the smallest w with w*w >= Nproc.
    mesh_width: Option<u32>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum DeviceKindName {
    Cpu,
    Inpcom,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KernelFile {
    #[serde(default)]
    cycles: Option<f64>,
    #[serde(default)]
    seconds: Option<f64>,
    #[serde(default)]
    law: Option<LawFile>,
    #[serde(default)]
    source: Option<String>,
}

/// `law = { unit = "cycles", parameter = "n", constant = 200.0,
///          terms = [{ coefficient = 3.0, exponent = 1, log_exponent = 1 }] }`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LawFile {
    unit: CostUnit,
    parameter: String,
    #[serde(default)]
    constant: f64,
    #[serde(default)]
    terms: Vec<TermFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TermFile {
    coefficient: f64,
    #[serde(default)]
    exponent: f64,
    #[serde(default)]
    log_exponent: f64,
}

// --------------------------------------------------------------- internal model

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Topology {
    FullyConnected,
    Ring,
    Mesh2d,
    Hypercube,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Switching {
    /// Each hop receives the whole message before forwarding it.
    StoreAndForward,
    /// The message pipelines through the routers (wormhole/cut-through).
    CutThrough,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CostTable {
    pub unit: CostUnit,
    /// Price of one unit of a numeric vector type (`time`).
    pub scale: Option<f64>,
    pub elements: HashMap<String, f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    pub topology: Topology,
    pub startup_s: f64,
    pub per_hop_s: f64,
    pub bandwidth_bytes_per_s: f64,
    pub switching: Switching,
    pub mesh_width: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DeviceKind {
    Cpu,
    Inpcom(Network),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub name: String,
    pub kind: DeviceKind,
    /// Where the device's figures come from.
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum KernelCost {
    Cycles(f64),
    Seconds(f64),
    /// A cost law evaluated at the model's value of `parameter` (a
    /// variable visible where the `arp` vector is priced, else a hardware
    /// parameter).
    Law {
        unit: CostUnit,
        parameter: String,
        law: crate::fit::Law,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct HardwareModel {
    pub name: String,
    pub description: String,
    /// Citations for the model's figures.
    pub sources: Vec<String>,
    /// Parameter defaults in file order (BTreeMap order: sorted by name).
    pub parameters: Vec<(String, f64)>,
    pub costs: HashMap<String, CostTable>,
    pub devices: Vec<Device>,
    pub kernels: HashMap<String, KernelCost>,
}

impl HardwareModel {
    pub fn load(path: &Path) -> Result<Self, HardwareError> {
        let text = arpsim::input::read_to_string(path, crate::MAX_SOURCE_BYTES).map_err(|e| {
            HardwareError {
                path: path.display().to_string(),
                position: None,
                message: format!("cannot read: {e}"),
            }
        })?;
        Self::from_toml(&path.display().to_string(), &text)
    }

    /// Reads a hardware model. Every figure must be a finite number, none
    /// negative; errors name the field and, where it can be found, its
    /// line and column.
    pub fn from_toml(path: &str, text: &str) -> Result<Self, HardwareError> {
        let src = Source::new(path, text);
        let file: HardwareFile = toml::from_str(text).map_err(|e| src.error(&[], e.to_string()))?;
        check_parameters(&src, &file.parameters)?;
        let mut costs = HashMap::new();
        for (ty, t) in file.costs {
            costs.insert(ty.clone(), cost_table(&src, &ty, t)?);
        }
        let mut devices = Vec::new();
        for (name, d) in file.devices {
            devices.push(device(&src, name, d)?);
        }
        let mut kernels = HashMap::new();
        for (name, k) in file.kernels {
            let cost = kernel_cost(&src, &name, k)?;
            kernels.insert(name, cost);
        }
        Ok(HardwareModel {
            name: file.name,
            description: file.description,
            sources: file.sources,
            parameters: file.parameters.into_iter().collect(),
            costs,
            devices,
            kernels,
        })
    }

    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name)
    }
}

/// The text of a hardware file, to locate the fields errors are about.
struct Source<'t> {
    path: &'t str,
    text: &'t str,
    /// The same text with positions, parsed only if it parses.
    doc: Option<toml_edit::Document<&'t str>>,
}

impl<'t> Source<'t> {
    fn new(path: &'t str, text: &'t str) -> Self {
        Source {
            path,
            text,
            doc: toml_edit::Document::parse(text).ok(),
        }
    }

    /// An error about `field` (`["devices", "net", "startup_s"]`), at the
    /// field's value when it is written in the file.
    fn error(&self, field: &[&str], message: String) -> HardwareError {
        HardwareError {
            path: self.path.to_string(),
            position: self.position(field),
            message,
        }
    }

    fn position(&self, field: &[&str]) -> Option<(usize, usize)> {
        let (first, rest) = field.split_first()?;
        let mut item = self.doc.as_ref()?.get(first)?;
        for key in rest {
            item = item.get(key)?;
        }
        let offset = item.span()?.start;
        let before = self.text.get(..offset)?;
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        Some((line, column))
    }

    /// `value` must be finite and not negative.
    fn non_negative(&self, field: &[&str], value: f64) -> Result<f64, HardwareError> {
        if value.is_finite() && value >= 0.0 {
            return Ok(value);
        }
        Err(self.error(
            field,
            format!(
                "{} must be a finite, non-negative number, found {value}",
                field.join(".")
            ),
        ))
    }

    /// `value` must be finite and above zero.
    fn positive(&self, field: &[&str], value: f64) -> Result<f64, HardwareError> {
        if value.is_finite() && value > 0.0 {
            return Ok(value);
        }
        Err(self.error(
            field,
            format!(
                "{} must be a finite number > 0, found {value}",
                field.join(".")
            ),
        ))
    }
}

/// `Nproc` (an integer >= 1) and `clock` (Hz, > 0) are required; every
/// parameter is a finite number >= 0.
fn check_parameters(src: &Source, parameters: &BTreeMap<String, f64>) -> Result<(), HardwareError> {
    for required in ["Nproc", "clock"] {
        if !parameters.contains_key(required) {
            return Err(src.error(
                &["parameters"],
                format!("[parameters] must define `{required}`"),
            ));
        }
    }
    src.positive(&["parameters", "clock"], parameters["clock"])?;
    for (name, value) in parameters {
        src.non_negative(&["parameters", name], *value)?;
    }
    let nproc = parameters["Nproc"];
    if nproc < 1.0 || nproc.fract() != 0.0 {
        return Err(src.error(
            &["parameters", "Nproc"],
            format!("parameters.Nproc must be an integer >= 1, found {nproc}"),
        ));
    }
    Ok(())
}

fn cost_table(src: &Source, ty: &str, t: CostTableFile) -> Result<CostTable, HardwareError> {
    let _ = &t.source; // documentation for the file's readers only
    if let Some(scale) = t.scale {
        src.non_negative(&["costs", ty, "scale"], scale)?;
    }
    for (el, v) in &t.elements {
        src.non_negative(&["costs", ty, "elements", el], *v)?;
    }
    Ok(CostTable {
        unit: t.unit,
        scale: t.scale,
        elements: t.elements.into_iter().collect(),
    })
}

fn device(src: &Source, name: String, d: DeviceFile) -> Result<Device, HardwareError> {
    let kind = match d.kind {
        DeviceKindName::Cpu => {
            if let Some(field) = d.network_field() {
                return Err(src.error(
                    &["devices", &name, field],
                    format!("devices.{name}.{field}: only an `inpcom` device has this field"),
                ));
            }
            DeviceKind::Cpu
        }
        DeviceKindName::Inpcom => DeviceKind::Inpcom(network(src, &name, &d)?),
    };
    Ok(Device {
        name,
        kind,
        source: d.source,
    })
}

impl DeviceFile {
    /// The first network field present (a `cpu` has none).
    fn network_field(&self) -> Option<&'static str> {
        [
            ("topology", self.topology.is_some()),
            ("startup_s", self.startup_s.is_some()),
            ("per_hop_s", self.per_hop_s.is_some()),
            (
                "bandwidth_bytes_per_s",
                self.bandwidth_bytes_per_s.is_some(),
            ),
            ("switching", self.switching.is_some()),
            ("mesh_width", self.mesh_width.is_some()),
        ]
        .into_iter()
        .find_map(|(field, present)| present.then_some(field))
    }
}

fn network(src: &Source, name: &str, d: &DeviceFile) -> Result<Network, HardwareError> {
    let missing = |field: &str| {
        src.error(
            &["devices", name],
            format!("devices.{name}: an `inpcom` device needs `{field}`"),
        )
    };
    let figure = |field: &str, value: Option<f64>| -> Result<f64, HardwareError> {
        src.non_negative(
            &["devices", name, field],
            value.ok_or_else(|| missing(field))?,
        )
    };
    let bandwidth = d
        .bandwidth_bytes_per_s
        .ok_or_else(|| missing("bandwidth_bytes_per_s"))?;
    if d.mesh_width == Some(0) {
        return Err(src.error(
            &["devices", name, "mesh_width"],
            format!("devices.{name}.mesh_width must be at least 1"),
        ));
    }
    Ok(Network {
        topology: d.topology.ok_or_else(|| missing("topology"))?,
        startup_s: figure("startup_s", d.startup_s)?,
        per_hop_s: figure("per_hop_s", d.per_hop_s)?,
        bandwidth_bytes_per_s: src
            .positive(&["devices", name, "bandwidth_bytes_per_s"], bandwidth)?,
        switching: d.switching.ok_or_else(|| missing("switching"))?,
        mesh_width: d.mesh_width.map(|w| w as usize),
    })
}

fn kernel_cost(src: &Source, name: &str, k: KernelFile) -> Result<KernelCost, HardwareError> {
    let _ = &k.source;
    match (k.cycles, k.seconds, k.law) {
        (Some(c), None, None) => Ok(KernelCost::Cycles(
            src.non_negative(&["kernels", name, "cycles"], c)?,
        )),
        (None, Some(s), None) => Ok(KernelCost::Seconds(
            src.non_negative(&["kernels", name, "seconds"], s)?,
        )),
        (None, None, Some(l)) => kernel_law(src, name, l),
        _ => Err(src.error(
            &["kernels", name],
            format!("kernels.{name} needs exactly one of `cycles`, `seconds` or `law`"),
        )),
    }
}

fn kernel_law(src: &Source, name: &str, l: LawFile) -> Result<KernelCost, HardwareError> {
    if l.parameter.is_empty() {
        return Err(src.error(
            &["kernels", name, "law", "parameter"],
            format!("kernels.{name}.law.parameter must name a variable"),
        ));
    }
    let finite = l.constant.is_finite()
        && l.terms.iter().all(|t| {
            t.coefficient.is_finite() && t.exponent.is_finite() && t.log_exponent.is_finite()
        });
    if !finite {
        return Err(src.error(
            &["kernels", name, "law"],
            format!("kernels.{name}.law: every number must be finite"),
        ));
    }
    let terms = l
        .terms
        .iter()
        .map(|t| crate::fit::Term {
            coefficient: t.coefficient,
            exponent: t.exponent,
            log_exponent: t.log_exponent,
        })
        .collect();
    Ok(KernelCost::Law {
        unit: l.unit,
        parameter: l.parameter,
        law: crate::fit::Law {
            constant: l.constant,
            terms,
        },
    })
}

/// One inpcom message: `confdev size, source, destination`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Message {
    pub size_bytes: f64,
    pub src: usize,
    pub dst: usize,
}

impl Network {
    fn mesh_dims(&self, nproc: usize) -> usize {
        self.mesh_width.unwrap_or_else(|| {
            let mut w = 1;
            while w * w < nproc {
                w += 1;
            }
            w
        })
    }

    /// The directed links a message crosses, in order.
    /// Ring: the shorter direction, clockwise on a tie. 2-D mesh:
    /// dimension order (X then Y), no wrap-around. Hypercube: e-cube
    /// (lowest differing bit first). Fully connected: one direct link.
    pub fn route(
        &self,
        nproc: usize,
        src: usize,
        dst: usize,
    ) -> Result<Vec<(usize, usize)>, String> {
        for (what, n) in [("source", src), ("destination", dst)] {
            if n >= nproc {
                return Err(format!(
                    "inpcom {what} processor {n} is outside 0..{} (Nproc = {nproc})",
                    nproc - 1
                ));
            }
        }
        let mut path = Vec::new();
        if src == dst {
            return Ok(path);
        }
        match self.topology {
            Topology::FullyConnected => path.push((src, dst)),
            Topology::Ring => {
                let cw = (dst + nproc - src) % nproc;
                let ccw = nproc - cw;
                let mut at = src;
                if cw <= ccw {
                    for _ in 0..cw {
                        let next = (at + 1) % nproc;
                        path.push((at, next));
                        at = next;
                    }
                } else {
                    for _ in 0..ccw {
                        let next = (at + nproc - 1) % nproc;
                        path.push((at, next));
                        at = next;
                    }
                }
            }
            Topology::Mesh2d => {
                let w = self.mesh_dims(nproc);
                let (mut x, mut y) = (src % w, src / w);
                let (tx, ty) = (dst % w, dst / w);
                while x != tx {
                    let nx = if tx > x { x + 1 } else { x - 1 };
                    path.push((y * w + x, y * w + nx));
                    x = nx;
                }
                while y != ty {
                    let ny = if ty > y { y + 1 } else { y - 1 };
                    path.push((y * w + x, ny * w + x));
                    y = ny;
                }
            }
            Topology::Hypercube => {
                if !nproc.is_power_of_two() {
                    return Err(format!(
                        "a hypercube needs a power-of-two Nproc, found {nproc}"
                    ));
                }
                let mut at = src;
                let mut diff = src ^ dst;
                while diff != 0 {
                    let bit = diff & diff.wrapping_neg();
                    let next = at ^ bit;
                    path.push((at, next));
                    at = next;
                    diff &= !bit;
                }
            }
        }
        Ok(path)
    }

    /// Time of one step: every message of the step starts together; a
    /// message's bandwidth is divided by the largest number of the step's
    /// messages sharing one of its links; the step lasts as long as its
    /// slowest message.
    pub fn step_time(&self, nproc: usize, messages: &[Message]) -> Result<f64, String> {
        let mut routes = Vec::with_capacity(messages.len());
        let mut load: HashMap<(usize, usize), usize> = HashMap::new();
        for m in messages {
            if !(m.size_bytes.is_finite() && m.size_bytes >= 0.0) {
                return Err(format!(
                    "inpcom message size must be a non-negative number, found {}",
                    m.size_bytes
                ));
            }
            let r = self.route(nproc, m.src, m.dst)?;
            for l in &r {
                *load.entry(*l).or_default() += 1;
            }
            routes.push(r);
        }
        let mut worst = 0.0f64;
        for (m, r) in messages.iter().zip(&routes) {
            if r.is_empty() {
                continue;
            }
            let share = r.iter().map(|l| load[l]).max().unwrap_or(1) as f64;
            let hops = r.len() as f64;
            let transfer = m.size_bytes * share / self.bandwidth_bytes_per_s;
            let t = match self.switching {
                Switching::CutThrough => self.startup_s + hops * self.per_hop_s + transfer,
                Switching::StoreAndForward => self.startup_s + hops * (self.per_hop_s + transfer),
            };
            worst = worst.max(t);
        }
        Ok(worst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(topology: Topology) -> Network {
        Network {
            topology,
            startup_s: 1.0,
            per_hop_s: 0.5,
            bandwidth_bytes_per_s: 100.0,
            switching: Switching::CutThrough,
            mesh_width: None,
        }
    }

    #[test]
    fn hop_counts_per_topology() {
        // 8 processors, 0 -> 5.
        // fully connected: 1 hop; ring: cw 5, ccw 3 -> 3 hops;
        // mesh 3 wide: 0=(0,0), 5=(2,1) -> 2 + 1 = 3 hops;
        // hypercube: 0b000 ^ 0b101 -> 2 hops.
        let hops = |t| net(t).route(8, 0, 5).unwrap().len();
        assert_eq!(hops(Topology::FullyConnected), 1);
        assert_eq!(hops(Topology::Ring), 3);
        assert_eq!(hops(Topology::Mesh2d), 3);
        assert_eq!(hops(Topology::Hypercube), 2);
    }

    #[test]
    fn shared_link_halves_bandwidth() {
        // Ring of 4: 0->2 goes 0->1->2 (tie, clockwise); 1->2 uses 1->2 too.
        // Link (1,2) carries 2 messages: share 2.
        // 0->2: 1 + 2*0.5 + 100*2/100 = 4; 1->2: 1 + 0.5 + 2 = 3.5. Step = 4.
        let n = net(Topology::Ring);
        let msgs = [
            Message {
                size_bytes: 100.0,
                src: 0,
                dst: 2,
            },
            Message {
                size_bytes: 100.0,
                src: 1,
                dst: 2,
            },
        ];
        assert_eq!(n.step_time(4, &msgs).unwrap(), 4.0);
    }

    #[test]
    fn out_of_range_processor_is_an_error() {
        assert!(net(Topology::Ring)
            .route(4, 0, 4)
            .unwrap_err()
            .contains("outside 0..3"));
        assert!(net(Topology::Hypercube).route(6, 0, 1).is_err());
    }

    #[test]
    fn kernel_laws_and_provenance_load() {
        let hw = HardwareModel::from_toml(
            "h.toml",
            r#"name='x'
[parameters]
Nproc=1
clock=1
[kernels]
old = { cycles = 10 }
sort = { law = { unit = "cycles", parameter = "n", constant = 2, terms = [{ coefficient = 3, exponent = 1, log_exponent = 1 }] } }
[provenance]
"kernels.old" = { file = "a.arp" }
"#,
        )
        .unwrap();
        assert_eq!(hw.kernels["old"], KernelCost::Cycles(10.0));
        let KernelCost::Law { parameter, law, .. } = &hw.kernels["sort"] else {
            panic!("{:?}", hw.kernels["sort"])
        };
        assert_eq!(parameter, "n");
        assert_eq!(law.eval(4.0), 2.0 + 3.0 * 4.0 * 2.0);
        let e = HardwareModel::from_toml(
            "h.toml",
            "name='x'\n[parameters]\nNproc=1\nclock=1\n[kernels]\nk = { cycles = 1, law = { unit = 'cycles', parameter = 'n' } }\n",
        )
        .unwrap_err();
        assert!(e.message.contains("exactly one"), "{e}");
        let e = HardwareModel::from_toml(
            "h.toml",
            "name='x'\n[parameters]\nNproc=1\nclock=1\n[kernels]\nk = { cycles = -1 }\n",
        )
        .unwrap_err();
        assert!(e.message.contains("non-negative"), "{e}");
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let e = HardwareModel::from_toml(
            "h.toml",
            "name='x'\nbogus=1\n[parameters]\nNproc=1\nclock=1\n",
        )
        .unwrap_err();
        assert!(e.message.contains("bogus"), "{e}");
    }
}
