//! Objects and links: a link entry applied, an option's value, and the
//! evaluation of a subtask (its `init`, its links) and of a template
//! (Figure 6: stages, steps).

use super::*;

impl Evaluator<'_> {
    pub(super) fn apply_link(&mut self, obj: ObjId, e: &LinkEntry) -> R<()> {
        let prog = self.prog;
        let target = prog.objects[obj].includes[&e.target.name];
        for a in &e.assignments {
            let val = self.eval_rvalue(obj, &a.value, &mut Frame::default())?;
            let tname = &prog.objects[target].name;
            self.trace(format!("link {tname}.{} = {val}", a.target.name));
            let tobj = &prog.objects[target];
            if tobj.kind == ObjKind::Hardware {
                let Value::Num(n) = val else {
                    return Err(self
                        .error(
                            obj,
                            a.target.span,
                            format!("hardware parameter `{}` takes a number", a.target.name),
                        )
                        .into());
                };
                if !self.hw_params.contains_key(&a.target.name) {
                    return Err(self
                        .error(
                            obj,
                            a.target.span,
                            format!(
                                "hardware model `{}` has no parameter `{}`",
                                self.hw.name, a.target.name
                            ),
                        )
                        .into());
                }
                self.hw_params.insert(a.target.name.clone(), n);
            } else if let Some(&vi) = tobj.var_index.get(&a.target.name) {
                self.check_type(obj, a.target.span, &a.target.name, tobj.vars[vi].ty, &val)?;
                self.state[target].vars[vi] = val;
            } else {
                self.state[target]
                    .option_overrides
                    .insert(a.target.name.clone(), val);
            }
        }
        Ok(())
    }

    /// The value of option `name` of `obj`: set by a linking object, or
    /// the object's own `option` block (evaluated now, in its scope).
    fn option_value(&mut self, obj: ObjId, name: &str) -> R<Option<Value>> {
        if let Some(v) = self.state[obj].option_overrides.get(name) {
            return Ok(Some(v.clone()));
        }
        let prog = self.prog;
        let Some(ast) = prog.objects[obj].ast.as_ref() else {
            return Ok(None);
        };
        match ast.options.iter().find(|a| a.target.name == name) {
            Some(a) => Ok(Some(self.eval_rvalue(
                obj,
                &a.value,
                &mut Frame::default(),
            )?)),
            None => Ok(None),
        }
    }

    pub(super) fn eval_object(&mut self, from: ObjId, target: ObjId, span: Span) -> R<f64> {
        match self.prog.objects[target].kind {
            ObjKind::Subtask => self.eval_subtask(target, span),
            ObjKind::Partmp => self.eval_template(target, span),
            k => Err(self
                .error(
                    from,
                    span,
                    format!(
                        "`{}` is a {} and has no time; read its parameters as `{}.NAME`",
                        self.prog.objects[target].name,
                        k.describe(),
                        self.prog.objects[target].name
                    ),
                )
                .into()),
        }
    }

    /// Figure 5: init, link the current template, evaluate it.
    fn eval_subtask(&mut self, id: ObjId, span: Span) -> R<f64> {
        let prog = self.prog;
        let obj = &prog.objects[id];
        self.enter(id, span, &format!("subtask `{}`", obj.name))?;
        self.trace(format!("subtask {}", obj.name));
        if obj.proc("init").is_some() {
            self.call_proc(id, "init", vec![], span)?;
        }
        let template_name = match self.option_value(id, "ptmp")? {
            None => "sequential".to_string(),
            Some(Value::Str(s)) => s,
            Some(other) => {
                return Err(self
                    .error(
                        id,
                        span,
                        format!(
                            "option ptmp of `{}` must be a template name string, found {}",
                            obj.name,
                            other.type_name()
                        ),
                    )
                    .into());
            }
        };
        self.trace(format!("option {}.ptmp = \"{template_name}\"", obj.name));
        let template = match obj.includes.get(&template_name) {
            Some(&t) if prog.objects[t].kind == ObjKind::Partmp => t,
            _ => {
                return Err(self
                    .error(id, span, format!("subtask `{}` uses template `{template_name}`, which it does not include", obj.name))
                    .into());
            }
        };
        if let Some((_, entries)) = obj.ast.as_ref().and_then(|a| a.link.as_ref()) {
            for e in entries {
                let t = obj.includes.get(&e.target.name).copied();
                let applies = t == Some(template)
                    || t.is_some_and(|t| prog.objects[t].kind == ObjKind::Hardware);
                if applies {
                    self.apply_link(id, e)?;
                }
            }
        }
        let time = self.eval_template(template, span)?;
        Breakdown::add(
            &mut self.out.breakdown.by_object,
            &obj.name,
            time * self.weight,
        );
        self.trace(format!("subtask {} = {} s", obj.name, format_number(time)));
        self.depth -= 1;
        Ok(time)
    }

    /// Figure 6: stages of a parallel template.
    fn eval_template(&mut self, id: ObjId, span: Span) -> R<f64> {
        let prog = self.prog;
        let obj = &prog.objects[id];
        self.enter(id, span, &format!("template `{}`", obj.name))?;
        let nstage = match self.option_value(id, "nstage")? {
            None => 1.0,
            Some(Value::Num(n)) => n,
            Some(other) => {
                return Err(self
                    .error(
                        id,
                        span,
                        format!(
                            "option nstage of `{}` must be a number, found {}",
                            obj.name,
                            other.type_name()
                        ),
                    )
                    .into())
            }
        };
        // nstage = 0 is allowed: the example's Log2(hardware.Nproc) is 0 on
        // one processor, where the merge has no stage.
        if !(nstage.is_finite() && nstage >= 0.0 && nstage.fract() == 0.0) {
            return Err(self
                .error(
                    id,
                    span,
                    format!(
                        "option nstage of `{}` must be a non-negative integer, found {}",
                        obj.name,
                        format_number(nstage)
                    ),
                )
                .into());
        }
        let seval = match self.option_value(id, "seval")? {
            None => 0.0,
            Some(Value::Num(n)) => n,
            Some(other) => {
                return Err(self
                    .error(
                        id,
                        span,
                        format!(
                            "option seval of `{}` must be 0 or 1, found {}",
                            obj.name,
                            other.type_name()
                        ),
                    )
                    .into())
            }
        };
        if seval != 0.0 && seval != 1.0 {
            return Err(self
                .error(
                    id,
                    span,
                    format!(
                        "option seval of `{}` must be 0 or 1, found {}",
                        obj.name,
                        format_number(seval)
                    ),
                )
                .into());
        }
        self.trace(format!(
            "template {} nstage = {} seval = {}",
            obj.name,
            format_number(nstage),
            format_number(seval)
        ));
        if obj.proc("init").is_none() {
            return Err(self
                .error(id, span, format!("parallel template `{}` has no `proc exec init`, which is run for each stage (Figure 6)", obj.name))
                .into());
        }
        let (saved_stage, saved_nstage) = (self.la_stage, self.la_nstage);
        self.la_nstage = nstage;
        let stages = if seval == 1.0 {
            nstage as u64
        } else {
            u64::from(nstage > 0.0)
        };
        let multiplier = if seval == 1.0 { 1.0 } else { nstage };
        let saved_weight = self.weight;
        self.weight *= multiplier;
        let mut total = 0.0;
        for s in 1..=stages {
            self.la_stage = s as f64;
            self.template_time.push(0.0);
            let r = self.call_proc(id, "init", vec![], span);
            let stage_time = self.template_time.pop().unwrap_or(0.0);
            r?;
            self.trace(format!(
                "stage {s} of {} = {} s",
                obj.name,
                format_number(stage_time)
            ));
            total += stage_time;
        }
        self.weight = saved_weight;
        total *= multiplier;
        self.la_stage = saved_stage;
        self.la_nstage = saved_nstage;
        Breakdown::add(
            &mut self.out.breakdown.by_object,
            &obj.name,
            total * self.weight,
        );
        self.depth -= 1;
        Ok(total)
    }
}
