//! Case files: the harness's parser (`cumock::case::parse`), and its expression evaluator
//! on every word of the text, with names bound as a case binds them.

use crate::mutate;
use crate::signature;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

pub fn dict() -> &'static [Vec<u8>] {
    static D: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    D.get_or_init(|| mutate::parse_dict(include_str!("../../dict/case.dict")))
}

pub fn mutate(data: &mut Vec<u8>, rng: &mut fastrand::Rng, pool: &[Vec<u8>]) {
    mutate::text(data, rng, pool, dict());
}

pub fn run(data: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(data);
    let sig = match cumock::case::parse(Path::new("fuzz.case"), &text) {
        Ok(c) => {
            let mut s = c.steps.len() as u64;
            for st in &c.steps {
                s = s.rotate_left(5) ^ signature(&[st.operation]);
            }
            s
        }
        Err(e) => signature(&[&e.message]),
    };
    let vars: HashMap<String, u64> = [
        ("g", 2u64 << 20),
        ("va", 0x7f00_0000_0000),
        ("h", 1),
        ("x", u64::MAX),
        ("zero", 0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let mut evaluated = 0u64;
    for word in text
        .split(|c: char| c.is_whitespace() || c == '=')
        .take(256)
    {
        if word.is_empty() {
            continue;
        }
        evaluated += u64::from(cumock::expr::eval(word, &vars).is_ok());
        let _ = cumock::expr::check(word);
    }
    sig ^ (64 - evaluated.leading_zeros()) as u64
}
