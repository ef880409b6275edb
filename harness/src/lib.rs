//! cumock's conformance harness as a library: case files and their typed operations,
//! the executor, transcripts and their normalisation, the runner, diffs, reports, and
//! `trace2case`. The `cumock` command (`main.rs`) is a thin layer of arguments over it;
//! tests use the same rendering and parsing instead of re-implementing them.

pub mod bench;
pub mod case;
pub mod diff;
// `driver::symbol_name` takes a function pointer only to look its address up with
// dladdr, which never dereferences it; clippy cannot see that through the FFI call.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub mod driver;
pub mod exec;
pub mod expr;
pub mod files;
pub mod message;
pub mod normalize;
pub mod ops;
pub mod profile;
pub mod report;
pub mod runner;
pub mod trace2case;
pub mod transcript;
