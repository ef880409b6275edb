//! `sured.p` through the whole stack: ci/explore/sured_p.cu (surface objects over CUDA
//! arrays, one reduction per case, the array read back) run on the mock, and each case the
//! PTX ISA defines checked against a reduction computed here: x a sample index, `.b32` data
//! u32 or s32 and `.b64` u64 or s64 by the format (UINT or SINT), `.clamp` to the nearest
//! sample, `.zero` dropping the access, `.trap` an error. The program's other cases (what
//! the ISA leaves open) await the H200's answer and are only required to finish.

mod common;

use std::process::Command;

const W: i64 = 4;
const H: i64 = 2;
const D: i64 = 2;

fn build() -> std::path::PathBuf {
    let root = common::toolkit();
    let src = common::workspace().join("ci/explore/sured_p.cu");
    let exe = common::scratch("programs").join("sured_p");
    let o = Command::new(root.join("bin/nvcc"))
        .args(["-cudart", "shared", "-arch=sm_90", "-gencode"])
        .arg("arch=compute_90,code=compute_90")
        .arg("-L")
        .arg(root.join("lib"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("running nvcc");
    assert!(
        o.status.success(),
        "nvcc {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

/// One printed case: `N FORMAT Gd OP CTYPE MODE (x,y,z) VALUE: RESULT`.
struct Case<'a> {
    index: usize,
    format: &'a str,
    geom: i64,
    op: &'a str,
    wide: bool,
    mode: &'a str,
    at: [i64; 3],
    value: u64,
    result: &'a str,
}

fn parse(line: &str) -> Case<'_> {
    let (head, result) = line.split_once(": ").expect("a case line");
    let f: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(f.len(), 8, "{line}");
    let at: Vec<i64> = f[6]
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    Case {
        index: f[0].parse().unwrap(),
        format: f[1],
        geom: f[2].trim_end_matches('d').parse().unwrap(),
        op: f[3],
        wide: f[4] == "b64",
        mode: f[5],
        at: [at[0], at[1], at[2]],
        value: u64::from_str_radix(f[7], 16).unwrap(),
        result: result.trim(),
    }
}

/// What the ISA says the case leaves in the array, as the program prints it: the changed
/// words, `unchanged`, or `error` for a `.trap` out of range. None where the ISA leaves the
/// case open (formats neither UINT nor SINT, samples other than the data's width).
fn expected(c: &Case, pattern: &[u32; 8]) -> Option<String> {
    let (sample_bytes, signed) = match (c.format, c.wide) {
        ("u32x1", false) => (4, false),
        ("s32x1", false) => (4, true),
        ("u32x2", true) => (8, false),
        ("s32x2", true) => (8, true),
        _ => return None,
    };
    let dims = [
        W,
        if c.geom >= 2 { H } else { 1 },
        if c.geom == 3 { D } else { 1 },
    ];
    let mut at = [0i64; 3];
    for k in 0..c.geom as usize {
        let p = c.at[k];
        if (0..dims[k]).contains(&p) {
            at[k] = p;
            continue;
        }
        match c.mode {
            "trap" => return Some("error".into()),
            "zero" => return Some("unchanged".into()),
            _ => at[k] = p.clamp(0, dims[k] - 1),
        }
    }
    let sample = ((at[2] * dims[1] + at[1]) * dims[0] + at[0]) as usize;
    let words = sample_bytes / 4;
    let first = sample * words;
    let word = |j: usize| pattern[j % 8] as u64;
    let old = if c.wide {
        word(first) | word(first + 1) << 32
    } else {
        word(first)
    };
    let (a, b) = (
        old,
        if c.wide {
            c.value
        } else {
            c.value & 0xffff_ffff
        },
    );
    // Signed comparison: sign-extend the data's width.
    let s = |v: u64| {
        if c.wide {
            v as i64
        } else {
            v as u32 as i32 as i64
        }
    };
    let new = match (c.op, signed) {
        ("add", _) => a.wrapping_add(b),
        ("min", true) => {
            if s(a) <= s(b) {
                a
            } else {
                b
            }
        }
        ("max", true) => {
            if s(a) >= s(b) {
                a
            } else {
                b
            }
        }
        ("min", false) => a.min(b),
        ("max", false) => a.max(b),
        ("and", _) => a & b,
        ("or", _) => a | b,
        (op, _) => panic!("operation {op}"),
    };
    let new = if c.wide { new } else { new & 0xffff_ffff };
    let mut changed = Vec::new();
    for k in 0..words {
        let (o, n) = ((old >> (32 * k)) as u32, (new >> (32 * k)) as u32);
        if o != n {
            changed.push(format!("[{}]={n:08x}", first + k));
        }
    }
    Some(if changed.is_empty() {
        "unchanged".into()
    } else {
        changed.join(" ")
    })
}

#[test]
fn sured_p_on_uint_and_sint_formats_reduces_as_the_isa_says() {
    let exe = build();
    let o = common::on_mock(&exe).output().expect("running sured_p");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "sured_p: {}\n{out}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    // The whole output as a reviewed snapshot: the mock's answers beside the H200's
    // recording of the same program, once it is made, case by case.
    insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!("sured_p", out);
    });
    let mut lines = out.lines();
    let header = lines.next().expect("a header");
    let pattern: Vec<u32> = header
        .split("word i = ")
        .nth(1)
        .and_then(|r| r.split(" [").next())
        .expect("the header's pattern")
        .split_whitespace()
        .map(|w| u32::from_str_radix(w, 16).unwrap())
        .collect();
    let pattern: [u32; 8] = pattern.try_into().expect("8 pattern words");
    let (mut checked, mut open, mut wrong) = (0, 0, Vec::new());
    for (n, line) in lines.enumerate() {
        let c = parse(line);
        assert_eq!(c.index, n, "cases in order, none missing: {line}");
        match expected(&c, &pattern) {
            None => open += 1,
            Some(want) => {
                checked += 1;
                let got = if c.result.starts_with("error") {
                    "error"
                } else {
                    c.result
                };
                if got != want {
                    wrong.push(format!("{line}\n    want: {want}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every operation of both widths, in range and out: not a handful.
    assert!(checked >= 120, "{checked} cases checked");
    assert!(open >= 150, "{open} open cases run");
}
