//! File descriptors the case itself makes, to hand to cuMemImportFromShareableHandle
//! (one that is not a shareable handle, one that is closed) and to check that exported
//! ones are closed and not inherited.

use super::{Args, Expr, Spec};
use crate::case::Bad;
use crate::case_steps::{Exec, Kind, Out};
use anyhow::{bail, Result};

pub const SPECS: &[Spec] = &[
    Spec::new("devnull", &[], &[]),
    Spec::new("pipe", &[], &[]),
    Spec::new("closed-fd", &[], &[]),
    Spec::new("close", &["fd"], &[]),
    Spec::new("fd-cloexec", &["fd"], &[]),
];

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    DevNull,
    Pipe,
    ClosedFd,
    Close(Expr),
    Cloexec(Expr),
}

pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    Ok(match name {
        "devnull" => Op::DevNull,
        "pipe" => Op::Pipe,
        "closed-fd" => Op::ClosedFd,
        "close" => Op::Close(a.expr(0)?),
        "fd-cloexec" => Op::Cloexec(a.expr(0)?),
        _ => unreachable!("{name} is in SPECS"),
    })
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    Ok(match op {
        Op::DevNull => {
            let f = std::fs::File::open("/dev/null")?;
            let fd = std::os::fd::IntoRawFd::into_raw_fd(f);
            x.bind(fd as u64, Kind::Fd);
            Out::harness(vec![])
        }
        Op::Pipe => {
            let mut fds = [0i32; 2];
            // Safety: pipe writes two fds into the array.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                bail!("pipe failed");
            }
            x.bind(fds[0] as u64, Kind::Fd);
            Out::harness(vec![])
        }
        Op::ClosedFd => {
            let f = std::fs::File::open("/dev/null")?;
            let fd = std::os::fd::IntoRawFd::into_raw_fd(f);
            // Safety: closing the fd we just opened; its number is then free.
            unsafe { libc::close(fd) };
            x.bind(fd as u64, Kind::Fd);
            Out::harness(vec![])
        }
        Op::Close(fd) => {
            let fd = x.eval(fd)? as i32;
            // Safety: closing an fd number the case owns (exported or opened by it).
            let r = unsafe { libc::close(fd) };
            Out::harness(vec![("closed", yes_no(r == 0))])
        }
        Op::Cloexec(fd) => {
            let fd = x.eval(fd)? as i32;
            // Safety: F_GETFD reads the fd's flags.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            Out::harness(vec![(
                "cloexec",
                if flags < 0 {
                    "not-an-fd".into()
                } else {
                    yes_no(flags & libc::FD_CLOEXEC != 0)
                },
            )])
        }
    })
}
