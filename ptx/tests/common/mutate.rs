//! Mutations of PTX text shared by the fuzz test and the differential test of the engines.

/// Corpus files the mutations start from.
pub const SEEDS: &[&str] = &[
    "int_arith.cu",
    "warp.cu",
    "block.cu",
    "memory.cu",
    "calls.cu",
    "cvt.cu",
    "async_copies.cu",
    "video.cu",
    "stack_system.cu",
    "sm90_forms.cu",
    "issue21.cu",
];

pub const VOCAB: &[&str] = &[
    "%r1.b3",
    "-%r2",
    "%r3.h10",
    "%r1.b7654",
    "%r2.h1,",
    "%rd1.b0",
    "%r1",
    "%r2",
    "%rd1",
    "%p1",
    "%f1",
    "%tid.x",
    "%ctaid.y",
    "[%rd1]",
    "[%rd1+4]",
    "[%r1+-8]",
    "0",
    "1",
    "-1",
    "0f3F800000",
    "0d3FF0000000000000",
    "0x7fffffff",
    "4294967296",
    "$L__BB0_2",
    ",",
    ";",
    "{",
    "}",
    "(",
    ")",
    "@%p1",
    "@!%p1",
    "bra",
    "ret",
    "exit",
    "bar.sync",
    "shfl.sync.bfly.b32",
    "ld.global.u32",
    "st.shared.v4.f32",
    "atom.global.add.u32",
    "cvt.rni.s32.f32",
    "mov.b64",
    "call.uni",
    "cp.async.cg.shared.global",
    "cp.async.wait_group",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
    "mbarrier.init.shared.b64",
    "mbarrier.arrive.expect_tx.shared::cta.b64",
    "mbarrier.try_wait.parity.shared.b64",
    ".reg",
    ".param",
    ".local",
    ".shared",
    ".u32",
    ".b8",
    "|",
    "_",
    "<",
    ">",
    "=",
    "+",
    "-",
    "!",
    ".entry",
    ".func",
    ".version",
    "9.0",
    "\"",
    "/*",
    "//",
];

pub fn mutate(src: &str, rng: &mut fastrand::Rng) -> String {
    let mut lines: Vec<String> = src.lines().map(String::from).collect();
    for _ in 0..rng.usize(1..5) {
        if lines.is_empty() {
            break;
        }
        let i = rng.usize(..lines.len());
        match rng.u8(..10) {
            // Mild ones first, which keep the program valid often, so the executor gets
            // wrong addresses, counts and branches rather than parse errors.
            7..=8 => {
                // Another register of the same kind: `%r12` -> `%r3`.
                let l = lines[i].clone();
                if let Some(p) = l
                    .find("%r")
                    .or_else(|| l.find("%rd"))
                    .or_else(|| l.find("%p"))
                {
                    let end = l[p + 2..]
                        .find(|c: char| !c.is_ascii_alphanumeric())
                        .map_or(l.len(), |e| p + 2 + e);
                    let prefix: String = l[p..end]
                        .chars()
                        .take_while(|c| !c.is_ascii_digit())
                        .collect();
                    lines[i] = format!("{}{}{}{}", &l[..p], prefix, rng.u8(1..8), &l[end..]);
                }
            }
            9 => {
                // Another number.
                let l = lines[i].clone();
                if let Some(p) = l.find(|c: char| c.is_ascii_digit()) {
                    let end = l[p..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(l.len(), |e| p + e);
                    let v = [
                        0u64,
                        1,
                        3,
                        31,
                        32,
                        33,
                        64,
                        255,
                        4096,
                        1 << 31,
                        u32::MAX as u64,
                    ][rng.usize(..11)];
                    lines[i] = format!("{}{}{}", &l[..p], v, &l[end..]);
                }
            }
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(rng.usize(..lines.len()), l);
            }
            2 => {
                let j = rng.usize(..lines.len());
                lines.swap(i, j);
            }
            3 => {
                // Replace one word with a word from the vocabulary.
                let mut words: Vec<String> =
                    lines[i].split_whitespace().map(String::from).collect();
                if !words.is_empty() {
                    let k = rng.usize(..words.len());
                    words[k] = VOCAB[rng.usize(..VOCAB.len())].to_string();
                }
                lines[i] = words.join(" ");
            }
            4 => {
                let mut b = lines[i].clone().into_bytes();
                if !b.is_empty() {
                    let k = rng.usize(..b.len());
                    b[k] = rng.u8(32..127);
                }
                lines[i] = String::from_utf8_lossy(&b).into_owned();
            }
            5 => lines.truncate(i),
            _ => lines.insert(
                i,
                (0..rng.usize(1..6))
                    .map(|_| VOCAB[rng.usize(..VOCAB.len())])
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        }
    }
    lines.join("\n")
}
