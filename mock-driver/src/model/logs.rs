//! The driver's error log (cuda.h's CUDA_LOGS, CUDA 12.9): a message for each call the
//! driver refuses, kept in a buffer of at most 25,600 bytes (cuda.h: "the maximum size
//! of the buffer"), the oldest dropped first, and handed to the callbacks registered.
//! Process-wide and usable before cuInit, as cuda.h asks for no initialisation.
//!
//! What cuda.h says and this follows: an iterator is the position of the next message;
//! a dump starts at an iterator (or at the oldest message kept) and moves it past the
//! last message dumped; messages are separated by a newline; a dump into a buffer too
//! small for all of them starts with a line saying so and ends with the most recent
//! message; one too small for any message is refused with a size of 0. What it leaves
//! open (the messages' text, the truncation line's, what a refused dump does to its
//! iterator) awaits the H200's recording (probe api_gaps3).

use std::collections::VecDeque;
use std::sync::Mutex;

/// cuda.h: "The maximum size of the buffer is 25600 bytes."
pub const CAPACITY: usize = 25600;

/// The first line of a dump that holds only the most recent messages.
pub const TRUNCATED: &str = "cumock: earlier log messages were dropped to fit";

/// cuda.h's CUlogLevel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error = 0,
    Warning = 1,
}

/// A registered callback: the program's function and its data, kept as addresses (the
/// function is called on the thread whose call failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Callback {
    pub function: usize,
    pub data: usize,
}

#[derive(Default)]
pub struct Logs {
    /// The messages kept, each with its sequence number, oldest first.
    kept: VecDeque<(u32, String)>,
    /// Their bytes, each with its newline.
    bytes: usize,
    /// The sequence number of the next message (cuLogsCurrent's iterator).
    next: u32,
    callbacks: Vec<(u64, Callback)>,
    next_handle: u64,
}

/// A dump: the text (no NUL), and the iterator past its last message.
#[derive(Debug, PartialEq, Eq)]
pub struct Dump {
    pub text: String,
    pub next: u32,
}

impl Logs {
    /// Keeps a message, dropping the oldest past the capacity; gives the callbacks to
    /// call with it.
    pub fn record(&mut self, message: String) -> Vec<Callback> {
        let message: String = message.chars().filter(|&c| c != '\n').collect();
        self.bytes += message.len() + 1;
        self.kept.push_back((self.next, message));
        self.next = self.next.saturating_add(1);
        while self.bytes > CAPACITY {
            match self.kept.pop_front() {
                Some((_, m)) => self.bytes -= m.len() + 1,
                None => break,
            }
        }
        self.callbacks.iter().map(|&(_, c)| c).collect()
    }

    /// cuLogsCurrent: where the next message will be.
    pub fn current(&self) -> u32 {
        self.next
    }

    /// The messages from `from` (all those kept for None), for a buffer of `room` bytes
    /// with its NUL; None when not even the most recent message fits.
    pub fn dump(&self, from: Option<u32>, room: usize) -> Option<Dump> {
        // Sequence numbers count from 0 and do not wrap in any real run (4 billion
        // refused calls); an iterator past the newest message finds none.
        let oldest = self.kept.front().map_or(self.next, |&(s, _)| s);
        let from = from.unwrap_or(oldest);
        let wanted: Vec<&String> = self
            .kept
            .iter()
            .filter(|&&(s, _)| s >= from)
            .map(|(_, m)| m)
            .collect();
        let lost = from < oldest;
        let all: usize = wanted.iter().map(|m| m.len() + 1).sum();
        let usable = room.saturating_sub(1);
        if wanted.is_empty() {
            return Some(Dump {
                text: String::new(),
                next: self.next,
            });
        }
        if !lost && all <= usable {
            let text = wanted.iter().map(|m| format!("{m}\n")).collect();
            return Some(Dump {
                text,
                next: self.next,
            });
        }
        // The most recent messages that fit after the truncation line.
        let mut left = usable.saturating_sub(TRUNCATED.len() + 1);
        let mut tail = Vec::new();
        for m in wanted.iter().rev() {
            if m.len() + 1 > left {
                break;
            }
            left -= m.len() + 1;
            tail.push(*m);
        }
        if tail.is_empty() {
            return None;
        }
        let mut text = format!("{TRUNCATED}\n");
        for m in tail.iter().rev() {
            text.push_str(m);
            text.push('\n');
        }
        Some(Dump {
            text,
            next: self.next,
        })
    }

    pub fn register(&mut self, callback: Callback) -> u64 {
        self.next_handle += 1;
        self.callbacks.push((self.next_handle, callback));
        self.next_handle
    }

    /// Whether the handle was registered (and is no longer).
    pub fn unregister(&mut self, handle: u64) -> bool {
        let before = self.callbacks.len();
        self.callbacks.retain(|&(h, _)| h != handle);
        self.callbacks.len() != before
    }
}

/// The process's log.
pub static LOGS: Mutex<Option<Logs>> = Mutex::new(None);

/// Runs `f` on the process's log.
pub fn with<R>(f: impl FnOnce(&mut Logs) -> R) -> R {
    let mut guard = LOGS.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(Logs::default))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logs(messages: &[&str]) -> Logs {
        let mut l = Logs::default();
        for m in messages {
            l.record((*m).to_owned());
        }
        l
    }

    #[test]
    fn a_dump_from_an_iterator_holds_the_later_messages_and_moves_it_past_them() {
        let l = logs(&["one", "two", "three"]);
        assert_eq!(l.current(), 3);
        let d = l.dump(Some(1), 100).unwrap();
        assert_eq!(d.text, "two\nthree\n");
        assert_eq!(d.next, 3);
        assert_eq!(l.dump(Some(3), 100).unwrap().text, "");
        assert_eq!(l.dump(None, 100).unwrap().text, "one\ntwo\nthree\n");
        assert_eq!(l.dump(Some(103), 100).unwrap().text, "");
    }

    #[test]
    fn a_small_buffer_gets_the_truncation_line_and_the_latest_messages_or_nothing() {
        let (a, b, c) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
        let l = logs(&[&a, &b, &c]);
        let room = TRUNCATED.len() + 1 + c.len() + 1 + 1;
        assert_eq!(
            l.dump(None, room).unwrap().text,
            format!("{TRUNCATED}\n{c}\n")
        );
        assert_eq!(l.dump(None, room - 1), None);
        // All three fit exactly (with the NUL): no truncation line.
        let all = format!("{a}\n{b}\n{c}\n");
        assert_eq!(l.dump(None, all.len() + 1).unwrap().text, all);
        assert!(l.dump(None, all.len()).unwrap().text.starts_with(TRUNCATED));
    }

    #[test]
    fn the_oldest_messages_go_past_the_capacity() {
        let mut l = Logs::default();
        let m = "x".repeat(999);
        for _ in 0..30 {
            l.record(m.clone());
        }
        assert_eq!(l.kept.len(), CAPACITY / 1000);
        let d = l.dump(Some(0), CAPACITY + TRUNCATED.len() + 2).unwrap();
        assert!(d.text.starts_with(TRUNCATED), "messages were lost");
        assert_eq!(d.text.matches('x').count(), 999 * (CAPACITY / 1000));
    }

    #[test]
    fn callbacks_are_given_until_unregistered() {
        let mut l = Logs::default();
        let c = Callback {
            function: 1,
            data: 2,
        };
        let h = l.register(c);
        assert_eq!(l.record("a".into()), vec![c]);
        assert!(l.unregister(h));
        assert!(!l.unregister(h));
        assert!(l.record("b".into()).is_empty());
    }
}
