//! Step 3: a cost table's prices fitted by non-negative least squares from
//! the kernels' usage and measured cycles, written with its provenance.

use super::*;

/// One equation of a cost-table fit: a kernel at one set of run
/// parameters.
struct TableRow {
    label: String,
    /// Usage of each element of the type.
    usage: Vec<f64>,
    /// Measured cycles less what the procedure's other resources cost.
    measured: f64,
    files: BTreeSet<String>,
    sids: BTreeSet<arpsim::Sid>,
    /// Executions measured.
    count: u64,
}

/// A fitted cost table (step 3).
struct TableFit {
    ty: String,
    /// "cost table of `TY`", for messages.
    what: String,
    /// The type's elements, in declaration order.
    elements: Vec<String>,
    rows: Vec<TableRow>,
    /// The unknowns: indices into `elements` of those some kernel uses.
    used: Vec<usize>,
    fit: LinearFit,
}

impl TableFit {
    /// The fitted elements, in the order of the fit's coefficients.
    fn names(&self) -> Vec<&str> {
        self.used
            .iter()
            .map(|&j| self.elements[j].as_str())
            .collect()
    }

    /// The elements no kernel uses.
    fn unused(&self) -> Vec<&str> {
        (0..self.elements.len())
            .filter(|j| !self.used.contains(j))
            .map(|j| self.elements[j].as_str())
            .collect()
    }

    /// The files the rows were measured in.
    fn files(&self) -> String {
        let files: BTreeSet<String> = self
            .rows
            .iter()
            .flat_map(|r| r.files.iter().cloned())
            .collect();
        files.into_iter().collect::<Vec<_>>().join(", ")
    }
}

/// Fits the prices of the elements some row uses; refuses rows whose
/// other resources cost more than was measured.
fn solve_table(
    ty: &str,
    what: String,
    elements: Vec<String>,
    rows: Vec<TableRow>,
) -> Result<TableFit, CalibError> {
    for r in &rows {
        if r.measured < 0.0 {
            return Err(fit_error(&what, format!(
                "kernel {}: its procedure's other resources (priced by the base model) cost more than the measured time: the model or base prices are wrong",
                r.label
            )));
        }
    }
    let used: Vec<usize> = (0..elements.len())
        .filter(|&j| rows.iter().any(|r| r.usage[j] != 0.0))
        .collect();
    if used.is_empty() {
        return Err(fit_error(
            &what,
            "the kernels' procedures use no element of this type".into(),
        ));
    }
    let a: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| used.iter().map(|&j| r.usage[j]).collect())
        .collect();
    let b: Vec<f64> = rows.iter().map(|r| r.measured).collect();
    let names: Vec<&str> = used.iter().map(|&j| elements[j].as_str()).collect();
    let fit = fit::fit_nonneg(&a, &b).map_err(|e| {
        fit_error(&what, match e {
            NnlsError::UnderDetermined { rows, cols } => format!(
                "{rows} measured kernel(s) for {cols} unknown price(s) ({}): under-determined; measure more kernels or runs",
                names.join(", ")
            ),
            NnlsError::Singular { column } => format!(
                "the price of `{}` cannot be told apart from the others: the kernels use it only in fixed proportion to other elements (singular fit); measure a kernel that uses it differently",
                names[column]
            ),
            other => other.to_string(),
        })
    })?;
    Ok(TableFit {
        ty: ty.to_string(),
        what,
        elements,
        rows,
        used,
        fit,
    })
}

impl Calibrator<'_, '_> {
    /// Kernel → (object, procedure) giving its usage: `--usage`, else a
    /// procedure named like the kernel in exactly one object.
    pub(super) fn usage_procedures(
        &mut self,
    ) -> Result<BTreeMap<String, (String, String)>, CalibError> {
        let prog = self.input.program;
        let mut out = BTreeMap::new();
        let mut measured: BTreeSet<String> = BTreeSet::new();
        for r in &self.runs {
            for s in r.sections.keys() {
                measured.insert(self.input.names.name(*s));
            }
        }
        for (k, (o, p)) in &self.options.usage {
            let Some(&obj) = prog.by_name.get(o) else {
                return Err(CalibError::Usage(format!(
                    "--usage {k}={o}.{p}: the model has no object `{o}`"
                )));
            };
            if prog.objects[obj].proc(p).is_none() {
                return Err(CalibError::Usage(format!(
                    "--usage {k}={o}.{p}: object `{o}` has no procedure `{p}`"
                )));
            }
            if !measured.contains(k) {
                return Err(CalibError::Usage(format!(
                    "--usage {k}={o}.{p}: no run measured a kernel `{k}`"
                )));
            }
            out.insert(k.clone(), (o.clone(), p.clone()));
        }
        for k in &measured {
            if out.contains_key(k) {
                continue;
            }
            let owners: Vec<&str> = prog
                .objects
                .iter()
                .filter(|o| o.proc(k).is_some())
                .map(|o| o.name.as_str())
                .collect();
            match owners.as_slice() {
                [] => {}
                [one] => {
                    out.insert(k.clone(), (one.to_string(), k.clone()));
                }
                many => {
                    return Err(CalibError::Usage(format!(
                        "kernel `{k}`: procedures of that name in {}; choose one with --usage {k}=OBJECT.PROC",
                        many.join(", ")
                    )))
                }
            }
        }
        Ok(out)
    }

    /// Step 3: the prices of the cost table of vector type `ty`, fitted by
    /// non-negative least squares to the kernels whose usage `usage` names.
    pub(super) fn fit_table(
        &mut self,
        ty: &str,
        usage: &BTreeMap<String, (String, String)>,
    ) -> Result<(), CalibError> {
        let elements = self.table_elements(ty)?;
        let what = format!("cost table of `{ty}`");
        if usage.is_empty() {
            return Err(fit_error(&what, "no measured kernel has its usage in the model (a procedure named like the kernel, or --usage KERNEL=OBJECT.PROC)".into()));
        }
        let rows = self.table_rows(ty, &elements, usage)?;
        let table = solve_table(ty, what, elements, rows)?;
        self.warn_table(&table);
        self.write_table(&table)?;
        self.report_table(&table);
        self.table_provenance(&table);
        Ok(())
    }

    /// The elements of `ty`, which must be a symbol or combination type.
    fn table_elements(&self, ty: &str) -> Result<Vec<String>, CalibError> {
        let prog = self.input.program;
        let Some(vt) = prog.vectors.get(ty) else {
            return Err(CalibError::Usage(format!(
                "--fit {ty}: no vector type `{ty}` (known: {})",
                prog.vectors.names().join(", ")
            )));
        };
        if !matches!(vt.kind, ElementKind::Symbol | ElementKind::Combination) {
            return Err(CalibError::Usage(format!(
                "--fit {ty}: only symbol or combination types have a cost table of elements"
            )));
        }
        Ok(vt.elements.clone())
    }

    /// One equation per kernel and distinct run parameters: the usage of
    /// each element by the kernel's procedure (evaluated with unit prices
    /// for `ty`) and the measured cycles less what its other resources cost
    /// (evaluated with zero prices for `ty`), averaged over the runs.
    fn table_rows(
        &self,
        ty: &str,
        elements: &[String],
        usage: &BTreeMap<String, (String, String)>,
    ) -> Result<Vec<TableRow>, CalibError> {
        let prog = self.input.program;
        let base = self.input.base;
        let mut unit_hw = base.clone();
        let mut zero_hw = base.clone();
        let table = |v: f64| CostTable {
            unit: CostUnit::Seconds,
            scale: None,
            elements: elements.iter().map(|e| (e.clone(), v)).collect(),
        };
        unit_hw.costs.insert(ty.to_string(), table(1.0));
        zero_hw.costs.insert(ty.to_string(), table(0.0));
        let mut rows: BTreeMap<(String, String), TableRow> = BTreeMap::new();
        let app = &prog.objects[prog.app];
        for (k, (obj, proc_name)) in usage {
            for kr in self.kernel_runs(k) {
                let spec = &self.runs[kr.run].spec;
                let settings: Vec<(String, Value)> = spec
                    .params
                    .iter()
                    .filter(|(n, _)| app.var(n).is_some_and(|v| v.is_interface()))
                    .map(|(n, v)| (n.clone(), Value::Num(*v)))
                    .collect();
                let key = (k.clone(), format_params(&spec.params));
                let eval = |hw: &HardwareModel| -> Result<crate::eval::Outcome, CalibError> {
                    Evaluator::new(prog, hw, Limits::default(), false)
                        .run_procedure(obj, proc_name, &settings)
                        .map_err(|source| CalibError::Eval {
                            what: format!("the usage of kernel `{k}` ({obj}.{proc_name})"),
                            source,
                        })
                };
                let u = eval(&unit_hw)?;
                let rest = eval(&zero_hw)?;
                let usage_vec: Vec<f64> = elements
                    .iter()
                    .map(|e| {
                        u.breakdown
                            .by_resource
                            .get(&format!("{ty}.{e}"))
                            .copied()
                            .unwrap_or(0.0)
                    })
                    .collect();
                let other_cycles = rest.time.unwrap_or(0.0) * self.clock;
                let r = rows.entry(key.clone()).or_insert_with(|| TableRow {
                    label: if spec.params.is_empty() {
                        k.clone()
                    } else {
                        format!("{k} ({})", key.1)
                    },
                    usage: usage_vec.clone(),
                    measured: 0.0,
                    files: BTreeSet::new(),
                    sids: BTreeSet::new(),
                    count: 0,
                });
                // Weighted mean over runs with the same parameters.
                let c = r.count as f64;
                let n = kr.count as f64;
                r.measured = (r.measured * c + (kr.mean - other_cycles) * n) / (c + n);
                r.count = r.count.saturating_add(kr.count);
                r.files.insert(spec.path.display().to_string());
                r.sids.insert(kr.sid);
            }
        }
        Ok(rows.into_values().collect())
    }

    /// Warnings about a table fit: too few measurements, prices clamped to
    /// 0, elements no kernel uses.
    fn warn_table(&mut self, t: &TableFit) {
        let (what, ty, fit) = (&t.what, &t.ty, &t.fit);
        let names = t.names();
        if t.rows.len() < 2 * t.used.len() {
            let w = format!(
                "{what}: {} measurement(s) for {} unknown(s); a reliable fit needs at least {} (twice the unknowns){}",
                t.rows.len(),
                t.used.len(),
                2 * t.used.len(),
                if fit.loo.is_none() { "; no cross-validation possible" } else { "" }
            );
            self.warn(w);
        }
        for (j, x) in fit.coefficients.iter().enumerate() {
            if *x == 0.0 {
                let w = format!(
                    "{what}: the price of `{}` was clamped to 0 (least squares wanted it negative)",
                    names[j]
                );
                self.warn(w);
            }
        }
        let base = self.input.base;
        let in_base = |e: &str| {
            base.costs
                .get(ty)
                .is_some_and(|t| t.elements.contains_key(e))
        };
        let unused = t.unused();
        let kept: Vec<&str> = unused.iter().copied().filter(|e| in_base(e)).collect();
        let absent: Vec<&str> = unused.iter().copied().filter(|e| !in_base(e)).collect();
        if !kept.is_empty() {
            let w = format!(
                "{what}: no measured kernel uses {}; their prices are kept from the base model (converted to cycles)",
                kept.join(", ")
            );
            self.warn(w);
        }
        if !absent.is_empty() {
            let w = format!(
                "{what}: no measured kernel uses {} and the base model has no price for them: a model using them cannot be evaluated",
                absent.join(", ")
            );
            self.warn(w);
        }
    }

    /// Writes the table in cycles: the fitted prices, and the base
    /// model's for the elements no kernel uses.
    fn write_table(&mut self, t: &TableFit) -> Result<(), CalibError> {
        let ty = t.ty.as_str();
        let mut elems = toml_edit::InlineTable::new();
        let base_table = self.input.base.costs.get(ty);
        for (j, e) in t.elements.iter().enumerate() {
            if let Some(k) = t.used.iter().position(|&u| u == j) {
                elems.insert(e, round_sig(t.fit.coefficients[k]).into());
            } else if let Some(v) = base_table.and_then(|t| t.elements.get(e).map(|v| (t.unit, *v)))
            {
                let cycles = match v.0 {
                    CostUnit::Cycles => v.1,
                    CostUnit::Seconds => v.1 * self.clock,
                };
                elems.insert(e, round_sig(cycles).into());
            }
        }
        let root = self.doc.as_table_mut();
        if !root.contains_key("costs") {
            root.insert("costs", toml_edit::Item::Table(toml_edit::Table::new()));
        }
        let costs = root["costs"]
            .as_table_mut()
            .ok_or_else(|| CalibError::BaseFile("`costs` is not a table".into()))?;
        costs.set_implicit(true);
        let mut table = toml_edit::Table::new();
        table.insert("unit", toml_edit::value("cycles"));
        table.insert(
            "source",
            toml_edit::value(format!(
                "calibrated: non-negative least squares over {} kernel measurement(s) from {}; see [provenance]",
                t.rows.len(),
                t.files()
            )),
        );
        table.insert("elements", toml_edit::value(elems));
        if let Some(scale) = base_table.and_then(|t| t.scale) {
            table.insert("scale", toml_edit::value(scale));
        }
        costs.insert(ty, toml_edit::Item::Table(table));
        Ok(())
    }

    fn report_table(&mut self, t: &TableFit) {
        let _ = writeln!(
            self.report,
            "cost table {} (cycles per element), non-negative least squares:",
            t.ty
        );
        for (k, n) in t.names().iter().enumerate() {
            let _ = writeln!(self.report, "  {n:<10} {:>14.4}", t.fit.coefficients[k]);
        }
        let labels: Vec<String> = t.rows.iter().map(|r| r.label.clone()).collect();
        self.report_points(&labels, &t.fit);
    }

    /// `[provenance]` of the table (files, kernels, fit statistics) and of
    /// each price (fitted, or kept from the base model).
    fn table_provenance(&mut self, t: &TableFit) {
        let (ty, fit, rows) = (&t.ty, &t.fit, &t.rows);
        let names = t.names();
        let files = t.files();
        let kernels = rows
            .iter()
            .map(|r| {
                format!(
                    "{} [section {}]",
                    r.label,
                    r.sids
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let mut prov: Vec<(String, toml_edit::Value)> = vec![
            ("files".into(), files.as_str().into()),
            ("kernels".into(), kernels.as_str().into()),
            (
                "fit".into(),
                format!(
                    "non-negative least squares over {} equation(s), {} unknown(s): {}",
                    rows.len(),
                    names.len(),
                    names.join(", ")
                )
                .as_str()
                .into(),
            ),
            ("rss".into(), stat(fit.rss).into()),
        ];
        if let Some(r2) = fit.r_squared {
            prov.push(("r_squared".into(), stat(r2).into()));
        }
        match &fit.loo {
            Some(l) => {
                prov.push(("loo_rmse_cycles".into(), stat(l.rmse).into()));
                prov.push((
                    "loo_mean_abs_error_percent".into(),
                    stat(l.mean_abs_percent).into(),
                ));
            }
            None => prov.push((
                "loo".into(),
                "not possible: no more measurements than unknowns".into(),
            )),
        }
        let mut per_kernel = toml_edit::InlineTable::new();
        for (r, e) in rows.iter().zip(&fit.error_percent) {
            if let Some(e) = e {
                per_kernel.insert(&r.label, stat(*e).into());
            }
        }
        prov.push((
            "kernel_error_percent".into(),
            toml_edit::Value::InlineTable(per_kernel),
        ));
        self.provenance.push((format!("costs.{ty}"), prov));
        for n in &names {
            self.provenance.push((
                format!("costs.{ty}.elements.{n}"),
                vec![(
                    "fit".into(),
                    format!("fitted: see costs.{ty}").as_str().into(),
                )],
            ));
        }
        let base_table = self.input.base.costs.get(ty.as_str());
        for n in t.unused() {
            if base_table.is_some_and(|t| t.elements.contains_key(n)) {
                self.provenance.push((
                    format!("costs.{ty}.elements.{n}"),
                    vec![(
                        "fit".into(),
                        format!("not measured: kept from {}", self.input.base_path)
                            .as_str()
                            .into(),
                    )],
                ));
            }
        }
    }
}
