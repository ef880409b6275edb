//! Mutations: bytes (flips, interesting values, insertions, deletions, splices) for every
//! target, and for text (PTX, case files) lines and words, with tokens from the
//! target's dictionary (`fuzz/dict/*.dict`, libFuzzer's format, which `ci/fuzz.sh` gives
//! libFuzzer too).

use fastrand::Rng;

/// Parses a libFuzzer dictionary: one `"token"` a line (`name="token"` too), with `\\`,
/// `\"` and `\xNN` escapes; `#` starts a comment.
pub fn parse_dict(text: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let (Some(a), Some(b)) = (line.find('"'), line.rfind('"')) else {
            continue;
        };
        if b <= a {
            continue;
        }
        let body = &line.as_bytes()[a + 1..b];
        let mut tok = Vec::new();
        let mut i = 0;
        while i < body.len() {
            match body[i] {
                b'\\' if body.get(i + 1) == Some(&b'x') && i + 3 < body.len() + 1 => {
                    let hex = std::str::from_utf8(body.get(i + 2..i + 4).unwrap_or(b"zz"))
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok());
                    match hex {
                        Some(v) => {
                            tok.push(v);
                            i += 4;
                        }
                        None => {
                            tok.push(b'\\');
                            i += 1;
                        }
                    }
                }
                b'\\' if i + 1 < body.len() => {
                    tok.push(body[i + 1]);
                    i += 2;
                }
                c => {
                    tok.push(c);
                    i += 1;
                }
            }
        }
        if !tok.is_empty() {
            out.push(tok);
        }
    }
    out
}

pub const INTERESTING_U64: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    15,
    16,
    31,
    32,
    33,
    63,
    64,
    127,
    128,
    255,
    256,
    4096,
    0x7fff,
    0x8000,
    0xffff,
    0x10000,
    0x20_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    1 << 40,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX - 1,
    u64::MAX,
];

/// One byte-level mutation.
pub fn bytes(data: &mut Vec<u8>, rng: &mut Rng, pool: &[Vec<u8>], dict: &[Vec<u8>]) {
    let n = data.len();
    match rng.u8(..10) {
        0 if n > 0 => {
            let i = rng.usize(..n);
            data[i] ^= 1 << rng.u8(..8);
        }
        1 if n > 0 => {
            let i = rng.usize(..n);
            data[i] = [0u8, 1, 0x7f, 0x80, 0xff, b'0', b'\n', b' '][rng.usize(..8)];
        }
        2 if n > 0 => {
            // A little-endian field of 2, 4 or 8 bytes set to an interesting value.
            let w = [2usize, 4, 8][rng.usize(..3)];
            if n >= w {
                let i = rng.usize(..=n - w);
                let v = INTERESTING_U64[rng.usize(..INTERESTING_U64.len())];
                let v = if rng.bool() { v } else { v.wrapping_neg() };
                data[i..i + w].copy_from_slice(&v.to_le_bytes()[..w]);
            }
        }
        3 if n > 0 => {
            let i = rng.usize(..n);
            let len = rng.usize(1..=(n - i).min(64));
            data.drain(i..i + len);
        }
        4 => {
            let i = rng.usize(..=n);
            let len = rng.usize(1..16);
            let fill: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            data.splice(i..i, fill);
        }
        5 if n > 0 => {
            // Duplicate a chunk elsewhere.
            let i = rng.usize(..n);
            let len = rng.usize(1..=(n - i).min(256));
            let chunk = data[i..i + len].to_vec();
            let at = rng.usize(..=n);
            data.splice(at..at, chunk);
        }
        6 if !pool.is_empty() => {
            // Splice: our head, another input's tail.
            let other = &pool[rng.usize(..pool.len())];
            let cut = rng.usize(..=n);
            let from = rng.usize(..=other.len());
            data.truncate(cut);
            data.extend_from_slice(&other[from..]);
        }
        7 if !dict.is_empty() => {
            let tok = &dict[rng.usize(..dict.len())];
            let i = rng.usize(..=n);
            if rng.bool() || i + tok.len() > n {
                data.splice(i..i, tok.iter().copied());
            } else {
                data[i..i + tok.len()].copy_from_slice(tok);
            }
        }
        8 if n > 0 => data.truncate(rng.usize(..n)),
        _ if n > 0 => {
            let i = rng.usize(..n);
            data[i] = data[i].wrapping_add(rng.u8(1..4)).wrapping_sub(2);
        }
        _ => data.push(rng.u8(..)),
    }
}

/// One text mutation: lines removed, repeated, moved, taken from another input; words
/// replaced by dictionary tokens; numbers replaced by interesting ones. Falls back to a
/// byte mutation one time in five (text need not stay UTF-8).
pub fn text(data: &mut Vec<u8>, rng: &mut Rng, pool: &[Vec<u8>], dict: &[Vec<u8>]) {
    if rng.u8(..5) == 0 {
        return bytes(data, rng, pool, dict);
    }
    let s = String::from_utf8_lossy(data).into_owned();
    let mut lines: Vec<String> = s.split('\n').map(String::from).collect();
    let n = lines.len();
    let i = rng.usize(..n);
    let token = |rng: &mut Rng| -> String {
        if dict.is_empty() {
            return String::new();
        }
        String::from_utf8_lossy(&dict[rng.usize(..dict.len())]).into_owned()
    };
    match rng.u8(..10) {
        9 => {
            // A token repeated up to 64Ki times: nesting, long lists, long lines.
            let t = token(rng);
            let times = 1usize << rng.u32(1..17);
            let l = &lines[i];
            let cuts: Vec<usize> = (0..=l.len()).filter(|p| l.is_char_boundary(*p)).collect();
            let p = cuts[rng.usize(..cuts.len())];
            lines[i] = format!("{}{}{}", &l[..p], t.repeat(times), &l[p..]);
        }
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(rng.usize(..=lines.len()), l);
        }
        2 => {
            let j = rng.usize(..n);
            lines.swap(i, j);
        }
        3 | 4 => {
            // A word replaced by a token.
            let words: Vec<&str> = lines[i].split(' ').collect();
            let k = rng.usize(..words.len());
            let t = token(rng);
            let new: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(j, w)| if j == k { t.clone() } else { (*w).to_owned() })
                .collect();
            lines[i] = new.join(" ");
        }
        5 => {
            // A number replaced by an interesting one.
            let l = lines[i].clone();
            let digits: Vec<usize> = l
                .char_indices()
                .filter(|(_, c)| c.is_ascii_digit())
                .map(|(p, _)| p)
                .collect();
            if !digits.is_empty() {
                let p = digits[rng.usize(..digits.len())];
                let end = l[p..]
                    .find(|c: char| !c.is_ascii_alphanumeric())
                    .map_or(l.len(), |e| p + e);
                let v = INTERESTING_U64[rng.usize(..INTERESTING_U64.len())];
                let v = if rng.bool() {
                    v.to_string()
                } else {
                    format!("0x{v:x}")
                };
                lines[i] = format!("{}{}{}", &l[..p], v, &l[end..]);
            }
        }
        6 if !pool.is_empty() => {
            // A line from another input.
            let other = String::from_utf8_lossy(&pool[rng.usize(..pool.len())]).into_owned();
            let ol: Vec<&str> = other.split('\n').collect();
            lines.insert(i, ol[rng.usize(..ol.len())].to_owned());
        }
        7 => {
            let words: Vec<String> = (0..rng.usize(1..5)).map(|_| token(rng)).collect();
            lines.insert(i, words.join(" "));
        }
        _ => {
            // A token inserted inside a line, where it may glue to its neighbours.
            let l = &lines[i];
            let cuts: Vec<usize> = (0..=l.len()).filter(|p| l.is_char_boundary(*p)).collect();
            let p = cuts[rng.usize(..cuts.len())];
            lines[i] = format!("{}{}{}", &l[..p], token(rng), &l[p..]);
        }
    }
    *data = lines.join("\n").into_bytes();
}
