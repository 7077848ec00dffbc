//! Procedures: calls, cflow procedures' times (section 4.3), exec
//! statements run (section 4.4), steps and their devices' configuration.

use super::*;

impl Evaluator<'_> {
    pub(super) fn call_proc(
        &mut self,
        obj: ObjId,
        name: &str,
        args: Vec<Value>,
        span: Span,
    ) -> R<Option<Value>> {
        let prog = self.prog;
        let o = &prog.objects[obj];
        let Some(p) = o.proc(name) else {
            return Err(self
                .error(
                    obj,
                    span,
                    format!("undefined procedure `{name}` in `{}`", o.name),
                )
                .into());
        };
        if p.params.len() != args.len() {
            return Err(self
                .error(
                    obj,
                    span,
                    format!(
                        "procedure `{name}` takes {} argument(s), {} given",
                        p.params.len(),
                        args.len()
                    ),
                )
                .into());
        }
        self.enter(obj, span, &format!("procedure `{}.{name}`", o.name))?;
        let mut frame = Frame::default();
        for (prm, a) in p.params.iter().zip(args) {
            if !matches!(a, Value::Num(_)) {
                return Err(self
                    .error(obj, span, format!("argument `{}` of `{name}` must be a number (arguments are numbers passed by value, section 4.3), found {}", prm.name, a.type_name()))
                    .into());
            }
            frame.vars.insert(prm.name.clone(), (VarType::Numeric, a));
        }
        if self.tracing {
            let args: Vec<String> = p
                .params
                .iter()
                .map(|prm| format!("{}", frame.vars[&prm.name].1))
                .collect();
            self.trace(format!("call {}.{name}({})", o.name, args.join(", ")));
        }
        for d in &p.locals {
            for item in &d.items {
                let v = match &item.init {
                    Some(init) => {
                        let v = self.eval_rvalue_in(obj, init, &mut frame)?;
                        self.check_type(obj, item.name.span, &item.name.name, d.ty, &v)?;
                        v
                    }
                    None => Value::Unset,
                };
                self.hold(obj, item.name.span, 0, &v)?;
                frame.vars.insert(item.name.name.clone(), (d.ty, v));
            }
        }
        let result = match &p.body {
            ProcBody::Cflow(stmts) => {
                let t = self.cflow_time(obj, stmts, &mut frame)?;
                let key = format!("{}.{name}", o.name);
                Breakdown::add(&mut self.out.breakdown.by_procedure, &key, t * self.weight);
                Some(Value::Num(t))
            }
            ProcBody::Exec(stmts) => match self.exec_list(obj, stmts, &mut frame)? {
                Flow::Return(v) => v,
                Flow::Normal => None,
                Flow::Break | Flow::Continue => None,
            },
        };
        if let Some(v) = &result {
            self.trace(format!("{}.{name} -> {v}", o.name));
        }
        let locals: u64 = frame.vars.values().map(|(_, v)| vector_elements(v)).sum();
        self.held_elements = self.held_elements.saturating_sub(locals);
        self.depth -= 1;
        Ok(result)
    }

    /// Section 4.3: the time of a control-flow statement list.
    fn cflow_time(&mut self, obj: ObjId, stmts: &[CflowStmt], frame: &mut Frame) -> R<f64> {
        guarded(|| self.cflow_time_unguarded(obj, stmts, frame))
    }

    fn cflow_time_unguarded(
        &mut self,
        obj: ObjId,
        stmts: &[CflowStmt],
        frame: &mut Frame,
    ) -> R<f64> {
        let mut total = 0.0;
        for s in stmts {
            total += match s {
                CflowStmt::Compute(v, span) => {
                    self.tick(obj, *span)?;
                    let vec = self.vector_of(obj, v, frame, *span)?;
                    self.cost(obj, &vec, *span, frame)?
                }
                CflowStmt::Loop {
                    overhead,
                    count,
                    body,
                    span,
                } => {
                    self.tick(obj, *span)?;
                    let n = self.num(obj, count, frame)?;
                    if n < 0.0 {
                        return Err(self
                            .error(
                                obj,
                                count.span(),
                                format!("loop count is negative ({})", format_number(n)),
                            )
                            .into());
                    }
                    let saved = self.weight;
                    self.weight *= n;
                    let ov = self.vector_of(obj, overhead, frame, *span)?;
                    let ov = self.cost(obj, &ov, *span, frame)?;
                    let b = self.cflow_time(obj, body, frame);
                    self.weight = saved;
                    n * (b? + ov)
                }
                CflowStmt::Case {
                    overhead,
                    arms,
                    span,
                } => {
                    self.tick(obj, *span)?;
                    let ov = self.vector_of(obj, overhead, frame, *span)?;
                    let mut t = self.cost(obj, &ov, *span, frame)?;
                    for (p, body) in arms {
                        let prob = self.num(obj, p, frame)?;
                        if !(0.0..=1.0).contains(&prob) {
                            return Err(self
                                .error(
                                    obj,
                                    p.span(),
                                    format!(
                                        "case probability {} is outside 0..1",
                                        format_number(prob)
                                    ),
                                )
                                .into());
                        }
                        let saved = self.weight;
                        self.weight *= prob;
                        let b = self.cflow_time(obj, body, frame);
                        self.weight = saved;
                        t += prob * b?;
                    }
                    t
                }
                CflowStmt::Call { name, args } => {
                    self.tick(obj, name.span)?;
                    let mut vals = Vec::new();
                    for a in args {
                        vals.push(self.eval(obj, a, frame)?);
                    }
                    match self.call_proc(obj, &name.name, vals, name.span)? {
                        Some(Value::Num(t)) => t,
                        Some(other) => {
                            return Err(self
                                .error(
                                    obj,
                                    name.span,
                                    format!(
                                        "`{}` returned {}, a cflow call needs a time",
                                        name.name,
                                        other.type_name()
                                    ),
                                )
                                .into())
                        }
                        None => {
                            return Err(self
                                .error(
                                    obj,
                                    name.span,
                                    format!(
                                        "`{}` returned no value, a cflow call needs a time",
                                        name.name
                                    ),
                                )
                                .into())
                        }
                    }
                }
            };
        }
        Ok(total)
    }

    fn exec_list(&mut self, obj: ObjId, stmts: &[ExecStmt], frame: &mut Frame) -> R<Flow> {
        for s in stmts {
            match self.exec(obj, s, frame)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, obj: ObjId, s: &ExecStmt, frame: &mut Frame) -> R<Flow> {
        guarded(|| self.exec_unguarded(obj, s, frame))
    }

    fn exec_unguarded(&mut self, obj: ObjId, s: &ExecStmt, frame: &mut Frame) -> R<Flow> {
        match s {
            ExecStmt::Block(b) => self.exec_list(obj, b, frame),
            ExecStmt::Assign(a) => {
                self.tick(obj, a.target.span)?;
                let v = self.eval_rvalue_in(obj, &a.value, frame)?;
                match &a.index {
                    None => self.assign(obj, &a.target, v, frame)?,
                    Some(i) => {
                        let i = self.num(obj, i, frame)?;
                        let Value::Num(x) = v else {
                            return Err(self
                                .error(
                                    obj,
                                    a.target.span,
                                    format!(
                                        "elements of `{}` are numbers, given {}",
                                        a.target.name,
                                        v.type_name()
                                    ),
                                )
                                .into());
                        };
                        let slot = self.index_slot(obj, &a.target, i, frame)?;
                        *slot = x;
                    }
                }
                Ok(Flow::Normal)
            }
            ExecStmt::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.tick(obj, cond.span())?;
                if self.truth(obj, cond, frame)? {
                    self.exec(obj, then_branch, frame)
                } else if let Some(e) = else_branch {
                    self.exec(obj, e, frame)
                } else {
                    Ok(Flow::Normal)
                }
            }
            ExecStmt::While { cond, body } => loop {
                self.tick(obj, cond.span())?;
                if !self.truth(obj, cond, frame)? {
                    return Ok(Flow::Normal);
                }
                match self.exec(obj, body, frame)? {
                    Flow::Break => return Ok(Flow::Normal),
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    Flow::Normal | Flow::Continue => {}
                }
            },
            ExecStmt::Break(_) => Ok(Flow::Break),
            ExecStmt::Continue(_) => Ok(Flow::Continue),
            ExecStmt::Print(items, span) => {
                self.tick(obj, *span)?;
                let mut parts = Vec::new();
                for e in items {
                    parts.push(self.eval(obj, e, frame)?.to_string());
                }
                let line = parts.join(" ");
                self.trace(format!("print {line}"));
                self.out.printed.push(line);
                Ok(Flow::Normal)
            }
            ExecStmt::Call { name, args } => {
                self.tick(obj, name.span)?;
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.eval(obj, a, frame)?);
                }
                self.call_proc(obj, &name.name, vals, name.span)?;
                Ok(Flow::Normal)
            }
            ExecStmt::Return(e, span) => {
                self.tick(obj, *span)?;
                let v = match e {
                    Some(e) => Some(self.eval(obj, e, frame)?),
                    None => None,
                };
                Ok(Flow::Return(v))
            }
            ExecStmt::Exit(span) => {
                self.trace(format!("exit at {}:{}", span.line, span.col));
                Err(Abort::Exit)
            }
            ExecStmt::Dim(name, size) => {
                self.tick(obj, name.span)?;
                let n = self.num(obj, size, frame)?;
                if !(n >= 0.0 && n.fract() == 0.0 && n <= 1e7) {
                    return Err(self
                        .error(
                            obj,
                            size.span(),
                            format!(
                                "dim size must be a non-negative integer up to 10^7, found {}",
                                format_number(n)
                            ),
                        )
                        .into());
                }
                self.assign(
                    obj,
                    name,
                    Value::Vector(VecValue::Data(vec![0.0; n as usize])),
                    frame,
                )?;
                Ok(Flow::Normal)
            }
            ExecStmt::Free(name) => {
                self.tick(obj, name.span)?;
                self.store(obj, name, Value::Unset, frame)?;
                Ok(Flow::Normal)
            }
            ExecStmt::Step { device, body } => self.exec_step(obj, device, body, frame),
            ExecStmt::Confdev(args, span) => {
                self.tick(obj, *span)?;
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.num(obj, a, frame)?);
                }
                self.confdev(obj, &vals, *span)?;
                Ok(Flow::Normal)
            }
        }
    }

    fn exec_step(
        &mut self,
        obj: ObjId,
        device: &Ident,
        body: &[ExecStmt],
        frame: &mut Frame,
    ) -> R<Flow> {
        self.tick(obj, device.span)?;
        if self.step.is_some() {
            return Err(self
                .error(
                    obj,
                    device.span,
                    "a step must not include another step (section 4.4)".into(),
                )
                .into());
        }
        if self.template_time.is_empty() {
            return Err(self
                .error(
                    obj,
                    device.span,
                    "`step` runs only while a parallel template is evaluated".into(),
                )
                .into());
        }
        let Some(dev) = self.hw.device(&device.name) else {
            let names: Vec<&str> = self.hw.devices.iter().map(|d| d.name.as_str()).collect();
            return Err(self
                .error(
                    obj,
                    device.span,
                    format!(
                        "hardware model `{}` has no device `{}` (devices: {})",
                        self.hw.name,
                        device.name,
                        names.join(", ")
                    ),
                )
                .into());
        };
        self.step = Some(StepInProgress {
            device: device.name.clone(),
            cpu_time: 0.0,
            messages: vec![],
        });
        let flow = self.exec_list(obj, body, frame);
        let step = self.step.take().expect("step in progress");
        let flow = flow?;
        let time = match &dev.kind {
            DeviceKind::Cpu => step.cpu_time,
            DeviceKind::Inpcom(net) => {
                let nproc = self.hw_params.get("Nproc").copied().unwrap_or(1.0);
                if !(nproc >= 1.0 && nproc.fract() == 0.0) {
                    return Err(self
                        .error(
                            obj,
                            device.span,
                            format!(
                                "hardware.Nproc must be a positive integer, found {}",
                                format_number(nproc)
                            ),
                        )
                        .into());
                }
                net.step_time(nproc as usize, &step.messages)
                    .map_err(|m| self.error(obj, device.span, m))?
            }
        };
        self.trace(format!("step {} = {} s", step.device, format_number(time)));
        if let Some(t) = self.template_time.last_mut() {
            *t += time;
        }
        Breakdown::add(
            &mut self.out.breakdown.by_device,
            &step.device,
            time * self.weight,
        );
        Ok(flow)
    }

    fn confdev(&mut self, obj: ObjId, vals: &[f64], span: Span) -> R<()> {
        let Some(step) = self.step.as_mut() else {
            return Err(self
                .error(obj, span, "`confdev` outside a step".into())
                .into());
        };
        let kind = self.hw.device(&step.device).map(|d| &d.kind);
        match kind {
            Some(DeviceKind::Cpu) => {
                if vals.len() != 1 {
                    return Err(self
                        .error(
                            obj,
                            span,
                            format!(
                                "confdev for cpu takes one argument (the time), {} given",
                                vals.len()
                            ),
                        )
                        .into());
                }
                if vals[0] < 0.0 {
                    return Err(self
                        .error(
                            obj,
                            span,
                            format!(
                                "cpu time must not be negative, found {}",
                                format_number(vals[0])
                            ),
                        )
                        .into());
                }
                step.cpu_time += vals[0];
            }
            Some(DeviceKind::Inpcom(_)) => {
                if vals.len() != 3 {
                    return Err(self
                        .error(obj, span, format!("confdev for inpcom takes three arguments (size, source, destination), {} given", vals.len()))
                        .into());
                }
                let proc_index = |x: f64| (x >= 0.0 && x.fract() == 0.0).then_some(x as usize);
                let (Some(src), Some(dst)) = (proc_index(vals[1]), proc_index(vals[2])) else {
                    return Err(self
                        .error(
                            obj,
                            span,
                            "inpcom source and destination must be non-negative integers".into(),
                        )
                        .into());
                };
                step.messages.push(Message {
                    size_bytes: vals[0],
                    src,
                    dst,
                });
            }
            None => {}
        }
        Ok(())
    }
}
