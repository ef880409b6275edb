//! Forms of PTX ISA 9.0 that sm_90 and sm_90a do not have, named at load with the target
//! they need (the ISA's "Target ISA notes"; ptxas refuses each for sm_90a, which
//! tests/isa_coverage.rs checks), and the forms the mock refuses by design. The mock is an
//! sm_90a device: a module using these could not load on the H200 either.

/// Why the instruction (opcode, modifiers, operand count) cannot run here, if it cannot:
/// the sm_100 family form it is, or what the mock does not emulate by design.
pub(crate) fn refusal(opcode: &str, mods: &[String], nops: usize) -> Option<String> {
    let has = |m: &str| mods.iter().any(|x| x == m);
    let any = |ms: &[&str]| mods.iter().any(|x| ms.contains(&x.as_str()));
    let sm100 = |what: &str| {
        Some(format!(
            "{what} needs sm_100 or later (the mock is an sm_90a)"
        ))
    };
    let floats16 = ["f16", "bf16"];
    match opcode {
        "tcgen05" => sm100("`tcgen05` (fifth-generation tensor cores, sm_100a)"),
        "clusterlaunchcontrol" => sm100("`clusterlaunchcontrol`"),
        "multimem" => Some(
            "`multimem` reaches multicast objects (cuMulticast*), which the mock does not \
             create by design"
                .into(),
        ),
        "st" if has("bulk") => sm100("`st.bulk`"),
        "add" | "sub" | "mul" | "fma" if has("f32x2") => sm100("`.f32x2` arithmetic"),
        "add" | "sub" | "fma" if has("f32") && any(&floats16) => {
            sm100("mixed-precision `.f32` with a half-precision operand")
        }
        "min" | "max" if nops == 4 => sm100("three-input `min`/`max`"),
        "ld" | "ldu" | "st" if has("v8") || (has("v4") && any(&["b64", "u64", "s64", "f64"])) => {
            sm100("256-bit `ld`/`st` (`.v8` of 32 bits, `.v4` of 64 bits)")
        }
        "cvt" if has("rs") => sm100("`cvt.rs` (stochastic rounding)"),
        "cvt" if any(&["e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2"]) => {
            sm100("`cvt` to or from FP4, FP6 or UE8M0")
        }
        // sm_90 has `.rn`/`.rz` to `.tf32` without `.satfinite`, `.rna` with it.
        "cvt" if has("tf32") && has("satfinite") && any(&["rn", "rz"]) => {
            sm100("`cvt.rn`/`.rz.satfinite` to `.tf32`")
        }
        "redux" if has("f32") => sm100("`redux.sync` of `.f32`"),
        "ldmatrix" | "stmatrix" if any(&["m16n16", "m8n16", "b8", "b8x16"]) => {
            sm100("8-bit matrix shapes of `ldmatrix`/`stmatrix`")
        }
        _ => None,
    }
}
