//! cumock's conformance harness as a library: case files and their typed operations,
//! the executor, transcripts and their normalisation, the runner, diffs, reports, and
//! `trace2case`. The `cumock` command (`main.rs`) is a thin layer of arguments over it;
//! tests use the same rendering and parsing instead of re-implementing them.
//!
//! - `case`: case files; `expr`: the expressions in them; `ops`: the typed operations of
//!   their steps, by noun; `files`: reading a named file without trusting it;
//! - `driver`: a driver library loaded by path, every entry point typed;
//! - `case_steps`: runs one case's steps against a loaded driver, in this process;
//!   `runner`: runs cases in child processes, one a case;
//! - `transcript`: what each step returned; `normalize`: the passes that make it stable;
//!   `diff`: transcript sets compared; `report`: the conformance matrix as HTML;
//!   `message`: everything the harness prints;
//! - `bench`: `cumock bench`; `profile`: `cumock profile capture`; `trace2case`:
//!   `cumock trace2case`.

pub mod bench;
pub mod case;
pub mod case_steps;
pub mod diff;
// `driver::symbol_name` takes a function pointer only to look its address up with
// dladdr, which never dereferences it; clippy cannot see that through the FFI call.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub mod driver;
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
