//! What a device reports, as data: the built-in H200 profile, or one from a file that
//! `cumock profile capture` wrote on a real GPU.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const PROFILE_FORMAT: &str = "cumock-profile/1";

/// The H200 with driver 580.159.04, as captured on the GPU machine.
pub const BUILTIN_H200: &str = include_str!("../../profiles/h200-580.159.04.json");

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Profile {
    pub format: String,
    pub driver_version: i32,
    /// The kernel driver's release (`580.159.04`), where the profile was captured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_release: Option<String>,
    pub devices: Vec<DeviceProfile>,
    /// `peer_access[a][b]`: device a may access device b's memory. Absent: all may.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_access: Option<Vec<Vec<bool>>>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DeviceProfile {
    pub name: String,
    pub total_mem: u64,
    /// What cuMemGetInfo reports as free right after start (the driver keeps some).
    pub free_at_start: u64,
    pub uuid: String,
    pub pci_bus_id: String,
    pub granularity_minimum: u64,
    pub granularity_recommended: u64,
    /// `CU_DEVICE_ATTRIBUTE_*` name to value.
    pub attributes: BTreeMap<String, i32>,
    /// `attributes` by code, built at the first lookup: a launch reads half a dozen
    /// attributes, and finding each by name cost more than the rest of the launch.
    #[serde(skip)]
    by_code: AttributeIndex,
}

/// Attribute values by code (`None`: not a CUdevice_attribute), derived from the names.
/// Not part of what a profile is: clones start empty, and it never makes two profiles
/// differ.
#[derive(Default)]
struct AttributeIndex(std::sync::OnceLock<Vec<Option<i32>>>);

impl Clone for AttributeIndex {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for AttributeIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for AttributeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AttributeIndex")
    }
}

impl Profile {
    pub fn parse(text: &str) -> Result<Self, String> {
        let p: Profile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        p.validate()?;
        Ok(p)
    }

    pub fn builtin() -> Self {
        Self::parse(BUILTIN_H200).expect("the built-in profile is valid")
    }

    /// The built-in device, `count` times over, with all pairs peers (as on an NVLink host).
    pub fn builtin_with_devices(count: usize) -> Result<Self, String> {
        if !(1..=64).contains(&count) {
            return Err(format!("device count {count} is not between 1 and 64"));
        }
        let mut p = Self::builtin();
        let first = p.devices[0].clone();
        p.devices = (0..count)
            .map(|i| {
                let mut d = first.clone();
                d.uuid = format!("{}{:02x}", &first.uuid[..first.uuid.len() - 2], i);
                d.pci_bus_id = format!("0000:00:{:02x}.0", 6 + i);
                d
            })
            .collect();
        p.peer_access = None;
        Ok(p)
    }

    /// Rejects what would make the mock misbehave: sizes that are not powers of two,
    /// free memory above total, a peer matrix of the wrong shape.
    pub fn validate(&self) -> Result<(), String> {
        if self.format != PROFILE_FORMAT {
            return Err(format!(
                "format is {:?}, expected {PROFILE_FORMAT:?}",
                self.format
            ));
        }
        if self.devices.is_empty() || self.devices.len() > 64 {
            return Err("a profile needs 1 to 64 devices".into());
        }
        for (i, d) in self.devices.iter().enumerate() {
            for (what, g) in [
                ("granularity_minimum", d.granularity_minimum),
                ("granularity_recommended", d.granularity_recommended),
            ] {
                if !g.is_power_of_two() || !(4096..=(1 << 40)).contains(&g) {
                    return Err(format!(
                        "device {i}: {what} {g} is not a power of two from 4 KiB to 1 TiB"
                    ));
                }
            }
            if d.free_at_start > d.total_mem {
                return Err(format!("device {i}: free_at_start is above total_mem"));
            }
            if d.total_mem > (1 << 56) {
                return Err(format!(
                    "device {i}: total_mem {} is implausible",
                    d.total_mem
                ));
            }
            if d.name.len() > 255 || d.name.contains('\0') {
                return Err(format!("device {i}: the name is too long or holds a NUL"));
            }
            if uuid_bytes(&d.uuid).is_none() {
                return Err(format!(
                    "device {i}: uuid {:?} is not GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
                    d.uuid
                ));
            }
            for name in d.attributes.keys() {
                if cumock_abi::device_attribute_code(name).is_none() {
                    return Err(format!("device {i}: unknown attribute {name}"));
                }
            }
        }
        if let Some(m) = &self.peer_access {
            let n = self.devices.len();
            if m.len() != n || m.iter().any(|r| r.len() != n) {
                return Err(format!("peer_access must be {n} by {n}"));
            }
        }
        Ok(())
    }

    pub fn can_access_peer(&self, dev: usize, peer: usize) -> bool {
        if dev == peer {
            return false;
        }
        match &self.peer_access {
            Some(m) => m[dev][peer],
            None => true,
        }
    }

    pub fn minimum_granularity(&self) -> u64 {
        self.devices
            .iter()
            .map(|d| d.granularity_minimum)
            .min()
            .unwrap_or(2 << 20)
    }
}

impl DeviceProfile {
    /// The value of an attribute by its code; cuda.h gives some codes two names (a
    /// deprecated alias), and a profile may use either. `None`: not a CUdevice_attribute.
    pub fn attribute(&self, code: i32) -> Option<i32> {
        let index = self.by_code.0.get_or_init(|| {
            let max = cumock_abi::CU_DEVICE_ATTRIBUTES
                .iter()
                .map(|(_, v)| *v)
                .filter(|v| (0..4096).contains(v))
                .max()
                .unwrap_or(0);
            (0..=max as i32)
                .map(|c| {
                    cumock_abi::device_attribute_name(c)?;
                    let by_code = cumock_abi::CU_DEVICE_ATTRIBUTES
                        .iter()
                        .filter(|(_, v)| *v == i64::from(c))
                        .find_map(|(n, _)| self.attributes.get(*n).copied());
                    Some(by_code.unwrap_or(0))
                })
                .collect()
        });
        match usize::try_from(code).ok().and_then(|c| index.get(c)) {
            Some(v) => *v,
            // Codes past the table: only what cuda.h names (none today) counts.
            None => cumock_abi::device_attribute_name(code).map(|_| 0),
        }
    }
}

/// "GPU-1a2b3c4d-..." to the 16 bytes of a CUuuid.
pub fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    let hex: String = text
        .strip_prefix("GPU-")?
        .chars()
        .filter(|c| *c != '-')
        .collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profile_is_the_h200() {
        let p = Profile::builtin();
        assert_eq!(p.driver_version, 13000);
        assert_eq!(p.devices[0].name, "NVIDIA H200");
        assert_eq!(p.devices[0].total_mem, 150_109_880_320);
        assert_eq!(p.devices[0].granularity_minimum, 2 << 20);
    }

    #[test]
    fn device_count_makes_distinct_peers() {
        let p = Profile::builtin_with_devices(3).unwrap();
        assert_eq!(p.devices.len(), 3);
        assert_ne!(p.devices[0].uuid, p.devices[1].uuid);
        assert!(p.can_access_peer(0, 2));
        assert!(!p.can_access_peer(1, 1));
        assert!(Profile::builtin_with_devices(0).is_err());
        assert!(Profile::builtin_with_devices(1000).is_err());
    }

    #[test]
    fn bad_profiles_are_refused_with_a_reason() {
        let mut p = Profile::builtin();
        p.devices[0].granularity_minimum = 3000;
        assert!(p.validate().unwrap_err().contains("granularity_minimum"));
        let mut p = Profile::builtin();
        p.peer_access = Some(vec![vec![true; 2]]);
        assert!(p.validate().unwrap_err().contains("peer_access"));
        assert!(Profile::parse("{").is_err());
    }
}
