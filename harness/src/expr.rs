//! Expressions in case files: `4096`, `0x200000`, `2MiB`, `va+2*g`, `4g` (= `4*g`),
//! `(g+1)/2`. Arithmetic is checked: an overflow is an error of the case, not a wrap.

use std::collections::HashMap;

pub fn eval(text: &str, vars: &HashMap<String, u64>) -> Result<u64, String> {
    evaluate(text, Some(vars))
}

/// Checks an expression's form without its names' values (at parse time), and returns
/// the names it uses, so that the parser can say which of them no earlier step bound.
pub fn check(text: &str) -> Result<Vec<String>, String> {
    evaluate(text, None)?;
    Ok(lex(text)?
        .into_iter()
        .filter_map(|t| match t {
            Tok::Name(n) => Some(n),
            _ => None,
        })
        .collect())
}

/// With `vars`, the value; without, only the form is checked: names stand for 1 and
/// arithmetic wraps, so that only a malformed expression is an error.
fn evaluate(text: &str, vars: Option<&HashMap<String, u64>>) -> Result<u64, String> {
    let tokens = lex(text)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        vars,
        text,
        depth: 0,
    };
    let v = p.sum()?;
    if p.pos != p.tokens.len() {
        return Err(format!(
            "unexpected `{}` in `{text}`",
            p.tokens[p.pos].show()
        ));
    }
    Ok(v)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(u64),
    Name(String),
    Op(char),
}

impl Tok {
    fn show(&self) -> String {
        match self {
            Tok::Num(n) => n.to_string(),
            Tok::Name(s) => s.clone(),
            Tok::Op(c) => c.to_string(),
        }
    }
}

const UNITS: &[(&str, u64)] = &[
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("PiB", 1 << 50),
];

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_digit() {
            let start = i;
            let n = if text[i..].starts_with("0x") || text[i..].starts_with("0X") {
                i += 2;
                let s = i;
                while i < b.len() && (b[i] as char).is_ascii_hexdigit() {
                    i += 1;
                }
                u64::from_str_radix(&text[s..i], 16)
                    .map_err(|_| format!("bad hex number in `{text}`"))?
            } else {
                while i < b.len() && (b[i] as char).is_ascii_digit() {
                    i += 1;
                }
                text[start..i]
                    .parse()
                    .map_err(|_| format!("number too large in `{text}`"))?
            };
            out.push(Tok::Num(n));
            if let Some((u, m)) = UNITS.iter().find(|(u, _)| text[i..].starts_with(u)) {
                i += u.len();
                out.push(Tok::Op('*'));
                out.push(Tok::Num(*m));
            } else if i < b.len() && ((b[i] as char).is_ascii_alphabetic() || b[i] == b'_') {
                // `4g` means `4*g`.
                out.push(Tok::Op('*'));
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let s = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(text[s..i].to_owned()));
        } else if "+-*/()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            return Err(format!("unexpected `{c}` in `{text}`"));
        }
    }
    if out.is_empty() {
        return Err("expected a value".into());
    }
    Ok(out)
}

/// How deep parentheses and unary minuses may nest: far more than any case needs, and
/// few enough that the recursive descent stays within the smallest thread stack (a case
/// with 30,000 nested parentheses overflowed it).
const MAX_DEPTH: u32 = 64;

struct Parser<'a> {
    tokens: Vec<Tok>,
    pos: usize,
    vars: Option<&'a HashMap<String, u64>>,
    text: &'a str,
    /// Nesting of the atom being parsed.
    depth: u32,
}

impl Parser<'_> {
    fn sum(&mut self) -> Result<u64, String> {
        let mut v = self.product()?;
        while let Some(Tok::Op(c @ ('+' | '-'))) = self.tokens.get(self.pos).cloned() {
            self.pos += 1;
            let r = self.product()?;
            v = match (c, self.vars) {
                (_, None) => v.wrapping_add(r),
                ('+', _) => v
                    .checked_add(r)
                    .ok_or_else(|| format!("`{}` overflows", self.text))?,
                _ => v
                    .checked_sub(r)
                    .ok_or_else(|| format!("`{}` overflows", self.text))?,
            };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<u64, String> {
        let mut v = self.atom()?;
        while let Some(Tok::Op(c @ ('*' | '/'))) = self.tokens.get(self.pos).cloned() {
            self.pos += 1;
            let r = self.atom()?;
            v = match (c, self.vars) {
                (_, None) => v.wrapping_mul(r),
                ('*', _) => v
                    .checked_mul(r)
                    .ok_or_else(|| format!("`{}` overflows or divides by zero", self.text))?,
                _ => v
                    .checked_div(r)
                    .ok_or_else(|| format!("`{}` overflows or divides by zero", self.text))?,
            };
        }
        Ok(v)
    }

    fn atom(&mut self) -> Result<u64, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!(
                "`{}` nests parentheses or signs more than {MAX_DEPTH} deep",
                shorten(self.text)
            ));
        }
        self.depth += 1;
        let v = self.atom_inner();
        self.depth -= 1;
        v
    }

    fn atom_inner(&mut self) -> Result<u64, String> {
        let t = self
            .tokens
            .get(self.pos)
            .cloned()
            .ok_or_else(|| format!("`{}` ends too soon", self.text))?;
        self.pos += 1;
        match t {
            Tok::Num(n) => Ok(n),
            // `-1` is the two's complement, as C would pass it.
            Tok::Op('-') => Ok(self.atom()?.wrapping_neg()),
            Tok::Name(n) => match self.vars {
                None => Ok(1),
                Some(vars) => vars
                    .get(&n)
                    .copied()
                    .ok_or_else(|| format!("`{n}` is not defined before this step")),
            },
            Tok::Op('(') => {
                let v = self.sum()?;
                match self.tokens.get(self.pos) {
                    Some(Tok::Op(')')) => {
                        self.pos += 1;
                        Ok(v)
                    }
                    _ => Err(format!("expected `)` in `{}`", self.text)),
                }
            }
            other => Err(format!("unexpected `{}` in `{}`", other.show(), self.text)),
        }
    }
}

/// The start of a long expression, for a message that stays one line.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}

/// A size for people: `2MiB`, `64TiB`, `0x1001`.
pub fn show_size(v: u64) -> String {
    for (u, m) in UNITS.iter().rev() {
        if v >= *m && v.is_multiple_of(*m) {
            return format!("{}{u}", v / m);
        }
    }
    if v < 65536 {
        v.to_string()
    } else {
        format!("{v:#x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_on_the_granularity() {
        let vars: HashMap<String, u64> = [
            ("g".to_string(), 2 << 20),
            ("va".to_string(), 0x7f00_0000_0000),
        ]
        .into();
        assert_eq!(eval("4g", &vars).unwrap(), 8 << 20);
        assert_eq!(eval("va+2*g", &vars).unwrap(), 0x7f00_0000_0000 + (4 << 20));
        assert_eq!(eval("(g+4096)/2", &vars).unwrap(), ((2 << 20) + 4096) / 2);
        assert_eq!(eval("64TiB", &vars).unwrap(), 64 << 40);
        assert_eq!(eval("0xdeadbeef", &vars).unwrap(), 0xdead_beef);
        assert!(eval("nope+1", &vars)
            .unwrap_err()
            .contains("`nope` is not defined"));
        assert!(eval("0xffffffffffffffff+1", &vars)
            .unwrap_err()
            .contains("overflows"));
        assert!(eval("g/0", &vars).is_err());
        assert_eq!(eval("-1", &vars).unwrap(), u64::MAX);
        assert!(eval("g+", &vars).is_err());
        assert!(eval("g $", &vars).is_err());
    }

    #[test]
    fn checking_finds_the_form_and_the_names() {
        assert_eq!(check("va+2*g").unwrap(), vec!["va", "g"]);
        assert_eq!(check("4g-8g").unwrap(), vec!["g", "g"]);
        assert!(check("0x10").unwrap().is_empty());
        assert!(check("g+").is_err());
        assert!(check("(g").is_err());
        assert!(check("g $").is_err());
        assert!(check("").is_err());
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(show_size(2 << 20), "2MiB");
        assert_eq!(show_size(3 << 20), "3MiB");
        assert_eq!(show_size(1 << 50), "1PiB");
        assert_eq!(show_size(4097), "4097");
        assert_eq!(show_size((2 << 20) + 4096), "2052KiB");
        assert_eq!(show_size((2 << 20) + 1), "0x200001");
    }
}
