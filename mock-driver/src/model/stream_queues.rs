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

use super::ids::{EventId, StreamId};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, LazyLock};

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

/// How many jobs of a queue have run.
#[derive(Debug, Default)]
struct Progress {
    done: Mutex<u64>,
    ran: Condvar,
}

/// A point in a stream's queue: reached once the jobs up to `ticket` have run.
#[derive(Debug, Clone)]
pub struct Mark {
    progress: Arc<Progress>,
    ticket: u64,
}

impl Mark {
    pub fn reached(&self) -> bool {
        *self.progress.done.lock() >= self.ticket
    }

    pub fn wait(&self) {
        let mut done = self.progress.done.lock();
        while *done < self.ticket {
            self.progress.ran.wait(&mut done);
        }
    }
}

struct Queue {
    jobs: mpsc::Sender<Job>,
    progress: Arc<Progress>,
    submitted: u64,
    order: Order,
}

impl Queue {
    fn new(order: Order) -> std::io::Result<Self> {
        let (jobs, incoming) = mpsc::channel::<Job>();
        let progress = Arc::new(Progress::default());
        let p = progress.clone();
        std::thread::Builder::new()
            .name("cumock-stream".into())
            .spawn(move || {
                // Ends when the stream is destroyed (its sender dropped) and drained.
                for job in incoming {
                    job();
                    *p.done.lock() += 1;
                    p.ran.notify_all();
                }
            })?;
        Ok(Self {
            jobs,
            progress,
            submitted: 0,
            order,
        })
    }

    fn tail(&self) -> Mark {
        Mark {
            progress: self.progress.clone(),
            ticket: self.submitted,
        }
    }
}

#[derive(Default)]
struct Queues {
    by_stream: HashMap<QueueKey, Queue>,
    /// Events recorded on a stream with work pending: where they complete.
    events: HashMap<EventId, Mark>,
}

impl Queues {
    /// The unfinished work that work issued now on a stream of `order` must follow, beside
    /// its own queue's (CUDA's legacy default stream semantics).
    fn implicit_marks(&self, key: QueueKey, order: Order) -> Vec<Mark> {
        let want = match order {
            Order::Legacy => Order::Blocking,
            Order::Blocking => Order::Legacy,
            Order::NonBlocking => return Vec::new(),
        };
        self.by_stream
            .iter()
            .filter(|(k, q)| **k != key && q.order == want)
            .map(|(_, q)| q.tail())
            .filter(|m| !m.reached())
            .collect()
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
    queue.submitted += 1;
    let job: Job = if after.is_empty() {
        job
    } else {
        Box::new(move || {
            after.iter().for_each(Mark::wait);
            job()
        })
    };
    queue
        .jobs
        .send(job)
        .expect("a stream's worker lives while its queue does");
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

/// Whether `stream` has work that has not run yet (cuStreamQuery's CUDA_ERROR_NOT_READY).
pub fn pending(stream: StreamId, order: Order) -> bool {
    !sync_marks(stream, order).is_empty()
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

/// Where `event` completes, if it is not complete yet.
pub fn event_pending(event: EventId) -> Option<Mark> {
    let q = QUEUES.lock();
    let m = q.events.get(&event)?;
    (!m.reached()).then(|| m.clone())
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
