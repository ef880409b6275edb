//! Ordering-bug reports (`CUMOCK_MISUSE=1`): happens-before over stream operations, with a
//! vector clock per stream queue and per host thread. Every piece of work issued on a
//! stream gets a stamp (its queue's next sequence number, and the clock it starts with:
//! the issuing thread's, the queue's own, and what CUDA's legacy-stream rules add);
//! event records copy a queue's clock, event waits join it into another queue's, and
//! stream, event and context synchronisation (and queries that say "done") join it into
//! the host thread's, which every later issue carries along.
//!
//! What an operation touched is recorded against its stamp: copies and memsets know their
//! ranges when they run, a kernel what its translations handed out once it has run
//! (`KernelMemory` hands out only the bytes accessed while this is on). Atomic updates do
//! not race with each other. Two operations that
//! touch overlapping bytes, one writing, neither ordered before the other, are an ordering
//! bug: reported once, naming both operations and where the program issued each. A free
//! (cuMemFree, cuMemUnmap, cuMemFreeAsync) touches the whole range: it must be ordered
//! after every use before it, and every use after it is one of freed memory; a new
//! allocation or mapping of the addresses forgets their history.
//!
//! Off (no cost but a flag test) unless misuse messages are asked for.

use super::ids::EventId;
use super::stream_queues::{thread_serial, Order, QueueKey};
use crate::diagnostics::CallSite;
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, LazyLock};

/// How much history is kept: the oldest accesses are dropped past it (an ordering bug
/// between operations that far apart goes unreported, never a false one).
const HISTORY: usize = 8192;
/// The most ordering bugs reported in one process.
const MAX_REPORTS: usize = 20;

/// One side of the clocks: a stream's queue, or a host thread (its frees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Comp {
    Queue(QueueKey),
    Host(u64),
}

type Clock = HashMap<Comp, u64>;

fn join(into: &mut Clock, from: &Clock) {
    for (k, v) in from {
        let e = into.entry(*k).or_insert(0);
        if *e < *v {
            *e = *v;
        }
    }
}

/// An operation, as issued.
pub struct Stamp {
    comp: Comp,
    seq: u64,
    clock: Clock,
    what: String,
    site: CallSite,
    /// A load by a program thread that the trap saw (`host_loaded`).
    host_load: bool,
}

impl Stamp {
    /// Whether `self` is ordered before `other`.
    fn before(&self, other: &Stamp) -> bool {
        other.clock.get(&self.comp).is_some_and(|s| *s >= self.seq)
    }
}

impl std::fmt::Debug for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({:?} #{})", self.what, self.comp, self.seq)
    }
}

/// What an operation did to a range of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    Read,
    Write,
    /// An atomic update: ordered with other atomics by the hardware.
    Atomic,
    Free,
}

struct Access {
    stamp: Arc<Stamp>,
    start: u64,
    end: u64,
    touch: Touch,
}

#[derive(Default)]
struct QueueClock {
    clock: Clock,
    seq: u64,
    order: Option<Order>,
}

#[derive(Default)]
struct Tracker {
    queues: HashMap<QueueKey, QueueClock>,
    hosts: HashMap<u64, Clock>,
    host_seq: HashMap<u64, u64>,
    events: HashMap<EventId, Clock>,
    history: VecDeque<Access>,
    reported: HashSet<(usize, usize)>,
    reports: usize,
    /// Bytes kernels wrote into memory the host reaches, as they left them, until the
    /// host synchronises with them (`settle_host_visible`).
    host_visible: Vec<HostVisibleWrite>,
    /// Per host thread, the records its last synchronisation covered, for the comparison
    /// that follows it; dropped at its next one (a synchronisation that compares nothing,
    /// a synchronous copy, leaves the host free to store to them).
    to_compare: HashMap<u64, Vec<HostVisibleWrite>>,
}

/// What a kernel wrote into page-locked memory of the mock's own or managed memory: the
/// host may load and store it directly, which the mock cannot see. A host store to these
/// bytes before the host has synchronised with the kernel is a race (a GPU may still be
/// writing them); it shows at that synchronisation as bytes that differ from what the
/// kernel left, unless device work ordered after the kernel wrote them meanwhile (then
/// the record is dropped: `Tracker::record`).
struct HostVisibleWrite {
    stamp: Arc<Stamp>,
    start: u64,
    bytes: Vec<u8>,
}

static TRACKER: LazyLock<Mutex<Tracker>> = LazyLock::new(Default::default);

thread_local! {
    /// The operation a stream's worker is running (its accesses are that operation's).
    static CURRENT: std::cell::RefCell<Option<Arc<Stamp>>> = const { std::cell::RefCell::new(None) };
    /// The stream whose order the calling thread's copy or memset follows.
    static FOLLOWED: std::cell::Cell<Option<(QueueKey, Order)>> = const { std::cell::Cell::new(None) };
}

pub fn enabled() -> bool {
    crate::diagnostics::misuse_enabled()
}

impl Tracker {
    fn host(&mut self) -> &mut Clock {
        self.hosts.entry(thread_serial()).or_default()
    }

    /// The calling thread's next operation (a free, or a load the trap saw): its clock
    /// ticks, and the stamp carries the clock as it is now.
    fn host_stamp(&mut self, what: &str, site: CallSite, host_load: bool) -> Arc<Stamp> {
        let me = thread_serial();
        let seq = {
            let s = self.host_seq.entry(me).or_insert(0);
            *s += 1;
            *s
        };
        let host = self.host();
        host.insert(Comp::Host(me), seq);
        Arc::new(Stamp {
            comp: Comp::Host(me),
            seq,
            clock: host.clone(),
            what: what.to_owned(),
            site,
            host_load,
        })
    }

    /// After the calling thread's clock advanced (it has seen work finish): the records of
    /// host-reachable writes that are now ordered before it wait for the comparison of
    /// this synchronisation (`settle_host_visible`); those of the last one go.
    fn host_advanced(&mut self) {
        let me = thread_serial();
        let host = self.host().clone();
        let (covered, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.host_visible)
            .into_iter()
            .partition(|w| host.get(&w.stamp.comp).is_some_and(|s| *s >= w.stamp.seq));
        self.host_visible = kept;
        // The host may load these bytes now: no trap on them.
        for w in &covered {
            crate::host_trap::disarm_at(w.start);
        }
        self.to_compare.insert(me, covered);
    }

    /// The clock work issued now on `key` starts from (the queue's, joined with the
    /// issuing thread's and what the legacy rules add), made the queue's own.
    fn bring_up_to_date(&mut self, key: QueueKey, order: Order) -> Clock {
        let host = self.host().clone();
        let implicit: Vec<Clock> = match order {
            Order::NonBlocking => Vec::new(),
            Order::Blocking => self
                .queues
                .get(&QueueKey::Legacy)
                .map(|q| q.clock.clone())
                .into_iter()
                .collect(),
            Order::Legacy => self
                .queues
                .iter()
                .filter(|(k, q)| **k != key && q.order == Some(Order::Blocking))
                .map(|(_, q)| q.clock.clone())
                .collect(),
        };
        let q = self.queues.entry(key).or_default();
        q.order = Some(order);
        join(&mut q.clock, &host);
        for c in &implicit {
            join(&mut q.clock, c);
        }
        q.clock.clone()
    }

    fn issue(&mut self, key: QueueKey, order: Order, what: String) -> Arc<Stamp> {
        self.bring_up_to_date(key, order);
        let q = self.queues.get_mut(&key).expect("made above");
        q.seq += 1;
        q.clock.insert(Comp::Queue(key), q.seq);
        Arc::new(Stamp {
            comp: Comp::Queue(key),
            seq: q.seq,
            clock: q.clock.clone(),
            what,
            site: CallSite::capture_locked(),
            host_load: false,
        })
    }

    fn check(&mut self, new: &Access) -> Vec<String> {
        let mut out = Vec::new();
        for old in &self.history {
            if old.end <= new.start || new.end <= old.start {
                continue;
            }
            match (old.touch, new.touch) {
                (Touch::Read, Touch::Read)
                | (Touch::Atomic, Touch::Atomic)
                | (Touch::Read, Touch::Atomic)
                | (Touch::Atomic, Touch::Read) => continue,
                _ => {}
            }
            if Arc::ptr_eq(&old.stamp, &new.stamp)
                || old.stamp.before(&new.stamp)
                || new.stamp.before(&old.stamp)
            {
                continue;
            }
            let pair = (
                Arc::as_ptr(&old.stamp) as usize,
                Arc::as_ptr(&new.stamp) as usize,
            );
            if self.reports >= MAX_REPORTS || !self.reported.insert(pair) {
                continue;
            }
            self.reports += 1;
            let (lo, hi) = (old.start.max(new.start), old.end.min(new.end));
            let (load, other) = if new.stamp.host_load {
                (&new.stamp, &old.stamp)
            } else {
                (&old.stamp, &new.stamp)
            };
            let kind = match (old.touch, new.touch) {
                _ if load.host_load => format!(
                    "the host loaded bytes that {} writes, before synchronising with it (a GPU \
                     may still have been writing them; the load came after the launch and \
                     before any stream, event or context synchronisation covering it)",
                    other.what
                ),
                (_, Touch::Free) => format!(
                    "{} frees memory that {} still uses, and nothing orders the free after it \
                     (synchronise, or free on the stream that used it)",
                    new.stamp.what, old.stamp.what
                ),
                (Touch::Free, _) => format!(
                    "{} uses memory freed by {} with nothing ordering them",
                    new.stamp.what, old.stamp.what
                ),
                _ => format!(
                    "{} ({}) and {} ({}) touch the same bytes with nothing ordering them \
                     (no event, stream or context synchronisation between them)",
                    new.stamp.what,
                    touch_word(new.touch),
                    old.stamp.what,
                    touch_word(old.touch)
                ),
            };
            out.push(format!(
                "cumock: ordering bug: {kind}: bytes {lo:#x}..{hi:#x}\ncumock:   {} {}\n{}cumock:   {} {}\n{}",
                new.stamp.what,
                made(&new.stamp),
                new.stamp.site.show(),
                old.stamp.what,
                made(&old.stamp),
                old.stamp.site.show()
            ));
        }
        out
    }

    fn record(&mut self, stamp: &Arc<Stamp>, ranges: &[(u64, u64, Touch)]) -> Vec<String> {
        let mut out = Vec::new();
        for &(start, end, touch) in ranges {
            if start >= end {
                continue;
            }
            let a = Access {
                stamp: stamp.clone(),
                start,
                end,
                touch,
            };
            out.extend(self.check(&a));
            if touch != Touch::Read {
                // Device work wrote these bytes after: what an earlier kernel left there
                // is no longer what the host should find.
                let apart = |w: &HostVisibleWrite| {
                    Arc::ptr_eq(&w.stamp, stamp)
                        || w.start + w.bytes.len() as u64 <= start
                        || end <= w.start
                };
                self.host_visible.retain(apart);
                for list in self.to_compare.values_mut() {
                    list.retain(apart);
                }
            }
            if touch == Touch::Free {
                // What was done to the bytes before is checked against the free (above);
                // the free stays, for work that runs after it was issued.
                self.history.retain(|h| h.end <= start || end <= h.start);
            }
            self.history.push_back(a);
        }
        while self.history.len() > HISTORY {
            self.history.pop_front();
        }
        out
    }
}

fn tell(reports: Vec<String>) {
    for r in reports {
        crate::diagnostics::ordering_bug(&r);
    }
}

/// How a report says where an operation came from.
fn made(s: &Stamp) -> &'static str {
    if s.host_load {
        "was made"
    } else {
        "was issued"
    }
}

fn touch_word(t: Touch) -> &'static str {
    match t {
        Touch::Read => "reads",
        Touch::Write => "writes",
        Touch::Atomic => "updates atomically",
        Touch::Free => "frees",
    }
}

/// Work issued on a stream's queue: its stamp (None when reports are off).
pub fn issue(key: QueueKey, order: Order, what: &str) -> Option<Arc<Stamp>> {
    enabled().then(|| TRACKER.lock().issue(key, order, what.to_owned()))
}

/// Runs `job` (on a stream's worker) as the operation `stamp`.
pub fn run_as(stamp: &Option<Arc<Stamp>>, job: impl FnOnce()) {
    let prev = CURRENT.with(|c| c.replace(stamp.clone()));
    job();
    CURRENT.with(|c| *c.borrow_mut() = prev);
}

/// The operation the calling thread runs, if it is a stream's worker running one.
pub fn current() -> Option<Arc<Stamp>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The calling thread is about to run a copy or memset in `key`'s order.
pub fn followed(key: QueueKey, order: Order) {
    if enabled() {
        FOLLOWED.set(Some((key, order)));
    }
}

/// A copy's or memset's ranges: on a stream's worker, the running operation's; in the
/// calling thread, a new operation on the stream it followed (the legacy stream if none),
/// which the thread has seen finish when the call returns.
pub fn touched_now(what: &str, ranges: &[(u64, u64, Touch)]) {
    if !enabled() {
        return;
    }
    if let Some(stamp) = current() {
        let r = TRACKER.lock().record(&stamp, ranges);
        tell(r);
        return;
    }
    let (key, order) = FOLLOWED.take().unwrap_or((QueueKey::Legacy, Order::Legacy));
    let r = {
        let mut t = TRACKER.lock();
        let stamp = t.issue(key, order, what.to_owned());
        let r = t.record(&stamp, ranges);
        // The call returns with its bytes moved: the thread has seen it done.
        let clock = stamp.clock.clone();
        join(t.host(), &clock);
        t.host_advanced();
        r
    };
    tell(r);
}

/// New memory at `[start, start+len)` (an allocation, a mapping): what was done to the
/// addresses before, freed meanwhile, is not its history.
pub fn allocated(start: u64, len: u64) {
    if enabled() && len > 0 {
        let end = start.saturating_add(len);
        TRACKER
            .lock()
            .history
            .retain(|h| h.end <= start || end <= h.start);
    }
}

/// What a kernel touched, once it has run, as the operation its worker ran.
pub fn kernel_touched(ranges: &[(u64, u64, Touch)]) {
    if let Some(stamp) = current() {
        let r = TRACKER.lock().record(&stamp, &merged(ranges));
        tell(r);
    }
}

/// Ranges of one kind of touch, sorted and merged where they meet.
fn merged(ranges: &[(u64, u64, Touch)]) -> Vec<(u64, u64, Touch)> {
    let mut v = ranges.to_vec();
    v.sort_unstable_by_key(|r| (r.2 as u8, r.0));
    let mut out: Vec<(u64, u64, Touch)> = Vec::with_capacity(v.len());
    for r in v {
        match out.last_mut() {
            Some(last) if last.2 == r.2 && r.0 <= last.1 => last.1 = last.1.max(r.1),
            _ => out.push(r),
        }
    }
    out
}

/// A load by the calling thread at `addr` (the instruction at `pc`), which the trap on the
/// mock's page-locked and managed memory saw (`host_trap`) since the thread's last call
/// into the driver: ordered after what the thread had seen finish then, which nothing has
/// changed since (the thread has made no call meanwhile). One byte: the trap does not say
/// how wide the load was, so a wider one that reaches written bytes only past its first
/// is missed, never one invented.
pub fn host_loaded(addr: u64, pc: usize) {
    if !enabled() {
        return;
    }
    let r = {
        let mut t = TRACKER.lock();
        let stamp = t.host_stamp("a load by the host", CallSite::at_instruction(pc), true);
        t.record(&stamp, &[(addr, addr + 1, Touch::Read)])
    };
    tell(r);
}

/// Loads the trap saw in a host function the calling worker ran (`host_trap::program_code`):
/// the host function's own, in its stream's order.
pub fn host_function_loaded(loads: &[(u64, usize)]) {
    if loads.is_empty() || !enabled() {
        return;
    }
    let Some(op) = current() else { return };
    let r = {
        let mut t = TRACKER.lock();
        let mut out = Vec::new();
        for &(addr, pc) in loads {
            let stamp = Arc::new(Stamp {
                comp: op.comp,
                seq: op.seq,
                clock: op.clock.clone(),
                what: format!("a load by the host function of {}", op.what),
                site: CallSite::at_instruction(pc),
                host_load: true,
            });
            out.extend(t.record(&stamp, &[(addr, addr + 1, Touch::Read)]));
        }
        out
    };
    tell(r);
}

/// A free by the calling thread (cuMemFree, cuMemUnmap, the last cuMemRelease): ordered
/// after what the thread has seen finish.
pub fn freed_by_host(what: &str, start: u64, len: u64) {
    if !enabled() || len == 0 {
        return;
    }
    let r = {
        let mut t = TRACKER.lock();
        let stamp = t.host_stamp(what, CallSite::capture_locked(), false);
        t.record(&stamp, &[(start, start + len, Touch::Free)])
    };
    tell(r);
}

/// cuMemFreeAsync: a free issued on a stream, ordered after that stream's work.
pub fn freed_on_stream(key: QueueKey, order: Order, start: u64, len: u64) {
    if !enabled() || len == 0 {
        return;
    }
    let r = {
        let mut t = TRACKER.lock();
        let stamp = t.issue(key, order, "cuMemFreeAsync".to_owned());
        t.record(&stamp, &[(start, start + len, Touch::Free)])
    };
    tell(r);
}

/// cuEventRecord on `key`: the event stands for the queue's clock as of now.
pub fn event_recorded(event: EventId, key: QueueKey, order: Order) {
    if enabled() {
        let mut t = TRACKER.lock();
        let c = t.bring_up_to_date(key, order);
        t.events.insert(event, c);
    }
}

/// cuCtxRecordEvent on `keys`, a context's queues: the event stands for all their clocks
/// as of now.
pub fn event_recorded_all(event: EventId, keys: &[(QueueKey, Order)]) {
    if enabled() {
        let mut t = TRACKER.lock();
        let mut all = Clock::default();
        for (key, order) in keys {
            let c = t.bring_up_to_date(*key, *order);
            join(&mut all, &c);
        }
        t.events.insert(event, all);
    }
}

/// cuStreamWaitEvent: the queue's later work follows what the event stands for.
pub fn stream_waited(key: QueueKey, order: Order, event: EventId) {
    if enabled() {
        let mut t = TRACKER.lock();
        t.bring_up_to_date(key, order);
        if let Some(c) = t.events.get(&event).cloned() {
            join(&mut t.queues.get_mut(&key).expect("made above").clock, &c);
        }
    }
}

/// The calling thread has seen `key`'s work (and, for the legacy stream, the blocking
/// streams') finish: a stream synchronisation or a query that said done.
pub fn stream_done(key: QueueKey, order: Order) {
    if enabled() {
        let mut t = TRACKER.lock();
        let mut clocks: Vec<Clock> = t
            .queues
            .get(&key)
            .map(|q| q.clock.clone())
            .into_iter()
            .collect();
        if order == Order::Legacy {
            clocks.extend(
                t.queues
                    .values()
                    .filter(|q| q.order == Some(Order::Blocking))
                    .map(|q| q.clock.clone()),
            );
        }
        let host = t.host();
        for c in &clocks {
            join(host, c);
        }
        t.host_advanced();
    }
}

/// The calling thread has seen `event` complete.
pub fn event_done(event: EventId) {
    if enabled() {
        let mut t = TRACKER.lock();
        if let Some(c) = t.events.get(&event).cloned() {
            join(t.host(), &c);
        }
        t.host_advanced();
    }
}

/// The calling thread has seen every stream's work finish (cuCtxSynchronize).
pub fn all_done() {
    if enabled() {
        let mut t = TRACKER.lock();
        let clocks: Vec<Clock> = t.queues.values().map(|q| q.clock.clone()).collect();
        let host = t.host();
        for c in &clocks {
            join(host, c);
        }
        t.host_advanced();
    }
}

pub fn forget_event(event: EventId) {
    if enabled() {
        TRACKER.lock().events.remove(&event);
    }
}

/// What the kernel the calling worker runs wrote into memory the host reaches, as it left
/// it: `(start, bytes)`. Records of other work over the same bytes go (this kernel wrote
/// them last).
pub fn kernel_wrote_host_visible(writes: Vec<(u64, Vec<u8>)>) {
    let Some(stamp) = current() else { return };
    let mut t = TRACKER.lock();
    for (start, bytes) in writes {
        let end = start + bytes.len() as u64;
        t.host_visible
            .retain(|w| w.start + w.bytes.len() as u64 <= start || end <= w.start);
        t.host_visible.push(HostVisibleWrite {
            stamp: stamp.clone(),
            start,
            bytes,
        });
    }
    // Bounded as the history is: the oldest go first (a race missed, never a false one).
    let excess = t.host_visible.len().saturating_sub(HISTORY);
    t.host_visible.drain(..excess);
}

/// Right after a synchronisation by the calling thread: the kernels' writes into
/// host-reachable memory it made ordered before the thread are compared with the memory as it is
/// (`read` gives the bytes at an address while the memory is the mock's and alive, None
/// once it is not); a byte that differs was stored by the host before it synchronised
/// with the kernel, which is reported, naming the launch and this synchronisation (the
/// store came between them).
pub fn settle_host_visible(read: impl Fn(u64, usize) -> Option<Vec<u8>>) {
    if !enabled() {
        return;
    }
    let r = {
        let mut t = TRACKER.lock();
        let settled = t.to_compare.remove(&thread_serial()).unwrap_or_default();
        let mut out = Vec::new();
        for w in settled {
            let Some(now) = read(w.start, w.bytes.len()) else {
                continue;
            };
            let differ = |i: &usize| now[*i] != w.bytes[*i];
            let (Some(lo), Some(hi)) = (
                (0..now.len()).find(differ),
                (0..now.len()).rev().find(differ),
            ) else {
                continue;
            };
            if t.reports >= MAX_REPORTS {
                break;
            }
            t.reports += 1;
            let (lo, hi) = (w.start + lo as u64, w.start + hi as u64 + 1);
            out.push(format!(
                "cumock: ordering bug: the host stored to bytes {lo:#x}..{hi:#x} that {} wrote, \
                 before synchronising with it (a GPU may still have been writing them; \
                 the store came after the launch and before this synchronisation)\n\
                 cumock:   {} was issued\n{}cumock:   the synchronisation that found it was called\n{}",
                w.stamp.what,
                w.stamp.what,
                w.stamp.site.show(),
                CallSite::capture_locked().show()
            ));
        }
        out
    };
    tell(r);
}
