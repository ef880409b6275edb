//! Devices: count, ordinal, name, attributes, memory, UUID, PCI bus id, peers.

use super::{Args, Expr, Spec, WordOr};
use crate::case::Bad;
use crate::case_steps::{call, Exec, Kind, Out};
use crate::normalize;
use anyhow::{anyhow, Result};
use std::ffi::{c_char, CStr};

pub const SPECS: &[Spec] = &[
    Spec::new("device-count", &[], &[]),
    Spec::new("device", &["ordinal"], &[]),
    Spec::new("device-name", &["device"], &[]),
    Spec::new("attribute", &["name", "device"], &[]),
    Spec::new("total-mem", &["device"], &[]),
    Spec::new("uuid", &["device"], &[]),
    Spec::new("pci-bus-id", &["device"], &[]),
    Spec::new("can-access-peer", &["device", "peer"], &[]),
];

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Count,
    Get {
        ordinal: Expr,
    },
    Name {
        device: Expr,
    },
    /// cuDeviceGetAttribute: a CUdevice_attribute by name (without its prefix), or a number.
    Attribute {
        attribute: WordOr<i32>,
        device: Expr,
    },
    TotalMem {
        device: Expr,
    },
    Uuid {
        device: Expr,
    },
    PciBusId {
        device: Expr,
    },
    CanAccessPeer {
        device: Expr,
        peer: Expr,
    },
}

pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    Ok(match name {
        "device-count" => Op::Count,
        "device" => Op::Get {
            ordinal: a.expr(0)?,
        },
        "device-name" => Op::Name { device: a.expr(0)? },
        "attribute" => {
            let w = a.word(0);
            let full = if w.value.starts_with("CU_DEVICE_ATTRIBUTE_") {
                w.value.clone()
            } else {
                format!("CU_DEVICE_ATTRIBUTE_{}", w.value)
            };
            let attribute =
                match cumock_abi::device_attribute_code(&full) {
                    Some(c) => WordOr::Word(c),
                    None => WordOr::Expr(a.expr(0).map_err(|(c, _)| {
                        (c, format!("`{}` is not a device attribute", w.value))
                    })?),
                };
            Op::Attribute {
                attribute,
                device: a.expr(1)?,
            }
        }
        "total-mem" => Op::TotalMem { device: a.expr(0)? },
        "uuid" => Op::Uuid { device: a.expr(0)? },
        "pci-bus-id" => Op::PciBusId { device: a.expr(0)? },
        "can-access-peer" => Op::CanAccessPeer {
            device: a.expr(0)?,
            peer: a.expr(1)?,
        },
        _ => unreachable!("{name} is in SPECS"),
    })
}

/// A NUL-terminated string the driver wrote into a buffer it was given.
fn c_buffer(buf: &[c_char]) -> String {
    if !buf.contains(&0) {
        return String::new();
    }
    // Safety: the buffer holds a NUL, so the string ends inside it.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    let api = x.api;
    Ok(match op {
        Op::Count => {
            let mut n = 0;
            let r = call!(api, cuDeviceGetCount(&mut n));
            Out::with(r, vec![("count", n.to_string())])
        }
        Op::Get { ordinal } => {
            let ordinal = x.eval(ordinal)? as i32;
            let mut d = -1;
            let r = call!(api, cuDeviceGet(&mut d, ordinal));
            x.bind(d as u64, Kind::Int);
            Out::with(r, vec![("device", d.to_string())])
        }
        Op::Name { device } => {
            let device = x.eval(device)? as i32;
            let mut buf = [0 as c_char; 256];
            let r = call!(api, cuDeviceGetName(buf.as_mut_ptr(), 256, device));
            Out::with(r, vec![("name", format!("{:?}", c_buffer(&buf)))])
        }
        Op::Attribute { attribute, device } => {
            let code = match attribute {
                WordOr::Word(c) => *c,
                WordOr::Expr(e) => x
                    .eval(e)
                    .map_err(|_| anyhow!("`{}` is not a device attribute", e.text))?
                    as i32,
            };
            let device = x.eval(device)? as i32;
            let mut v = 0;
            let r = call!(api, cuDeviceGetAttribute(&mut v, code, device));
            Out::with(r, vec![("value", v.to_string())])
        }
        Op::TotalMem { device } => {
            let device = x.eval(device)? as i32;
            let mut v = 0usize;
            let r = call!(api, cuDeviceTotalMem_v2(&mut v, device));
            Out::with(r, vec![("bytes", v.to_string())])
        }
        Op::Uuid { device } => {
            let device = x.eval(device)? as i32;
            let mut u = [0u8; 16];
            let r = call!(
                api,
                cuDeviceGetUuid_v2(std::ptr::from_mut(&mut u).cast(), device)
            );
            Out::with(r, vec![("uuid", normalize::uuid(&u))])
        }
        Op::PciBusId { device } => {
            let device = x.eval(device)? as i32;
            let mut buf = [0 as c_char; 64];
            let r = call!(api, cuDeviceGetPCIBusId(buf.as_mut_ptr(), 64, device));
            Out::with(r, vec![("bus-id", normalize::pci_bus_id(&c_buffer(&buf)))])
        }
        Op::CanAccessPeer { device, peer } => {
            let (device, peer) = (x.eval(device)? as i32, x.eval(peer)? as i32);
            let mut v = -1;
            let r = call!(api, cuDeviceCanAccessPeer(&mut v, device, peer));
            Out::with(r, vec![("value", v.to_string())])
        }
    })
}
