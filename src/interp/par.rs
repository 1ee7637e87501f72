//! Splitting large loops over independent output elements across the
//! machine's cores (a pool of threads started once, see [`pool`]).
//!
//! Only loops whose output elements are computed independently of one
//! another go through here, each element by the same arithmetic as on one
//! thread, so results are the same bits whatever the thread count
//! (reductions keep their order: they are split over output elements, never
//! over the summed axis).

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Below this many output elements a loop runs on the calling thread: a
/// spawned thread costs tens of microseconds, and on a loaded machine it
/// may wait for a core far longer than the loop takes.
pub const MIN_PARALLEL: usize = 1 << 17;

/// The number of threads a large loop is split into: what the process may
/// run on (its CPU affinity and cgroup quota on Linux).
pub fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 64)
    })
}

/// Calls `f(start, chunk)` on consecutive chunks of `out` (each at least
/// `unit` elements and a multiple of it, `start` the chunk's first index
/// in `out`), on all cores when `out` is large.
pub fn for_chunks<T: Send>(out: &mut [T], unit: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let worth = out.len() >= MIN_PARALLEL;
    for_chunks_if(out, unit, worth, f)
}

/// [`for_chunks`], split when `worth` says the work is large enough (for
/// loops whose cost is not their output's size: a GEMM).
pub fn for_chunks_if<T: Send>(
    out: &mut [T],
    unit: usize,
    worth: bool,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let unit = unit.max(1);
    let n = out.len();
    // `threads()` reads the cgroup's quota on first use: only for a loop
    // that may be split.
    if !worth || n < 2 * unit || threads() == 1 {
        f(0, out);
        return;
    }
    let Some(pool) = pool() else {
        f(0, out);
        return;
    };
    let t = threads();
    let units = n.div_ceil(unit);
    let per = units.div_ceil(t) * unit;
    pool.in_place_scope(|s| {
        let f = &f;
        let mut rest = out;
        let mut start = 0;
        while !rest.is_empty() {
            let take = per.min(rest.len());
            let (chunk, tail) = rest.split_at_mut(take);
            rest = tail;
            let at = start;
            start += take;
            if rest.is_empty() {
                // The last chunk runs on this thread.
                f(at, chunk);
            } else {
                s.spawn(move |_| f(at, chunk));
            }
        }
    });
}

/// `f(part)` for every part, the parts on all cores (the last on the
/// calling thread).
pub fn each<P: Send>(parts: Vec<P>, f: impl Fn(P) + Sync) {
    let pool = if parts.len() > 1 { pool() } else { None };
    let Some(pool) = pool else {
        parts.into_iter().for_each(f);
        return;
    };
    pool.in_place_scope(|s| {
        let f = &f;
        let mut parts = parts.into_iter();
        let last = parts.next_back();
        for p in parts {
            s.spawn(move |_| f(p));
        }
        if let Some(p) = last {
            f(p);
        }
    });
}

/// Starts the loop pool's threads now, not in the first large loop.
pub fn start_pool() {
    if threads() > 1 {
        pool();
    }
}

/// The threads that take the other chunks of a split loop, started once
/// (the calling thread takes one chunk itself): a 48-layer module splits
/// some 2,500 loops, and starting a thread for each cost tens of
/// microseconds apiece. `None` on one core, or when the system refuses the
/// threads (a tight `ulimit -v`, a thread limit), or in a process forked
/// after the pool started (a Python `multiprocessing` worker), which has
/// none of its threads: loops then run on the calling thread, slower,
/// never a panic or a wait for a thread that is not there.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<(u32, Option<rayon::ThreadPool>)> = OnceLock::new();
    let (owner, pool) = POOL.get_or_init(|| {
        let t = threads();
        let pool = (t > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t - 1)
                    .thread_name(|i| format!("hlo-opt-loop-{i}"))
                    .build()
                    .ok()
            })
            .flatten();
        (std::process::id(), pool)
    });
    if *owner != std::process::id() {
        return None;
    }
    pool.as_ref()
}

/// `out[i] = f(i)` for every i, on all cores when `out` is large.
pub fn fill<T: Send>(out: &mut [T], f: impl Fn(usize) -> T + Sync) {
    for_chunks(out, 1, |start, chunk| {
        for (i, o) in chunk.iter_mut().enumerate() {
            *o = f(start + i);
        }
    });
}

/// `f(x)` for every element of `x`.
pub fn map<A: Sync, T: Send + Copy>(x: &[A], f: impl Fn(&A) -> T + Sync + Clone) -> Vec<T> {
    collect_chunks(x.len(), 1, x.len() >= MIN_PARALLEL, |start, out| {
        let f = f.clone();
        out.extend(x[start..].iter().map(f))
    })
}

/// `f(x, y)` for every pair of elements of `x` and `y` (same lengths).
pub fn zip<A: Sync, B: Sync, T: Send + Copy>(
    x: &[A],
    y: &[B],
    f: impl Fn(&A, &B) -> T + Sync + Clone,
) -> Vec<T> {
    let n = x.len().min(y.len());
    collect_chunks(n, 1, n >= MIN_PARALLEL, |start, out| {
        let f = f.clone();
        out.extend(x[start..].iter().zip(&y[start..]).map(|(a, b)| f(a, b)))
    })
}

/// `x[i] = f(x[i])` for every element, on all cores when large.
pub fn map_in_place<T: Send>(x: &mut [T], f: impl Fn(&T) -> T + Sync + Clone) {
    for_chunks(x, 1, |_, chunk| {
        let f = f.clone();
        for a in chunk.iter_mut() {
            *a = f(a);
        }
    });
}

/// `x[i] = f(x[i], y[i])` for every element (same lengths), on all cores
/// when large.
pub fn zip_in_place<T: Send, B: Sync>(
    x: &mut [T],
    y: &[B],
    f: impl Fn(&T, &B) -> T + Sync + Clone,
) {
    for_chunks(x, 1, |start, chunk| {
        let f = f.clone();
        for (a, b) in chunk.iter_mut().zip(&y[start..]) {
            *a = f(a, b);
        }
    });
}

/// The elements a [`Sink`] has been given so far, written in order into
/// spare capacity: a result built without first filling it with zeros.
pub struct Sink<'a, T> {
    buf: &'a mut [MaybeUninit<T>],
    /// `buf[..len]` is initialised.
    len: usize,
}

impl<T> Sink<'_, T> {
    /// Appends the items of `items` while there is room (the rest is not
    /// taken).
    #[inline]
    pub fn extend(&mut self, items: impl IntoIterator<Item = T>) {
        // Counted in a local: the loop then vectorises.
        let mut k = 0;
        for (slot, v) in self.buf[self.len..].iter_mut().zip(items) {
            slot.write(v);
            k += 1;
        }
        self.len += k;
    }

    /// How many more elements fit.
    #[inline]
    pub fn room(&self) -> usize {
        self.buf.len() - self.len
    }

    /// Appends `count` copies of `v` while there is room.
    #[inline]
    pub fn fill(&mut self, v: T, count: usize)
    where
        T: Copy,
    {
        let k = count.min(self.buf.len() - self.len);
        for slot in &mut self.buf[self.len..self.len + k] {
            slot.write(v);
        }
        self.len += k;
    }

    /// Appends the elements of `items` while there is room.
    #[inline]
    pub fn extend_from_slice(&mut self, items: &[T])
    where
        T: Copy,
    {
        let k = items.len().min(self.buf.len() - self.len);
        for (slot, &v) in self.buf[self.len..self.len + k].iter_mut().zip(&items[..k]) {
            slot.write(v);
        }
        self.len += k;
    }
}

/// A vector of `n` elements built chunk by chunk (as [`for_chunks_if`]
/// splits it: `fill(start, sink)` appends the elements `start..` of its
/// chunk), on all cores when `worth`. Panics if a chunk is left short: a
/// bug of the caller, never a read of uninitialised memory.
pub fn collect_chunks<T: Send + Copy>(
    n: usize,
    unit: usize,
    worth: bool,
    fill: impl Fn(usize, &mut Sink<'_, T>) + Sync,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    let complete = AtomicUsize::new(0);
    for_chunks_if(
        &mut out.spare_capacity_mut()[..n],
        unit,
        worth,
        |start, chunk| {
            let whole = chunk.len();
            let mut sink = Sink { buf: chunk, len: 0 };
            fill(start, &mut sink);
            if sink.len == whole {
                complete.fetch_add(whole, Ordering::Relaxed);
            }
        },
    );
    // The chunks are disjoint parts of `out[..n]` (split_at_mut), and a
    // chunk counts only when its sink initialised all of it (`Sink::len`
    // counts the slots written, in order, from the chunk's start): a total
    // of `n` means every element of `out[..n]` is initialised. The
    // threads have all joined (scoped), so the count is final.
    assert_eq!(
        complete.load(Ordering::Relaxed),
        n,
        "internal error: a chunk of a result was left unwritten"
    );
    // SAFETY: `n <= capacity`, and `out[..n]` is initialised (above); `T:
    // Copy`, so nothing needs dropping either way.
    unsafe { out.set_len(n) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_element_once_in_order() {
        let n = MIN_PARALLEL * 3 + 17;
        let mut out = vec![0usize; n];
        for_chunks(&mut out, 7, |start, chunk| {
            assert!(start % 7 == 0);
            for (i, o) in chunk.iter_mut().enumerate() {
                *o += start + i + 1;
            }
        });
        assert!(out.iter().enumerate().all(|(i, &v)| v == i + 1));
        let small = map(&[1, 2, 3], |&v| v * 2);
        assert_eq!(small, vec![2, 4, 6]);
    }
}
