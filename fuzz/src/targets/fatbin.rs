//! Fatbin containers: `fatbin::entries`, `entry_text` of each entry, `select_ptx`, and
//! the PTX parsed (not run: the `ptx` target runs PTX).

use crate::mutate::{self, INTERESTING_U64};
use crate::signature;
use cumock_ptx::fatbin;
use cumock_ptx::Module;

/// Offsets of the entry headers, walked as the reader walks them (as far as it can).
fn entry_offsets(b: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = 16usize;
    let base = if b.get(..4) == Some(&fatbin::WRAPPER_MAGIC.to_le_bytes()) {
        16
    } else {
        0
    };
    at += base;
    while at + 64 <= b.len() && out.len() < 16 {
        out.push(at);
        let eh = u32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap()) as usize;
        let padded = u64::from_le_bytes(b[at + 8..at + 16].try_into().unwrap());
        let Some(next) = (at as u64)
            .checked_add(eh as u64)
            .and_then(|x| x.checked_add(padded))
        else {
            break;
        };
        if next <= at as u64 || next > b.len() as u64 {
            break;
        }
        at = next as usize;
    }
    out
}

pub fn mutate(data: &mut Vec<u8>, rng: &mut fastrand::Rng, pool: &[Vec<u8>]) {
    if rng.u8(..3) != 0 {
        // A header field set to an interesting value: the container's (version, header
        // size, size) or an entry's (kind, header size, padded size, compressed size, sm,
        // flags, uncompressed size).
        let entries = entry_offsets(data);
        let (at, w) = if entries.is_empty() || rng.u8(..4) == 0 {
            [(4usize, 2usize), (6, 2), (8, 8), (0, 4)][rng.usize(..4)]
        } else {
            let e = entries[rng.usize(..entries.len())];
            let (o, w) =
                [(0, 2), (4, 4), (8, 8), (16, 4), (28, 4), (40, 8), (56, 8)][rng.usize(..7)];
            (e + o, w)
        };
        if at + w <= data.len() {
            let old = {
                let mut b = [0u8; 8];
                b[..w].copy_from_slice(&data[at..at + w]);
                u64::from_le_bytes(b)
            };
            let v = match rng.u8(..4) {
                0 => old.wrapping_add(rng.u64(1..64)),
                1 => old.wrapping_sub(rng.u64(1..64)),
                2 => [0x2000u64, 0x8000, 0xa000, 1, 2, 0x10, 90, 100][rng.usize(..8)],
                _ => INTERESTING_U64[rng.usize(..INTERESTING_U64.len())],
            };
            data[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
            return;
        }
    }
    mutate::bytes(data, rng, pool, &[]);
}

pub fn run(data: &[u8]) -> u64 {
    let _ = fatbin::is_fatbin(data);
    let _ = fatbin::is_elf(data);
    let mut sig = match fatbin::entries(data) {
        Ok(es) => {
            let mut s = es.len() as u64;
            for e in &es {
                let _ = e.to_string();
                s = s.rotate_left(3)
                    ^ match fatbin::entry_text(e) {
                        Ok(t) => t.len().min(1) as u64,
                        Err(err) => signature(&[&err.to_string()]),
                    };
            }
            s
        }
        Err(e) => signature(&[&e.to_string()]),
    };
    for sm in [90, 52] {
        sig = sig.rotate_left(11)
            ^ match fatbin::select_ptx(data, sm) {
                Ok(text) => match Module::parse(&text) {
                    Ok(m) => m.kernels.len() as u64 + 1,
                    Err(e) => signature(&["parse", &format!("{:?}", e.kind)]),
                },
                Err(e) => signature(&[&e.to_string()]),
            };
    }
    sig
}
