//! Small shared helpers.

use std::collections::{HashMap, HashSet};

/// The hash maps of hot paths: foldhash, fast on the short names and
/// small integers they hold, with a fixed seed so a run never depends on
/// the process (SipHash, std's default, costs several times as much on
/// million-name modules; no key here comes from an adversary who gains by
/// collisions beyond a slower run).
pub type FxMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
pub type FxSet<K> = HashSet<K, foldhash::fast::FixedState>;

/// A map keyed by short strings (names, opcodes, attribute keys): a key of
/// up to 15 bytes is held as one integer (its bytes and its length), so
/// finding it hashes two words and compares integers instead of hashing a
/// string and calling `memcmp`; longer keys are kept as strings. The
/// parser looks up a few million such keys per large module.
pub struct NameMap<'k, V> {
    short: FxMap<u128, V>,
    long: FxMap<&'k str, V>,
}

impl<V> Default for NameMap<'_, V> {
    fn default() -> Self {
        NameMap {
            short: FxMap::default(),
            long: FxMap::default(),
        }
    }
}

/// `key` as one integer, if it is at most 15 bytes: its bytes from the
/// lowest, its length in the top byte (so `"a"` and `"a\0"` differ).
#[inline]
fn packed(b: &[u8]) -> Option<u128> {
    let n = b.len();
    // A few loads that overlap rather than a loop over the bytes (a
    // byte at a time cost more than the hashing it saves).
    let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| u64::from(u32::from_le_bytes(b[at..at + 4].try_into().expect("4")));
    let (lo, hi) = match n {
        0 => (0, 0),
        1..=3 => {
            let lo = u64::from(b[0])
                | u64::from(b[n / 2]) << (8 * (n / 2))
                | u64::from(b[n - 1]) << (8 * (n - 1));
            (lo, 0)
        }
        4..=7 => (half(0) | half(n - 4) << (8 * (n - 4)), 0),
        // Bytes 8.. are the top `n - 8` of the last word.
        8..=15 => (word(0), (word(n - 8) >> 8) >> (8 * (15 - n))),
        _ => return None,
    };
    Some(u128::from(lo) | u128::from(hi) << 64 | (n as u128) << 120)
}

impl<'k, V> NameMap<'k, V> {
    #[inline]
    pub fn get(&self, key: &str) -> Option<&V> {
        match packed(key.as_bytes()) {
            Some(k) => self.short.get(&k),
            None => self.long.get(key),
        }
    }

    /// Inserts `value` under `key`; the value it replaces, if any.
    #[inline]
    pub fn insert(&mut self, key: &'k str, value: V) -> Option<V> {
        match packed(key.as_bytes()) {
            Some(k) => self.short.insert(k, value),
            None => self.long.insert(key, value),
        }
    }

    /// Empties the map, keeping its room.
    pub fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
    }

    /// Room for `n` more keys (most keys are short).
    pub fn reserve(&mut self, n: usize) {
        self.short.reserve(n);
    }
}

/// A map keyed by texts of up to some thirty bytes (the parser's shape
/// texts, `f32[4,128,256]{2,1,0}`), held as two integers as [`NameMap`]
/// holds names; longer texts are kept as strings. It owns its keys.
pub struct TextMap<V> {
    short: FxMap<(u128, u128), V>,
    long: FxMap<Box<str>, V>,
}

impl<V> Default for TextMap<V> {
    fn default() -> Self {
        TextMap {
            short: FxMap::default(),
            long: FxMap::default(),
        }
    }
}

impl<V> TextMap<V> {
    /// The first 16 bytes, then the rest as [`packed`] has it, marked in
    /// its top bit (free there: a length under 16) so that a text of 16
    /// bytes or more never equals a shorter one.
    #[inline]
    fn packed(key: &str) -> Option<(u128, u128)> {
        let b = key.as_bytes();
        match b.len() {
            0..=15 => Some((packed(b)?, 0)),
            16..=31 => {
                let head = u128::from_le_bytes(b[..16].try_into().expect("16 bytes"));
                Some((head, packed(&b[16..])? | 1 << 127))
            }
            _ => None,
        }
    }

    #[inline]
    pub fn get(&self, key: &str) -> Option<&V> {
        match Self::packed(key) {
            Some(k) => self.short.get(&k),
            None => self.long.get(key),
        }
    }

    pub fn insert(&mut self, key: &str, value: V) {
        match Self::packed(key) {
            Some(k) => self.short.insert(k, value),
            None => self.long.insert(key.into(), value),
        };
    }

    /// Adds the keys of `other` this map does not have.
    pub fn add_missing(&mut self, other: TextMap<V>) {
        for (k, v) in other.short {
            self.short.entry(k).or_insert(v);
        }
        for (k, v) in other.long {
            self.long.entry(k).or_insert(v);
        }
    }
}

impl<'k, V> FromIterator<(&'k str, V)> for NameMap<'k, V> {
    fn from_iter<I: IntoIterator<Item = (&'k str, V)>>(iter: I) -> Self {
        let mut map = NameMap::default();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

static DIAGNOSTICS_LOST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` to standard error. A failed write (a full disk, a closed
/// pipe) never panics, as `eprintln!` does: it is remembered, and the
/// command line exits 1 ([`diagnostics_lost`]).
pub fn diag(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    if err
        .write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .is_err()
    {
        DIAGNOSTICS_LOST.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Whether a write to standard error failed ([`diag`], the logger).
pub fn diagnostics_lost() -> bool {
    DIAGNOSTICS_LOST.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether standard output was closed when the program started (`>&-`).
/// Rust's runtime reopens a closed standard descriptor on `/dev/null`
/// (read-write) before `main`, so a module written there would vanish with
/// exit 0; a shell's `>/dev/null` opens it write-only. So: descriptor 1 is
/// `/dev/null` opened for reading and writing. (`1<>/dev/null` looks the
/// same and is refused too.)
pub fn stdout_was_closed() -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: fcntl(F_GETFL) on a descriptor number reads its flags and
        // touches no memory.
        let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
        if flags < 0 {
            return true;
        }
        if flags & libc::O_ACCMODE != libc::O_RDWR {
            return false;
        }
        let (Ok(null), Ok(out)) = (
            std::fs::metadata("/dev/null"),
            std::fs::metadata("/proc/self/fd/1"),
        ) else {
            return false;
        };
        null.rdev() == out.rdev() && out.rdev() != 0
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The `log` logger of the command line: `[LEVEL] message` lines on
/// standard error, written with [`diag`] (a failed write is an exit 1,
/// not a panic or a lost line passed over in silence).
pub struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            diag(&format!("[{}] {}\n", record.level(), record.args()));
        }
    }

    fn flush(&self) {}
}

/// Installs [`StderrLogger`] at `level` (once; later calls change the level).
pub fn init_logger(level: log::LevelFilter) {
    static LOGGER: StderrLogger = StderrLogger;
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(level);
}

/// Text for a message, cut short when long.
pub fn clip(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// `items` cut into consecutive runs, each closed once its weight reaches
/// `limit` (the last may weigh less): work split for threads or batches
/// without reordering it.
pub fn runs_by_weight<T>(items: &[T], limit: usize, weight: impl Fn(&T) -> usize) -> Vec<&[T]> {
    let mut runs = Vec::new();
    let (mut start, mut sum) = (0, 0);
    for (i, item) in items.iter().enumerate() {
        sum += weight(item);
        if sum >= limit || i + 1 == items.len() {
            runs.push(items.get(start..=i).unwrap_or_default());
            (start, sum) = (i + 1, 0);
        }
    }
    runs
}

/// Large output buffers handed back once written, for the next ones to be
/// made in: glibc gives a large freed block back to the system, and a
/// fresh one is faulted in again page by page (in a VM, some 3 µs a page,
/// a tenth of a conversion's time). At most `max` are kept, so that the
/// memory held stays that of the few largest in flight.
pub struct Spares<T> {
    kept: std::sync::Mutex<Vec<T>>,
    max: usize,
}

impl<T> Spares<T> {
    pub fn new(max: usize) -> Spares<T> {
        Spares {
            kept: std::sync::Mutex::new(Vec::new()),
            max,
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<T>> {
        // A buffer list stays a buffer list whoever panicked holding it.
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A buffer given back, if any.
    pub fn take(&self) -> Option<T> {
        self.kept().pop()
    }

    /// Keeps `buffer` for a later `take`, or drops it if `max` are kept.
    pub fn give(&self, buffer: T) {
        let mut kept = self.kept();
        if kept.len() < self.max {
            kept.push(buffer);
        }
    }
}

/// The cores this process may run on (its CPU affinity and cgroup quota),
/// read once: the standard library reads three files on every call, and
/// a large module asks once per batch.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Threads for `items` items of parallel work: one each, at most one per
/// core, and one in all when `parallel` is false (what [`par_map`] starts).
pub fn threads_for(items: usize, parallel: bool) -> usize {
    match parallel {
        true => cores().min(items).min(16),
        false => 1,
    }
}

/// `f` over `items` on the machine's cores (each thread with its own
/// `init()` state), results in the items' order.
pub fn par_map<T: Sync, R: Send, W>(
    items: &[T],
    parallel: bool,
    init: impl Fn() -> W + Sync,
    f: impl Fn(&mut W, usize, &T) -> R + Sync,
) -> Vec<R> {
    par_map_beside(items, parallel, init, f, || ()).0
}

/// [`par_map`], with the heavy items (each over a 64th of the total
/// `weight`) taken first, heaviest first, and the rest in order; results
/// still in the items' order. Taken in order, a large item near the end
/// (the entry computation, last in a module) runs alone while the other
/// cores wait. The others keep their order: neighbours share shapes and
/// metadata, which each thread's caches then hold (taking every item by
/// weight cost more than it saved).
pub fn par_map_heavy_first<T: Sync, R: Send, W>(
    items: &[T],
    parallel: bool,
    weight: impl Fn(&T) -> usize,
    init: impl Fn() -> W + Sync,
    f: impl Fn(&mut W, usize, &T) -> R + Sync,
) -> Vec<R> {
    if threads_for(items.len(), parallel) <= 1 {
        return par_map_in(items, None, parallel, init, f, || ()).0;
    }
    let weights: Vec<usize> = items.iter().map(weight).collect();
    let heavy = weights.iter().sum::<usize>() / 64;
    let mut order: Vec<usize> = (0..items.len()).collect();
    // Stable: the light ones keep their order behind the heavy ones.
    order.sort_by_key(|&i| {
        let w = weights.get(i).copied().unwrap_or(0);
        std::cmp::Reverse(if w > heavy { w } else { 0 })
    });
    par_map_in(items, Some(&order), parallel, init, f, || ()).0
}

/// [`par_map`], with `beside` run on the calling thread meanwhile (work
/// that cannot move to another thread, such as reading the input).
pub fn par_map_beside<T: Sync, R: Send, W, B>(
    items: &[T],
    parallel: bool,
    init: impl Fn() -> W + Sync,
    f: impl Fn(&mut W, usize, &T) -> R + Sync,
    beside: impl FnOnce() -> B,
) -> (Vec<R>, B) {
    par_map_in(items, None, parallel, init, f, beside)
}

/// [`par_map_beside`], the threads taking the items in `order` (a
/// permutation of their positions; `None`: in order). One thread takes
/// them in order: the results are the same either way.
fn par_map_in<T: Sync, R: Send, W, B>(
    items: &[T],
    order: Option<&[usize]>,
    parallel: bool,
    init: impl Fn() -> W + Sync,
    f: impl Fn(&mut W, usize, &T) -> R + Sync,
    beside: impl FnOnce() -> B,
) -> (Vec<R>, B) {
    let threads = threads_for(items.len(), parallel);
    if threads <= 1 {
        let b = beside();
        let mut w = init();
        let results = items
            .iter()
            .enumerate()
            .map(|(i, x)| f(&mut w, i, x))
            .collect();
        return (results, b);
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (parts, b): (Vec<Vec<(usize, R)>>, B) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut w = init();
                    let mut out = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(i) = order.map_or(Some(k), |o| o.get(k).copied()) else {
                            break;
                        };
                        let Some(x) = items.get(i) else { break };
                        out.push((i, f(&mut w, i, x)));
                    }
                    out
                })
            })
            .collect();
        let b = beside();
        let parts = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        (parts, b)
    });
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    let results = slots
        .into_iter()
        .map(|r| r.expect("every item is mapped"))
        .collect();
    (results, b)
}

/// `f` over `items` on the machine's cores (each thread with its own
/// `init()` state), each result handed to `sink` in the items' order as
/// soon as it and those before it are done: the output streams while
/// later items are mapped, and no thread waits for a batch to end. The
/// results taken and not handed over yet weigh at most `ahead` (by
/// `weight`; a single item may weigh more), which bounds the memory they
/// hold. The first error of `sink` stops the work and is returned.
pub fn par_for_each_in_order<T: Sync, R: Send, W, E>(
    items: &[T],
    parallel: bool,
    ahead: usize,
    weight: impl Fn(&T) -> usize + Sync,
    init: impl Fn() -> W + Sync,
    f: impl Fn(&mut W, &T) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    let threads = threads_for(items.len(), parallel);
    if threads <= 1 {
        let mut w = init();
        return items.iter().try_for_each(|x| sink(f(&mut w, x)));
    }
    let queue = OrderedQueue {
        state: std::sync::Mutex::new(QueueState {
            next: 0,
            handed: 0,
            weight_ahead: 0,
            done: std::collections::VecDeque::new(),
            ready: 0,
            total: items.len(),
            stop: false,
            sink_waiting: false,
            takers_waiting: 0,
        }),
        sink_wakes: std::sync::Condvar::new(),
        room: std::sync::Condvar::new(),
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    // A panic stops the others and wakes the one handing
                    // over, which would otherwise wait for its result.
                    let _stop_on_panic = StopOnPanic(&queue);
                    let mut w = init();
                    let mut q = queue.lock();
                    while let (Some(i), locked) = queue.take(q, items, ahead, &weight) {
                        drop(locked);
                        let r = f(&mut w, &items[i]);
                        // One lock to hand in a result and take the next item.
                        q = queue.finish(i, r);
                    }
                })
            })
            .collect();
        let mut result = Ok(());
        let mut run = std::collections::VecDeque::new();
        let mut handed = 0;
        let mut handed_weight = 0;
        'runs: while handed < items.len() {
            if !queue.next_run(handed_weight, &mut run) {
                break;
            }
            handed_weight = 0;
            while let Some(r) = run.pop_front() {
                handed_weight += weight(&items[handed]);
                handed += 1;
                if let Err(e) = sink(r) {
                    queue.stop();
                    result = Err(e);
                    break 'runs;
                }
            }
        }
        for h in handles {
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
        result
    })
}

/// A sink that caught up sleeps until this many results are ready in
/// order (or every result taken is): one wake-up per run of small items,
/// not one per item. Waking a thread is a system call, and on a module of
/// 5k computations a wake-up per item was 18k futex calls and as many
/// context switches.
const SINK_BATCH: usize = 32;

/// The work of [`par_for_each_in_order`]: items are taken in order, so the
/// next one to hand over is always taken (being mapped, or done).
struct OrderedQueue<R> {
    state: std::sync::Mutex<QueueState<R>>,
    /// The sink waits here for results.
    sink_wakes: std::sync::Condvar,
    /// Mapping threads wait here for room ahead.
    room: std::sync::Condvar,
}

struct QueueState<R> {
    /// The next item to take.
    next: usize,
    /// The next item to hand over.
    handed: usize,
    /// The weight of the items taken and not handed over.
    weight_ahead: usize,
    /// The results from `handed` on (`None`: still being mapped).
    done: std::collections::VecDeque<Option<R>>,
    /// How many results at the front of `done` are ready, in a row.
    ready: usize,
    /// How many items there are.
    total: usize,
    /// A thread panicked or the sink failed: take nothing more.
    stop: bool,
    /// Whether the sink sleeps (only then is it woken: a notify is a
    /// system call even with no one waiting).
    sink_waiting: bool,
    /// Mapping threads asleep for room ahead.
    takers_waiting: usize,
}

impl<R> QueueState<R> {
    /// Whether a sleeping sink has enough to do to be woken: a run of
    /// results, or every result taken when no more will come until it
    /// hands over (all items taken, or the mapping threads wait for room).
    fn sink_has_a_run(&self) -> bool {
        self.ready >= SINK_BATCH
            || (self.ready > 0
                && self.ready == self.done.len()
                && (self.next == self.total || self.takers_waiting > 0))
    }
}

impl<R> OrderedQueue<R> {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState<R>> {
        // The state stays consistent: no code panics while holding it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The next item to map, once there is room ahead; `None` when all are
    /// taken or the work stopped. `q` is the locked state, returned locked.
    fn take<'q, T>(
        &'q self,
        mut q: std::sync::MutexGuard<'q, QueueState<R>>,
        items: &[T],
        ahead: usize,
        weight: impl Fn(&T) -> usize,
    ) -> (Option<usize>, std::sync::MutexGuard<'q, QueueState<R>>) {
        loop {
            let Some(item) = items.get(q.next) else {
                return (None, q);
            };
            if q.stop {
                return (None, q);
            }
            let w = weight(item);
            if q.weight_ahead == 0 || q.weight_ahead + w <= ahead {
                let i = q.next;
                q.next += 1;
                q.weight_ahead += w;
                q.done.push_back(None);
                return (Some(i), q);
            }
            q.takers_waiting += 1;
            // The sink may sleep waiting for more results than will come
            // before it makes room.
            if q.sink_waiting && q.sink_has_a_run() {
                self.sink_wakes.notify_one();
            }
            q = self
                .room
                .wait(q)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            q.takers_waiting -= 1;
        }
    }

    /// Hands in the result of item `i`; returns the state locked.
    fn finish(&self, i: usize, r: R) -> std::sync::MutexGuard<'_, QueueState<R>> {
        let mut q = self.lock();
        let at = i - q.handed;
        q.done[at] = Some(r);
        if at == q.ready {
            q.ready += 1;
            while q.done.get(q.ready).is_some_and(Option::is_some) {
                q.ready += 1;
            }
            if q.sink_waiting && q.sink_has_a_run() {
                self.sink_wakes.notify_one();
            }
        }
        q
    }

    /// The results ready in order, into `run`, once there are some
    /// (`false` if the work stopped). `handed_weight`: the weight of the
    /// run before, handed over since: it counted ahead until now, so that
    /// the results held weigh at most `ahead` however many a run takes.
    /// One lock per run, not per result.
    fn next_run(&self, handed_weight: usize, run: &mut std::collections::VecDeque<R>) -> bool {
        let mut q = self.lock();
        q.weight_ahead -= handed_weight;
        if handed_weight > 0 && q.takers_waiting > 0 {
            self.room.notify_all();
        }
        loop {
            if q.ready > 0 {
                let n = q.ready;
                run.extend(q.done.drain(..n).flatten());
                q.ready = 0;
                q.handed += n;
                return true;
            }
            if q.stop {
                return false;
            }
            q.sink_waiting = true;
            q = self
                .sink_wakes
                .wait(q)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            q.sink_waiting = false;
        }
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.sink_wakes.notify_all();
        self.room.notify_all();
    }
}

struct StopOnPanic<'q, R>(&'q OrderedQueue<R>);

impl<R> Drop for StopOnPanic<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{NameMap, TextMap};

    #[test]
    fn name_maps_tell_every_short_key_apart() {
        let mut keys: Vec<String> = vec![String::new(), "a".into(), "a\0".into(), "\0".into()];
        for n in 1..=20 {
            let k: String = (0..n)
                .map(|i| (b'a' + (i * 7 % 26) as u8) as char)
                .collect();
            let mut twin = k.clone();
            twin.push('x');
            keys.push(k);
            keys.push(twin);
            // The same bytes in the overlap of two loads, a different one after.
            keys.push(format!("{}{}", "b".repeat(n), "c"));
            keys.push("b".repeat(n + 1));
        }
        keys.sort();
        keys.dedup();
        let map: NameMap<usize> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k), Some(&i), "{k:?}");
        }
        assert_eq!(map.get("zz"), None);
        assert_eq!(map.get("a-name-longer-than-fifteen"), None);
        let mut texts = TextMap::default();
        for (i, k) in keys.iter().enumerate() {
            texts.insert(k, i);
        }
        // Sixteen bytes whose last is a small number, against the texts
        // of up to 15 bytes whose packed form has that top byte.
        let odd = "abcdefghijklmno\u{1}";
        texts.insert(odd, usize::MAX);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(texts.get(k), Some(&i), "{k:?}");
        }
        assert_eq!(texts.get(odd), Some(&usize::MAX));
        let mut more = TextMap::default();
        more.insert("f32[48,4,128,256]{3,2,1,0} and more than thirty-one", 1);
        more.insert("a", 7);
        texts.add_missing(more);
        assert_eq!(texts.get("a"), keys.iter().position(|k| k == "a").as_ref());
        assert_eq!(
            texts.get("f32[48,4,128,256]{3,2,1,0} and more than thirty-one"),
            Some(&1)
        );
    }

    #[test]
    fn spares_keep_at_most_max() {
        let spares = super::Spares::new(2);
        assert_eq!(spares.take(), None::<Vec<u8>>);
        for n in 1..=3 {
            spares.give(vec![0u8; n]);
        }
        // The third was dropped; the last kept comes back first.
        assert_eq!(spares.take().map(|b| b.len()), Some(2));
        assert_eq!(spares.take().map(|b| b.len()), Some(1));
        assert_eq!(spares.take(), None);
    }

    use super::{par_for_each_in_order, runs_by_weight};
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_close_once_their_weight_reaches_the_limit() {
        let items = [3, 1, 4, 1, 5, 9, 2, 6];
        let runs = runs_by_weight(&items, 5, |&w| w);
        assert_eq!(runs, vec![&[3, 1, 4][..], &[1, 5], &[9], &[2, 6]]);
        // The last run may weigh less; nothing is dropped or reordered.
        let runs = runs_by_weight(&items, 10, |&w| w);
        assert_eq!(runs, vec![&[3, 1, 4, 1, 5][..], &[9, 2], &[6]]);
        assert!(runs_by_weight(&[] as &[usize], 5, |&w| w).is_empty());
        // Weightless items form one run.
        assert_eq!(runs_by_weight(&[0, 0, 0], 1, |&w| w), vec![&[0, 0, 0][..]]);
    }

    /// Work that takes longer for some items, so that they finish out of
    /// order.
    fn uneven(i: &usize) -> usize {
        let rounds = if i % 7 == 0 { 20_000 } else { 10 };
        (0..rounds).fold(*i, |a, k| std::hint::black_box(a ^ k))
    }

    #[test]
    fn results_are_handed_over_in_order() {
        let items: Vec<usize> = (0..300).collect();
        for ahead in [1, 5, 1_000] {
            let mut seen = Vec::new();
            let r: Result<(), ()> = par_for_each_in_order(
                &items,
                true,
                ahead,
                |_| 1,
                || (),
                |_, &i| {
                    std::hint::black_box(uneven(&i));
                    i
                },
                |i| {
                    seen.push(i);
                    Ok(())
                },
            );
            assert_eq!(r, Ok(()));
            assert_eq!(seen, items, "ahead {ahead}");
        }
    }

    #[test]
    fn results_waiting_weigh_at_most_ahead() {
        let items: Vec<usize> = (0..200).collect();
        let waiting = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let r: Result<(), ()> = par_for_each_in_order(
            &items,
            true,
            6,
            |_| 2,
            || (),
            |_, &i| {
                let now = waiting.fetch_add(2, Ordering::SeqCst) + 2;
                most.fetch_max(now, Ordering::SeqCst);
                i
            },
            |_| {
                // A slow writer: unbounded, the mapping would run far ahead.
                std::thread::sleep(std::time::Duration::from_micros(200));
                waiting.fetch_sub(2, Ordering::SeqCst);
                Ok(())
            },
        );
        assert_eq!(r, Ok(()));
        // One item more may start between a hand-over and its count.
        assert!(most.load(Ordering::SeqCst) <= 6 + 2, "{most:?}");
    }

    #[test]
    fn a_failing_sink_stops_the_work() {
        let items: Vec<usize> = (0..10_000).collect();
        let mapped = AtomicUsize::new(0);
        let mut handed = 0;
        let r = par_for_each_in_order(
            &items,
            true,
            8,
            |_| 1,
            || (),
            |_, &i| {
                mapped.fetch_add(1, Ordering::SeqCst);
                i
            },
            |i| {
                handed += 1;
                if i == 20 {
                    Err(i)
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r, Err(20));
        assert_eq!(handed, 21);
        assert!(mapped.load(Ordering::SeqCst) < 100, "{mapped:?}");
    }

    #[test]
    fn a_panic_while_mapping_reaches_the_caller() {
        let items: Vec<usize> = (0..1_000).collect();
        let r = std::panic::catch_unwind(|| {
            par_for_each_in_order(
                &items,
                true,
                4,
                |_| 1,
                || (),
                |_, &i| {
                    assert!(i != 37, "item 37");
                    i
                },
                |_| Ok::<(), ()>(()),
            )
        });
        assert!(r.is_err());
    }

    #[test]
    fn heavy_items_are_taken_first_and_results_stay_in_order() {
        use std::sync::Mutex;
        // Item 7 weighs more than a 64th of the total; the rest do not.
        let weights: Vec<usize> = (0..40).map(|i| if i == 7 { 1_000 } else { 1 }).collect();
        let taken = Mutex::new(Vec::new());
        let results = super::par_map_heavy_first(
            &weights,
            true,
            |&w| w,
            || (),
            |_, i, &w| {
                taken.lock().unwrap().push(i);
                (i, w)
            },
        );
        let expected: Vec<(usize, usize)> = weights.iter().copied().enumerate().collect();
        assert_eq!(results, expected);
        let taken = taken.into_inner().unwrap();
        if super::threads_for(weights.len(), true) > 1 {
            assert_eq!(taken.first(), Some(&7), "{taken:?}");
        }
        // Every light one, once.
        let light: Vec<usize> = taken.iter().copied().filter(|&i| i != 7).collect();
        let mut sorted = light.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..40).filter(|&i| i != 7).collect::<Vec<_>>());
    }
}
