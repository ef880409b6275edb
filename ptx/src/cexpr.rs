//! PTX constant expressions (the ISA's "Constant Expressions"): C's operators and
//! precedence over 64-bit signed integers and f64, evaluated at load where an immediate,
//! an address offset or an initialiser is one (`(1 << 4) + 2`, `[%rd1+2*8]`).

use crate::lex::{Tok, Token};

/// A constant's value: integers are 64-bit signed (unsigned literals wrap into them),
/// floating point f64.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Val {
    Int(i64),
    F64(f64),
}

impl Val {
    fn truthy(self) -> bool {
        match self {
            Val::Int(v) => v != 0,
            Val::F64(v) => v != 0.0,
        }
    }
    fn f(self) -> f64 {
        match self {
            Val::Int(v) => v as f64,
            Val::F64(v) => v,
        }
    }
}

/// The binary operators by precedence level (lowest first), each as its characters.
const LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<=", ">=", "<", ">"],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

/// How deep parentheses and unary operators may nest (the fuzz tests feed any text).
const MAX_DEPTH: u32 = 64;

/// Evaluates the constant expression starting at `toks[*pos]`, leaving `*pos` after it;
/// Err with a message when it is not one.
pub(crate) fn eval(toks: &[Token], pos: &mut usize) -> Result<Val, String> {
    Parser {
        toks,
        pos,
        depth: 0,
    }
    .ternary()
}

struct Parser<'a, 'p> {
    toks: &'a [Token],
    pos: &'p mut usize,
    depth: u32,
}

impl Parser<'_, '_> {
    fn punct(&self, k: usize) -> Option<char> {
        match self.toks.get(*self.pos + k).map(|t| &t.tok) {
            Some(Tok::Punct(c)) => Some(*c),
            _ => None,
        }
    }

    /// The operator of `level` at the cursor (not the first characters of a longer one).
    fn op_at(&self, level: usize) -> Option<&'static str> {
        let (a, b) = (self.punct(0), self.punct(1));
        for &op in LEVELS[level] {
            let mut cs = op.chars();
            let (x, y) = (cs.next(), cs.next());
            let matches = match y {
                Some(y) => a == x && b == Some(y),
                // One character: not the start of `||`, `&&`, `<<`, `<=`...
                None => {
                    a == x
                        && !matches!(
                            (a, b),
                            (Some('|'), Some('|'))
                                | (Some('&'), Some('&'))
                                | (Some('<'), Some('<' | '='))
                                | (Some('>'), Some('>' | '='))
                        )
                }
            };
            if matches {
                return Some(op);
            }
        }
        None
    }

    fn deeper(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("constant expression nested too deeply".into());
        }
        Ok(())
    }

    fn ternary(&mut self) -> Result<Val, String> {
        self.deeper()?;
        let c = self.binary(0)?;
        let v = if self.punct(0) == Some('?') {
            *self.pos += 1;
            let a = self.ternary()?;
            if self.punct(0) != Some(':') {
                return Err("expected `:` in a conditional expression".into());
            }
            *self.pos += 1;
            let b = self.ternary()?;
            if c.truthy() {
                a
            } else {
                b
            }
        } else {
            c
        };
        self.depth -= 1;
        Ok(v)
    }

    fn binary(&mut self, level: usize) -> Result<Val, String> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut l = self.binary(level + 1)?;
        while let Some(op) = self.op_at(level) {
            *self.pos += op.len();
            let r = self.binary(level + 1)?;
            l = apply(op, l, r)?;
        }
        Ok(l)
    }

    fn unary(&mut self) -> Result<Val, String> {
        self.deeper()?;
        let v = match self.punct(0) {
            Some(c @ ('-' | '+' | '!' | '~')) => {
                *self.pos += 1;
                let v = self.unary()?;
                match (c, v) {
                    ('-', Val::Int(v)) => Val::Int(v.wrapping_neg()),
                    ('-', Val::F64(v)) => Val::F64(-v),
                    ('+', v) => v,
                    ('!', v) => Val::Int(i64::from(!v.truthy())),
                    ('~', Val::Int(v)) => Val::Int(!v),
                    _ => return Err("`~` of a floating-point value".into()),
                }
            }
            Some('(') => {
                *self.pos += 1;
                let v = self.ternary()?;
                if self.punct(0) != Some(')') {
                    return Err("expected `)` in a constant expression".into());
                }
                *self.pos += 1;
                v
            }
            _ => match self.toks.get(*self.pos).map(|t| &t.tok) {
                Some(Tok::Int(v)) => {
                    *self.pos += 1;
                    Val::Int(*v as i64)
                }
                Some(Tok::F64(b)) => {
                    *self.pos += 1;
                    Val::F64(f64::from_bits(*b))
                }
                _ => return Err("expected a number in a constant expression".into()),
            },
        };
        self.depth -= 1;
        Ok(v)
    }
}

fn apply(op: &str, l: Val, r: Val) -> Result<Val, String> {
    let cmp = |b: bool| Ok(Val::Int(i64::from(b)));
    if let (Val::Int(a), Val::Int(b)) = (l, r) {
        return match op {
            "+" => Ok(Val::Int(a.wrapping_add(b))),
            "-" => Ok(Val::Int(a.wrapping_sub(b))),
            "*" => Ok(Val::Int(a.wrapping_mul(b))),
            "/" | "%" if b == 0 => Err("division by zero in a constant expression".into()),
            "/" => Ok(Val::Int(a.wrapping_div(b))),
            "%" => Ok(Val::Int(a.wrapping_rem(b))),
            "<<" => Ok(Val::Int(a.wrapping_shl(b as u32))),
            ">>" => Ok(Val::Int(a.wrapping_shr(b as u32))),
            "&" => Ok(Val::Int(a & b)),
            "^" => Ok(Val::Int(a ^ b)),
            "|" => Ok(Val::Int(a | b)),
            "&&" => cmp(a != 0 && b != 0),
            "||" => cmp(a != 0 || b != 0),
            "==" => cmp(a == b),
            "!=" => cmp(a != b),
            "<" => cmp(a < b),
            ">" => cmp(a > b),
            "<=" => cmp(a <= b),
            _ => cmp(a >= b),
        };
    }
    // A floating-point operand makes the operation f64's (the ISA's promotion).
    let (a, b) = (l.f(), r.f());
    match op {
        "+" => Ok(Val::F64(a + b)),
        "-" => Ok(Val::F64(a - b)),
        "*" => Ok(Val::F64(a * b)),
        "/" => Ok(Val::F64(a / b)),
        "&&" => cmp(a != 0.0 && b != 0.0),
        "||" => cmp(a != 0.0 || b != 0.0),
        "==" => cmp(a == b),
        "!=" => cmp(a != b),
        "<" => cmp(a < b),
        ">" => cmp(a > b),
        "<=" => cmp(a <= b),
        ">=" => cmp(a >= b),
        _ => Err(format!("`{op}` of a floating-point value")),
    }
}
