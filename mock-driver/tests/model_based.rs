//! Model-based random testing: random sequences of VMM calls run against the mock's model
//! and against a small reference model of the rules (written from the real driver's
//! observed behaviour); the two agree on every result, and data written is read back
//! intact, through aliases, across devices, and from a second process that imports the
//! memory exported here. Released memory is reused by later allocations, which must read
//! zeros. A million calls a run (issue 15); `CUMOCK_MODEL_CALLS` asks for another number.

use cuda::model::ids::{ContextId, DevicePtr};
use cuda::model::profile::Profile;
use cuda::model::vmm::AllocationProp;
use cuda::model::{Driver, HostBytes, HostOrDevice};
use cumock_abi::result::*;
use proptest::prelude::*;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const G: u64 = 2 << 20;
/// Data is written in 64-byte slots at slot-aligned offsets of an allocation.
const SLOT: u64 = 64;
const SLOTS: u64 = 8;
const DEVICES: usize = 3;
const ROLE: &str = "CUMOCK_MODEL_ROLE";

/// Driver calls made (and checked against the reference), over all sequences.
static CALLS: AtomicU64 = AtomicU64::new(0);
/// Writes and reads that succeeded, and allocations that went (their memory reused by
/// later ones): a run that reached none of these would test little.
static WRITES: AtomicU64 = AtomicU64::new(0);
static READS: AtomicU64 = AtomicU64::new(0);
static FREED: AtomicU64 = AtomicU64::new(0);
static SHARED: AtomicU64 = AtomicU64::new(0);

fn called() {
    CALLS.fetch_add(1, Ordering::Relaxed);
}

/// `r` and `h` pick a reservation and a handle (see `pick_reservation`, `pick_handle`).
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
        device: usize,
        exportable: bool,
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
        device: usize,
        flags: u8,
    },
    /// Makes a device's primary context current: copies then act as that device.
    Use {
        device: usize,
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
    /// Exports the allocation to the second process, which imports it, reads every slot
    /// and writes one.
    Share {
        h: usize,
        slot: u64,
        seed: u8,
    },
    Synchronize,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        24 => (1u64..6).prop_map(|chunks| Op::Reserve { chunks }),
        20 => (0usize..1000, prop::bool::weighted(0.1)).prop_map(|(r, wrong_size)| Op::Free { r, wrong_size }),
        40 => (1u64..3, 0..DEVICES, any::<bool>()).prop_map(|(chunks, device, exportable)| Op::Create {
            chunks,
            device,
            exportable
        }),
        36 => (0usize..1000).prop_map(|h| Op::Release { h }),
        56 => (0usize..1000, 0u64..6, 0usize..1000).prop_map(|(r, at, h)| Op::Map { r, at, h }),
        32 => (0usize..1000, 0u64..6, 1u64..4).prop_map(|(r, at, chunks)| Op::Unmap { r, at, chunks }),
        40 => (
            0usize..1000,
            0u64..6,
            1u64..4,
            0..=DEVICES,
            prop_oneof![Just(0u8), Just(1), Just(3), Just(3)]
        )
            .prop_map(|(r, at, chunks, device, flags)| Op::Grant {
                r,
                at,
                chunks,
                device,
                flags
            }),
        12 => (0..DEVICES).prop_map(|device| Op::Use { device }),
        56 => (0usize..1000, 0u64..6, 0..SLOTS, any::<u8>()).prop_map(|(r, at, slot, seed)| Op::Write {
            r,
            at,
            slot,
            seed
        }),
        56 => (0usize..1000, 0u64..6, 0..SLOTS).prop_map(|(r, at, slot)| Op::Read { r, at, slot }),
        1 => (0usize..1000, 0..SLOTS, any::<u8>()).prop_map(|(h, slot, seed)| Op::Share { h, slot, seed }),
        8 => Just(Op::Synchronize),
    ]
}

/// The same operations as `op()`, with the same weights, from a plain xorshift
/// generator: the million-call run uses it, since proptest's generation dominated its time
/// in a debug build. A failure there names the seed; proptest's own run (below) shrinks.
struct Ops(u64);

impl Ops {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
    fn op(&mut self) -> Op {
        const WEIGHTS: [u64; 12] = [24, 20, 40, 36, 56, 32, 40, 12, 56, 56, 1, 8];
        let mut pick = self.next(WEIGHTS.iter().sum());
        let kind = WEIGHTS
            .iter()
            .position(|w| {
                let here = pick < *w;
                pick = pick.wrapping_sub(*w);
                here
            })
            .expect("within the sum");
        let dev = DEVICES as u64;
        match kind {
            0 => Op::Reserve {
                chunks: 1 + self.next(5),
            },
            1 => Op::Free {
                r: self.next(1000) as usize,
                wrong_size: self.next(10) == 0,
            },
            2 => Op::Create {
                chunks: 1 + self.next(2),
                device: self.next(dev) as usize,
                exportable: self.next(2) == 0,
            },
            3 => Op::Release {
                h: self.next(1000) as usize,
            },
            4 => Op::Map {
                r: self.next(1000) as usize,
                at: self.next(6),
                h: self.next(1000) as usize,
            },
            5 => Op::Unmap {
                r: self.next(1000) as usize,
                at: self.next(6),
                chunks: 1 + self.next(3),
            },
            6 => Op::Grant {
                r: self.next(1000) as usize,
                at: self.next(6),
                chunks: 1 + self.next(3),
                device: self.next(dev + 1) as usize,
                flags: [0, 1, 3, 3][self.next(4) as usize],
            },
            7 => Op::Use {
                device: self.next(dev) as usize,
            },
            8 => Op::Write {
                r: self.next(1000) as usize,
                at: self.next(6),
                slot: self.next(SLOTS),
                seed: self.next(256) as u8,
            },
            9 => Op::Read {
                r: self.next(1000) as usize,
                at: self.next(6),
                slot: self.next(SLOTS),
            },
            10 => Op::Share {
                h: self.next(1000) as usize,
                slot: self.next(SLOTS),
                seed: self.next(256) as u8,
            },
            _ => Op::Synchronize,
        }
    }
}

/// A mapping in the reference: where, how large, which allocation, each device's access.
#[derive(Clone, Copy, Debug)]
struct RefMapping {
    start: u64,
    size: u64,
    id: u64,
    access: [u8; DEVICES],
}

/// The reference: reservations, allocations and mappings as plain data, with the rules.
#[derive(Default)]
struct Reference {
    reservations: Vec<Option<(u64, u64)>>, // (base, size) by index; None once freed
    handles: Vec<Option<(u64, u64)>>,      // (id, size) by index; None once released
    refs: HashMap<u64, (u32, u32)>,        // id -> (user refs, mappings)
    device_of: HashMap<u64, usize>,        // id -> device
    exportable: HashMap<u64, bool>,        // id -> requested POSIX fd handles
    size_of: HashMap<u64, u64>,            // id -> bytes
    mappings: Vec<RefMapping>,
    data: HashMap<(u64, u64), u8>, // (id, slot) -> seed
    current: usize,
}

impl Reference {
    fn mapping_at(&self, a: u64) -> Option<RefMapping> {
        self.mappings
            .iter()
            .find(|m| a >= m.start && a < m.start + m.size)
            .copied()
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
            FREED.fetch_add(1, Ordering::Relaxed);
            self.refs.remove(&id);
            self.data.retain(|(i, _), _| *i != id);
        }
    }
    fn slot_bytes(&self, id: u64, slot: u64) -> [u8; SLOT as usize] {
        self.data
            .get(&(id, slot))
            .map(|s| pattern(*s))
            .unwrap_or([0; SLOT as usize])
    }
}

fn prop_for(d: &Driver, device: usize, exportable: bool) -> AllocationProp {
    let mut p = cumock_abi::CUmemAllocationProp {
        type_: 1,
        ..Default::default()
    };
    p.location = cumock_abi::CUmemLocation {
        type_: 1,
        id: device as i32,
    };
    p.requested_handle_types = i32::from(exportable);
    d.check_prop(&p).unwrap()
}

/// The profile, parsed once: parsing it (147 attributes by name) for every sequence
/// took a large part of the test's time.
fn profile() -> Profile {
    static P: std::sync::OnceLock<Profile> = std::sync::OnceLock::new();
    P.get_or_init(|| Profile::builtin_with_devices(DEVICES).unwrap())
        .clone()
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

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A live reservation, by a random number: any of them, so that none drops out of reach
/// while it still holds mappings (their memory could then never be freed and reused).
fn pick_reservation(m: &Reference, r: usize) -> Option<usize> {
    let live: Vec<usize> = (0..m.reservations.len())
        .filter(|i| m.reservations[*i].is_some())
        .collect();
    (!live.is_empty()).then(|| live[r % live.len()])
}

/// A handle, by a random number: one in ten is any of the newest handles, released or
/// not (releasing twice is checked too), the others any live one.
fn pick_handle(m: &Reference, h: usize) -> Option<usize> {
    if h.is_multiple_of(10) {
        return m.handles.len().checked_sub(1 + (h / 10) % 6);
    }
    let live: Vec<usize> = (0..m.handles.len())
        .filter(|i| m.handles[*i].is_some())
        .collect();
    (!live.is_empty()).then(|| live[h % live.len()])
}

// ---- the second process ----

struct Peer {
    _child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
}

/// The second process, started once per test process and shared by all sequences.
fn peer() -> &'static Mutex<Peer> {
    static PEER: std::sync::OnceLock<Mutex<Peer>> = std::sync::OnceLock::new();
    PEER.get_or_init(|| {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "the_second_process",
                "--nocapture",
                "--test-threads=1",
                "--include-ignored",
            ])
            .env(ROLE, "peer")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        Mutex::new(Peer {
            to: child.stdin.take().unwrap(),
            from: BufReader::new(child.stdout.take().unwrap()),
            _child: child,
        })
    })
}

impl Peer {
    /// Has the second process import `fd` (through /proc, as a Unix socket would hand it
    /// over), read every slot, then write `seed` at `slot`. Returns what it read, in hex,
    /// slot after slot.
    fn share(&mut self, fd: i32, slot: u64, seed: u8) -> String {
        writeln!(self.to, "{} {fd} {slot} {seed}", std::process::id()).unwrap();
        self.to.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.from.read_line(&mut line).unwrap() > 0,
                "the second process ended"
            );
            // libtest's "test NAME ... " has no newline until the test ends.
            if let Some(at) = line.find("answer ") {
                return line[at + "answer ".len()..].trim().to_owned();
            }
        }
    }
}

/// Not a test of its own: the second process of `the_mock_agrees_with_the_reference_model`
/// (run with `CUMOCK_MODEL_ROLE=peer`; it does nothing otherwise).
#[test]
#[ignore = "the second process of the model-based test, started by it"]
fn the_second_process() {
    if std::env::var(ROLE).as_deref() != Ok("peer") {
        return;
    }
    let d = Driver::new(profile());
    d.init(0).unwrap();
    let ctx = d.primary_retain(0).unwrap();
    d.ctx_set_current(Some(ctx)).unwrap();
    let va = d.address_reserve(4 * G, 0, DevicePtr::NULL, 0).unwrap();
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let v: Vec<u64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        let (pid, fd, slot, seed) = (v[0], v[1], v[2], v[3] as u8);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/fd/{fd}"))
            .unwrap();
        let h = d.import(file.as_raw_fd(), 1).unwrap();
        drop(file);
        // The allocation is one or two granules: the larger map fails on the smaller.
        let size = if d.map(va, 2 * G, 0, h, 0).is_ok() {
            2 * G
        } else {
            d.map(va, G, 0, h, 0).unwrap();
            G
        };
        // Device 0 reaches any device's memory: all devices are peers.
        d.set_access(va, size, &[(1, 0, 3)]).unwrap();
        let mut seen = String::new();
        for s in 0..SLOTS {
            let mut b = [0u8; SLOT as usize];
            d.copy(
                HostOrDevice::Host(HostBytes::from_mut_slice(&mut b)),
                HostOrDevice::Device(va + s * SLOT),
                SLOT,
            )
            .unwrap();
            seen += &hex(&b);
        }
        let bytes = pattern(seed);
        d.copy(
            HostOrDevice::Device(va + slot * SLOT),
            HostOrDevice::Host(HostBytes::from_slice(&bytes)),
            SLOT,
        )
        .unwrap();
        d.ctx_synchronize(None).unwrap();
        d.unmap(va, size).unwrap();
        d.release(h).unwrap();
        let mut o = out.lock();
        writeln!(o, "answer {seen}").unwrap();
        o.flush().unwrap();
    }
    // The first process is done (or gone): end here, before libtest writes to a pipe
    // nobody reads any more.
    std::process::exit(0);
}

// ---- one sequence ----

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let d = Driver::new(profile());
    d.init(0).unwrap();
    // Released memory that was touched goes back to the host in batches (64 allocations
    // by default); small batches here, so that sequences reuse it soon and read it.
    d.set_release_batch(1 + ops.len() % 4);
    let contexts: Vec<ContextId> = (0..DEVICES)
        .map(|i| d.primary_retain(i as i32).unwrap())
        .collect();
    d.ctx_set_current(Some(contexts[0])).unwrap();
    let mut m = Reference::default();
    let mut handles: Vec<u64> = Vec::new();
    let props: Vec<[AllocationProp; 2]> = (0..DEVICES)
        .map(|dev| [prop_for(&d, dev, false), prop_for(&d, dev, true)])
        .collect();
    for op in ops {
        // A granule of the reservation, or the one just past its end (which may be
        // another reservation's, or nobody's).
        let addr = |m: &Reference, r: usize, at: u64| {
            pick_reservation(m, r)
                .and_then(|i| m.reservations[i])
                .map(|(b, s)| b + (at % (s / G + 1)) * G)
        };
        // Three times in four a granule of a live mapping (so that grants, writes and
        // reads mostly land and data flows through reused memory), else `addr`.
        let mapped = |m: &Reference, r: usize, at: u64| match m.mappings.len() {
            n if n > 0 && !r.is_multiple_of(4) => {
                let x = m.mappings[(r / 4) % n];
                Some(x.start + (at % (x.size / G)) * G)
            }
            _ => addr(m, r, at),
        };
        match op.clone() {
            Op::Reserve { chunks } => {
                called();
                let va = d
                    .address_reserve(chunks * G, 0, DevicePtr::NULL, 0)
                    .unwrap()
                    .get();
                prop_assert!(
                    m.reservation_of(va).is_none()
                        && m.reservation_of(va + chunks * G - 1).is_none(),
                    "{:#x} overlaps a live reservation",
                    va
                );
                m.reservations.push(Some((va, chunks * G)));
            }
            Op::Free { r, wrong_size } => {
                let Some(i) = pick_reservation(&m, r) else {
                    continue;
                };
                let Some((b, s)) = m.reservations[i] else {
                    continue;
                };
                let size = if wrong_size { s + G } else { s };
                // Any mapping reaching into the range, also one run on from the reservation
                // before (the H200 refuses that free too: case free-adjacent-while-mapped).
                let has_mapping = m
                    .mappings
                    .iter()
                    .any(|x| x.start < b + s && x.start + x.size > b);
                let want = if wrong_size || has_mapping {
                    CUDA_ERROR_INVALID_VALUE
                } else {
                    CUDA_SUCCESS
                };
                called();
                prop_assert_eq!(
                    code(d.address_free(DevicePtr::new(b), size)),
                    want,
                    "{:?}",
                    op
                );
                if want == CUDA_SUCCESS {
                    m.reservations[i] = None;
                }
            }
            Op::Create {
                chunks,
                device,
                exportable,
            } => {
                called();
                let h = d
                    .create(chunks * G, props[device][usize::from(exportable)], 0)
                    .unwrap();
                let id = handles.len() as u64 + 1;
                handles.push(h);
                m.handles.push(Some((id, chunks * G)));
                m.size_of.insert(id, chunks * G);
                m.refs.insert(id, (1, 0));
                m.device_of.insert(id, device);
                m.exportable.insert(id, exportable);
            }
            Op::Release { h } => {
                let Some(i) = pick_handle(&m, h) else {
                    continue;
                };
                let live = m.handles[i].is_some();
                let want = if live {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                called();
                prop_assert_eq!(code(d.release(handles[i])), want, "{:?}", op);
                if live {
                    let id = m.handles[i].unwrap().0;
                    m.handles[i] = None;
                    m.refs.get_mut(&id).unwrap().0 -= 1;
                    m.drop_if_unused(id);
                }
            }
            Op::Map { r, at, h } => {
                let (Some(a), Some(i)) = (addr(&m, r, at), pick_handle(&m, h)) else {
                    continue;
                };
                // Handles are numbered from 1 in creation order.
                let (id, size) = (i as u64 + 1, m.size_of[&(i as u64 + 1)]);
                // A handle released while its memory is still mapped maps again (as on the
                // H200); once the memory is gone, it is a stale handle.
                if !m.refs.contains_key(&id) {
                    called();
                    prop_assert_eq!(
                        code(d.map(DevicePtr::new(a), size, 0, handles[i], 0)),
                        CUDA_ERROR_INVALID_VALUE,
                        "{:?}",
                        op
                    );
                    continue;
                }
                // The address picks its reservation; the map may run on into reservations
                // that start where the previous one ends (as on the H200).
                let fits = m.reservation_of(a).is_some_and(|(b, s)| {
                    let mut covered = b + s;
                    while covered < a + size {
                        match m
                            .reservations
                            .iter()
                            .flatten()
                            .find(|(nb, _)| *nb == covered)
                        {
                            Some((_, ns)) => covered += ns,
                            None => return false,
                        }
                    }
                    true
                });
                let overlaps = m
                    .mappings
                    .iter()
                    .any(|x| a < x.start + x.size && x.start < a + size);
                let want = if fits && !overlaps {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                called();
                prop_assert_eq!(
                    code(d.map(DevicePtr::new(a), size, 0, handles[i], 0)),
                    want,
                    "{:?}",
                    op
                );
                if want == CUDA_SUCCESS {
                    m.mappings.push(RefMapping {
                        start: a,
                        size,
                        id,
                        access: [0; DEVICES],
                    });
                    m.refs.get_mut(&id).unwrap().1 += 1;
                }
            }
            Op::Unmap { r, at, chunks } => {
                let Some(a) = addr(&m, r, at) else { continue };
                let end = a + chunks * G;
                let cuts = m.mappings.iter().any(|x| {
                    x.start < end && a < x.start + x.size && (x.start < a || x.start + x.size > end)
                });
                let reserved = m.reservation_of(a).is_some();
                let want = if cuts || !reserved {
                    CUDA_ERROR_INVALID_VALUE
                } else {
                    CUDA_SUCCESS
                };
                called();
                prop_assert_eq!(
                    code(d.unmap(DevicePtr::new(a), chunks * G)),
                    want,
                    "{:?}",
                    op
                );
                if want == CUDA_SUCCESS {
                    let gone: Vec<_> = m
                        .mappings
                        .iter()
                        .filter(|x| x.start >= a && x.start + x.size <= end)
                        .copied()
                        .collect();
                    m.mappings
                        .retain(|x| !(x.start >= a && x.start + x.size <= end));
                    for g in gone {
                        m.refs.get_mut(&g.id).unwrap().1 -= 1;
                        m.drop_if_unused(g.id);
                    }
                }
            }
            Op::Grant {
                r,
                at,
                chunks,
                device,
                flags,
            } => {
                let Some(a) = mapped(&m, r, at) else { continue };
                // Chunks 3 means the mapping at `a`, whatever its size, and the device
                // DEVICES the current one: so that most grants land and data flows.
                let chunks = match m.mappings.iter().find(|x| x.start == a) {
                    Some(x) if chunks == 3 => x.size / G,
                    _ => chunks,
                };
                let device = if device == DEVICES { m.current } else { device };
                let end = a + chunks * G;
                // As on the H200: the range starts at a mapping and ends at the end of one,
                // cutting none; across unmapped holes only the mappings before the first
                // hole change.
                let mut inside: Vec<usize> = (0..m.mappings.len())
                    .filter(|&i| {
                        let x = m.mappings[i];
                        x.start < end && a < x.start + x.size
                    })
                    .collect();
                inside.sort_by_key(|&i| m.mappings[i].start);
                let cuts = inside.iter().any(|&i| {
                    let x = m.mappings[i];
                    x.start < a || x.start + x.size > end
                });
                let starts_at_a = inside.first().is_some_and(|&i| m.mappings[i].start == a);
                let ends_at_end = inside
                    .last()
                    .is_some_and(|&i| m.mappings[i].start + m.mappings[i].size == end);
                let want = if !cuts && starts_at_a && ends_at_end {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                let mut tiles = Vec::new();
                let mut at_ = a;
                for &i in &inside {
                    if m.mappings[i].start != at_ {
                        break;
                    }
                    tiles.push(i);
                    at_ += m.mappings[i].size;
                }
                called();
                prop_assert_eq!(
                    code(d.set_access(
                        DevicePtr::new(a),
                        chunks * G,
                        &[(1, device as i32, i32::from(flags))]
                    )),
                    want,
                    "{:?}",
                    op
                );
                if want == CUDA_SUCCESS {
                    for i in tiles {
                        m.mappings[i].access[device] = flags;
                    }
                }
            }
            Op::Use { device } => {
                called();
                d.ctx_set_current(Some(contexts[device])).unwrap();
                m.current = device;
            }
            Op::Write { r, at, slot, seed } => {
                let Some(a) = mapped(&m, r, at) else { continue };
                let target = a + slot * SLOT;
                let mapping = m.mapping_at(target);
                let want = match mapping {
                    Some(x) if x.access[m.current] == 3 => CUDA_SUCCESS,
                    _ => CUDA_ERROR_INVALID_VALUE,
                };
                let bytes = pattern(seed);
                called();
                let got = code(d.copy(
                    HostOrDevice::Device(DevicePtr::new(target)),
                    HostOrDevice::Host(HostBytes::from_slice(&bytes)),
                    SLOT,
                ));
                prop_assert_eq!(got, want, "{:?}", op);
                if want == CUDA_SUCCESS {
                    WRITES.fetch_add(1, Ordering::Relaxed);
                    let x = mapping.unwrap();
                    m.data.insert((x.id, (target - x.start) / SLOT), seed);
                }
            }
            Op::Read { r, at, slot } => {
                let Some(a) = mapped(&m, r, at) else { continue };
                let target = a + slot * SLOT;
                let mapping = m.mapping_at(target);
                let want = match mapping {
                    Some(x) if x.access[m.current] & 1 != 0 => CUDA_SUCCESS,
                    _ => CUDA_ERROR_INVALID_VALUE,
                };
                let mut bytes = [0u8; SLOT as usize];
                called();
                let got = code(d.copy(
                    HostOrDevice::Host(HostBytes::from_mut_slice(&mut bytes)),
                    HostOrDevice::Device(DevicePtr::new(target)),
                    SLOT,
                ));
                prop_assert_eq!(got, want, "{:?}", op);
                if want == CUDA_SUCCESS {
                    READS.fetch_add(1, Ordering::Relaxed);
                    let x = mapping.unwrap();
                    // Never-written memory reads zeros, also where released memory was
                    // reused.
                    let expect = m.slot_bytes(x.id, (target - x.start) / SLOT);
                    prop_assert_eq!(bytes, expect, "data at {:?}", op);
                }
            }
            Op::Share { h, slot, seed } => {
                let Some(i) = pick_handle(&m, h) else {
                    continue;
                };
                let id = i as u64 + 1;
                called();
                let exported = d.export(handles[i], 1, 0);
                if !m.refs.contains_key(&id) {
                    prop_assert_eq!(code(exported), CUDA_ERROR_INVALID_VALUE, "{:?}", op);
                    continue;
                }
                if !m.exportable[&id] {
                    prop_assert_eq!(code(exported), CUDA_ERROR_INVALID_VALUE, "{:?}", op);
                    continue;
                }
                let fd = exported.unwrap();
                // Work in flight must land before the other process looks.
                d.ctx_synchronize(None).unwrap();
                let seen = peer().lock().unwrap().share(fd.as_raw_fd(), slot, seed);
                CALLS.fetch_add(8, Ordering::Relaxed); // its import, map, access, reads...
                SHARED.fetch_add(1, Ordering::Relaxed);
                let expect: String = (0..SLOTS).map(|s| hex(&m.slot_bytes(id, s))).collect();
                prop_assert_eq!(seen, expect, "what the second process read, {:?}", op);
                m.data.insert((id, slot), seed);
            }
            Op::Synchronize => {
                called();
                d.ctx_synchronize(None).unwrap();
            }
        }
    }
    // Everything the reference holds is still live in the mock, and the books balance,
    // device by device.
    for (dev, &ctx) in contexts.iter().enumerate() {
        // Live: held by a handle or by a mapping (released while mapped).
        let used: u64 = m
            .refs
            .keys()
            .filter(|id| m.device_of[id] == dev)
            .map(|id| m.size_of[id])
            .sum();
        d.ctx_set_current(Some(ctx)).unwrap();
        let (free, _) = d.mem_info().unwrap();
        let start = profile().devices[dev].free_at_start;
        prop_assert_eq!(
            start - free,
            used,
            "device {}: the mock's used memory is not the live allocations'",
            dev
        );
    }
    Ok(())
}

/// A million calls (or `CUMOCK_MODEL_CALLS`), in sequences of 200 to 800 operations.
#[test]
fn a_million_calls_agree_with_the_reference_model() {
    let target: u64 = std::env::var("CUMOCK_MODEL_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    // A new seed each run, printed, so that a failure can be run again.
    let seed: u64 = std::env::var("CUMOCK_MODEL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("model-based: seed {seed} (CUMOCK_MODEL_SEED={seed} runs these sequences again)");
    let started = std::time::Instant::now();
    let before = CALLS.load(Ordering::Relaxed);
    let mut gen = Ops(seed);
    let mut sequences = 0u64;
    while CALLS.load(Ordering::Relaxed) - before < target {
        let len = 200 + gen.next(600) as usize;
        let ops: Vec<Op> = (0..len).map(|_| gen.op()).collect();
        if let Err(e) = run(&ops) {
            panic!(
                "sequence {sequences} of seed {seed} (CUMOCK_MODEL_SEED={seed}): {e}\n\
                 the sequence: {ops:?}"
            );
        }
        sequences += 1;
    }
    let calls = CALLS.load(Ordering::Relaxed) - before;
    let (writes, reads, freed, shared) = (
        WRITES.load(Ordering::Relaxed),
        READS.load(Ordering::Relaxed),
        FREED.load(Ordering::Relaxed),
        SHARED.load(Ordering::Relaxed),
    );
    eprintln!(
        "model-based: {sequences} random sequences, {calls} calls over {DEVICES} devices, with \
         exports to a second process, in {:.1} s ({writes} writes and {reads} reads landed, \
         {freed} allocations freed for reuse, {shared} imported by the second process); mock and reference agreed on every result \
         and every byte read",
        started.elapsed().as_secs_f64()
    );
    assert!(calls >= target, "only {calls} calls");
    assert!(
        writes > calls / 100 && reads > calls / 100 && freed > calls / 100 && shared > 100,
        "too little data flowed to test anything"
    );
}

/// Fewer, shorter sequences from proptest, which shrinks a failure to a minimal one.
#[test]
fn the_mock_agrees_with_the_reference_model() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 200,
        ..ProptestConfig::default()
    });
    let result = runner.run(&prop::collection::vec(op(), 1..100), |ops| run(&ops));
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn a_long_fixed_sequence_agrees_too() {
    let ops: Vec<Op> = (0..300u64)
        .map(|i| match i % 8 {
            0 => Op::Reserve { chunks: 4 },
            1 => Op::Create {
                chunks: 1,
                device: (i % 3) as usize,
                exportable: i % 2 == 0,
            },
            2 => Op::Map {
                r: (i % 4) as usize,
                at: i % 3,
                h: (i % 5) as usize,
            },
            3 => Op::Grant {
                r: (i % 4) as usize,
                at: i % 3,
                chunks: 1,
                device: 0,
                flags: 3,
            },
            4 => Op::Write {
                r: (i % 4) as usize,
                at: i % 3,
                slot: i % SLOTS,
                seed: i as u8,
            },
            5 => Op::Share {
                h: (i % 3) as usize,
                slot: (i + 1) % SLOTS,
                seed: i as u8,
            },
            6 => Op::Release {
                h: (i % 7) as usize,
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
