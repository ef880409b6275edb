//! PTX tokens. PTX is statement oriented: identifiers (`%r1`, `$L__BB0_2`, `vecAdd`),
//! dotted words (`.reg`, `.u32`, `.x`), numbers, and a little punctuation.

use crate::{LoadError, LoadErrorKind};

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// `.word`, without the dot.
    Dot(String),
    /// Integer literal; PTX integers are 64-bit, the sign is a separate `-`.
    Int(u64),
    /// `0fXXXXXXXX`: f32 bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float: f64 bits.
    F64(u64),
    Str(String),
    Punct(char),
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub column: u32,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

pub fn tokenize(src: &str) -> Result<Vec<Token>, LoadError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    while i < b.len() {
        let c = b[i];
        let column = (i - line_start + 1) as u32;
        let here = line;
        let err = |msg: String| LoadError {
            line: here,
            column,
            kind: LoadErrorKind::Syntax,
            message: msg,
        };
        if c == b'\n' {
            line += 1;
            i += 1;
            line_start = i;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            loop {
                if i + 1 >= b.len() {
                    return Err(err("unterminated comment".into()));
                }
                if b[i] == b'*' && b[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                if b[i] == b'\n' {
                    line += 1;
                    line_start = i + 1;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        let tok = if c == b'.' && b.get(i + 1).is_some_and(|&n| is_ident_char(n)) {
            i += 1;
            // `.L1::evict_last`: one modifier with its `::`.
            while i < b.len()
                && (is_ident_char(b[i])
                    || b[i] == b':'
                        && b.get(i + 1) == Some(&b':')
                        && b.get(i + 2).is_some_and(|&n| is_ident_char(n)))
            {
                i += if b[i] == b':' { 2 } else { 1 };
            }
            Tok::Dot(src[start + 1..i].to_string())
        } else if c == b'%' && !b.get(i + 1).is_some_and(|&n| is_ident_char(n)) {
            // `%` alone is the remainder of a constant expression (`%r1` is a name).
            i += 1;
            Tok::Punct('%')
        } else if is_ident_start(c) {
            i += 1;
            while i < b.len() && is_ident_char(b[i]) {
                i += 1;
            }
            Tok::Ident(src[start..i].to_string())
        } else if c.is_ascii_digit() {
            lex_number(b, &mut i).map_err(|m| err(m.to_string()))?
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += 1;
            }
            if i >= b.len() || b[i] != b'"' {
                return Err(err("unterminated string".into()));
            }
            i += 1;
            Tok::Str(src[start + 1..i - 1].to_string())
        } else if b",;:[]{}()+-@!|<>=*/&^~?".contains(&c) {
            i += 1;
            Tok::Punct(c as char)
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(err(format!("unexpected character `{ch}`")));
        };
        out.push(Token { tok, line, column });
    }
    Ok(out)
}

fn lex_number(b: &[u8], i: &mut usize) -> Result<Tok, &'static str> {
    let start = *i;
    let hex_digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_hexdigit() {
            *i += 1;
        }
        std::str::from_utf8(&b[s..*i]).unwrap_or("")
    };
    if b[start] == b'0' && *i + 1 < b.len() {
        match b[start + 1] {
            b'f' | b'F' => {
                *i += 2;
                let h = hex_digits(i);
                if h.len() != 8 {
                    return Err("f32 literal needs 8 hex digits (0fXXXXXXXX)");
                }
                return u32::from_str_radix(h, 16)
                    .map(Tok::F32)
                    .map_err(|_| "bad f32 literal");
            }
            b'd' | b'D' => {
                *i += 2;
                let h = hex_digits(i);
                if h.len() != 16 {
                    return Err("f64 literal needs 16 hex digits (0dXXXXXXXXXXXXXXXX)");
                }
                return u64::from_str_radix(h, 16)
                    .map(Tok::F64)
                    .map_err(|_| "bad f64 literal");
            }
            b'x' | b'X' => {
                *i += 2;
                let h = hex_digits(i);
                let v = u64::from_str_radix(h, 16).map_err(|_| "bad hex literal")?;
                if *i < b.len() && b[*i] == b'U' {
                    *i += 1;
                }
                return Ok(Tok::Int(v));
            }
            b'b' | b'B' if b.get(start + 2).is_some_and(|c| *c == b'0' || *c == b'1') => {
                *i += 2;
                let s = *i;
                while *i < b.len() && (b[*i] == b'0' || b[*i] == b'1') {
                    *i += 1;
                }
                let t = std::str::from_utf8(&b[s..*i]).unwrap_or("");
                return u64::from_str_radix(t, 2)
                    .map(Tok::Int)
                    .map_err(|_| "bad binary literal");
            }
            _ => {}
        }
    }
    while *i < b.len() && b[*i].is_ascii_digit() {
        *i += 1;
    }
    let mut is_float = false;
    if *i < b.len() && b[*i] == b'.' && b.get(*i + 1).is_some_and(|c| c.is_ascii_digit()) {
        is_float = true;
        *i += 1;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
    }
    if *i < b.len() && (b[*i] == b'e' || b[*i] == b'E') {
        let save = *i;
        *i += 1;
        if *i < b.len() && (b[*i] == b'+' || b[*i] == b'-') {
            *i += 1;
        }
        if *i < b.len() && b[*i].is_ascii_digit() {
            is_float = true;
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
        } else {
            *i = save;
        }
    }
    let text = std::str::from_utf8(&b[start..*i]).unwrap_or("");
    if is_float {
        return text
            .parse::<f64>()
            .map(|f| Tok::F64(f.to_bits()))
            .map_err(|_| "bad float literal");
    }
    let v = if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).map_err(|_| "bad octal literal")?
    } else {
        text.parse::<u64>()
            .map_err(|_| "integer literal out of range")?
    };
    if *i < b.len() && b[*i] == b'U' {
        *i += 1;
    }
    Ok(Tok::Int(v))
}
