//! The PTX ISA 9.0 coverage table (ptx/coverage/isa-9.0.txt): its lines and each line's
//! kernel, for tests/isa_coverage.rs and the fuzz test's seeds.

use super::repo_root;

pub struct Line {
    pub number: usize,
    pub family: String,
    pub arch: String,
    pub mode: String,
    pub status: String,
    pub body: String,
}

pub fn table() -> Vec<Line> {
    let text = std::fs::read_to_string(repo_root().join("ptx/coverage/isa-9.0.txt")).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(n, l)| {
            let f: Vec<&str> = l.splitn(5, " | ").collect();
            assert_eq!(f.len(), 5, "isa-9.0.txt:{}: five fields", n + 1);
            Line {
                number: n + 1,
                family: f[0].trim().to_string(),
                arch: f[1].trim().to_string(),
                mode: f[2].trim().to_string(),
                status: f[3].trim().to_string(),
                body: f[4].trim().to_string(),
            }
        })
        .collect()
}

/// The line's kernel for `target`: module text, entry directives and body split at `##`.
pub fn kernel(line: &Line, target: &str) -> String {
    // `\n` in the table is a line break (`.loc` ends at one).
    let text = line.body.replace("\\n", "\n");
    let parts: Vec<&str> = text.split("##").map(str::trim).collect();
    let (module, dirs, body) = match parts.as_slice() {
        [b] => ("", "", *b),
        [m, d, b] => (*m, *d, *b),
        _ => panic!(
            "isa-9.0.txt:{}: body or MODULE ## DIRS ## BODY",
            line.number
        ),
    };
    format!(
        ".version 9.0\n.target {target}\n.address_size 64\n{module}\n\
         .visible .entry k(.param .u64 out)\n{dirs}\n{{\n\
         .reg .b64 %rd<32>;\n.reg .b32 %r<32>;\n.reg .b16 %h<16>;\n.reg .pred %p<8>;\n\
         .reg .f32 %f<16>;\n.reg .f64 %fd<8>;\n.reg .b128 %q<4>;\n\
         .shared .align 128 .b8 sm[2048];\n.local .align 16 .b8 lm[64];\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r0, %tid.x;\nmov.u64 %rd3, sm;\n\
         mov.u32 %r1, 1;\nmov.u32 %r2, 2;\nmov.u32 %r3, 3;\nmov.u32 %r4, 0x3f800000;\n\
         mov.u64 %rd4, 1;\nmov.u64 %rd5, 2;\nmov.b16 %h1, 0x3c00;\nmov.b16 %h2, 0x4000;\n\
         mov.f32 %f1, 0f3F800000;\nmov.f32 %f2, 0f40000000;\nmov.f32 %f3, 0f3F000000;\n\
         mov.f64 %fd1, 0d3FF0000000000000;\nmov.f64 %fd2, 0d4000000000000000;\n\
         setp.eq.u32 %p1, %r0, %r0;\n\
         {body}\nret;\n}}\n",
        // An instruction a line, as the mutations (tests/fuzz.rs) take lines.
        body = body.replace("; ", ";\n")
    )
}
