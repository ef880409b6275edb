//! Case operations, typed: what each step of a case does, filed by noun.
//!
//! The parser (`case.rs`) finds an operation's [`Spec`] by name, checks its positional
//! arguments and keys, and hands an [`Args`] reader to the noun's `parse`, which builds
//! that noun's `Op` with typed arguments: an expression is checked for its form and its
//! names when the file is read, a word such as `min` or `rw` becomes what it means, a
//! missing `size=` is an error at its line and column. Running a step is then one
//! `match` ([`run`]) calling the noun's `run`.
//!
//! # Adding an operation
//! 1. In the noun's module (`vmm.rs` for a `cuMem*` VMM call, say): a line in its
//!    `SPECS` (name, positional parameters with `?` for optional ones, keys), a variant
//!    in its `Op` with typed fields, an arm in its `parse` and one in its `run`.
//! 2. A row in `docs/case-format.md`, and a case in `cases/` that uses it.
//!
//! A new noun (`modules`: cuModuleLoad from a PTX or fatbin file in the case's folder,
//! cuModuleGetFunction; `launches`: cuLaunchKernel with grid, block, shared memory and
//! arguments) is a new module here with the same four parts, a variant in [`Op`], its
//! `SPECS` in [`specs`], and one arm in [`parse`] and in [`run`].

pub mod contexts;
pub mod devices;
pub mod fds;
pub mod init;
pub mod memory;
pub mod modules;
pub mod streams;
pub mod vmm;

use crate::case::{Bad, RawArg, Step};
use crate::case_steps::{Exec, Out};
use anyhow::Result;
use std::collections::HashSet;

/// One step's operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Init(init::Op),
    Device(devices::Op),
    Context(contexts::Op),
    Vmm(vmm::Op),
    Memory(memory::Op),
    Stream(streams::Op),
    Fd(fds::Op),
    Module(modules::Op),
    /// A `child { }` block: its steps run in a second process.
    Child(Vec<Step>),
}

/// Runs one operation. `Err` is a failure of the case or the harness; a driver's error
/// code is data in the returned [`Out`].
pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    match op {
        Op::Init(op) => init::run(op, x),
        Op::Device(op) => devices::run(op, x),
        Op::Context(op) => contexts::run(op, x),
        Op::Vmm(op) => vmm::run(op, x),
        Op::Memory(op) => memory::run(op, x),
        Op::Stream(op) => streams::run(op, x),
        Op::Fd(op) => fds::run(op, x),
        Op::Module(op) => modules::run(op, x),
        Op::Child(_) => anyhow::bail!("a child block is run by the executor, not as a step"),
    }
}

/// Builds the typed operation of a step whose name and argument count were checked.
pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    let within = |specs: &[Spec]| specs.iter().any(|s| s.name == name);
    Ok(if within(init::SPECS) {
        Op::Init(init::parse(name, a)?)
    } else if within(devices::SPECS) {
        Op::Device(devices::parse(name, a)?)
    } else if within(contexts::SPECS) {
        Op::Context(contexts::parse(name, a)?)
    } else if within(vmm::SPECS) {
        Op::Vmm(vmm::parse(name, a)?)
    } else if within(memory::SPECS) {
        Op::Memory(memory::parse(name, a)?)
    } else if within(streams::SPECS) {
        Op::Stream(streams::parse(name, a)?)
    } else if within(fds::SPECS) {
        Op::Fd(fds::parse(name, a)?)
    } else if within(modules::SPECS) {
        Op::Module(modules::parse(name, a)?)
    } else {
        return Err((
            1,
            format!("`{name}` has a spec but no parser (a harness bug)"),
        ));
    })
}

/// An operation's name, its positional parameters (`?` marks an optional one) and keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub name: &'static str,
    pub positional: &'static [&'static str],
    pub keys: &'static [&'static str],
}

impl Spec {
    pub const fn new(
        name: &'static str,
        positional: &'static [&'static str],
        keys: &'static [&'static str],
    ) -> Self {
        Self {
            name,
            positional,
            keys,
        }
    }
}

/// Every operation a case may use.
pub fn specs() -> impl Iterator<Item = &'static Spec> {
    [
        init::SPECS,
        devices::SPECS,
        contexts::SPECS,
        vmm::SPECS,
        memory::SPECS,
        streams::SPECS,
        fds::SPECS,
        modules::SPECS,
    ]
    .into_iter()
    .flatten()
}

pub fn spec(name: &str) -> Option<&'static Spec> {
    specs().find(|s| s.name == name)
}

/// An expression over numbers and earlier names (`va+2*g`), checked when the case is
/// read and evaluated when the step runs, when the names have their values.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub text: String,
    pub col: usize,
}

/// A pointer argument: `null`, or an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Ptr {
    Null,
    Expr(Expr),
}

/// Reads one step's arguments into typed values; every error names its column.
pub struct Args<'a> {
    op: &'static str,
    args: &'a [RawArg],
    end_col: usize,
    bound: &'a HashSet<String>,
}

impl<'a> Args<'a> {
    pub fn new(
        op: &'static str,
        args: &'a [RawArg],
        end_col: usize,
        bound: &'a HashSet<String>,
    ) -> Self {
        Self {
            op,
            args,
            end_col,
            bound,
        }
    }

    /// The `i`th positional argument; the parser has checked that required ones exist.
    pub fn word(&self, i: usize) -> &'a RawArg {
        self.positional(i)
            .expect("the parser counted positional arguments")
    }

    pub fn positional(&self, i: usize) -> Option<&'a RawArg> {
        self.args.iter().filter(|a| a.key.is_none()).nth(i)
    }

    pub fn key(&self, k: &str) -> Option<&'a RawArg> {
        self.args.iter().find(|a| a.key.as_deref() == Some(k))
    }

    pub fn keys(&self, k: &'a str) -> impl Iterator<Item = &'a RawArg> + 'a {
        self.args
            .iter()
            .filter(move |a| a.key.as_deref() == Some(k))
    }

    /// An expression: its form, and that each name in it was bound by an earlier step.
    pub fn expr_of(&self, text: &str, col: usize) -> Result<Expr, Bad> {
        let names = crate::expr::check(text).map_err(|e| (col, e))?;
        if let Some(n) = names.iter().find(|n| !self.bound.contains(*n)) {
            return Err((col, format!("`{n}` is not bound by an earlier step")));
        }
        Ok(Expr {
            text: text.to_owned(),
            col,
        })
    }

    pub fn expr(&self, i: usize) -> Result<Expr, Bad> {
        let a = self.word(i);
        self.expr_of(&a.value, a.col)
    }

    pub fn opt_expr(&self, i: usize) -> Result<Option<Expr>, Bad> {
        self.positional(i)
            .map(|a| self.expr_of(&a.value, a.col))
            .transpose()
    }

    pub fn ptr(&self, i: usize) -> Result<Ptr, Bad> {
        let a = self.word(i);
        self.ptr_of(&a.value, a.col)
    }

    fn ptr_of(&self, text: &str, col: usize) -> Result<Ptr, Bad> {
        if text == "null" {
            Ok(Ptr::Null)
        } else {
            Ok(Ptr::Expr(self.expr_of(text, col)?))
        }
    }

    pub fn key_expr(&self, k: &str) -> Result<Option<Expr>, Bad> {
        self.key(k).map(|a| self.value_expr(a)).transpose()
    }

    pub fn key_ptr(&self, k: &str) -> Result<Option<Ptr>, Bad> {
        self.key(k)
            .map(|a| self.ptr_of(&a.value, value_col(a)))
            .transpose()
    }

    /// A key the operation cannot do without (`map` needs `size=`).
    pub fn need_key_expr(&self, k: &str) -> Result<Expr, Bad> {
        self.key_expr(k)?
            .ok_or_else(|| (self.end_col, format!("`{}` needs {k}=", self.op)))
    }

    pub fn value_expr(&self, a: &RawArg) -> Result<Expr, Bad> {
        self.expr_of(&a.value, value_col(a))
    }

    /// `KEY=null`, which passes a NULL pointer for what the key names; no other value.
    pub fn null_key(&self, k: &str) -> Result<bool, Bad> {
        match self.key(k) {
            None => Ok(false),
            Some(a) if a.value == "null" => Ok(true),
            Some(a) => Err((
                value_col(a),
                format!("`{k}=` takes only `null`, found `{}`", a.value),
            )),
        }
    }

    /// A key whose value is one of a few plain numbers (`width=4`).
    pub fn key_choice(&self, k: &str, allowed: &[u64]) -> Result<Option<u64>, Bad> {
        let Some(a) = self.key(k) else {
            return Ok(None);
        };
        let shown: Vec<String> = allowed.iter().map(u64::to_string).collect();
        let bad = || {
            (
                value_col(a),
                format!("`{k}=` is one of {}, found `{}`", shown.join(", "), a.value),
            )
        };
        let v: u64 = a.value.parse().map_err(|_| bad())?;
        if allowed.contains(&v) {
            Ok(Some(v))
        } else {
            Err(bad())
        }
    }

    /// A key whose value is a word from a list, each with what it stands for, or else
    /// an expression (`location=host`, `location=99`).
    pub fn key_word_or_expr<T: Copy>(
        &self,
        k: &str,
        words: &[(&str, T)],
    ) -> Result<Option<WordOr<T>>, Bad> {
        self.key(k)
            .map(|a| word_or_expr(self, &a.value, value_col(a), words))
            .transpose()
    }
}

/// A word with a meaning, or an expression evaluated when the step runs.
#[derive(Debug, Clone, PartialEq)]
pub enum WordOr<T> {
    Word(T),
    Expr(Expr),
}

pub fn word_or_expr<T: Copy>(
    a: &Args<'_>,
    text: &str,
    col: usize,
    words: &[(&str, T)],
) -> Result<WordOr<T>, Bad> {
    if let Some((_, v)) = words.iter().find(|(w, _)| *w == text) {
        return Ok(WordOr::Word(*v));
    }
    a.expr_of(text, col).map(WordOr::Expr).map_err(|(c, e)| {
        let names: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
        (
            c,
            format!("expected one of {} or a number: {e}", names.join(", ")),
        )
    })
}

/// The column of a `key=value`'s value.
fn value_col(a: &RawArg) -> usize {
    a.col + a.key.as_ref().map_or(0, |k| k.len() + 1)
}
