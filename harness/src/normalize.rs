//! Output normalisation, all of it: each pass turns one kind of run-dependent value
//! into a stable form, so that a transcript does not change from run to run or machine
//! to machine (addresses relative to their region, handles and contexts by name, fds as
//! `<fd>`, free memory relative to the first reading). The passes are append-only, so
//! that old goldens keep passing when one is added.

use crate::expr::show_size;

/// An address as `NAME+OFFSET` of the named region (reservation or allocation) that
/// holds it; `0` stays `0`; anything else is `<unknown address>`.
pub fn address(addr: u64, regions: &[(String, u64, u64)]) -> String {
    if addr == 0 {
        return "0".into();
    }
    for (name, base, size) in regions.iter().rev() {
        if addr >= *base && addr - base < (*size).max(1) {
            let off = addr - base;
            return if off == 0 {
                name.clone()
            } else {
                format!("{name}+{}", show_size(off))
            };
        }
    }
    "<unknown address>".into()
}

/// A handle by the name it was bound to, or `handle#N` in order of first appearance.
pub fn handle(value: u64, names: &mut Vec<(u64, String)>) -> String {
    if value == 0 {
        return "0".into();
    }
    if let Some((_, n)) = names.iter().find(|(v, _)| *v == value) {
        return n.clone();
    }
    let n = format!("handle#{}", names.len() + 1);
    names.push((value, n.clone()));
    n
}

/// File descriptors differ from run to run: only their being one is kept.
pub fn fd(value: i64) -> String {
    if value >= 0 {
        "<fd>".into()
    } else {
        value.to_string()
    }
}

/// Free memory relative to the first reading of the run (`F0`, `F0-128MiB`): the
/// absolute figure moves between runs on a real GPU, the differences do not.
pub fn free_memory(value: u64, baseline: &mut Option<u64>) -> String {
    let b = *baseline.get_or_insert(value);
    match value.cmp(&b) {
        std::cmp::Ordering::Equal => "F0".into(),
        std::cmp::Ordering::Less => format!("F0-{}", show_size(b - value)),
        std::cmp::Ordering::Greater => format!("F0+{}", show_size(value - b)),
    }
}

/// A context by the name it was bound to; `null` for none.
pub fn context(value: u64, names: &[(u64, String)]) -> String {
    if value == 0 {
        return "null".into();
    }
    names
        .iter()
        .find(|(c, _)| *c == value)
        .map(|(_, n)| n.clone())
        .unwrap_or_else(|| "<unnamed context>".into())
}

/// A device's UUID differs by machine: only whether it is set is kept.
pub fn uuid(bytes: &[u8; 16]) -> String {
    if bytes.iter().any(|b| *b != 0) {
        "<uuid>".into()
    } else {
        "0".into()
    }
}

/// A PCI bus id of the right shape is `<pci-bus-id>` (its value differs by machine);
/// anything else is shown as it is.
pub fn pci_bus_id(id: &str) -> String {
    if pci_bus_id_shape(id) {
        "<pci-bus-id>".into()
    } else {
        format!("{id:?}")
    }
}

/// `DDDD:BB:DD.F` or `DDDDDDDD:BB:DD.F`.
fn pci_bus_id_shape(id: &str) -> bool {
    let parts: Vec<&str> = id.split([':', '.']).collect();
    let hex =
        |s: &str, n: &[usize]| n.contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit());
    parts.len() == 4
        && hex(parts[0], &[4, 8])
        && hex(parts[1], &[2])
        && hex(parts[2], &[2])
        && hex(parts[3], &[1])
}

/// Whether a reservation's address has the alignment asked for (at least 2 MiB), and
/// if not, by how much it misses.
pub fn alignment(addr: u64, align: u64) -> String {
    let want = align.max(2 << 20);
    if addr.is_multiple_of(want) {
        "yes".into()
    } else {
        format!("no ({})", show_size(addr % want))
    }
}

/// Bytes read back: `ok` or `mismatch@OFFSET` against what was expected, or, where
/// nothing was expected, a hash of them.
pub fn data(got: &[u8], expected: Option<&[u8]>) -> String {
    match expected {
        Some(want) => match got.iter().zip(want).position(|(a, b)| a != b) {
            None => "ok".to_string(),
            Some(i) => format!("mismatch@{i}"),
        },
        None => format!("{:016x}", fnv(got)),
    }
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Identifiers that differ from run to run (buffer and memory block ids): `<id>`.
pub fn id(value: u64) -> String {
    if value == 0 {
        "0".into()
    } else {
        "<id>".into()
    }
}

/// A C string the driver returned, quoted; `null` for none.
pub fn c_string(s: Option<&str>) -> String {
    match s {
        None => "null".into(),
        Some(s) => format!("{s:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_relative_to_their_region() {
        let regions = vec![
            ("va".to_string(), 0x7f00_0000_0000, 8 << 20),
            ("p".to_string(), 0x7e00_0000_0000, 2 << 20),
        ];
        assert_eq!(address(0x7f00_0000_0000, &regions), "va");
        assert_eq!(address(0x7f00_0040_0000, &regions), "va+4MiB");
        assert_eq!(address(0x7e00_0000_0010, &regions), "p+16");
        assert_eq!(address(0x1234, &regions), "<unknown address>");
        assert_eq!(address(0, &regions), "0");
    }

    #[test]
    fn handles_get_names_in_order() {
        let mut names = vec![(0xabc, "h".to_string())];
        assert_eq!(handle(0xabc, &mut names), "h");
        assert_eq!(handle(0x111, &mut names), "handle#2");
        assert_eq!(handle(0x222, &mut names), "handle#3");
        assert_eq!(handle(0x111, &mut names), "handle#2");
    }

    #[test]
    fn pci_bus_ids_of_either_width() {
        assert_eq!(pci_bus_id("0000:00:06.0"), "<pci-bus-id>");
        assert_eq!(pci_bus_id("00000000:18:00.0"), "<pci-bus-id>");
        assert_eq!(pci_bus_id("garbage"), "\"garbage\"");
    }

    #[test]
    fn contexts_alignment_and_data() {
        let names = vec![(0x55, "ctx".to_string())];
        assert_eq!(context(0x55, &names), "ctx");
        assert_eq!(context(0, &names), "null");
        assert_eq!(context(0x66, &names), "<unnamed context>");
        assert_eq!(alignment(4 << 20, 0), "yes");
        assert_eq!(alignment((4 << 20) + 4096, 0), "no (4KiB)");
        assert_eq!(data(&[1, 2, 3], Some(&[1, 2, 3])), "ok");
        assert_eq!(data(&[1, 2, 4], Some(&[1, 2, 3])), "mismatch@2");
        assert_eq!(data(&[], None), "cbf29ce484222325");
    }

    #[test]
    fn fds_and_free_memory() {
        assert_eq!(fd(7), "<fd>");
        assert_eq!(fd(-1), "-1");
        let mut b = None;
        assert_eq!(free_memory(1000 << 20, &mut b), "F0");
        assert_eq!(free_memory(872 << 20, &mut b), "F0-128MiB");
        assert_eq!(free_memory(1000 << 20, &mut b), "F0");
    }
}
