//! GDB's thread ids of guest threads (GDB's start at 1).

use crate::host::threads::ThreadId;
use gdbstub::common::Tid;

/// GDB's thread id of guest thread `thread`.
pub fn tid(thread: ThreadId) -> Tid {
    Tid::new(thread as usize + 1).expect("non-zero")
}

/// The guest thread of GDB's thread id `tid`.
pub fn thread_of(tid: Tid) -> ThreadId {
    (tid.get() - 1) as ThreadId
}
