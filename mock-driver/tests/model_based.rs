//! Model-based random testing: random sequences of VMM calls run against the mock's model
//! and against a small reference model of the rules (written from the real driver's
//! observed behaviour); the two agree on every result, and data written is read back
//! intact, through aliases too.

use cuda::model::profile::Profile;
use cuda::model::vmm::AllocationProp;
use cuda::model::{Driver, HostOrDevice};
use cumock_abi::result::*;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

const G: u64 = 2 << 20;
/// Data is written in 64-byte slots at slot-aligned offsets of an allocation.
const SLOT: u64 = 64;
const SLOTS: u64 = 8;

static CALLS: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Clone)]
enum Op {
    Reserve {
        chunks: u64,
    },
    Free {
        r: usize,
        wrong_size: bool,
    },
    Create {
        chunks: u64,
    },
    Release {
        h: usize,
    },
    Map {
        r: usize,
        at: u64,
        h: usize,
    },
    Unmap {
        r: usize,
        at: u64,
        chunks: u64,
    },
    Grant {
        r: usize,
        at: u64,
        chunks: u64,
        flags: u8,
    },
    Write {
        r: usize,
        at: u64,
        slot: u64,
        seed: u8,
    },
    Read {
        r: usize,
        at: u64,
        slot: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u64..6).prop_map(|chunks| Op::Reserve { chunks }),
        (0usize..4, any::<bool>()).prop_map(|(r, wrong_size)| Op::Free { r, wrong_size }),
        (1u64..3).prop_map(|chunks| Op::Create { chunks }),
        (0usize..6).prop_map(|h| Op::Release { h }),
        (0usize..4, 0u64..6, 0usize..6).prop_map(|(r, at, h)| Op::Map { r, at, h }),
        (0usize..4, 0u64..6, 1u64..4).prop_map(|(r, at, chunks)| Op::Unmap { r, at, chunks }),
        (
            0usize..4,
            0u64..6,
            1u64..4,
            prop_oneof![Just(0u8), Just(1), Just(3)]
        )
            .prop_map(|(r, at, chunks, flags)| Op::Grant {
                r,
                at,
                chunks,
                flags
            }),
        (0usize..4, 0u64..6, 0..SLOTS, any::<u8>()).prop_map(|(r, at, slot, seed)| Op::Write {
            r,
            at,
            slot,
            seed
        }),
        (0usize..4, 0u64..6, 0..SLOTS).prop_map(|(r, at, slot)| Op::Read { r, at, slot }),
    ]
}

/// The reference: reservations, allocations and mappings as plain data, with the rules.
#[derive(Default)]
struct Reference {
    reservations: Vec<Option<(u64, u64)>>, // (base, size) by index; None once freed
    handles: Vec<Option<(u64, u64)>>,      // (id, size) by index; None once released
    refs: HashMap<u64, (u32, u32)>,        // id -> (user refs, mappings)
    mappings: Vec<(u64, u64, u64, u8)>,    // (start, size, id, access for device 0)
    data: HashMap<(u64, u64), u8>,         // (id, slot) -> seed
}

impl Reference {
    fn mapping_at(&self, a: u64) -> Option<&(u64, u64, u64, u8)> {
        self.mappings.iter().find(|m| a >= m.0 && a < m.0 + m.1)
    }
    fn reservation_of(&self, a: u64) -> Option<(u64, u64)> {
        self.reservations
            .iter()
            .flatten()
            .copied()
            .find(|(b, s)| a >= *b && a < b + s)
    }
    fn drop_if_unused(&mut self, id: u64) {
        if self.refs.get(&id) == Some(&(0, 0)) {
            self.refs.remove(&id);
            self.data.retain(|(i, _), _| *i != id);
        }
    }
}

fn prop() -> AllocationProp {
    let mut p = cumock_abi::CUmemAllocationProp {
        type_: 1,
        ..Default::default()
    };
    p.location = cumock_abi::CUmemLocation { type_: 1, id: 0 };
    Driver::new(Profile::builtin()).check_prop(&p).unwrap()
}

fn pattern(seed: u8) -> [u8; SLOT as usize] {
    let mut b = [0u8; SLOT as usize];
    for (i, x) in b.iter_mut().enumerate() {
        *x = seed.wrapping_mul(31).wrapping_add(i as u8);
    }
    b
}

fn code<T>(r: Result<T, cuda::model::error::CuError>) -> u32 {
    r.map(|_| CUDA_SUCCESS).unwrap_or_else(|e| e.code)
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let d = Driver::new(Profile::builtin());
    d.init(0).unwrap();
    let ctx = d.primary_retain(0).unwrap();
    d.ctx_set_current(Some(ctx)).unwrap();
    let mut m = Reference::default();
    let mut ids: HashMap<u64, u64> = HashMap::new(); // mock handle -> reference id
    let mut handles: Vec<u64> = Vec::new();
    let p = prop();
    for op in ops {
        CALLS.fetch_add(1, Ordering::Relaxed);
        let addr = |m: &Reference, r: usize, at: u64| {
            m.reservations
                .get(r)
                .copied()
                .flatten()
                .map(|(b, _)| b + at * G)
        };
        match op.clone() {
            Op::Reserve { chunks } => {
                let va = d.address_reserve(chunks * G, 0, 0, 0).unwrap();
                m.reservations.push(Some((va, chunks * G)));
            }
            Op::Free { r, wrong_size } => {
                let Some(Some((b, s))) = m.reservations.get(r).copied() else {
                    continue;
                };
                let size = if wrong_size { s + G } else { s };
                let has_mapping = m.mappings.iter().any(|x| x.0 >= b && x.0 < b + s);
                let want = if wrong_size || has_mapping {
                    CUDA_ERROR_INVALID_VALUE
                } else {
                    CUDA_SUCCESS
                };
                prop_assert_eq!(code(d.address_free(b, size)), want, "{:?}", op);
                if want == CUDA_SUCCESS {
                    m.reservations[r] = None;
                }
            }
            Op::Create { chunks } => {
                let h = d.create(chunks * G, p, 0).unwrap();
                let id = handles.len() as u64 + 1;
                ids.insert(h, id);
                handles.push(h);
                m.handles.push(Some((id, chunks * G)));
                m.refs.insert(id, (1, 0));
            }
            Op::Release { h } => {
                let Some(&hv) = handles.get(h) else { continue };
                let live = m.handles[h].is_some();
                let want = if live {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                prop_assert_eq!(code(d.release(hv)), want, "{:?}", op);
                if live {
                    let id = m.handles[h].unwrap().0;
                    m.handles[h] = None;
                    m.refs.get_mut(&id).unwrap().0 -= 1;
                    m.drop_if_unused(id);
                }
            }
            Op::Map { r, at, h } => {
                let (Some(a), Some(&hv)) = (addr(&m, r, at), handles.get(h)) else {
                    continue;
                };
                let Some((id, size)) = m.handles[h] else {
                    continue;
                }; // use after release: covered by cases
                   // The address picks its reservation (it may run past r into another one).
                let fits = m.reservation_of(a).is_some_and(|(b, s)| a + size <= b + s);
                let overlaps = m.mappings.iter().any(|x| a < x.0 + x.1 && x.0 < a + size);
                let want = if fits && !overlaps {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                prop_assert_eq!(code(d.map(a, size, 0, hv, 0)), want, "{:?}", op);
                if want == CUDA_SUCCESS {
                    m.mappings.push((a, size, id, 0));
                    m.refs.get_mut(&id).unwrap().1 += 1;
                }
            }
            Op::Unmap { r, at, chunks } => {
                let Some(a) = addr(&m, r, at) else { continue };
                let end = a + chunks * G;
                let cuts = m
                    .mappings
                    .iter()
                    .any(|x| x.0 < end && a < x.0 + x.1 && (x.0 < a || x.0 + x.1 > end));
                let reserved = m.reservation_of(a).is_some();
                let want = if cuts || !reserved {
                    CUDA_ERROR_INVALID_VALUE
                } else {
                    CUDA_SUCCESS
                };
                prop_assert_eq!(code(d.unmap(a, chunks * G)), want, "{:?}", op);
                if want == CUDA_SUCCESS {
                    let gone: Vec<_> = m
                        .mappings
                        .iter()
                        .filter(|x| x.0 >= a && x.0 + x.1 <= end)
                        .copied()
                        .collect();
                    m.mappings.retain(|x| !(x.0 >= a && x.0 + x.1 <= end));
                    for g in gone {
                        m.refs.get_mut(&g.2).unwrap().1 -= 1;
                        m.drop_if_unused(g.2);
                    }
                }
            }
            Op::Grant {
                r,
                at,
                chunks,
                flags,
            } => {
                let Some(a) = addr(&m, r, at) else { continue };
                let end = a + chunks * G;
                // The range must be tiled exactly by mappings.
                let mut at_ = a;
                let mut tiles = Vec::new();
                while at_ < end {
                    match m.mappings.iter().position(|x| x.0 == at_) {
                        Some(i) if m.mappings[i].0 + m.mappings[i].1 <= end => {
                            tiles.push(i);
                            at_ += m.mappings[i].1;
                        }
                        _ => break,
                    }
                }
                let want = if at_ == end {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                prop_assert_eq!(
                    code(d.set_access(a, chunks * G, &[(1, 0, i32::from(flags))])),
                    want,
                    "{:?}",
                    op
                );
                if want == CUDA_SUCCESS {
                    for i in tiles {
                        m.mappings[i].3 = flags;
                    }
                }
            }
            Op::Write { r, at, slot, seed } => {
                let Some(a) = addr(&m, r, at) else { continue };
                let target = a + slot * SLOT;
                let mapping = m.mapping_at(target).copied();
                let want = match mapping {
                    Some(x) if x.3 == 3 => CUDA_SUCCESS,
                    _ => CUDA_ERROR_INVALID_VALUE,
                };
                let bytes = pattern(seed);
                // Safety: a 64-byte local buffer for a 64-byte copy.
                let got = code(unsafe {
                    d.copy(
                        HostOrDevice::Device(target),
                        HostOrDevice::Host(bytes.as_ptr() as *mut u8),
                        SLOT,
                    )
                });
                prop_assert_eq!(got, want, "{:?}", op);
                if want == CUDA_SUCCESS {
                    let x = mapping.unwrap();
                    m.data.insert((x.2, (target - x.0) / SLOT), seed);
                }
            }
            Op::Read { r, at, slot } => {
                let Some(a) = addr(&m, r, at) else { continue };
                let target = a + slot * SLOT;
                let mapping = m.mapping_at(target).copied();
                let want = match mapping {
                    Some(x) if x.3 & 1 != 0 => CUDA_SUCCESS,
                    _ => CUDA_ERROR_INVALID_VALUE,
                };
                let mut bytes = [0u8; SLOT as usize];
                // Safety: a 64-byte local buffer for a 64-byte copy.
                let got = code(unsafe {
                    d.copy(
                        HostOrDevice::Host(bytes.as_mut_ptr()),
                        HostOrDevice::Device(target),
                        SLOT,
                    )
                });
                prop_assert_eq!(got, want, "{:?}", op);
                if want == CUDA_SUCCESS {
                    let x = mapping.unwrap();
                    let expect = m
                        .data
                        .get(&(x.2, (target - x.0) / SLOT))
                        .map(|s| pattern(*s))
                        .unwrap_or([0; SLOT as usize]);
                    prop_assert_eq!(bytes, expect, "data at {:?}", op);
                }
            }
        }
    }
    // Everything the reference holds is still live in the mock, and the books balance.
    let used: u64 = m
        .refs
        .keys()
        .map(|id| {
            m.handles
                .iter()
                .flatten()
                .chain(std::iter::empty())
                .find(|(i, _)| i == id)
                .map(|(_, s)| *s)
                .unwrap_or(0)
        })
        .sum();
    let (free, _) = d.mem_info().unwrap();
    let start = Profile::builtin().devices[0].free_at_start;
    prop_assert!(
        start - free >= used,
        "free memory {free} does not account for {used} live bytes"
    );
    Ok(())
}

#[test]
fn the_mock_agrees_with_the_reference_model() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 1000,
        ..ProptestConfig::default()
    });
    let before = CALLS.load(Ordering::Relaxed);
    let result = runner.run(&prop::collection::vec(op(), 1..60), |ops| run(&ops));
    if let Err(e) = result {
        panic!("{e}");
    }
    let calls = CALLS.load(Ordering::Relaxed) - before;
    eprintln!("model-based: 1000 random sequences, {calls} calls, mock and reference agreed on every result and every byte read");
    assert!(calls > 3000, "only {calls} calls");
}

#[test]
fn a_long_fixed_sequence_agrees_too() {
    let ops: Vec<Op> = (0..200u64)
        .map(|i| match i % 6 {
            0 => Op::Reserve { chunks: 4 },
            1 => Op::Create { chunks: 1 },
            2 => Op::Map {
                r: (i % 4) as usize,
                at: i % 3,
                h: (i % 5) as usize,
            },
            3 => Op::Grant {
                r: (i % 4) as usize,
                at: i % 3,
                chunks: 1,
                flags: 3,
            },
            4 => Op::Write {
                r: (i % 4) as usize,
                at: i % 3,
                slot: i % SLOTS,
                seed: i as u8,
            },
            _ => Op::Read {
                r: (i % 4) as usize,
                at: i % 3,
                slot: i % SLOTS,
            },
        })
        .collect();
    run(&ops).unwrap();
}
