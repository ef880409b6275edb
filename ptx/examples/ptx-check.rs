//! Loads PTX files and says whether each parses and decodes: `cargo run -p cumock-ptx
//! --example ptx-check -- FILE.ptx...`.
fn main() {
    let mut failed = false;
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
                continue;
            }
        };
        match cumock_ptx::Module::parse(&text) {
            Ok(m) => println!(
                "{path}: ok, kernels: {}",
                m.kernels
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Err(e) => {
                println!("{path}: {e}");
                failed = true;
            }
        }
    }
    std::process::exit(failed as i32);
}
