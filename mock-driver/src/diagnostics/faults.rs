//! Fault injection (`CUMOCK_FAULT=SPEC`): the driver's share of the specs
//! (`cumock_support::faults` holds the grammar, shared with the runtime), each call
//! counted against them.

use cumock_support::{FaultPlans, Layer};
use parking_lot::Mutex;
use std::sync::OnceLock;

fn plans() -> Option<&'static Mutex<FaultPlans<u32>>> {
    static PLANS: OnceLock<Option<Mutex<FaultPlans<u32>>>> = OnceLock::new();
    PLANS
        .get_or_init(|| {
            let specs = &super::settings().faults;
            match specs.plans(Layer::Driver, cumock_abi::result_code, "CUresult") {
                Ok(p) if p.is_empty() => None,
                Ok(p) => Some(Mutex::new(p)),
                Err(e) => {
                    eprintln!("cumock: CUMOCK_FAULT: {e}; no faults injected");
                    None
                }
            }
        })
        .as_ref()
}

/// Whether calls may be failed on purpose.
pub fn injecting() -> bool {
    plans().is_some()
}

/// The code to fail this call with, if a planned fault hits it.
pub fn injected_fault(name: &str) -> Option<u32> {
    plans()?.lock().hit(name)
}
