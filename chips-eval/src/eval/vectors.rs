//! Vectors: constants built, linear forms, and their cost through the
//! hardware model (kernels, cost tables, messages).

use super::*;

impl Evaluator<'_> {
    pub(super) fn vector_of(
        &mut self,
        obj: ObjId,
        v: &VectorRef,
        frame: &mut Frame,
        span: Span,
    ) -> R<VecValue> {
        match v {
            VectorRef::Const(c) => self.build_vector(obj, c, frame),
            VectorRef::Name(n) => match self.lookup(obj, &n.name, frame) {
                Some(Value::Vector(v)) => Ok(v),
                Some(other) => Err(self
                    .error(
                        obj,
                        n.span,
                        format!(
                            "`{}` is {}, a resource usage vector is needed",
                            n.name,
                            other.type_name()
                        ),
                    )
                    .into()),
                None => Err(self
                    .error(obj, span, format!("undefined vector `{}`", n.name))
                    .into()),
            },
        }
    }

    pub(super) fn build_vector(
        &mut self,
        obj: ObjId,
        vc: &VectorConst,
        frame: &mut Frame,
    ) -> R<VecValue> {
        let (ty, elements) = match vc {
            VectorConst::Zero(_) => return Ok(VecValue::Zero),
            VectorConst::Typed { ty, elements } => (ty, elements),
        };
        let prog = self.prog;
        let Some(vt) = prog.vectors.get(&ty.name) else {
            return Err(self
                .error(obj, ty.span, format!("unknown vector type `{}`", ty.name))
                .into());
        };
        if let Some(n) = vt.fixed_len {
            if n != elements.len() {
                return Err(self
                    .error(
                        obj,
                        ty.span,
                        format!(
                            "vector type `{}` has {n} element(s), {} given",
                            ty.name,
                            elements.len()
                        ),
                    )
                    .into());
            }
        }
        match vt.kind {
            ElementKind::Numeric => {
                let mut values = Vec::with_capacity(elements.len());
                for e in elements {
                    values.push(self.num(obj, e, frame)?);
                }
                if vt.is_data() {
                    Ok(VecValue::Data(values))
                } else {
                    Ok(VecValue::Numeric {
                        ty: ty.name.clone(),
                        values,
                    })
                }
            }
            ElementKind::Kernel => {
                let mut names = Vec::new();
                for e in elements {
                    match self.eval(obj, e, frame)? {
                        Value::Str(s) => names.push(s),
                        other => {
                            return Err(self
                                .error(
                                    obj,
                                    e.span(),
                                    format!(
                                        "`{}` vectors list kernel names as strings, found {}",
                                        ty.name,
                                        other.type_name()
                                    ),
                                )
                                .into())
                        }
                    }
                }
                Ok(VecValue::Kernels {
                    ty: ty.name.clone(),
                    names,
                })
            }
            ElementKind::Symbol | ElementKind::Combination => {
                let n = vt.elements.len();
                let mut counts = vec![0.0; n];
                for (pos, e) in elements.iter().enumerate() {
                    let (constant, terms) = self.linear(obj, &ty.name, e, frame)?;
                    if terms.iter().all(|t| *t == 0.0) {
                        // A bare number counts the element at its position.
                        if pos >= n {
                            return Err(self
                                .error(obj, e.span(), format!("entry {} of a `{}` vector is a bare number but the type has only {n} elements", pos + 1, ty.name))
                                .into());
                        }
                        counts[pos] += constant;
                    } else {
                        if constant != 0.0 {
                            return Err(self
                                .error(
                                    obj,
                                    e.span(),
                                    format!(
                                        "entry {} adds a bare number to `{}` elements",
                                        pos + 1,
                                        ty.name
                                    ),
                                )
                                .into());
                        }
                        for (c, t) in counts.iter_mut().zip(&terms) {
                            *c += t;
                        }
                    }
                }
                Ok(VecValue::Counts {
                    ty: ty.name.clone(),
                    counts,
                })
            }
        }
    }

    /// Evaluates a vector entry as `constant + sum(coef_i * element_i)`.
    fn linear(&mut self, obj: ObjId, ty: &str, e: &Expr, frame: &mut Frame) -> R<(f64, Vec<f64>)> {
        let vt = self.prog.vectors.get(ty).expect("type checked by caller");
        let n = vt.elements.len();
        match e {
            Expr::Name(id) if vt.element_index(&id.name).is_some() => {
                let mut terms = vec![0.0; n];
                terms[vt.element_index(&id.name).unwrap_or(0)] = 1.0;
                Ok((0.0, terms))
            }
            Expr::Neg(x, _) => {
                let (c, t) = self.linear(obj, ty, x, frame)?;
                Ok((-c, t.into_iter().map(|v| -v).collect()))
            }
            Expr::Chain(first, links) if links.iter().all(|l| l.op.is_arithmetic()) => {
                let mut acc = self.linear(obj, ty, first, frame)?;
                for link in links {
                    let rhs = self.linear(obj, ty, &link.rhs, frame)?;
                    acc = self.combine_linear(obj, ty, link, acc, rhs)?;
                }
                Ok(acc)
            }
            other => Ok((self.num(obj, other, frame)?, vec![0.0; n])),
        }
    }

    /// `a op b` for two linear forms `constant + sum(coef_i * element_i)`;
    /// a product or quotient must keep the result linear.
    fn combine_linear(
        &self,
        obj: ObjId,
        ty: &str,
        link: &ChainLink,
        (ca, ta): (f64, Vec<f64>),
        (cb, tb): (f64, Vec<f64>),
    ) -> R<(f64, Vec<f64>)> {
        let a_const = ta.iter().all(|v| *v == 0.0);
        let b_const = tb.iter().all(|v| *v == 0.0);
        let sign = if link.op == BinOp::Sub { -1.0 } else { 1.0 };
        match link.op {
            BinOp::Add | BinOp::Sub => {
                let terms = ta.iter().zip(&tb).map(|(x, y)| x + sign * y).collect();
                Ok((ca + sign * cb, terms))
            }
            BinOp::Mul if a_const => Ok((ca * cb, tb.iter().map(|y| ca * y).collect())),
            BinOp::Mul if b_const => Ok((ca * cb, ta.iter().map(|x| x * cb).collect())),
            BinOp::Div if b_const => {
                if cb == 0.0 {
                    return Err(self.error(obj, link.span, "division by zero".into()).into());
                }
                Ok((ca / cb, ta.iter().map(|x| x / cb).collect()))
            }
            _ => {
                let message = format!(
                    "`{ty}` entries must be linear in the element names (a count times an element)"
                );
                Err(self.error(obj, link.span, message).into())
            }
        }
    }

    /// The time of one execution of a measured kernel: a fixed cost, or
    /// its law evaluated at the parameter's value (a variable visible here,
    /// else a hardware parameter).
    fn kernel_seconds(
        &self,
        obj: ObjId,
        name: &str,
        frame: &Frame,
        span: Span,
        clock: f64,
    ) -> R<f64> {
        let hw = self.hw;
        let to_seconds = |unit: CostUnit, x: f64| match unit {
            CostUnit::Seconds => x,
            CostUnit::Cycles => x / clock,
        };
        match hw.kernels.get(name) {
            Some(KernelCost::Cycles(c)) => Ok(c / clock),
            Some(KernelCost::Seconds(s)) => Ok(*s),
            Some(KernelCost::Law {
                unit,
                parameter,
                law,
            }) => {
                let n = match self.lookup(obj, parameter, frame) {
                    Some(Value::Num(n)) => n,
                    Some(other) => {
                        return Err(self.error(obj, span, format!("kernel `{name}` is a law of `{parameter}`, which holds {} here, not a number", other.type_name())).into())
                    }
                    None => match self.hw_params.get(parameter) {
                        Some(n) => *n,
                        None => {
                            return Err(self.error(obj, span, format!("kernel `{name}` is a law of `{parameter}` (hardware model `{}`), but `{parameter}` is neither a variable of `{}` nor a hardware parameter", hw.name, self.prog.objects[obj].name)).into())
                        }
                    },
                };
                if !law.defined_at(n) {
                    return Err(self
                        .error(
                            obj,
                            span,
                            format!(
                                "kernel `{name}`: its law {} is not defined at {parameter} = {}",
                                law.formula(parameter),
                                format_number(n)
                            ),
                        )
                        .into());
                }
                let v = law.eval(n);
                if !(v.is_finite() && v >= 0.0) {
                    return Err(self.error(obj, span, format!("kernel `{name}`: its law {} gives {} at {parameter} = {} (a cost must be a non-negative number)", law.formula(parameter), format_number(v), format_number(n))).into());
                }
                Ok(to_seconds(*unit, v))
            }
            None => Err(self
                .error(
                    obj,
                    span,
                    format!(
                        "hardware model `{}` has no measured kernel `{name}` in [kernels]",
                        hw.name
                    ),
                )
                .into()),
        }
    }

    /// Prices a resource usage vector through the hardware model.
    pub(super) fn cost(&mut self, obj: ObjId, v: &VecValue, span: Span, frame: &Frame) -> R<f64> {
        let clock = self.hw_params.get("clock").copied().unwrap_or(0.0);
        let to_seconds = |unit: CostUnit, x: f64| match unit {
            CostUnit::Seconds => x,
            CostUnit::Cycles => x / clock,
        };
        let hw = self.hw;
        let weight = self.weight;
        let bd = &mut self.out.breakdown.by_resource;
        let table_err = |s: &Self, ty: &str| {
            s.error(
                obj,
                span,
                format!(
                    "hardware model `{}` has no cost table for vector type `{ty}`",
                    hw.name
                ),
            )
        };
        let total = match v {
            VecValue::Zero => 0.0,
            VecValue::Data(_) => return Err(self.error(obj, span, "a data vector has no cost; compute needs a resource usage vector (section 4.5)".into()).into()),
            VecValue::Numeric { ty, values } => {
                let Some(t) = hw.costs.get(ty) else { return Err(table_err(self, ty).into()) };
                let Some(scale) = t.scale else {
                    return Err(self.error(obj, span, format!("hardware model `{}`: costs.{ty} needs `scale` (price of one unit)", hw.name)).into());
                };
                if let Some(v) = values.iter().find(|v| **v < 0.0) {
                    return Err(self.negative_usage(obj, span, ty, *v).into());
                }
                let t = to_seconds(t.unit, values.iter().sum::<f64>() * scale);
                Breakdown::add(bd, ty, t * weight);
                t
            }
            VecValue::Counts { ty, counts } => {
                let Some(table) = hw.costs.get(ty) else { return Err(table_err(self, ty).into()) };
                let vt = self.prog.vectors.get(ty).expect("vector type exists");
                let mut sum = 0.0;
                for (i, c) in counts.iter().enumerate() {
                    if *c == 0.0 {
                        continue;
                    }
                    let el = &vt.elements[i];
                    if *c < 0.0 {
                        return Err(self.negative_usage(obj, span, &format!("{ty}.{el}"), *c).into());
                    }
                    let Some(price) = table.elements.get(el) else {
                        return Err(self.error(obj, span, format!("hardware model `{}` has no cost for `{ty}` element `{el}`", hw.name)).into());
                    };
                    let t = to_seconds(table.unit, c * price);
                    Breakdown::add(bd, &format!("{ty}.{el}"), t * weight);
                    sum += t;
                }
                Breakdown::add(bd, ty, sum * weight);
                sum
            }
            VecValue::Kernels { ty, names } => {
                let mut times = Vec::with_capacity(names.len());
                for name in names {
                    times.push(self.kernel_seconds(obj, name, frame, span, clock)?);
                }
                let bd = &mut self.out.breakdown.by_resource;
                let mut sum = 0.0;
                for (name, t) in names.iter().zip(times) {
                    Breakdown::add(bd, &format!("{ty}.{name}"), t * weight);
                    sum += t;
                }
                Breakdown::add(bd, ty, sum * weight);
                sum
            }
        };
        if !total.is_finite() {
            return Err(self
                .error(
                    obj,
                    span,
                    format!("the time of this resource usage is not a finite number ({total})"),
                )
                .into());
        }
        Ok(total)
    }

    /// A resource usage below zero would subtract time (`<is hllc, -5*IASG>`).
    fn negative_usage(&self, obj: ObjId, span: Span, what: &str, value: f64) -> EvalError {
        self.error(
            obj,
            span,
            format!(
                "resource usage `{what}` is {}: a count of resources must not be negative",
                format_number(value)
            ),
        )
    }
}
