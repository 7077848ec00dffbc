//! Expressions: values, operators, built-in functions, object members.

use super::*;

impl Evaluator<'_> {
    pub(super) fn eval_rvalue(&mut self, obj: ObjId, v: &RValue, frame: &mut Frame) -> R<Value> {
        self.eval_rvalue_in(obj, v, frame)
    }

    pub(super) fn eval_rvalue_in(&mut self, obj: ObjId, v: &RValue, frame: &mut Frame) -> R<Value> {
        match v {
            RValue::Expr(e) => self.eval(obj, e, frame),
            RValue::Vector(vc) => Ok(Value::Vector(self.build_vector(obj, vc, frame)?)),
        }
    }

    pub(super) fn num(&mut self, obj: ObjId, e: &Expr, frame: &mut Frame) -> R<f64> {
        match self.eval(obj, e, frame)? {
            Value::Num(n) => Ok(n),
            other => Err(self
                .error(
                    obj,
                    e.span(),
                    format!("expected a number, found {}", other.type_name()),
                )
                .into()),
        }
    }

    pub(super) fn truth(&mut self, obj: ObjId, e: &Expr, frame: &mut Frame) -> R<bool> {
        Ok(self.num(obj, e, frame)? != 0.0)
    }

    pub(super) fn eval(&mut self, obj: ObjId, e: &Expr, frame: &mut Frame) -> R<Value> {
        guarded(|| self.eval_unguarded(obj, e, frame))
    }

    fn eval_unguarded(&mut self, obj: ObjId, e: &Expr, frame: &mut Frame) -> R<Value> {
        let prog = self.prog;
        match e {
            Expr::Number(n, _) => Ok(Value::Num(*n)),
            Expr::Str(s, _) => Ok(Value::Str(s.clone())),
            Expr::Name(id) => {
                if let Some(v) = self.lookup(obj, &id.name, frame) {
                    if v == Value::Unset {
                        return Err(self
                            .error(
                                obj,
                                id.span,
                                format!("`{}` is used before it has a value", id.name),
                            )
                            .into());
                    }
                    return Ok(v);
                }
                let o = &prog.objects[obj];
                if o.procs.contains_key(&id.name) {
                    return match self.call_proc(obj, &id.name, vec![], id.span)? {
                        Some(v) => Ok(v),
                        None => Err(self
                            .error(
                                obj,
                                id.span,
                                format!(
                                    "procedure `{}` returned no value but is used in an expression",
                                    id.name
                                ),
                            )
                            .into()),
                    };
                }
                if let Some(&t) = o.includes.get(&id.name) {
                    return Ok(Value::Num(self.eval_object(obj, t, id.span)?));
                }
                Err(self
                    .error(obj, id.span, format!("undefined name `{}`", id.name))
                    .into())
            }
            Expr::Index(id, i) => {
                let i = self.num(obj, i, frame)?;
                let slot = self.index_slot(obj, id, i, frame)?;
                Ok(Value::Num(*slot))
            }
            Expr::Member(o, m) => self.member(obj, o, m),
            Expr::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(obj, a, frame)?);
                }
                if prog.objects[obj].procs.contains_key(&f.name) {
                    return match self.call_proc(obj, &f.name, vals, f.span)? {
                        Some(v) => Ok(v),
                        None => Err(self
                            .error(
                                obj,
                                f.span,
                                format!(
                                    "procedure `{}` returned no value but is used in an expression",
                                    f.name
                                ),
                            )
                            .into()),
                    };
                }
                self.builtin(obj, f, &vals)
            }
            Expr::Neg(x, span) => match self.eval(obj, x, frame)? {
                Value::Num(n) => Ok(Value::Num(-n)),
                other => Err(self
                    .error(obj, *span, format!("cannot negate {}", other.type_name()))
                    .into()),
            },
            Expr::Chain(first, links) => {
                let mut acc = self.eval(obj, first, frame)?;
                for link in links {
                    let rhs = self.eval(obj, &link.rhs, frame)?;
                    acc = self.binary(obj, link.op, acc, rhs, link.span)?;
                }
                Ok(acc)
            }
        }
    }

    fn binary(&self, obj: ObjId, op: BinOp, a: Value, b: Value, span: Span) -> R<Value> {
        let (x, y) = match (&a, &b) {
            (Value::Num(x), Value::Num(y)) => (*x, *y),
            (Value::Str(x), Value::Str(y)) if matches!(op, BinOp::Eq | BinOp::Ne) => {
                return Ok(Value::Num(f64::from(u8::from(
                    (x == y) == (op == BinOp::Eq),
                ))));
            }
            _ => {
                return Err(self
                    .error(
                        obj,
                        span,
                        format!(
                            "operator `{}` needs numbers, found {} and {}",
                            op.text(),
                            a.type_name(),
                            b.type_name()
                        ),
                    )
                    .into());
            }
        };
        let bool_num = |c: bool| f64::from(u8::from(c));
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => {
                if y == 0.0 {
                    return Err(self.error(obj, span, "division by zero".into()).into());
                }
                x / y
            }
            BinOp::Lt => bool_num(x < y),
            BinOp::Gt => bool_num(x > y),
            BinOp::Le => bool_num(x <= y),
            BinOp::Ge => bool_num(x >= y),
            BinOp::Eq => bool_num(x == y),
            BinOp::Ne => bool_num(x != y),
        };
        if !r.is_finite() {
            return Err(self
                .error(obj, span, format!("`{}` overflows", op.text()))
                .into());
        }
        Ok(Value::Num(r))
    }

    fn builtin(&self, obj: ObjId, f: &Ident, vals: &[Value]) -> R<Value> {
        let Some(arity) = function_arity(&f.name) else {
            return Err(self
                .error(
                    obj,
                    f.span,
                    format!("undefined procedure or function `{}`", f.name),
                )
                .into());
        };
        if vals.len() != arity {
            return Err(self
                .error(
                    obj,
                    f.span,
                    format!(
                        "`{}` takes {arity} argument(s), {} given",
                        f.name,
                        vals.len()
                    ),
                )
                .into());
        }
        let mut xs = Vec::with_capacity(arity);
        for v in vals {
            match v {
                Value::Num(n) => xs.push(*n),
                other => {
                    return Err(self
                        .error(
                            obj,
                            f.span,
                            format!("`{}` takes numbers, found {}", f.name, other.type_name()),
                        )
                        .into())
                }
            }
        }
        let domain = |ok: bool, what: &str| -> R<()> {
            if ok {
                Ok(())
            } else {
                Err(self
                    .error(obj, f.span, format!("`{}`: {what}", f.name))
                    .into())
            }
        };
        let r = match f.name.to_ascii_lowercase().as_str() {
            "log2" => {
                domain(xs[0] > 0.0, "argument must be positive")?;
                xs[0].log2()
            }
            "log10" => {
                domain(xs[0] > 0.0, "argument must be positive")?;
                xs[0].log10()
            }
            "log" => {
                domain(xs[0] > 0.0, "argument must be positive")?;
                xs[0].ln()
            }
            "exp" => xs[0].exp(),
            "sqrt" => {
                domain(xs[0] >= 0.0, "argument must not be negative")?;
                xs[0].sqrt()
            }
            "power" => xs[0].powf(xs[1]),
            "floor" => xs[0].floor(),
            "ceiling" => xs[0].ceil(),
            "round" => xs[0].round(),
            "abs" => xs[0].abs(),
            "min" => xs[0].min(xs[1]),
            "max" => xs[0].max(xs[1]),
            "mod" => {
                domain(xs[1] != 0.0, "division by zero")?;
                xs[0].rem_euclid(xs[1])
            }
            _ => unreachable!("function table and implementation agree"),
        };
        domain(r.is_finite(), "result is not a finite number")?;
        Ok(Value::Num(r))
    }

    fn member(&mut self, obj: ObjId, o: &Ident, m: &Ident) -> R<Value> {
        let prog = self.prog;
        let Some(&t) = prog.objects[obj].includes.get(&o.name) else {
            return Err(self
                .error(obj, o.span, format!("`{}` is not included", o.name))
                .into());
        };
        match prog.objects[t].kind {
            ObjKind::Hardware => match self.hw_params.get(&m.name) {
                Some(v) => Ok(Value::Num(*v)),
                None => Err(self
                    .error(
                        obj,
                        m.span,
                        format!(
                            "hardware model `{}` has no parameter `{}`",
                            self.hw.name, m.name
                        ),
                    )
                    .into()),
            },
            ObjKind::La => match m.name.as_str() {
                "stage" => Ok(Value::Num(self.la_stage)),
                "nstage" => Ok(Value::Num(self.la_nstage)),
                _ => Err(self
                    .error(obj, m.span, format!("`la` has no member `{}`", m.name))
                    .into()),
            },
            _ => {
                let target = &prog.objects[t];
                match target.var_index.get(&m.name) {
                    Some(&vi) if target.vars[vi].is_interface() => match &self.state[t].vars[vi] {
                        Value::Unset => Err(self
                            .error(obj, m.span, format!("`{}.{}` has no value", o.name, m.name))
                            .into()),
                        v => Ok(v.clone()),
                    },
                    _ => Err(self
                        .error(
                            obj,
                            m.span,
                            format!("`{}` has no interface variable `{}`", o.name, m.name),
                        )
                        .into()),
                }
            }
        }
    }
}
