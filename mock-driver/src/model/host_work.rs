//! Host functions in stream order (cuLaunchHostFunc, cuStreamAddCallback), and what
//! waits on them: events recorded after them, streams waiting on those events.
//!
//! Why a queue at all, when the mock runs device work at once: a host function is the
//! program's own code and may take long (the H200 returns from cuLaunchHostFunc at once,
//! and cuStreamQuery then says CUDA_ERROR_NOT_READY: probe pools_ipc, host-callbacks).
//! So each stream with host work has a worker thread that runs its jobs in order; the
//! stream's other work keeps its order by waiting for the queue to drain before it runs
//! (`drain`, called when an async operation is issued). An event recorded on a stream
//! with jobs pending completes when they have run; a stream told to wait on such an event
//! gets a job that waits for it.
//!
//! The queues live apart from the model's state lock: a job runs without any lock held,
//! and waiting for one never holds the state's.

use super::ids::{EventId, StreamId};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, LazyLock};

type Job = Box<dyn FnOnce() + Send>;

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
}

impl Queue {
    fn new() -> std::io::Result<Self> {
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
    by_stream: HashMap<StreamId, Queue>,
    /// Events recorded on a stream with jobs pending: where they complete.
    events: HashMap<EventId, Mark>,
}

static QUEUES: LazyLock<Mutex<Queues>> = LazyLock::new(Default::default);

/// The legacy default stream has two names (0 and CU_STREAM_LEGACY).
fn key(stream: StreamId) -> StreamId {
    if stream == StreamId::LEGACY {
        StreamId::NULL
    } else {
        stream
    }
}

/// Runs `job` on `stream`'s worker after everything queued there before.
pub fn enqueue(stream: StreamId, job: Job) -> std::io::Result<()> {
    let mut q = QUEUES.lock();
    let queue = match q.by_stream.entry(key(stream)) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => e.insert(Queue::new()?),
    };
    queue.submitted += 1;
    queue
        .jobs
        .send(job)
        .expect("a stream's worker lives while its queue does");
    Ok(())
}

/// Where `stream`'s queued jobs end, if any is still to run.
pub fn pending(stream: StreamId) -> Option<Mark> {
    let q = QUEUES.lock();
    let m = q.by_stream.get(&key(stream))?.tail();
    (!m.reached()).then_some(m)
}

/// Waits until `stream`'s queued jobs have run: before work that must follow them.
pub fn drain(stream: StreamId) {
    if let Some(m) = pending(stream) {
        m.wait();
    }
}

/// Waits until every stream's queued jobs have run (cuCtxSynchronize).
pub fn drain_all() {
    let marks: Vec<Mark> = QUEUES.lock().by_stream.values().map(Queue::tail).collect();
    marks.iter().for_each(Mark::wait);
}

/// cuEventRecord: the event completes when `stream`'s queued jobs have run.
pub fn record(event: EventId, stream: StreamId) {
    let mark = pending(stream);
    let mut q = QUEUES.lock();
    match mark {
        Some(m) => q.events.insert(event, m),
        None => q.events.remove(&event),
    };
}

/// Where `event` completes, if it is not complete yet.
pub fn event_pending(event: EventId) -> Option<Mark> {
    let q = QUEUES.lock();
    let m = q.events.get(&event)?;
    (!m.reached()).then(|| m.clone())
}

/// The stream is gone: its worker ends once its queued jobs have run.
pub fn forget_stream(stream: StreamId) {
    QUEUES.lock().by_stream.remove(&key(stream));
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
            Box::new(move || {
                while g.load(Ordering::Acquire) == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
                s.lock().push(1);
            }),
        )
        .unwrap();
        record(ev, s1);
        let waited = event_pending(ev).expect("the event waits for the job");
        enqueue(s2, Box::new(move || waited.wait())).unwrap();
        let s = seen.clone();
        enqueue(s2, Box::new(move || s.lock().push(2))).unwrap();
        assert!(pending(s1).is_some() && pending(s2).is_some());
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            seen.lock().is_empty(),
            "s2 ran before the event it waits on"
        );
        gate.store(1, Ordering::Release);
        drain(s2);
        assert_eq!(*seen.lock(), [1, 2]);
        assert!(event_pending(ev).is_none() && pending(s1).is_none());
        forget_stream(s1);
        forget_stream(s2);
        forget_event(ev);
    }
}
