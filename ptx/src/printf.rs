//! Device `printf`: the `vprintf(format, args)` that nvcc calls, formatted as CUDA's host
//! side formats a GPU's printf FIFO, and the message of a failed device `assert`.
//!
//! A GPU's `vprintf` copies the format's arguments into the FIFO and the host formats them
//! with C's rules at the next synchronisation; here the executor formats at the call (the
//! arguments and the strings `%s` names are read then, as the GPU copies them then) and
//! the launch's [`crate::PrintfBuffer`] keeps the text.
//!
//! Arguments lie in the caller's buffer one after another, each aligned to its size:
//! 4 bytes for `%d %i %u %x %X %o %c` (and their `h`/`hh` forms, which C promotes to int),
//! 8 for `l`/`ll`/`z`/`j`/`t` integers, every floating conversion (a `float` is promoted to
//! `double`), `%s` and `%p`. As CUDA documents, at most 32 arguments are taken: a
//! conversion past them is printed as written. Not emulated: `%n` (CUDA has none), wide
//! characters (`%lc`, `%ls`) and `long double` (`L`), which make the format malformed.
//!
//! Every read of device memory goes through a `peek` that answers `None` where nothing is
//! mapped: the format and each string end there (and after [`MAX_STRING`] bytes), so a
//! bad pointer never faults the host, and an argument that cannot be read makes the call
//! fail as a malformed format does (-1, nothing printed).

/// The most bytes read of a format or of a `%s` string; what lies past it is not printed.
pub(crate) const MAX_STRING: usize = 4096;

/// Arguments CUDA's printf takes after the format.
const MAX_ARGS: u32 = 32;

/// A NUL-terminated string at `addr`, read a byte at a time: it ends at its NUL, at the
/// first unreadable byte, or after `MAX_STRING` bytes.
pub(crate) fn read_string(addr: u64, peek: &mut dyn FnMut(u64) -> Option<u8>) -> Vec<u8> {
    let mut s = Vec::new();
    while s.len() < MAX_STRING {
        match peek(addr.wrapping_add(s.len() as u64)) {
            Some(0) | None => break,
            Some(b) => s.push(b),
        }
    }
    s
}

/// `vprintf(fmt, args)`: the text to print and the value the call returns (the number of
/// arguments taken, as CUDA documents), or no text and -1 when the format is NULL or
/// malformed, or an argument cannot be read.
pub(crate) fn vprintf(
    fmt: u64,
    args: u64,
    peek: &mut dyn FnMut(u64) -> Option<u8>,
) -> (Option<Vec<u8>>, i32) {
    if fmt == 0 {
        return (None, -1);
    }
    let text = read_string(fmt, peek);
    let mut src = Args {
        base: args,
        off: 0,
        taken: 0,
        peek,
    };
    match format(&text, &mut src) {
        Some(out) => (Some(out), src.taken as i32),
        None => (None, -1),
    }
}

/// The arguments' buffer, read in order.
struct Args<'p> {
    base: u64,
    off: u64,
    taken: u32,
    peek: &'p mut dyn FnMut(u64) -> Option<u8>,
}

impl Args<'_> {
    /// The next argument of `size` (4 or 8) bytes, little-endian, after aligning to it.
    fn next(&mut self, size: u64) -> Option<u64> {
        self.off = self.off.div_ceil(size) * size;
        let mut v = 0u64;
        for i in 0..size {
            let b = (self.peek)(self.base.wrapping_add(self.off + i))?;
            v |= u64::from(b) << (8 * i);
        }
        self.off += size;
        self.taken += 1;
        Some(v)
    }

    fn string(&mut self, addr: u64) -> Vec<u8> {
        read_string(addr, self.peek)
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    hash: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Len {
    None,
    Hh,
    H,
    /// `l`, `ll`, `z`, `j`, `t`: a 64-bit argument.
    Wide,
}

/// Widths and precisions past this are refused as malformed: no GPU record is that long,
/// and the host must not be made to allocate what a kernel names.
const MAX_WIDTH: usize = 1 << 16;

/// Formats `fmt` with the arguments of `src`; None when the format is malformed or an
/// argument cannot be read.
fn format(fmt: &[u8], src: &mut Args) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec::default();
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => spec.minus = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.hash = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        // `*` takes the width (and `.*` the precision) from an int argument, as in C; past
        // the argument limit the specifier is printed as written.
        let mut star_args = 0;
        if fmt.get(i) == Some(&b'*') {
            star_args += 1;
            i += 1;
        } else {
            spec.width = number(fmt, &mut i)?;
        }
        let mut star_precision = false;
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                star_precision = true;
                star_args += 1;
                i += 1;
            } else {
                spec.precision = Some(number(fmt, &mut i)?);
            }
        }
        let len = match (fmt.get(i), fmt.get(i + 1)) {
            (Some(b'h'), Some(b'h')) => {
                i += 2;
                Len::Hh
            }
            (Some(b'l'), Some(b'l')) => {
                i += 2;
                Len::Wide
            }
            (Some(b'h'), _) => {
                i += 1;
                Len::H
            }
            (Some(b'l' | b'z' | b'j' | b't'), _) => {
                i += 1;
                Len::Wide
            }
            _ => Len::None,
        };
        let conv = *fmt.get(i)?;
        i += 1;
        if conv == b'%' {
            out.push(b'%');
            continue;
        }
        if !b"diuxXocspfFeEgGaA".contains(&conv) || (len == Len::Wide && b"cs".contains(&conv)) {
            // Unknown conversions, `%n`, wide characters, `L`.
            return None;
        }
        if src.taken + star_args + 1 > MAX_ARGS {
            out.extend_from_slice(&fmt[start..i]);
            continue;
        }
        if star_args == 2 || (star_args == 1 && !star_precision) {
            let w = src.next(4)? as u32 as i32;
            // A negative width is the `-` flag and its magnitude, as in C.
            spec.minus |= w < 0;
            spec.width = (w.unsigned_abs() as usize).min(MAX_WIDTH);
        }
        if star_precision {
            let p = src.next(4)? as u32 as i32;
            // A negative precision is as if none were given.
            spec.precision = (p >= 0).then_some((p as usize).min(MAX_WIDTH));
        }
        let int_size = if len == Len::Wide { 8 } else { 4 };
        match conv {
            b'd' | b'i' => {
                let raw = src.next(int_size)?;
                let v: i64 = match len {
                    Len::Wide => raw as i64,
                    Len::None => raw as u32 as i32 as i64,
                    Len::H => raw as u16 as i16 as i64,
                    Len::Hh => raw as u8 as i8 as i64,
                };
                integer(&mut out, &spec, v < 0, v.unsigned_abs(), 10, false, true);
            }
            b'u' | b'x' | b'X' | b'o' => {
                let raw = src.next(int_size)?;
                let v = match len {
                    Len::Wide => raw,
                    Len::None => raw as u32 as u64,
                    Len::H => raw as u16 as u64,
                    Len::Hh => raw as u8 as u64,
                };
                let base = match conv {
                    b'u' => 10,
                    b'o' => 8,
                    _ => 16,
                };
                integer(&mut out, &spec, false, v, base, conv == b'X', false);
            }
            b'c' => {
                let b = src.next(4)? as u8;
                pad(&mut out, &spec, &[], &[b], false);
            }
            b's' => {
                let p = src.next(8)?;
                let mut s = if p == 0 {
                    // glibc prints "(null)", or nothing when the precision cuts it.
                    if spec.precision.is_some_and(|n| n < 6) {
                        Vec::new()
                    } else {
                        b"(null)".to_vec()
                    }
                } else {
                    src.string(p)
                };
                if let Some(n) = spec.precision {
                    s.truncate(n);
                }
                pad(&mut out, &spec, &[], &s, false);
            }
            b'p' => {
                let p = src.next(8)?;
                if p == 0 {
                    pad(&mut out, &spec, &[], b"(nil)", false);
                } else {
                    let s = Spec { hash: true, ..spec };
                    integer(&mut out, &s, false, p, 16, false, false);
                }
            }
            _ => {
                let v = f64::from_bits(src.next(8)?);
                float(&mut out, &spec, conv, v);
            }
        }
    }
    Some(out)
}

/// Decimal digits at `i` (none is 0); None past [`MAX_WIDTH`].
fn number(fmt: &[u8], i: &mut usize) -> Option<usize> {
    let mut n = 0usize;
    while let Some(d) = fmt.get(*i).filter(|d| d.is_ascii_digit()) {
        n = n * 10 + (d - b'0') as usize;
        if n > MAX_WIDTH {
            return None;
        }
        *i += 1;
    }
    Some(n)
}

/// `prefix` (sign, `0x`) and `body` padded to the width: on the right with `-`, with
/// zeros between them when `zeros`, else with spaces on the left.
fn pad(out: &mut Vec<u8>, spec: &Spec, prefix: &[u8], body: &[u8], zeros: bool) {
    let n = prefix.len() + body.len();
    let fill = spec.width.saturating_sub(n);
    if spec.minus {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.resize(out.len() + fill, b' ');
    } else if zeros {
        out.extend_from_slice(prefix);
        out.resize(out.len() + fill, b'0');
        out.extend_from_slice(body);
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

fn sign(spec: &Spec, negative: bool) -> &'static [u8] {
    if negative {
        b"-"
    } else if spec.plus {
        b"+"
    } else if spec.space {
        b" "
    } else {
        b""
    }
}

/// `%d %i %u %x %X %o %p` as C prints them: the precision is the fewest digits (0 prints
/// nothing for 0), `#` adds `0x` (to a non-zero value) or a leading `0` (octal), and the
/// `0` flag pads with zeros only when no precision is given.
fn integer(
    out: &mut Vec<u8>,
    spec: &Spec,
    negative: bool,
    magnitude: u64,
    base: u32,
    upper: bool,
    signed: bool,
) {
    let mut digits = match base {
        8 => format!("{magnitude:o}"),
        16 if upper => format!("{magnitude:X}"),
        16 => format!("{magnitude:x}"),
        _ => magnitude.to_string(),
    }
    .into_bytes();
    if spec.precision == Some(0) && magnitude == 0 {
        digits.clear();
    }
    if let Some(p) = spec.precision {
        if digits.len() < p {
            let mut d = vec![b'0'; p - digits.len()];
            d.extend_from_slice(&digits);
            digits = d;
        }
    }
    if base == 8 && spec.hash && digits.first() != Some(&b'0') {
        digits.insert(0, b'0');
    }
    let mut prefix = if signed {
        sign(spec, negative).to_vec()
    } else {
        Vec::new()
    };
    if base == 16 && spec.hash && magnitude != 0 {
        prefix.extend_from_slice(if upper { b"0X" } else { b"0x" });
    }
    let zeros = spec.zero && !spec.minus && spec.precision.is_none();
    pad(out, spec, &prefix, &digits, zeros);
}

/// `%f %F %e %E %g %G %a %A` as glibc prints them (`inf`, `nan`, `-0`, `#`).
fn float(out: &mut Vec<u8>, spec: &Spec, conv: u8, v: f64) {
    let upper = conv.is_ascii_uppercase();
    let prefix = sign(spec, v.is_sign_negative());
    let a = v.abs();
    if !a.is_finite() {
        let s: &[u8] = match (a.is_nan(), upper) {
            (true, false) => b"nan",
            (true, true) => b"NAN",
            (false, false) => b"inf",
            (false, true) => b"INF",
        };
        pad(out, spec, prefix, s, false);
        return;
    }
    let zeros = spec.zero && !spec.minus;
    let body = match conv.to_ascii_lowercase() {
        b'f' => fixed(a, spec.precision.unwrap_or(6), spec.hash),
        b'e' => exponent(a, spec.precision.unwrap_or(6), spec.hash, upper),
        b'g' => general(a, spec.precision.unwrap_or(6), spec.hash, upper),
        _ => {
            let (mut p, body) = hex_float(a, spec.precision, spec.hash, upper);
            p.splice(0..0, prefix.iter().copied());
            pad(out, spec, &p, body.as_bytes(), zeros);
            return;
        }
    };
    pad(out, spec, prefix, body.as_bytes(), zeros);
}

fn fixed(a: f64, p: usize, hash: bool) -> String {
    let mut s = format!("{a:.p$}");
    if hash && p == 0 {
        s.push('.');
    }
    s
}

fn exponent(a: f64, p: usize, hash: bool, upper: bool) -> String {
    // Rust writes `1.5e-7`; C writes `1.500000e-07`: a signed exponent of two digits or
    // more.
    let s = format!("{a:.p$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let dot = if hash && p == 0 { "." } else { "" };
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{dot}{e}{sign}{:02}", exp.unsigned_abs())
}

fn general(a: f64, p: usize, hash: bool, upper: bool) -> String {
    let p = p.max(1);
    // The exponent `%e` would print at precision p-1 (after its rounding) chooses the
    // style, as C says.
    let x: i32 = if a == 0.0 {
        0
    } else {
        let s = format!("{a:.*e}", p - 1);
        s.split_once('e')
            .and_then(|(_, e)| e.parse().ok())
            .unwrap_or(0)
    };
    let mut s = if (x as i64) < p as i64 && x >= -4 {
        fixed(a, (p as i64 - 1 - x as i64) as usize, hash)
    } else {
        exponent(a, p - 1, hash, upper)
    };
    if !hash {
        // Trailing zeros of the fraction go, and its point if nothing is left.
        let (m, e) = match s.find(['e', 'E']) {
            Some(k) => (s[..k].to_string(), s[k..].to_string()),
            None => (s.clone(), String::new()),
        };
        if m.contains('.') {
            let m = m.trim_end_matches('0').trim_end_matches('.');
            s = format!("{m}{e}");
        }
    }
    s
}

/// `%a`: (`0x` prefix, the rest), as glibc prints it: `0x1.8p+1`; subnormals as
/// `0x0.…p-1022`; without a precision, the fewest hex digits that are exact; with one,
/// rounded to nearest, ties to even.
fn hex_float(a: f64, precision: Option<usize>, hash: bool, upper: bool) -> (Vec<u8>, String) {
    let bits = a.to_bits();
    let biased = (bits >> 52) as i64;
    let mut frac = bits & ((1u64 << 52) - 1);
    let (mut lead, exp) = if a == 0.0 {
        (0u64, 0i64)
    } else if biased == 0 {
        (0, -1022)
    } else {
        (1, biased - 1023)
    };
    // 13 hex digits hold the 52 bits of the fraction.
    let digits = match precision {
        Some(p) if p < 13 => {
            let shift = 4 * (13 - p as u32);
            let rem = frac & ((1u64 << shift) - 1);
            frac >>= shift;
            let half = 1u64 << (shift - 1);
            // Ties go to the even last digit: the leading one when no fraction is kept.
            let last = if p == 0 { lead } else { frac };
            if rem > half || (rem == half && last & 1 == 1) {
                frac += 1;
                if p == 0 || frac >> (4 * p) != 0 {
                    lead += 1;
                    frac = 0;
                }
            }
            if p == 0 {
                String::new()
            } else {
                format!("{frac:0w$x}", w = p)
            }
        }
        Some(p) => format!("{frac:013x}{}", "0".repeat(p - 13)),
        None => format!("{frac:013x}").trim_end_matches('0').to_string(),
    };
    let dot = if !digits.is_empty() || hash { "." } else { "" };
    let sign = if exp < 0 { '-' } else { '+' };
    let mut body = format!("{lead}{dot}{digits}p{sign}{}", exp.unsigned_abs());
    let mut prefix = b"0x".to_vec();
    if upper {
        body = body.to_ascii_uppercase();
        prefix = b"0X".to_vec();
    }
    (prefix, body)
}

/// The message a GPU prints for a failed `assert`, from `__assertfail`'s strings.
pub(crate) fn assert_message(
    message: &[u8],
    file: &[u8],
    line: u32,
    function: &[u8],
    block: [u32; 3],
    thread: [u32; 3],
) -> Vec<u8> {
    let [bx, by, bz] = block;
    let [tx, ty, tz] = thread;
    let mut m = Vec::new();
    m.extend_from_slice(file);
    m.extend_from_slice(format!(":{line}: ").as_bytes());
    m.extend_from_slice(function);
    m.extend_from_slice(
        format!(": block: [{bx},{by},{bz}], thread: [{tx},{ty},{tz}] Assertion `").as_bytes(),
    );
    m.extend_from_slice(message);
    m.extend_from_slice(b"` failed.\n");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Device memory for the tests: a format at 0x1000, arguments at 0x2000, strings at
    /// 0x3000; nothing mapped elsewhere.
    struct Mem {
        regions: Vec<(u64, Vec<u8>)>,
    }

    impl Mem {
        fn peek(&self, a: u64) -> Option<u8> {
            self.regions.iter().find_map(|(base, bytes)| {
                a.checked_sub(*base)
                    .and_then(|o| bytes.get(o as usize).copied())
            })
        }
    }

    /// Arguments packed as nvcc packs them: each aligned to its size.
    enum A {
        I(i32),
        L(i64),
        D(f64),
        P(u64),
    }

    fn pack(args: &[A]) -> Vec<u8> {
        let mut b: Vec<u8> = Vec::new();
        for a in args {
            let (bytes, size) = match *a {
                A::I(v) => (v.to_le_bytes().to_vec(), 4),
                A::L(v) => (v.to_le_bytes().to_vec(), 8),
                A::D(v) => (v.to_le_bytes().to_vec(), 8),
                A::P(v) => (v.to_le_bytes().to_vec(), 8),
            };
            b.resize(b.len().div_ceil(size) * size, 0xee);
            b.extend_from_slice(&bytes);
        }
        b
    }

    fn run_with(fmt: &[u8], args: &[A], strings: Vec<u8>) -> (Option<String>, i32) {
        let mut f = fmt.to_vec();
        f.push(0);
        let mem = Mem {
            regions: vec![(0x1000, f), (0x2000, pack(args)), (0x3000, strings)],
        };
        let (out, n) = vprintf(0x1000, 0x2000, &mut |a| mem.peek(a));
        (out.map(|o| String::from_utf8_lossy(&o).into_owned()), n)
    }

    fn p(fmt: &str, args: &[A]) -> String {
        let (out, n) = run_with(fmt.as_bytes(), args, b"hello\0".to_vec());
        assert!(n >= 0, "{fmt}: returned {n}");
        out.unwrap()
    }

    #[test]
    fn integers() {
        use A::*;
        assert_eq!(p("%d %i %u", &[I(-5), I(7), I(-1)]), "-5 7 4294967295");
        assert_eq!(p("%x %X %o", &[I(255), I(255), I(8)]), "ff FF 10");
        assert_eq!(
            p("[%5d][%-5d][%05d]", &[I(42), I(42), I(-42)]),
            "[   42][42   ][-0042]"
        );
        assert_eq!(p("[%+d][% d][%+u]", &[I(3), I(3), I(3)]), "[+3][ 3][3]");
        assert_eq!(
            p("[%.3d][%.0d][%8.3x]", &[I(7), I(0), I(10)]),
            "[007][][     00a]"
        );
        assert_eq!(
            p("[%#x][%#X][%#o][%#x]", &[I(26), I(26), I(8), I(0)]),
            "[0x1a][0X1A][010][0]"
        );
        assert_eq!(p("[%#08x][%08.3d]", &[I(26), I(5)]), "[0x00001a][     005]");
        assert_eq!(
            p("%hd %hhd %hu %hhx", &[I(70000), I(200), I(-1), I(0x1ff)]),
            "4464 -56 65535 ff"
        );
        assert_eq!(
            p(
                "%ld %lld %lu %lx",
                &[L(-1 << 40), L(i64::MIN), L(-1), L(0xdead_beef_cafe)]
            ),
            format!("{} {} {} deadbeefcafe", -1i64 << 40, i64::MIN, u64::MAX)
        );
        // A 64-bit argument after a 32-bit one starts at the next multiple of 8.
        assert_eq!(p("%d %ld %d", &[I(1), L(2), I(3)]), "1 2 3");
        assert_eq!(
            p(
                "%c%c%5c|%-3c|",
                &[
                    I(b'o' as i32),
                    I(b'k' as i32),
                    I(b'x' as i32),
                    I(b'y' as i32)
                ]
            ),
            "ok    x|y  |"
        );
        assert_eq!(
            p("[%*d][%-*d][%.*d]", &[I(4), I(1), I(3), I(2), I(3), I(9)]),
            "[   1][2  ][009]"
        );
        assert_eq!(p("[%*d]", &[I(-4), I(1)]), "[1   ]");
    }

    #[test]
    fn floats() {
        use A::*;
        assert_eq!(p("%f %F", &[D(1.5), D(-2.25)]), "1.500000 -2.250000");
        assert_eq!(
            p(
                "%.2f %.0f %#.0f %.0f",
                &[D(2.71928), D(2.5), D(3.0), D(3.5)]
            ),
            "2.72 2 3. 4"
        );
        assert_eq!(
            p("%e %E", &[D(12345.678), D(-0.000123)]),
            "1.234568e+04 -1.230000E-04"
        );
        assert_eq!(
            p("%.0e %#.0e %e", &[D(5e300), D(1.0), D(0.0)]),
            "5e+300 1.e+00 0.000000e+00"
        );
        assert_eq!(
            p(
                "%g %g %g %g %g",
                &[D(100000.0), D(1e6), D(0.0001), D(0.00001), D(1.5)]
            ),
            "100000 1e+06 0.0001 1e-05 1.5"
        );
        assert_eq!(
            p("%G %.3g %#g %g", &[D(1e-10), D(2.71928), D(1.0), D(0.0)]),
            "1E-10 2.72 1.00000 0"
        );
        assert_eq!(p("%g", &[D(999999.5)]), "1e+06");
        assert_eq!(
            p(
                "[%10.3f][%-10.2e][%010.2f][%+.1f][% .1f]",
                &[D(2.71928), D(31.4), D(-2.71928), D(1.0), D(1.0)]
            ),
            "[     2.719][3.14e+01  ][-000002.72][+1.0][ 1.0]"
        );
        assert_eq!(
            p(
                "%f %F %e %f %05f %-5f|",
                &[
                    D(f64::INFINITY),
                    D(f64::NEG_INFINITY),
                    D(f64::NAN),
                    D(-0.0),
                    D(f64::INFINITY),
                    D(f64::NAN)
                ]
            ),
            "inf -INF nan -0.000000   inf nan  |"
        );
        assert_eq!(
            p("%a %A %a %a", &[D(1.0), D(-3.0), D(0.1), D(0.0)]),
            "0x1p+0 -0X1.8P+1 0x1.999999999999ap-4 0x0p+0"
        );
        assert_eq!(
            p("%.1a %.0a %.3a %#a", &[D(1.96875), D(1.5), D(1.0), D(1.0)]),
            "0x2.0p+0 0x2p+0 0x1.000p+0 0x1.p+0"
        );
        assert_eq!(
            p("%a %.15a", &[D(f64::from_bits(1)), D(1.0)]),
            "0x0.0000000000001p-1022 0x1.000000000000000p+0"
        );
        assert_eq!(p("[%012a]", &[D(-1.0)]), "[-0x000001p+0]");
        // `l` is ignored on floating conversions (`%lf` is `%f`).
        assert_eq!(p("%lf", &[D(0.5)]), "0.500000");
    }

    #[test]
    fn strings_pointers_and_percent() {
        use A::*;
        assert_eq!(
            p(
                "%s|%8s|%-8s|%.3s|%%|%5%",
                &[P(0x3000), P(0x3000), P(0x3000), P(0x3000)]
            ),
            "hello|   hello|hello   |hel|%|%"
        );
        assert_eq!(
            p("%s %p %10p", &[P(0), P(0x1234), P(0)]),
            "(null) 0x1234      (nil)"
        );
        assert_eq!(p("[%.2s][%.6s]", &[P(0), P(0)]), "[][(null)]");
        // A string running into unmapped memory ends there; one past the limit is cut.
        let (out, n) = run_with(b"[%s][%s]", &[P(0x3000), P(0x9999_0000)], b"abc".to_vec());
        assert_eq!((out.as_deref(), n), (Some("[abc][]"), 2));
        let (out, _) = run_with(b"%s", &[P(0x3000)], vec![b'z'; 10_000]);
        assert_eq!(out.unwrap().len(), MAX_STRING);
    }

    #[test]
    fn return_values_and_bad_formats() {
        use A::*;
        assert_eq!(
            run_with(b"plain\n", &[], vec![]),
            (Some("plain\n".into()), 0)
        );
        assert_eq!(run_with(b"%d %f %s", &[I(1), D(1.0), P(0)], vec![]).1, 3);
        for bad in [
            "%",
            "%5",
            "%y",
            "%n",
            "%ls",
            "%lc",
            "%Lf",
            "%99999999d",
            "abc%.",
            "%hh",
        ] {
            assert_eq!(
                run_with(bad.as_bytes(), &[I(1)], vec![]),
                (None, -1),
                "{bad}"
            );
        }
        // NULL format; an argument past the buffer's mapped bytes.
        let mem = Mem {
            regions: vec![(0x1000, b"%d %d\0".to_vec()), (0x2000, vec![1, 0, 0, 0])],
        };
        assert_eq!(vprintf(0, 0x2000, &mut |a| mem.peek(a)), (None, -1));
        assert_eq!(vprintf(0x1000, 0x2000, &mut |a| mem.peek(a)), (None, -1));
        // A format without a NUL in mapped memory ends where the mapping does.
        let mem = Mem {
            regions: vec![(0x1000, b"abc".to_vec())],
        };
        assert_eq!(
            vprintf(0x1000, 0, &mut |a| mem.peek(a)),
            (Some(b"abc".to_vec()), 0)
        );
        let mem = Mem {
            regions: vec![(0x1000, vec![b'x'; 5000])],
        };
        assert_eq!(
            vprintf(0x1000, 0, &mut |a| mem.peek(a)).0.unwrap().len(),
            MAX_STRING
        );
    }

    #[test]
    fn at_most_32_arguments() {
        let args: Vec<A> = (0..33).map(A::I).collect();
        let fmt = "%d ".repeat(33);
        let (out, n) = run_with(fmt.as_bytes(), &args, vec![]);
        let want: String = (0..32).map(|i| format!("{i} ")).collect::<String>() + "%d ";
        assert_eq!((out.unwrap(), n), (want, 32));
    }

    #[test]
    fn assert_text() {
        let m = assert_message(b"x == 1", b"k.cu", 7, b"void k(int)", [1, 0, 0], [5, 0, 0]);
        assert_eq!(
            String::from_utf8(m).unwrap(),
            "k.cu:7: void k(int): block: [1,0,0], thread: [5,0,0] Assertion `x == 1` failed.\n"
        );
    }
}
