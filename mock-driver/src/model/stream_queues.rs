//! Device work in stream order: kernels, host functions (cuLaunchHostFunc,
//! cuStreamAddCallback) and event records, queued per stream and run by the stream's own
//! worker thread, as a GPU runs them apart from the host. A launch returns once its checks
//! pass; what waits for the work (cuStreamSynchronize, cuEventSynchronize,
//! cuCtxSynchronize, a copy on the legacy stream) waits here, from any thread, never
//! holding the model's state lock, so that a running kernel can always take it.
//!
//! Order between streams is CUDA's: work on a blocking stream waits for the legacy
//! default stream's work issued before it, and work on the legacy stream waits for every
//! blocking stream's earlier work; non-blocking streams (CU_STREAM_NON_BLOCKING) wait for
//! nothing but their own. Those waits are marks taken when the work is issued, so they
//! only ever point at earlier work: no cycle, no deadlock. The legacy stream is one
//! queue for the process (not one per context), which orders more than a GPU does across
//! contexts, never less. The per-thread default stream (CU_STREAM_PER_THREAD) is a
//! blocking stream of each thread's own.
//!
//! Copies and memsets still run in the calling thread, after draining what they must
//! follow (`drain`), which keeps their order exact while their bytes move synchronously.
//!
//! When a worker takes its next job is a policy, `CUMOCK_SCHEDULE` ([`Schedule`]): at once
//! (`eager`, the default), at the latest moment the API allows (`lazy`: when something
//! waits for it or asks whether it is done, so that a missing synchronisation reads stale
//! data every time), or after a pseudo-random delay drawn from a seed (`random:SEED`), which
//! varies the order of work on different streams from run to run of different seeds.

use super::ids::{EventId, StreamId};
use parking_lot::{Condvar, Mutex};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

pub type Job = Box<dyn FnOnce() + Send>;

/// How a stream orders itself against the legacy default stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The legacy default stream (NULL, CU_STREAM_LEGACY).
    Legacy,
    /// A stream created without CU_STREAM_NON_BLOCKING, or a per-thread default stream.
    Blocking,
    /// CU_STREAM_NON_BLOCKING.
    NonBlocking,
}

/// Which queue a stream's work goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueueKey {
    Legacy,
    PerThread(u64),
    Stream(StreamId),
}

impl QueueKey {
    fn of(stream: StreamId) -> Self {
        if stream == StreamId::NULL || stream == StreamId::LEGACY {
            QueueKey::Legacy
        } else if stream == StreamId::PER_THREAD {
            QueueKey::PerThread(thread_serial())
        } else {
            QueueKey::Stream(stream)
        }
    }
}

/// The queue a stream's work goes to (the calling thread's, for its per-thread stream).
pub fn key_of(stream: StreamId) -> QueueKey {
    QueueKey::of(stream)
}

/// A number of this thread's own, for its per-thread default stream.
pub(super) fn thread_serial() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static SERIAL: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    SERIAL.with(|s| *s)
}

/// When a stream's worker runs its next job (`CUMOCK_SCHEDULE`, parsed by
/// `cumock_support::settings`): `Eager`, as soon as what it follows has run; `Lazy`, only
/// once something waits for it, or asks whether it is done (a query that says
/// CUDA_ERROR_NOT_READY also asks for the work, so that polling loops end), or after
/// [`LAZY_LIMIT`] with nobody asking: a GPU runs all its work eventually, and a host that
/// spins on a flag the device sets would otherwise wait forever; `Random(seed)`, after a
/// delay of up to [`RANDOM_MAX_DELAY`] drawn from the seed, the queue and the job's place
/// in it.
pub use cumock_support::Schedule;

/// The process's schedule, given once by the process's driver when it is made
/// (`process::driver`); eager until then, and for drivers made otherwise (the tests').
static SCHEDULE: std::sync::OnceLock<Schedule> = std::sync::OnceLock::new();

pub fn set_schedule(schedule: Schedule) {
    let _ = SCHEDULE.set(schedule);
}

fn schedule() -> Schedule {
    SCHEDULE.get().copied().unwrap_or_default()
}

/// Whether work is deferred (`CUMOCK_SCHEDULE=lazy` or `random:SEED`): then the work a
/// GPU may finish after the call returns is queued even where nothing is pending before
/// it (a synchronous memset, a synchronous copy from pageable memory once staged), so that
/// work on other streams with nothing ordering it sees it stale. Under `eager` such work
/// runs in the call when nothing is pending, which is the order the H200 showed (a later
/// memset on a non-blocking stream saw a synchronous one done: probe host_memory,
/// memset-async-and-2d-async).
pub fn deferred() -> bool {
    !matches!(schedule(), Schedule::Eager)
}

/// The longest a job waits under `CUMOCK_SCHEDULE=lazy` when nothing asks for it.
pub const LAZY_LIMIT: std::time::Duration = std::time::Duration::from_millis(250);
/// The longest delay before a job under `CUMOCK_SCHEDULE=random:SEED`.
pub const RANDOM_MAX_DELAY: std::time::Duration = std::time::Duration::from_micros(2000);

/// The delay before job `ticket` of queue `queue` under `random:seed`: a hash of the
/// three (splitmix64), so a seed gives the same delays in every run.
fn random_delay(seed: u64, queue: u64, ticket: u64) -> std::time::Duration {
    let mut z = seed
        .wrapping_add(queue.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(ticket.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    RANDOM_MAX_DELAY.mul_f64((z >> 11) as f64 / (1u64 << 53) as f64)
}

/// How many jobs of a queue have run, up to which one something has asked for, and the
/// jobs not taken yet.
#[derive(Default)]
struct Counts {
    done: u64,
    demanded: u64,
    waiting: VecDeque<Job>,
    /// A thread runs one of the queue's jobs: its worker, or a thread waiting for the
    /// queue that runs them itself (`Mark::wait`). One at a time keeps stream order.
    running: bool,
    /// The stream is gone: its worker ends once nothing is waiting.
    closed: bool,
}

/// How long an idle worker, or a thread waiting for a queue's work, watches for what it
/// waits for before it sleeps on the condition variable. A sleeping thread is woken
/// through the kernel (a futex), which on some hosts costs more than a whole empty launch
/// (2-3 us measured on the H200's host); a short watch lets back-to-back launches and a
/// launch followed by its synchronisation hand over without it, as the CUDA driver itself
/// spins before it blocks (CU_CTX_SCHED_AUTO with spare cores). Only where the host has a
/// core to spare: on one core the watch would only delay the thread it waits for.
const WATCH: Duration = Duration::from_micros(50);

fn may_watch() -> bool {
    static SPARE: LazyLock<bool> =
        LazyLock::new(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1));
    *SPARE
}

std::thread_local! {
    /// The calling thread waits under CU_CTX_SCHED_BLOCKING_SYNC (or for an event made
    /// with CU_EVENT_BLOCKING_SYNC): it sleeps at once rather than watch (`blocking_sync`).
    static BLOCKING_SYNC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, whose waits sleep at once when `blocking` (the context's scheduling flag is
/// CU_CTX_SCHED_BLOCKING_SYNC, or the event waited for was made with
/// CU_EVENT_BLOCKING_SYNC): such a program asked for its waiting threads to yield the
/// core, not spin on it, as the CUDA driver then blocks on a synchronisation primitive.
pub fn blocking_sync<R>(blocking: bool, f: impl FnOnce() -> R) -> R {
    let before = BLOCKING_SYNC.replace(blocking);
    let r = f();
    BLOCKING_SYNC.set(before);
    r
}

#[cfg(test)]
std::thread_local! {
    /// How many times this thread, waiting, watched rather than slept at once.
    static WATCHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Spins until `ready` holds or `WATCH` has passed (the caller then looks again under
/// its lock, so what `ready` last said is not needed).
fn watch(ready: impl Fn() -> bool) {
    if !may_watch() {
        return;
    }
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= WATCH {
            return;
        }
    }
}

#[derive(Default)]
struct Progress {
    counts: Mutex<Counts>,
    /// Jobs pushed and jobs run so far, readable without the lock (`watch`).
    pushed: AtomicU64,
    finished: AtomicU64,
    /// The worker sleeps on `ran` (a waiter then runs jobs itself rather than watch).
    sleeping: std::sync::atomic::AtomicBool,
    /// Notified when a job has run, is queued, and when more is demanded.
    ran: Condvar,
    /// Whether a thread waiting for the queue runs its next jobs itself when the worker
    /// has not taken them (`CUMOCK_SCHEDULE=eager`: a launch and its synchronisation then
    /// cost no hand-over between threads, which on some hosts takes longer than the whole
    /// launch; the other schedules keep jobs on the worker, where they are delayed).
    helps: bool,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.counts.lock();
        write!(
            f,
            "Progress {{ done: {}, demanded: {} }}",
            c.done, c.demanded
        )
    }
}

/// Marks the job a thread took as run when it ends, even by a panic (which the export's
/// boundary catches): the queue goes on.
struct Taken<'a>(&'a Progress);

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let mut c = self.0.counts.lock();
        c.done += 1;
        c.running = false;
        self.0.finished.store(c.done, AtomicOrdering::Release);
        drop(c);
        self.0.ran.notify_all();
    }
}

impl Progress {
    /// Asks for the jobs up to `ticket` (`CUMOCK_SCHEDULE=lazy` runs nothing else).
    fn demand(&self, ticket: u64) {
        let mut c = self.counts.lock();
        if c.demanded < ticket {
            c.demanded = ticket;
            self.ran.notify_all();
        }
    }

    /// Before job `ticket` of queue `queue` runs: what the schedule says to wait.
    fn before(&self, schedule: Schedule, queue: u64, ticket: u64) {
        match schedule {
            Schedule::Eager => {}
            Schedule::Lazy => {
                let until = std::time::Instant::now() + LAZY_LIMIT;
                let mut c = self.counts.lock();
                while c.demanded < ticket {
                    if self.ran.wait_until(&mut c, until).timed_out() {
                        break;
                    }
                }
            }
            Schedule::Random(seed) => {
                std::thread::sleep(random_delay(seed, queue, ticket));
            }
        }
    }
}

/// A point in a stream's queue: reached once the jobs up to `ticket` have run (and, for
/// a context's event, cuCtxRecordEvent, once the points in `also`, in the context's other
/// queues, are reached too).
#[derive(Debug, Clone)]
pub struct Mark {
    progress: Arc<Progress>,
    ticket: u64,
    also: Vec<Mark>,
}

impl Mark {
    pub fn reached(&self) -> bool {
        self.progress.counts.lock().done >= self.ticket && self.also.iter().all(Mark::reached)
    }

    /// Whether the work is done; if not, asks for it (a query that says "not yet").
    pub fn query(&self) -> bool {
        let mine = self.progress.counts.lock().done >= self.ticket;
        if !mine {
            self.progress.demand(self.ticket);
        }
        // Every queue is asked, not only the first one found behind.
        self.also.iter().fold(mine, |done, m| m.query() && done)
    }

    pub fn wait(&self) {
        self.wait_point();
        self.also.iter().for_each(Mark::wait);
    }

    fn wait_point(&self) {
        let p = &*self.progress;
        p.demand(self.ticket);
        // Work a worker has taken may end within the watch: no sleep, no wake-up.
        if p.helps && !BLOCKING_SYNC.get() && p.finished.load(AtomicOrdering::Acquire) < self.ticket
        {
            #[cfg(test)]
            WATCHED.set(WATCHED.get() + 1);
            // (A sleeping worker leaves its jobs to this thread: the loop below.)
            watch(|| {
                p.finished.load(AtomicOrdering::Acquire) >= self.ticket
                    || p.sleeping.load(AtomicOrdering::Acquire)
            });
        }
        let mut c = p.counts.lock();
        while c.done < self.ticket {
            if p.helps && !c.running {
                if let Some(job) = c.waiting.pop_front() {
                    c.running = true;
                    drop(c);
                    let _taken = Taken(p);
                    // Its faults on the load trap's pages are the mock's, as on a worker.
                    let _mine = crate::diagnostics::misuse_enabled()
                        .then(crate::host_trap::mock_thread)
                        .flatten();
                    job();
                    drop(_taken);
                    c = p.counts.lock();
                    continue;
                }
            }
            p.ran.wait(&mut c);
        }
    }
}

struct Queue {
    progress: Arc<Progress>,
    submitted: u64,
    order: Order,
}

impl Queue {
    fn new(order: Order) -> std::io::Result<Self> {
        let schedule = schedule();
        let progress = Arc::new(Progress {
            helps: schedule == Schedule::Eager,
            ..Default::default()
        });
        let p = progress.clone();
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::thread::Builder::new()
            .name("cumock-stream".into())
            .spawn(move || {
                // Its faults on the load trap's pages are the mock's, not the program's.
                let _mine = crate::diagnostics::misuse_enabled()
                    .then(crate::host_trap::mock_thread)
                    .flatten();
                loop {
                    let (job, ticket) = {
                        let mut c = p.counts.lock();
                        if c.waiting.is_empty() && !c.closed && schedule == Schedule::Eager {
                            // Idle: watch for the next job before sleeping.
                            let seen = p.pushed.load(AtomicOrdering::Acquire);
                            drop(c);
                            watch(|| p.pushed.load(AtomicOrdering::Acquire) != seen);
                            c = p.counts.lock();
                        }
                        while c.running || c.waiting.is_empty() {
                            // Ends when the stream is destroyed and drained.
                            if c.closed && c.waiting.is_empty() {
                                return;
                            }
                            p.sleeping.store(true, AtomicOrdering::Release);
                            p.ran.wait(&mut c);
                            p.sleeping.store(false, AtomicOrdering::Release);
                        }
                        c.running = true;
                        let ticket = c.done + 1;
                        (c.waiting.pop_front().expect("a job waits"), ticket)
                    };
                    let _taken = Taken(&p);
                    p.before(schedule, serial, ticket);
                    job();
                }
            })?;
        Ok(Self {
            progress,
            submitted: 0,
            order,
        })
    }

    fn push(&mut self, job: Job) {
        self.submitted += 1;
        self.progress.counts.lock().waiting.push_back(job);
        self.progress.pushed.fetch_add(1, AtomicOrdering::Release);
        self.progress.ran.notify_all();
    }

    fn tail(&self) -> Mark {
        Mark {
            progress: self.progress.clone(),
            ticket: self.submitted,
            also: Vec::new(),
        }
    }
}

impl Drop for Queue {
    /// The stream is gone: its worker ends once its queued jobs have run.
    fn drop(&mut self) {
        self.progress.counts.lock().closed = true;
        self.progress.ran.notify_all();
    }
}

#[derive(Default)]
struct Queues {
    by_stream: HashMap<QueueKey, Queue>,
    /// Events recorded on a stream with work pending: where they complete.
    events: HashMap<EventId, Mark>,
    /// What cuCtxWaitEvent made contexts wait for, for queues not made yet (`wait_all`).
    context_waits: Vec<Mark>,
}

impl Queues {
    /// The unfinished work that work issued now on a stream of `order` must follow, beside
    /// its own queue's (CUDA's legacy default stream semantics).
    fn implicit_marks(&self, key: QueueKey, order: Order) -> Vec<Mark> {
        // A queue not made yet follows the contexts' waits (`wait_all`).
        let mut marks: Vec<Mark> = if self.by_stream.contains_key(&key) {
            Vec::new()
        } else {
            self.context_waits
                .iter()
                .filter(|m| !m.reached())
                .cloned()
                .collect()
        };
        let want = match order {
            Order::Legacy => Order::Blocking,
            Order::Blocking => Order::Legacy,
            Order::NonBlocking => return marks,
        };
        marks.extend(
            self.by_stream
                .iter()
                .filter(|(k, q)| **k != key && q.order == want)
                .map(|(_, q)| q.tail())
                .filter(|m| !m.reached()),
        );
        marks
    }
}

static QUEUES: LazyLock<Mutex<Queues>> = LazyLock::new(Default::default);

/// Runs `job` on `stream`'s worker after everything it must follow: the stream's earlier
/// work, and the legacy stream's (or, for the legacy stream, the blocking streams').
/// `what` names the work in ordering-bug reports (`ordering`).
pub fn enqueue(stream: StreamId, order: Order, what: &str, job: Job) -> std::io::Result<()> {
    let key = QueueKey::of(stream);
    let stamp = super::ordering::issue(key, order, what);
    let job: Job = match stamp {
        Some(stamp) => Box::new(move || super::ordering::run_as(&Some(stamp), job)),
        None => job,
    };
    let mut q = QUEUES.lock();
    let after = q.implicit_marks(key, order);
    let queue = match q.by_stream.entry(key) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => e.insert(Queue::new(order)?),
    };
    let job: Job = if after.is_empty() {
        job
    } else {
        Box::new(move || {
            after.iter().for_each(Mark::wait);
            job()
        })
    };
    queue.push(job);
    Ok(())
}

/// What a synchronisation of `stream` waits for: its own queued work, and for the legacy
/// stream also the blocking streams' (a GPU's legacy stream waits for them).
fn sync_marks(stream: StreamId, order: Order) -> Vec<Mark> {
    let key = QueueKey::of(stream);
    let q = QUEUES.lock();
    let mut marks: Vec<Mark> = q.by_stream.get(&key).map(Queue::tail).into_iter().collect();
    if order == Order::Legacy {
        marks.extend(q.implicit_marks(key, order));
    }
    marks.retain(|m| !m.reached());
    marks
}

/// The points work issued now on `stream` follows (its queue's tail and what the legacy
/// semantics add), not reached yet: where a cuMemFreeAsync issued now completes.
pub fn marks_before(stream: StreamId, order: Order) -> Vec<Mark> {
    let key = QueueKey::of(stream);
    let q = QUEUES.lock();
    let mut marks: Vec<Mark> = q.by_stream.get(&key).map(Queue::tail).into_iter().collect();
    marks.extend(q.implicit_marks(key, order));
    marks.retain(|m| !m.reached());
    marks
}

/// Whether `stream` has work that has not run yet (cuStreamQuery's CUDA_ERROR_NOT_READY);
/// asks for that work (`Mark::query`).
pub fn pending(stream: StreamId, order: Order) -> bool {
    let marks = sync_marks(stream, order);
    marks.iter().for_each(|m| {
        m.query();
    });
    !marks.is_empty()
}

/// Waits until what `stream`'s synchronisation covers has run: before work that must
/// follow it in the calling thread, or for cuStreamSynchronize.
pub fn drain(stream: StreamId, order: Order) {
    sync_marks(stream, order).iter().for_each(Mark::wait);
}

/// Waits until what work issued now on `stream` must follow has run, before that work
/// runs in the calling thread (a copy of pageable memory, a memset): the stream's own
/// queue, and what CUDA's legacy semantics add for its order (for a blocking or
/// per-thread default stream, the legacy stream's earlier work).
pub fn follow(stream: StreamId, order: Order) {
    let marks = {
        let key = QueueKey::of(stream);
        let q = QUEUES.lock();
        let mut marks: Vec<Mark> = q.by_stream.get(&key).map(Queue::tail).into_iter().collect();
        marks.extend(q.implicit_marks(key, order));
        marks
    };
    marks.iter().for_each(Mark::wait);
    super::ordering::followed(QueueKey::of(stream), order);
}

/// Waits until every stream's queued work has run (cuCtxSynchronize).
pub fn drain_all() {
    let marks: Vec<Mark> = QUEUES.lock().by_stream.values().map(Queue::tail).collect();
    marks.iter().for_each(Mark::wait);
    super::ordering::all_done();
}

/// The calling thread has seen what `stream`'s synchronisation covers finish.
pub fn seen_done(stream: StreamId, order: Order) {
    super::ordering::stream_done(QueueKey::of(stream), order);
}

/// cuEventRecord: `stamp` runs when the stream reaches the event (at once if nothing is
/// pending there), and the event completes then.
pub fn record(event: EventId, stream: StreamId, order: Order, stamp: Job) -> std::io::Result<()> {
    super::ordering::event_recorded(event, QueueKey::of(stream), order);
    // Work issued on the stream now would wait for its own queue and for what the legacy
    // semantics add: so does the event.
    let waits = {
        let key = QueueKey::of(stream);
        let q = QUEUES.lock();
        q.by_stream.get(&key).is_some_and(|x| !x.tail().reached())
            || !q.implicit_marks(key, order).is_empty()
    };
    if !waits {
        QUEUES.lock().events.remove(&event);
        stamp();
        return Ok(());
    }
    enqueue(stream, order, "cuEventRecord", stamp)?;
    let mut q = QUEUES.lock();
    let mark = q.by_stream.get(&QueueKey::of(stream)).map(Queue::tail);
    match mark {
        Some(m) => q.events.insert(event, m),
        None => q.events.remove(&event),
    };
    Ok(())
}

/// cuCtxRecordEvent: the event completes, and `stamp` runs, once the work queued so far
/// on each queue that `mine` says is the context's has run (at once if none has work
/// pending). The legacy stream's queue is the process's and a per-thread default stream's
/// is its thread's in every context, so both count as the context's: the event may
/// complete later than a GPU's, never earlier.
pub fn record_all(
    event: EventId,
    mine: impl Fn(StreamId) -> bool,
    stamp: Job,
) -> std::io::Result<()> {
    let mut q = QUEUES.lock();
    let keys: Vec<(QueueKey, Order)> = q
        .by_stream
        .iter()
        .filter(|(k, x)| match k {
            QueueKey::Stream(s) => mine(*s),
            QueueKey::Legacy | QueueKey::PerThread(_) => true,
        } && !x.tail().reached())
        .map(|(k, x)| (*k, x.order))
        .collect();
    if keys.is_empty() {
        q.events.remove(&event);
        drop(q);
        super::ordering::event_recorded_all(event, &[]);
        stamp();
        return Ok(());
    }
    // Each queue gets a job; the last of them to run stamps the event.
    let left = Arc::new(std::sync::atomic::AtomicUsize::new(keys.len()));
    let stamp = Arc::new(Mutex::new(Some(stamp)));
    let mut marks = Vec::new();
    for (key, _) in &keys {
        let (left, stamp) = (left.clone(), stamp.clone());
        let queue = q.by_stream.get_mut(key).expect("listed above");
        queue.push(Box::new(move || {
            if left.fetch_sub(1, AtomicOrdering::AcqRel) == 1 {
                if let Some(stamp) = stamp.lock().take() {
                    stamp();
                }
            }
        }));
        marks.push(queue.tail());
    }
    let mut mark = marks.remove(0);
    mark.also = marks;
    q.events.insert(event, mark);
    drop(q);
    super::ordering::event_recorded_all(event, &keys);
    Ok(())
}

/// cuCtxWaitEvent: the later work of each queue that `mine` says is the context's (the
/// legacy and per-thread ones too, as `record_all` counts them) waits for `mark`; so does
/// the first work of a queue made while it is not reached (a stream used for the first
/// time, whichever its context: a later stream of the context must wait, and the queue
/// does not know its context; other contexts' new streams may wait longer than a GPU's,
/// never less). `None`: the event is complete, nothing to wait for. The queues it joined,
/// for the ordering reports.
pub fn wait_all(mine: impl Fn(StreamId) -> bool, mark: Option<Mark>) -> Vec<(QueueKey, Order)> {
    let mut q = QUEUES.lock();
    let mut joined = Vec::new();
    for (key, queue) in q.by_stream.iter_mut() {
        let ours = match key {
            QueueKey::Stream(s) => mine(*s),
            QueueKey::Legacy | QueueKey::PerThread(_) => true,
        };
        if ours {
            if let Some(m) = mark.clone() {
                queue.push(Box::new(move || m.wait()));
            }
            joined.push((*key, queue.order));
        }
    }
    q.context_waits.retain(|m| !m.reached());
    q.context_waits.extend(mark);
    joined
}

/// Where `event` completes, if it is not complete yet; asks for the work before it (a
/// query, or a wait to come).
pub fn event_pending(event: EventId) -> Option<Mark> {
    let q = QUEUES.lock();
    let m = q.events.get(&event)?;
    (!m.query()).then(|| m.clone())
}

/// The stream is gone: its worker ends once its queued jobs have run.
pub fn forget_stream(stream: StreamId) {
    QUEUES.lock().by_stream.remove(&QueueKey::of(stream));
}

pub fn forget_event(event: EventId) {
    QUEUES.lock().events.remove(&event);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    #[test]
    fn schedules_parse_and_random_delays_follow_the_seed() {
        assert_eq!(Schedule::parse("eager"), Ok(Schedule::Eager));
        assert_eq!(Schedule::parse(""), Ok(Schedule::Eager));
        assert_eq!(Schedule::parse(" lazy "), Ok(Schedule::Lazy));
        assert_eq!(Schedule::parse("random:42"), Ok(Schedule::Random(42)));
        for bad in ["random", "random:x", "sometimes", "random:-1"] {
            let e = Schedule::parse(bad).unwrap_err();
            assert!(e.contains("eager holds"), "{bad}: {e}");
        }
        let d = |seed, q, t| random_delay(seed, q, t);
        assert_eq!(d(7, 1, 2), d(7, 1, 2));
        let delays: Vec<_> = (0..64).map(|t| d(7, 1, t)).collect();
        assert!(delays.iter().all(|x| *x <= RANDOM_MAX_DELAY));
        // Spread over the range, not one value.
        let distinct: std::collections::HashSet<_> = delays.iter().collect();
        assert!(distinct.len() > 32, "{delays:?}");
        assert_ne!(
            (0..16).map(|t| d(7, 1, t)).collect::<Vec<_>>(),
            (0..16).map(|t| d(8, 1, t)).collect::<Vec<_>>()
        );
    }

    /// A thread waiting under CU_CTX_SCHED_BLOCKING_SYNC sleeps at once; otherwise it
    /// watches first.
    #[test]
    fn a_blocking_sync_wait_does_not_watch() {
        let s = StreamId::from_handle(0x7e57_0011);
        for blocking in [true, false, true] {
            let before = WATCHED.get();
            enqueue(
                s,
                Order::NonBlocking,
                "test",
                Box::new(|| std::thread::sleep(Duration::from_millis(5))),
            )
            .unwrap();
            blocking_sync(blocking, || drain(s, Order::NonBlocking));
            assert_eq!(WATCHED.get() > before, !blocking, "blocking {blocking}");
            assert!(!BLOCKING_SYNC.get(), "the setting ends with the call");
        }
        forget_stream(s);
    }

    #[test]
    fn jobs_run_in_order_and_marks_follow_them() {
        // Stream keys no other test uses.
        let (s1, s2, ev) = (
            StreamId::from_handle(0x7e57_0001),
            StreamId::from_handle(0x7e57_0002),
            EventId::from_handle(0x7e57_0003),
        );
        let seen = Arc::new(Mutex::new(Vec::new()));
        let gate = Arc::new(AtomicU32::new(0));
        let (g, s) = (gate.clone(), seen.clone());
        enqueue(
            s1,
            Order::NonBlocking,
            "test",
            Box::new(move || {
                while g.load(Ordering::Acquire) == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
                s.lock().push(1);
            }),
        )
        .unwrap();
        record(ev, s1, Order::NonBlocking, Box::new(|| ())).unwrap();
        let waited = event_pending(ev).expect("the event waits for the job");
        enqueue(
            s2,
            Order::NonBlocking,
            "test",
            Box::new(move || waited.wait()),
        )
        .unwrap();
        let s = seen.clone();
        enqueue(
            s2,
            Order::NonBlocking,
            "test",
            Box::new(move || s.lock().push(2)),
        )
        .unwrap();
        assert!(pending(s1, Order::NonBlocking) && pending(s2, Order::NonBlocking));
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            seen.lock().is_empty(),
            "s2 ran before the event it waits on"
        );
        gate.store(1, Ordering::Release);
        drain(s2, Order::NonBlocking);
        assert_eq!(*seen.lock(), [1, 2]);
        assert!(event_pending(ev).is_none() && !pending(s1, Order::NonBlocking));
        forget_stream(s1);
        forget_stream(s2);
        forget_event(ev);
    }
}
