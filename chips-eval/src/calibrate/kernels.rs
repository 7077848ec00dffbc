//! Steps 1 and 2: a kernel bound to its measured mean, and a kernel's cost
//! law fitted against a run parameter.

use super::*;

impl Calibrator<'_, '_> {
    pub(super) fn bind_kernel(&mut self, name: &str) {
        let krs = self.kernel_runs(name);
        if krs.is_empty() {
            let kept = if self.input.base.kernels.contains_key(name) {
                "its base value is kept"
            } else {
                "the model cannot be evaluated against this file until it is"
            };
            let w = format!("the model names kernel `{name}` but no run measured it; {kept}");
            self.warn(w);
            return;
        }
        // summed wide: a record's count may be any u64 (issue 30, N25)
        let count: u128 = krs.iter().map(|k| u128::from(k.count)).sum();
        let total: f64 = krs.iter().map(|k| k.mean * k.count as f64).sum();
        let mean = total / count as f64;
        if mean == 0.0 {
            let w = format!("kernel `{name}` measured 0 cycles in every execution: is callback set {} the cycle counter?", self.options.value_set);
            self.warn(w);
        }
        // Runs that disagree suggest a law.
        let lo = krs.iter().map(|k| k.mean).fold(f64::INFINITY, f64::min);
        let hi = krs.iter().map(|k| k.mean).fold(0.0, f64::max);
        if krs.len() > 1 && hi > lo * 1.05 {
            let params: BTreeSet<&String> = krs
                .iter()
                .flat_map(|k| self.runs[k.run].spec.params.keys())
                .collect();
            let hint = params
                .iter()
                .next()
                .map(|p| format!("; if it depends on `{p}`, fit a law with --law {name}={p}"))
                .unwrap_or_default();
            let w = format!(
                "kernel `{name}`: the mean per run ranges from {lo:.1} to {hi:.1} cycles; bound to the overall mean {mean:.1}{hint}"
            );
            self.warn(w);
        }
        let sids: BTreeSet<arpsim::Sid> = krs.iter().map(|k| k.sid).collect();
        let sections = sids
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let files = self.files_of(&krs);
        let source =
            format!("calibrated: mean of {count} execution(s) of section {sections} in {files}");
        let mut t = toml_edit::InlineTable::new();
        t.insert("cycles", round_sig(mean).into());
        t.insert("source", source.as_str().into());
        self.kernels_table().insert(name, toml_edit::value(t));
        let _ = writeln!(
            self.report,
            "kernel {name}: {:.3} cycles per execution ({count} executions, section {sections}, {files})",
            mean
        );
        let mut prov: Vec<(String, toml_edit::Value)> = vec![
            ("files".into(), files.as_str().into()),
            ("sections".into(), sections.as_str().into()),
            ("executions".into(), toml_count(count)),
            ("fit".into(), "mean per execution".into()),
        ];
        let sample_min = krs.iter().map(|k| k.min).collect::<Option<Vec<f64>>>();
        let sample_max = krs.iter().map(|k| k.max).collect::<Option<Vec<f64>>>();
        if let (Some(lo), Some(hi)) = (sample_min, sample_max) {
            prov.push((
                "min_cycles".into(),
                round_sig(lo.iter().copied().fold(f64::INFINITY, f64::min)).into(),
            ));
            prov.push((
                "max_cycles".into(),
                round_sig(hi.iter().copied().fold(0.0, f64::max)).into(),
            ));
        }
        if krs.len() > 1 {
            prov.push((
                "run_means".into(),
                format!("{:.6} .. {:.6}", lo, hi).as_str().into(),
            ));
        }
        self.provenance.push((format!("kernels.{name}"), prov));
    }

    pub(super) fn fit_kernel_law(&mut self, name: &str, param: &str) -> Result<(), CalibError> {
        let krs = self.kernel_runs(name);
        let fit_err = |message: String| CalibError::Fit {
            what: format!("law of kernel `{name}` in `{param}`"),
            message,
        };
        if krs.is_empty() {
            return Err(fit_err("no run measured it".into()));
        }
        // One point per run: (parameter value, mean).
        let mut points = Vec::new();
        let mut without = Vec::new();
        for k in &krs {
            match self.runs[k.run].spec.params.get(param) {
                Some(v) => points.push((*v, k.mean)),
                None => without.push(self.runs[k.run].spec.path.display().to_string()),
            }
        }
        if !without.is_empty() {
            return Err(fit_err(format!(
                "run(s) {} give no value of `{param}` (write --arp {param}=VALUE:FILE)",
                without.join(", ")
            )));
        }
        let lf: LawFit = fit::fit_law(&points).map_err(|e| fit_err(e.to_string()))?;
        for w in &lf.warnings {
            self.warnings.push(format!("law of kernel `{name}`: {w}"));
        }
        let best = lf.best().clone();
        let mut law = toml_edit::InlineTable::new();
        law.insert("unit", "cycles".into());
        law.insert("parameter", param.into());
        law.insert("constant", round_sig(best.law.constant).into());
        let mut terms = toml_edit::Array::new();
        for t in &best.law.terms {
            let mut it = toml_edit::InlineTable::new();
            it.insert("coefficient", round_sig(t.coefficient).into());
            it.insert("exponent", t.exponent.into());
            it.insert("log_exponent", t.log_exponent.into());
            terms.push(it);
        }
        law.insert("terms", toml_edit::Value::Array(terms));
        let formula = best.law.formula(param);
        let loo = best.fit.loo.as_ref().map(|l| l.smape_percent);
        let files = self.files_of(&krs);
        let mut t = toml_edit::InlineTable::new();
        t.insert("law", toml_edit::Value::InlineTable(law));
        t.insert(
            "source",
            format!(
                "calibrated: law `{}` fitted to {} run(s) ({files}), LOO SMAPE {}",
                best.name,
                points.len(),
                loo.map_or("n/a".into(), |v| format!("{v:.2}%"))
            )
            .as_str()
            .into(),
        );
        self.kernels_table().insert(name, toml_edit::value(t));
        let _ = writeln!(
            self.report,
            "kernel {name}: law {formula} cycles (hypothesis `{}`)",
            best.name
        );
        let _ = writeln!(
            self.report,
            "  hypotheses (leave-one-out SMAPE, lower is better):"
        );
        for (i, c) in lf.candidates.iter().enumerate() {
            let _ = writeln!(
                self.report,
                "    {}{:<10} {:<40} LOO SMAPE {:>8}  R² {}",
                if i == lf.chosen { "* " } else { "  " },
                c.name,
                c.law.formula(param),
                c.fit
                    .loo
                    .as_ref()
                    .map_or("n/a".into(), |l| format!("{:.3}%", l.smape_percent)),
                c.fit.r_squared.map_or("n/a".into(), |r| format!("{r:.6}"))
            );
        }
        self.report_points(
            &points
                .iter()
                .map(|p| format!("{param}={}", p.0))
                .collect::<Vec<_>>(),
            &best.fit,
        );
        let mut prov = vec![
            ("files".into(), files.as_str().into()),
            ("parameter".into(), param.into()),
            (
                "fit".into(),
                format!("law {}: {formula}", best.name).as_str().into(),
            ),
            ("points".into(), (points.len() as i64).into()),
        ];
        if let Some(r2) = best.fit.r_squared {
            prov.push(("r_squared".into(), stat(r2).into()));
        }
        if let Some(l) = &best.fit.loo {
            prov.push(("loo_smape_percent".into(), stat(l.smape_percent).into()));
        }
        self.provenance.push((format!("kernels.{name}"), prov));
        Ok(())
    }
}
