//! The shadow call stack of the profilers (`profile`, `callgrind`): frames
//! opened at calls and closed when a block starts at a frame's return
//! address. Bounded in memory and time whatever the guest does (issue 30,
//! N13: calls that never return once grew the stack without end and made
//! every block scan all of it, 68.6 s for 200,000 such calls):
//! - at most [`MAX_SHADOW_DEPTH`] frames: pushing more evicts the oldest,
//!   which its owner closes (runaway recursion, or returns the profiler
//!   did not recognise);
//! - a count of the frames returning to each address answers "does any
//!   frame return here?" in constant time; only then is the stack searched,
//!   from the top, and every frame passed on the way is then closed, so
//!   the search costs no more than the frames it closes.

use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Frames a shadow stack holds at most.
pub const MAX_SHADOW_DEPTH: usize = 4096;

/// A frame's return address, if it has one.
pub trait Returns {
    fn return_address(&self) -> Option<u64>;
}

/// See the module's documentation.
#[derive(Debug, Clone)]
pub struct ShadowStack<F> {
    frames: VecDeque<F>,
    /// How many frames return to each address.
    returns: FxHashMap<u64, u32>,
}

impl<F> Default for ShadowStack<F> {
    fn default() -> Self {
        ShadowStack {
            frames: VecDeque::new(),
            returns: FxHashMap::default(),
        }
    }
}

impl<F: Returns> ShadowStack<F> {
    /// Pushes `frame`; returns the oldest frame if the stack was full.
    pub fn push(&mut self, frame: F) -> Option<F> {
        if let Some(a) = frame.return_address() {
            *self.returns.entry(a).or_default() += 1;
        }
        self.frames.push_back(frame);
        if self.frames.len() > MAX_SHADOW_DEPTH {
            let oldest = self.frames.pop_front()?;
            self.forget(&oldest);
            return Some(oldest);
        }
        None
    }

    pub fn pop(&mut self) -> Option<F> {
        let frame = self.frames.pop_back()?;
        self.forget(&frame);
        Some(frame)
    }

    fn forget(&mut self, frame: &F) {
        if let Some(a) = frame.return_address() {
            if let Some(n) = self.returns.get_mut(&a) {
                *n -= 1;
                if *n == 0 {
                    self.returns.remove(&a);
                }
            }
        }
    }

    /// The position (from the bottom) of the topmost frame returning to
    /// `addr`.
    pub fn returning_to(&self, addr: u64) -> Option<usize> {
        if !self.returns.contains_key(&addr) {
            return None;
        }
        self.frames
            .iter()
            .rposition(|f| f.return_address() == Some(addr))
    }

    /// Removes the frames from position `at` (from the bottom) up,
    /// returned bottom first.
    pub fn split_off(&mut self, at: usize) -> Vec<F> {
        let above: Vec<F> = self.frames.split_off(at.min(self.frames.len())).into();
        for f in &above {
            self.forget(f);
        }
        above
    }

    pub fn last(&self) -> Option<&F> {
        self.frames.back()
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    pub fn clear(&mut self) {
        self.frames.clear();
        self.returns.clear();
    }

    /// The frames, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &F> {
        self.frames.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Returns for u64 {
        fn return_address(&self) -> Option<u64> {
            Some(*self)
        }
    }

    #[test]
    fn the_oldest_frames_give_way_and_returns_are_found() {
        let mut s = ShadowStack::default();
        let mut evicted = 0;
        for i in 0..(MAX_SHADOW_DEPTH as u64 + 10) {
            evicted += u64::from(s.push(i % 7).is_some());
        }
        assert_eq!((s.len(), evicted), (MAX_SHADOW_DEPTH, 10));
        assert_eq!(s.returning_to(99), None);
        let top = s.returning_to(3).unwrap();
        assert_eq!(*s.iter().nth(top).unwrap(), 3);
        while s.len() > top {
            s.pop();
        }
        while s.pop().is_some() {}
        assert!(s.returns.is_empty(), "every count went with its frame");
    }
}
