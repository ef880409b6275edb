//! The targets, one module a surface; each has `run` (an input in, a signature out) and
//! `mutate`.

pub mod api;
pub mod case;
pub mod engines;
pub mod fatbin;
pub mod jit;
pub mod ptx;
