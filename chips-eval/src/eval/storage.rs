//! Storage: assignments to variables and vector elements, and the bound
//! on the vector elements held at once ([`super::MAX_VECTOR_ELEMENTS`]).

use super::*;

impl Evaluator<'_> {
    pub(super) fn assign(
        &mut self,
        obj: ObjId,
        target: &Ident,
        v: Value,
        frame: &mut Frame,
    ) -> R<()> {
        let ty = if let Some((ty, _)) = frame.vars.get(&target.name) {
            *ty
        } else if let Some(vi) = self.prog.objects[obj].var(&target.name) {
            vi.ty
        } else {
            return Err(self
                .error(
                    obj,
                    target.span,
                    format!("undefined variable `{}`", target.name),
                )
                .into());
        };
        self.check_type(obj, target.span, &target.name, ty, &v)?;
        self.store(obj, target, v, frame)
    }

    pub(super) fn store(
        &mut self,
        obj: ObjId,
        target: &Ident,
        v: Value,
        frame: &mut Frame,
    ) -> R<()> {
        if let Some(old) = frame.vars.get(&target.name).map(|s| vector_elements(&s.1)) {
            self.hold(obj, target.span, old, &v)?;
            frame.vars.get_mut(&target.name).expect("looked up").1 = v;
            return Ok(());
        }
        match self.prog.objects[obj].var_index.get(&target.name) {
            Some(&vi) => {
                let old = vector_elements(&self.state[obj].vars[vi]);
                self.hold(obj, target.span, old, &v)?;
                self.state[obj].vars[vi] = v;
                Ok(())
            }
            None => Err(self
                .error(
                    obj,
                    target.span,
                    format!("undefined variable `{}`", target.name),
                )
                .into()),
        }
    }

    /// Accounts for a variable whose vector of `old` elements becomes `new`:
    /// refused beyond [`MAX_VECTOR_ELEMENTS`] held at once.
    pub(super) fn hold(&mut self, obj: ObjId, span: Span, old: u64, new: &Value) -> R<()> {
        let held =
            (self.held_elements - old.min(self.held_elements)).saturating_add(vector_elements(new));
        if held > MAX_VECTOR_ELEMENTS {
            return Err(self
                .error(
                    obj,
                    span,
                    format!(
                        "the variables would hold {held} vector elements: at most \
                         {MAX_VECTOR_ELEMENTS} at once (eval::MAX_VECTOR_ELEMENTS)"
                    ),
                )
                .into());
        }
        self.held_elements = held;
        Ok(())
    }

    pub(super) fn lookup(&self, obj: ObjId, name: &str, frame: &Frame) -> Option<Value> {
        if let Some((_, v)) = frame.vars.get(name) {
            return Some(v.clone());
        }
        self.prog.objects[obj]
            .var_index
            .get(name)
            .map(|&vi| self.state[obj].vars[vi].clone())
    }

    pub(super) fn index_slot<'f>(
        &'f mut self,
        obj: ObjId,
        name: &Ident,
        i: f64,
        frame: &'f mut Frame,
    ) -> R<&'f mut f64> {
        let prog = self.prog;
        let file = prog.objects[obj].file.clone();
        let error = |message: String| -> Abort {
            Abort::Error(EvalError {
                file: file.clone(),
                span: name.span,
                message,
            })
        };
        let value: &mut Value = if frame.vars.contains_key(&name.name) {
            &mut frame.vars.get_mut(&name.name).expect("present").1
        } else if let Some(&vi) = prog.objects[obj].var_index.get(&name.name) {
            &mut self.state[obj].vars[vi]
        } else {
            return Err(error(format!("undefined vector `{}`", name.name)));
        };
        match value {
            Value::Vector(VecValue::Data(d)) => {
                let len = d.len();
                if !(i >= 1.0 && i.fract() == 0.0 && (i as usize) <= len) {
                    return Err(error(format!(
                        "index {} outside `{}`[1..{len}] (data vectors are indexed from 1)",
                        format_number(i),
                        name.name
                    )));
                }
                Ok(&mut d[i as usize - 1])
            }
            other => Err(error(format!(
                "`{}` is {}, not a data vector",
                name.name,
                other.type_name()
            ))),
        }
    }
}
