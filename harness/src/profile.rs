//! `cumock profile capture`: what a real driver reports of its devices, written in the
//! mock's profile format (`cumock-profile/1`), so the mock can be that GPU.

use crate::driver::{call, Api};
use anyhow::{anyhow, Result};
use cumock_abi::{CUmemAllocationProp, CUmemLocation};
use serde_json::{json, Map, Value};
use std::ffi::CStr;

pub fn capture(api: &Api) -> Result<Value> {
    let r = call!(api, cuInit(0));
    if r != 0 {
        return Err(anyhow!(
            "cuInit failed: {}",
            cumock_abi::result_name(r).unwrap_or("?")
        ));
    }
    let mut version = 0;
    call!(api, cuDriverGetVersion(&mut version));
    let mut count = 0;
    call!(api, cuDeviceGetCount(&mut count));
    let mut devices = Vec::new();
    for d in 0..count {
        let mut name = [0 as std::ffi::c_char; 256];
        call!(api, cuDeviceGetName(name.as_mut_ptr(), 256, d));
        // Safety: NUL-terminated within the buffer.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut total = 0usize;
        call!(api, cuDeviceTotalMem_v2(&mut total, d));
        let mut uuid = [0u8; 16];
        call!(
            api,
            cuDeviceGetUuid_v2(std::ptr::from_mut(&mut uuid).cast(), d)
        );
        let mut bus = [0 as std::ffi::c_char; 64];
        call!(api, cuDeviceGetPCIBusId(bus.as_mut_ptr(), 64, d));
        // Safety: as above.
        let bus = unsafe { CStr::from_ptr(bus.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut ctx = std::ptr::null_mut();
        call!(api, cuDevicePrimaryCtxRetain(&mut ctx, d));
        call!(api, cuCtxSetCurrent(ctx));
        let (mut free, mut tot) = (0usize, 0usize);
        call!(api, cuMemGetInfo_v2(&mut free, &mut tot));
        let mut g = [0usize; 2];
        for (i, option) in [0, 1].into_iter().enumerate() {
            let prop = CUmemAllocationProp {
                type_: 1,
                location: CUmemLocation { type_: 1, id: d },
                ..Default::default()
            };
            call!(api, cuMemGetAllocationGranularity(&mut g[i], &prop, option));
        }
        let mut attrs = Map::new();
        for (aname, code) in cumock_abi::CU_DEVICE_ATTRIBUTES {
            if *aname == "CU_DEVICE_ATTRIBUTE_MAX"
                || cumock_abi::device_attribute_name(*code as i32) != Some(aname)
            {
                continue;
            }
            let mut v = 0;
            if call!(api, cuDeviceGetAttribute(&mut v, *code as i32, d)) == 0 {
                attrs.insert((*aname).to_owned(), json!(v));
            }
        }
        call!(api, cuCtxSetCurrent(std::ptr::null_mut()));
        call!(api, cuDevicePrimaryCtxRelease_v2(d));
        let hex: String = uuid.iter().map(|b| format!("{b:02x}")).collect();
        devices.push(json!({
            "name": name,
            "total_mem": total,
            "free_at_start": free,
            "uuid": format!("GPU-{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]),
            "pci_bus_id": bus,
            "granularity_minimum": g[0],
            "granularity_recommended": g[1],
            "attributes": attrs,
        }));
    }
    let mut peers = Vec::new();
    for a in 0..count {
        let mut row = Vec::new();
        for b in 0..count {
            let mut v = 0;
            call!(api, cuDeviceCanAccessPeer(&mut v, a, b));
            row.push(v != 0);
        }
        peers.push(row);
    }
    let mut p = json!({
        "format": "cumock-profile/1",
        "driver_version": version,
        "devices": devices,
    });
    if count > 1 {
        p["peer_access"] = json!(peers);
    }
    if let Some(rel) = driver_release() {
        p["driver_release"] = json!(rel);
    }
    Ok(p)
}

/// Every CUresult's string, as cuGetErrorString gives it.
pub fn error_strings(api: &Api) -> Result<Value> {
    let mut m = Map::new();
    for (_, code) in cumock_abi::CU_RESULTS {
        let mut s = std::ptr::null();
        if call!(api, cuGetErrorString(*code as u32, &mut s)) == 0 && !s.is_null() {
            // Safety: a static NUL-terminated string from the driver.
            m.insert(
                code.to_string(),
                json!(unsafe { CStr::from_ptr(s) }.to_string_lossy()),
            );
        }
    }
    Ok(Value::Object(m))
}

/// The kernel driver's release (`580.159.04`), where an NVIDIA driver is installed.
pub fn driver_release() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    let line = text.lines().next()?;
    line.split_whitespace()
        .find(|w| {
            w.chars().filter(|c| *c == '.').count() >= 1
                && w.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
        .map(str::to_owned)
}
