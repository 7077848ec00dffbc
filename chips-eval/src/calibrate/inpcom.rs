//! Step 4: an inpcom device's start-up and bandwidth from a communication
//! kernel measured at several message sizes.

use super::*;

/// An inpcom device's figures, calibrated (step 4).
struct LinkFigures {
    /// Fixed cycles of a message, and cycles per byte.
    intercept: f64,
    slope: f64,
    startup: f64,
    per_hop: f64,
    bandwidth: f64,
}

/// The inpcom device to calibrate: `--inpcom-device`, else the base
/// model's only one.
fn inpcom_device<'m>(
    base: &'m HardwareModel,
    req: &InpcomRequest,
) -> Result<(&'m Device, &'m Network), CalibError> {
    let devices: Vec<&Device> = base
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::Inpcom(_)))
        .filter(|d| req.device.as_ref().is_none_or(|n| &d.name == n))
        .collect();
    let device = match devices.as_slice() {
        [one] => *one,
        [] => {
            return Err(CalibError::Usage(format!(
                "--inpcom: the base model has no inpcom device{}",
                req.device
                    .as_ref()
                    .map(|d| format!(" named `{d}`"))
                    .unwrap_or_default()
            )))
        }
        many => {
            return Err(CalibError::Usage(format!(
                "--inpcom: several inpcom devices ({}); choose one with --inpcom-device",
                many.iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    };
    let DeviceKind::Inpcom(net) = &device.kind else {
        unreachable!("filtered")
    };
    Ok((device, net))
}

impl Calibrator<'_, '_> {
    /// Step 4: the inpcom device's start-up, per-hop time and bandwidth
    /// from a communication kernel measured at several message sizes.
    pub(super) fn fit_inpcom(&mut self, req: &InpcomRequest) -> Result<(), CalibError> {
        let what = format!("inpcom from kernel `{}`", req.kernel);
        let (device, net) = inpcom_device(self.input.base, req)?;
        if !(req.hops >= 1.0 && req.hops.is_finite()) {
            return Err(CalibError::Usage(format!(
                "--inpcom-hops {}: must be at least 1",
                req.hops
            )));
        }
        let krs = self.kernel_runs(&req.kernel);
        if krs.is_empty() {
            return Err(fit_error(&what, "no run measured it".into()));
        }
        let points = self.message_points(req, &krs, &what)?;
        let a: Vec<Vec<f64>> = points.iter().map(|p| vec![1.0, p.0]).collect();
        let b: Vec<f64> = points.iter().map(|p| p.1).collect();
        let fit = fit::fit_nonneg(&a, &b).map_err(|e| fit_error(&what, e.to_string()))?;
        let link = self.link_figures(req, net, &fit, &what)?;
        let files = self.files_of(&krs);
        self.write_inpcom(req, &device.name, &link, &files)?;
        let _ = writeln!(
            self.report,
            "inpcom device {}: cycles = {:.3} + {:.6} * {} -> startup_s {:.4e}, per_hop_s {:.4e}, bandwidth {:.4e} bytes/s ({} hop(s), {:?})",
            device.name, link.intercept, link.slope, req.parameter, link.startup, link.per_hop, link.bandwidth, req.hops, net.switching
        );
        let labels: Vec<String> = points
            .iter()
            .map(|p| format!("{}={}", req.parameter, p.0))
            .collect();
        self.report_points(&labels, &fit);
        self.inpcom_provenance(req, &device.name, &link, &fit, points.len(), &files);
        Ok(())
    }

    /// (message size, mean cycles) of each run of the kernel; the sizes
    /// must be known, non-negative and at least two distinct ones.
    fn message_points(
        &mut self,
        req: &InpcomRequest,
        krs: &[KernelRun],
        what: &str,
    ) -> Result<Vec<(f64, f64)>, CalibError> {
        let mut points = Vec::new();
        for k in krs {
            let spec = &self.runs[k.run].spec;
            let Some(size) = spec.params.get(&req.parameter) else {
                return Err(fit_error(
                    what,
                    format!(
                        "run {} gives no message size `{}` (write --arp {}=BYTES:FILE)",
                        spec.path.display(),
                        req.parameter,
                        req.parameter
                    ),
                ));
            };
            if *size < 0.0 {
                return Err(fit_error(
                    what,
                    format!("run {}: negative message size", spec.path.display()),
                ));
            }
            points.push((*size, k.mean));
        }
        let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        if sizes.len() < 2 {
            return Err(fit_error(what, format!(
                "runs at {} distinct message size(s); latency and bandwidth need at least 2 (3 or more to cross-validate)",
                sizes.len()
            )));
        }
        if sizes.len() < fit::RELIABLE_POINTS {
            let w = format!(
                "{what}: only {} distinct message sizes; a reliable fit needs at least {}",
                sizes.len(),
                fit::RELIABLE_POINTS
            );
            self.warn(w);
        }
        Ok(points)
    }

    /// The device's figures from `cycles = intercept + slope * size`: the
    /// fixed cost is the start-up plus `hops` times the base model's
    /// per-hop time (lowered when the fixed cost is smaller).
    fn link_figures(
        &mut self,
        req: &InpcomRequest,
        net: &Network,
        fit: &LinearFit,
        what: &str,
    ) -> Result<LinkFigures, CalibError> {
        let (intercept, slope) = (fit.coefficients[0], fit.coefficients[1]);
        if slope <= 0.0 {
            return Err(fit_error(
                what,
                "the measured time does not grow with the message size: no bandwidth can be fitted"
                    .into(),
            ));
        }
        let fixed_s = intercept / self.clock;
        let mut per_hop = net.per_hop_s;
        let mut startup = fixed_s - req.hops * per_hop;
        if startup < 0.0 {
            let w = format!(
                "{what}: the fixed cost {fixed_s:.3e} s is below {} hop(s) of the base per_hop_s {per_hop:.3e} s; per_hop_s set to {:.3e} s and startup_s to 0",
                req.hops,
                fixed_s / req.hops
            );
            self.warn(w);
            per_hop = fixed_s / req.hops;
            startup = 0.0;
        }
        let per_byte_s = slope / self.clock;
        let bandwidth = match net.switching {
            Switching::CutThrough => 1.0 / per_byte_s,
            Switching::StoreAndForward => req.hops / per_byte_s,
        };
        Ok(LinkFigures {
            intercept,
            slope,
            startup,
            per_hop,
            bandwidth,
        })
    }

    /// Writes the figures into the device's table of the base file.
    fn write_inpcom(
        &mut self,
        req: &InpcomRequest,
        device: &str,
        link: &LinkFigures,
        files: &str,
    ) -> Result<(), CalibError> {
        let root = self.doc.as_table_mut();
        let dev_item = root
            .get_mut("devices")
            .and_then(|d| d.as_table_like_mut())
            .and_then(|d| d.get_mut(device))
            .and_then(|d| d.as_table_like_mut())
            .ok_or_else(|| {
                CalibError::BaseFile(format!(
                    "devices.{device} not found in the base file's text"
                ))
            })?;
        dev_item.insert("startup_s", toml_edit::value(round_sig(link.startup)));
        dev_item.insert("per_hop_s", toml_edit::value(round_sig(link.per_hop)));
        dev_item.insert(
            "bandwidth_bytes_per_s",
            toml_edit::value(round_sig(link.bandwidth)),
        );
        dev_item.insert(
            "source",
            toml_edit::value(format!(
                "calibrated: cycles = {} + {} * {} fitted to kernel `{}` in {files}; see [provenance]",
                round_sig(link.intercept),
                round_sig(link.slope),
                req.parameter,
                req.kernel
            )),
        );
        Ok(())
    }

    fn inpcom_provenance(
        &mut self,
        req: &InpcomRequest,
        device: &str,
        link: &LinkFigures,
        fit: &LinearFit,
        runs: usize,
        files: &str,
    ) {
        let mut prov: Vec<(String, toml_edit::Value)> = vec![
            ("files".into(), files.into()),
            ("kernel".into(), req.kernel.as_str().into()),
            (
                "fit".into(),
                format!(
                    "NNLS cycles = a + b * {} over {} run(s), {} hop(s)",
                    req.parameter, runs, req.hops
                )
                .as_str()
                .into(),
            ),
            ("intercept_cycles".into(), round_sig(link.intercept).into()),
            ("cycles_per_byte".into(), round_sig(link.slope).into()),
        ];
        if let Some(r2) = fit.r_squared {
            prov.push(("r_squared".into(), stat(r2).into()));
        }
        if let Some(l) = &fit.loo {
            prov.push((
                "loo_mean_abs_error_percent".into(),
                stat(l.mean_abs_percent).into(),
            ));
        }
        self.provenance.push((format!("devices.{device}"), prov));
    }
}
