//! One ARP callback set made of C functions (manual 3.1, 6.1.2
//! `arp_add_callbacks`) as the engine sees it: the adapter that libarp
//! (a C program's sets) and sim-host's plugin interface (a plugin's sets)
//! both use.
//!
//! * Enter and leave callbacks get the section id, the set's data area in
//!   its C representation ([`CArea`]) and the calling thread's context
//!   pointer; what they leave in the area is read back as the set's type.
//!   A missing (NULL) callback leaves the value as it is.
//! * Each thread has its own copy of the context pointer (manual 3.1): a
//!   spawned thread starts with its parent's, which the spawn callback
//!   may change through its address (for the child only); the copy is
//!   dropped at join, after the join callback saw it, so the parent's
//!   pointer is "restored automatically". A thread never spawned uses the
//!   pointer given at registration.
//! * A [`CallScope`] runs around each C call (sim-host: the current
//!   thread for its host API, and the watchdog's note of the running
//!   callback); libarp uses none (`()`).
//!
//! This is the only module of the crate with `unsafe` code: calling the C
//! functions. [`CCallbacks::new`] is where their caller promises they may
//! be called.

use crate::c_area::CArea;
use crate::engine::CallbackSet;
use crate::types::{DataType, Sid, Tid, Value};
use std::collections::HashMap;
use std::ffi::c_void;

/// An enter or leave callback: `void f(arp_sid sid, void *data, void *context)`.
pub type CEnterFn = unsafe extern "C" fn(Sid, *mut c_void, *mut c_void);
/// A leave callback (the same signature as [`CEnterFn`]).
pub type CLeaveFn = CEnterFn;
/// A spawn or join callback: `void f(arp_tid tid, void **context)`.
pub type CSpawnFn = unsafe extern "C" fn(Tid, *mut *mut c_void);
/// A join callback (the same signature as [`CSpawnFn`]).
pub type CJoinFn = CSpawnFn;

/// The arguments of one `arp_add_callbacks` call.
#[derive(Clone, Copy, Debug)]
pub struct CCallbackFns {
    pub ty: DataType,
    pub enter: Option<CEnterFn>,
    pub leave: Option<CLeaveFn>,
    pub spawn: Option<CSpawnFn>,
    pub join: Option<CJoinFn>,
    /// The context pointer of threads that were never spawned.
    pub context: *mut c_void,
}

/// The C call about to be made, as a [`CallScope`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CCall {
    Enter { tid: Tid, sid: Sid },
    Leave { tid: Tid, sid: Sid },
    Spawn { parent: Tid, child: Tid },
    Join { tid: Tid },
}

impl CCall {
    /// `enter`, `leave`, `spawn` or `join`.
    pub fn name(self) -> &'static str {
        match self {
            CCall::Enter { .. } => "enter",
            CCall::Leave { .. } => "leave",
            CCall::Spawn { .. } => "spawn",
            CCall::Join { .. } => "join",
        }
    }

    /// The thread the call is made for: the parent for a spawn.
    pub fn tid(self) -> Tid {
        match self {
            CCall::Enter { tid, .. } | CCall::Leave { tid, .. } | CCall::Join { tid } => tid,
            CCall::Spawn { parent, .. } => parent,
        }
    }

    /// The section of an enter or leave.
    pub fn sid(self) -> Option<Sid> {
        match self {
            CCall::Enter { sid, .. } | CCall::Leave { sid, .. } => Some(sid),
            CCall::Spawn { .. } | CCall::Join { .. } => None,
        }
    }
}

/// What runs around each C call of a set: [`CallScope::open`] just
/// before it, the guard's drop just after.
pub trait CallScope {
    type Guard;
    fn open(&self, call: CCall) -> Self::Guard;
}

/// No scope.
impl CallScope for () {
    type Guard = ();
    fn open(&self, _call: CCall) {}
}

/// One C callback set as an engine [`CallbackSet`].
pub struct CCallbacks<S: CallScope = ()> {
    fns: CCallbackFns,
    scope: S,
    /// Manual 3.1: each spawned thread's copy of the context pointer.
    thread_contexts: HashMap<Tid, *mut c_void>,
}

impl<S: CallScope> std::fmt::Debug for CCallbacks<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CCallbacks")
            .field("fns", &self.fns)
            .field("threads", &self.thread_contexts.len())
            .finish()
    }
}

impl<S: CallScope> CCallbacks<S> {
    /// The set of `fns`, with `scope` around each call.
    ///
    /// # Safety
    /// Every function in `fns` must have the C signature of its type and
    /// stay callable for as long as the set exists (`scope` may be what
    /// keeps its library loaded), from the thread that drives the engine;
    /// each must accept `fns.context`, and every pointer a spawn callback
    /// stores, as its context.
    pub unsafe fn new(fns: CCallbackFns, scope: S) -> Self {
        CCallbacks {
            fns,
            scope,
            thread_contexts: HashMap::new(),
        }
    }

    fn context_of(&self, tid: Tid) -> *mut c_void {
        *self.thread_contexts.get(&tid).unwrap_or(&self.fns.context)
    }

    /// An enter or leave callback `f` on `data`.
    fn call_with_area(&self, f: Option<CEnterFn>, call: CCall, data: &mut Value) {
        let (Some(f), Some(sid)) = (f, call.sid()) else {
            return;
        };
        let mut area = CArea::from_value(data);
        let _scope = self.scope.open(call);
        // SAFETY: `new`'s contract: `f` has this signature and is
        // callable; the area is a valid, aligned 16-byte buffer that
        // outlives the call; the context is one `f` accepts.
        unsafe { f(sid, area.0.as_mut_ptr().cast(), self.context_of(call.tid())) };
        *data = area.read(self.fns.ty);
    }

    /// A spawn or join callback `f` on `tid`'s copy of the context
    /// pointer (the copy of `of`), which it may change; returns the copy.
    fn call_with_context(
        &self,
        f: Option<CSpawnFn>,
        call: CCall,
        of: Tid,
        tid: Tid,
    ) -> *mut c_void {
        let mut ctx = self.context_of(of);
        if let Some(f) = f {
            let _scope = self.scope.open(call);
            // SAFETY: `new`'s contract; `ctx` outlives the call.
            unsafe { f(tid, &mut ctx) };
        }
        ctx
    }
}

impl<S: CallScope> CallbackSet for CCallbacks<S> {
    fn data_type(&self) -> DataType {
        self.fns.ty
    }

    fn enter(&mut self, tid: Tid, sid: Sid, data: &mut Value) {
        self.call_with_area(self.fns.enter, CCall::Enter { tid, sid }, data);
    }

    fn leave(&mut self, tid: Tid, sid: Sid, data: &mut Value) {
        self.call_with_area(self.fns.leave, CCall::Leave { tid, sid }, data);
    }

    fn spawn(&mut self, parent: Tid, child: Tid) {
        let call = CCall::Spawn { parent, child };
        let ctx = self.call_with_context(self.fns.spawn, call, parent, child);
        self.thread_contexts.insert(child, ctx);
    }

    fn join(&mut self, tid: Tid) {
        self.call_with_context(self.fns.join, CCall::Join { tid }, tid, tid);
        self.thread_contexts.remove(&tid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Adds the context pointer (a number) to the int in the area.
    unsafe extern "C" fn add_context(_sid: Sid, data: *mut c_void, ctx: *mut c_void) {
        // SAFETY: an int data area.
        unsafe { *data.cast::<i32>() += ctx as usize as i32 };
    }

    /// The child's context: the parent's plus 100 times the child's id.
    unsafe extern "C" fn derive(child: Tid, ctxp: *mut *mut c_void) {
        // SAFETY: the adapter passes the address of the child's copy.
        unsafe { *ctxp = (*ctxp as usize + 100 * child as usize) as *mut c_void };
    }

    /// Notes every call it is opened for.
    struct Log(Rc<RefCell<Vec<CCall>>>);

    impl CallScope for Log {
        type Guard = ();
        fn open(&self, call: CCall) {
            self.0.borrow_mut().push(call);
        }
    }

    fn set(fns: CCallbackFns) -> (CCallbacks<Log>, Rc<RefCell<Vec<CCall>>>) {
        let log = Rc::new(RefCell::new(Vec::new()));
        // SAFETY: the functions above have the signatures of their types.
        (unsafe { CCallbacks::new(fns, Log(Rc::clone(&log))) }, log)
    }

    #[test]
    fn callbacks_see_the_area_and_their_threads_context() {
        let (mut s, log) = set(CCallbackFns {
            ty: DataType::Int,
            enter: Some(add_context),
            leave: None,
            spawn: Some(derive),
            join: None,
            context: 7 as *mut c_void,
        });
        let mut v = Value::Int(1);
        s.enter(1, 4, &mut v);
        assert_eq!(v, Value::Int(8));
        s.spawn(1, 2);
        s.enter(2, 4, &mut v);
        assert_eq!(v, Value::Int(8 + 207));
        // no leave callback: the value stays, nothing is called
        s.leave(2, 4, &mut v);
        assert_eq!(v, Value::Int(215));
        // join without a callback still drops the child's copy
        s.join(2);
        s.enter(2, 4, &mut v);
        assert_eq!(v, Value::Int(222));
        assert_eq!(
            *log.borrow(),
            [
                CCall::Enter { tid: 1, sid: 4 },
                CCall::Spawn {
                    parent: 1,
                    child: 2
                },
                CCall::Enter { tid: 2, sid: 4 },
                CCall::Enter { tid: 2, sid: 4 },
            ]
        );
    }

    #[test]
    fn calls_name_their_thread_and_section() {
        let spawn = CCall::Spawn {
            parent: 1,
            child: 2,
        };
        assert_eq!((spawn.name(), spawn.tid(), spawn.sid()), ("spawn", 1, None));
        let leave = CCall::Leave { tid: 3, sid: 9 };
        assert_eq!(
            (leave.name(), leave.tid(), leave.sid()),
            ("leave", 3, Some(9))
        );
        let join = CCall::Join { tid: 5 };
        assert_eq!((join.name(), join.tid(), join.sid()), ("join", 5, None));
    }
}
