//! The conformance matrix page, opened in a real headless Chromium driven through
//! chromedriver (WebDriver over HTTP): what a person sees, and what a click shows.
//! ci/test.sh installs Chromium and chromedriver (Debian packages) when they are missing.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn tool(names: &[&str]) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    names
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "none of {names:?} is installed: ci/test.sh installs the Debian packages \
                 `chromium` and `chromium-driver` (apt-get install chromium chromium-driver)"
            )
        })
}

/// A golden set of a pretend newer driver: the H200's, with one result changed.
fn new_driver_goldens(tmp: &Path) -> PathBuf {
    let src = workspace().join("cases/goldens/NVIDIA_H200-580.159.04");
    let dst = tmp.join("sets/NVIDIA_H200-999.01");
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dst.join(p.file_name().unwrap())).unwrap();
    }
    let f = dst.join("reserve-sizes.txt");
    let text = std::fs::read_to_string(&f).unwrap();
    let from = "reserve g+1 -> CUDA_ERROR_INVALID_VALUE";
    assert!(text.contains(from), "reserve-sizes golden has no {from:?}");
    std::fs::write(&f, text.replacen(from, "reserve g+1 -> CUDA_SUCCESS", 1)).unwrap();
    tmp.join("sets")
}

/// chromedriver on a port of its own, stopped when dropped.
struct Driver {
    child: Child,
    port: u16,
    session: String,
}

impl Driver {
    fn start(user_data: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(tool(&["chromedriver"]))
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromedriver");
        let mut d = Driver {
            child,
            port,
            session: String::new(),
        };
        let start = Instant::now();
        while http(port, "GET", "/status", None).is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromedriver did not answer"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = std::fs::remove_dir_all(user_data);
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": tool(&["chromium", "chromium-browser"]),
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--window-size=1400,1000",
                     format!("--user-data-dir={}", user_data.display())],
        }}}});
        let v = http(port, "POST", "/session", Some(&caps)).expect("a session");
        d.session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {v}"))
            .to_owned();
        d
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let v = http(
            self.port,
            method,
            &format!("/session/{}{path}", self.session),
            body.as_ref(),
        )
        .unwrap_or_else(|| panic!("{method} {path}: no answer"));
        assert!(
            v["value"].get("error").is_none(),
            "{method} {path}: {}",
            v["value"]
        );
        v["value"].clone()
    }

    fn find_all(&self, css: &str) -> Vec<String> {
        self.call(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        )
        .as_array()
        .unwrap()
        .iter()
        .map(element_id)
        .collect()
    }

    fn find(&self, css: &str) -> String {
        element_id(&self.call(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        ))
    }

    /// The text a person sees in an element: empty when it is not displayed.
    fn text(&self, e: &str) -> String {
        self.call("GET", &format!("/element/{e}/text"), None)
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn displayed(&self, e: &str) -> bool {
        self.call("GET", &format!("/element/{e}/displayed"), None)
            .as_bool()
            .unwrap()
    }

    fn click(&self, e: &str) {
        self.call("POST", &format!("/element/{e}/click"), Some(json!({})));
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http(
                self.port,
                "DELETE",
                &format!("/session/{}", self.session),
                None,
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn element_id(v: &Value) -> String {
    v["element-6066-11e4-a52e-4f735466cecf"]
        .as_str()
        .unwrap_or_else(|| panic!("not an element: {v}"))
        .to_owned()
}

/// One WebDriver request: HTTP/1.1, one connection each; chromedriver keeps connections
/// open, so the body is read by its Content-Length.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Option<Value> {
    let s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        &s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut r = BufReader::new(s);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok()?;
            }
        }
    }
    let mut raw = vec![0; length];
    r.read_exact(&mut raw).ok()?;
    serde_json::from_slice(&raw).ok()
}

#[test]
fn the_matrix_page_shows_every_case_and_drills_down_to_the_steps() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&tmp).unwrap();
    let sets = new_driver_goldens(&tmp);
    let page = tmp.join("matrix.html");
    let o = Command::new(env!("CARGO_BIN_EXE_cumock"))
        .arg("report")
        .arg(&page)
        .arg("--goldens")
        .arg(&sets)
        .current_dir(workspace())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "cumock report failed:\n{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains("src="),
        "the page must load nothing from elsewhere"
    );
    let cases = std::fs::read_dir(workspace().join("cases"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "case")
        })
        .count();

    let browser = Driver::start(&tmp.join("chromium-profile"));
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    browser.call("POST", "/url", Some(json!({ "url": url })));

    let headers: Vec<String> = browser
        .find_all("#matrix thead th")
        .iter()
        .map(|e| browser.text(e))
        .collect();
    assert_eq!(
        headers,
        [
            "case",
            "mock",
            "NVIDIA_H200-580.159.04",
            "NVIDIA_H200-999.01"
        ]
    );
    let rows = browser.find_all("#matrix tbody tr");
    assert_eq!(rows.len(), cases, "one row per case file");

    // The changed result: the new driver's cell for reserve-sizes says it differs, and
    // its drill-down, hidden until the cell is clicked, shows the step.
    let row = (1..=rows.len())
        .find(|i| {
            let th = browser.find(&format!("#matrix tbody tr:nth-child({i}) th"));
            browser.text(&th) == "reserve-sizes"
        })
        .expect("a row for reserve-sizes");
    let cells: Vec<String> = browser
        .find_all(&format!("#matrix tbody tr:nth-child({row}) td a"))
        .iter()
        .map(|e| e.to_owned())
        .collect();
    let words: Vec<String> = cells.iter().map(|e| browser.text(e)).collect();
    assert_eq!(words, ["pass", "pass", "differs"]);
    let detail = browser.find(&format!("#r{}c2", row - 1));
    assert!(
        !browser.displayed(&detail),
        "drill-downs are hidden until asked for"
    );
    browser.click(&cells[2]);
    assert!(browser.displayed(&detail), "the click shows the drill-down");
    let shown = browser.text(&detail);
    assert!(
        shown.contains("reserve-sizes on NVIDIA_H200-999.01: differs")
            && shown.contains("reserve g+1")
            && shown.contains("A CUDA_ERROR_INVALID_VALUE, B CUDA_SUCCESS"),
        "{shown}"
    );

    // Back to the matrix by the drill-down's own link; a declared divergence shows its
    // reason.
    let back = browser.find(&format!("#r{}c2 a[href='#matrix']", row - 1));
    browser.click(&back);
    let declared = browser.find_all("#matrix td.declared a");
    assert!(!declared.is_empty(), "the suite declares divergences");
    browser.click(&declared[0]);
    let detail = browser.find(".detail:target");
    let shown = browser.text(&detail);
    assert!(
        shown.contains(": declared") && shown.contains("The case declares a divergence:"),
        "{shown}"
    );

    // Back at the top, with only the cases that do not pass everywhere.
    browser.call("POST", "/url", Some(json!({ "url": url })));
    browser.click(&browser.find("#only"));
    let visible = browser
        .find_all("#matrix tbody tr")
        .iter()
        .filter(|r| browser.displayed(r))
        .count();
    let not_all_pass = html.matches("<tr><th title=").count();
    assert!(
        visible == not_all_pass && visible < cases && visible > 0,
        "{visible} rows shown, {not_all_pass} do not pass everywhere, {cases} cases"
    );
    screenshot(&browser, "cumock-report.png");
    // And the drill-down of the changed result, as a person clicking it sees it.
    browser.click(&browser.find(&format!(
        "#matrix tbody tr:nth-child({row}) td:nth-of-type(3) a"
    )));
    screenshot(&browser, "cumock-report-drilldown.png");
}

/// Saves what the browser shows as target/NAME, to look at.
fn screenshot(browser: &Driver, name: &str) {
    let png = browser.call("GET", "/screenshot", None);
    let png = base64_decode(png.as_str().unwrap());
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let shot = workspace().join("target").join(name);
    std::fs::write(&shot, png).unwrap();
    eprintln!("screenshot: {}", shot.display());
}

/// WebDriver sends screenshots as base64; a dozen lines spare a dependency.
fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|c| *c != b'=' && *c != b'\n').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= (value(*c) as u32) << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}
