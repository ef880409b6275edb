//! The driver's error log (cuda.h's CUDA_LOGS, CUDA 12.9): messages of the calls the
//! driver refuses, kept in a buffer of at most 25,600 bytes (cuda.h: "the maximum size
//! of the buffer"), the oldest dropped first, and handed to the callbacks registered.
//! Process-wide and usable before cuInit, as cuda.h asks for no initialisation.
//!
//! As the H200 keeps it (probe api_gaps3, logs-*): a refused call logs two messages, its
//! reason, then `Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemAlloc_v2`; a callback
//! gets the bare message; a dump gives each message a line `[14:03:44.744][<thread>]
//! [CUDA][E] <message>`. An iterator is the position of the next message; a dump moves
//! it past the last message dumped. A dump into a buffer too small for all the messages
//! asked for starts with `The provided buffer is not large enough to hold all messages.
//! Some messages will be missing` and takes the most recent messages, newest first,
//! while what it holds is less than the room, then fills the room with its start, with
//! no NUL, and reports the size it holds in all; a buffer too small for even that line is
//! refused, as is an iterator past the newest message.

use std::collections::VecDeque;
use std::sync::Mutex;

/// cuda.h: "The maximum size of the buffer is 25600 bytes."
pub const CAPACITY: usize = 25600;

/// The first line of a dump that holds only the most recent messages (the H200's).
pub const TRUNCATED: &str =
    "The provided buffer is not large enough to hold all messages. Some messages will be missing";

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
    /// The messages kept, each with its sequence number, oldest first, each as a dump's
    /// line (its prefix, the message, the newline).
    kept: VecDeque<(u32, String)>,
    /// Their bytes.
    bytes: usize,
    /// The sequence number of the next message (cuLogsCurrent's iterator).
    next: u32,
    callbacks: Vec<(u64, Callback)>,
    next_handle: u64,
}

/// A dump: its text in all (no NUL; a buffer gets what fits of it), and the iterator
/// past its last message.
#[derive(Debug, PartialEq, Eq)]
pub struct Dump {
    pub text: String,
    pub next: u32,
}

/// Why a dump is refused (CUDA_ERROR_INVALID_VALUE).
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The iterator is past the newest message.
    PastTheEnd,
    /// The room does not hold the truncation line.
    TooSmall,
}

impl Logs {
    /// Keeps a message, its dump line starting with `prefix`, dropping the oldest past
    /// the capacity; gives the callbacks to call with it.
    pub fn record(&mut self, prefix: &str, message: &str) -> Vec<Callback> {
        let message: String = message.chars().filter(|&c| c != '\n').collect();
        let line = format!("{prefix}{message}\n");
        self.bytes += line.len();
        self.kept.push_back((self.next, line));
        self.next = self.next.saturating_add(1);
        while self.bytes > CAPACITY {
            match self.kept.pop_front() {
                Some((_, l)) => self.bytes -= l.len(),
                None => break,
            }
        }
        self.callbacks.iter().map(|&(_, c)| c).collect()
    }

    /// cuLogsCurrent: where the next message will be.
    pub fn current(&self) -> u32 {
        self.next
    }

    /// The messages from `from` (all those kept for None), for a buffer of `room` bytes.
    pub fn dump(&self, from: Option<u32>, room: usize) -> Result<Dump, Refused> {
        let oldest = self.kept.front().map_or(self.next, |&(s, _)| s);
        let from = from.unwrap_or(oldest);
        if from > self.next {
            return Err(Refused::PastTheEnd);
        }
        let wanted: Vec<&String> = self
            .kept
            .iter()
            .filter(|&&(s, _)| s >= from)
            .map(|(_, l)| l)
            .collect();
        let lost = from < oldest;
        let all: usize = wanted.iter().map(|l| l.len()).sum();
        if wanted.is_empty() || (!lost && all < room) {
            return Ok(Dump {
                text: wanted.into_iter().map(String::as_str).collect(),
                next: self.next,
            });
        }
        let mut held = TRUNCATED.len() + 1;
        if room < held {
            return Err(Refused::TooSmall);
        }
        let mut tail = Vec::new();
        for l in wanted.iter().rev() {
            if held >= room {
                break;
            }
            held += l.len();
            tail.push(*l);
        }
        let mut text = format!("{TRUNCATED}\n");
        for l in tail.iter().rev() {
            text.push_str(l);
        }
        Ok(Dump {
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
            l.record("", m);
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
        assert_eq!(l.dump(Some(103), 100), Err(Refused::PastTheEnd));
    }

    #[test]
    fn each_line_carries_its_prefix() {
        let mut l = Logs::default();
        l.record("[t][1][CUDA][E] ", "refused");
        assert_eq!(l.dump(None, 100).unwrap().text, "[t][1][CUDA][E] refused\n");
    }

    /// The H200's sizes (probe api_gaps3, logs-dump): a header of 92 bytes and messages
    /// of 104 and 98 bytes give 196 for rooms 101 and 140, 600 for 540 and 541.
    #[test]
    fn a_small_buffer_gets_the_truncation_line_and_the_newest_messages_past_the_room() {
        let (r, p) = ("r".repeat(103), "p".repeat(97));
        let l = logs(&["old", &p, &r, &p, &r, &p, &r]);
        let size = |room| l.dump(None, room).unwrap().text.len();
        assert_eq!(TRUNCATED.len() + 1, 92);
        assert_eq!(size(101), 196);
        assert_eq!(size(140), 196);
        assert_eq!(size(540), 600);
        assert_eq!(size(541), 600);
        let text = l.dump(None, 101).unwrap().text;
        assert_eq!(text, format!("{TRUNCATED}\n{r}\n"));
        assert_eq!(l.dump(None, 16), Err(Refused::TooSmall));
        // All of them, with room for the NUL: no truncation line.
        let all = l.dump(None, 10_000).unwrap().text;
        assert!(!all.starts_with(TRUNCATED));
        assert!(l.dump(None, all.len()).unwrap().text.starts_with(TRUNCATED));
    }

    #[test]
    fn the_oldest_messages_go_past_the_capacity() {
        let mut l = Logs::default();
        let m = "x".repeat(999);
        for _ in 0..30 {
            l.record("", &m);
        }
        assert_eq!(l.kept.len(), CAPACITY / 1000);
        let d = l.dump(Some(0), CAPACITY * 2).unwrap();
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
        assert_eq!(l.record("", "a"), vec![c]);
        assert!(l.unregister(h));
        assert!(!l.unregister(h));
        assert!(l.record("", "b").is_empty());
    }
}
