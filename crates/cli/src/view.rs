//! `tracelight view PATH…`: the app and the given traces, run folders or digests served on
//! 127.0.0.1, so a trace on a remote GPU box opens in the laptop's browser without a copy.
//!
//! What is served, and only that: the app's single-file build (embedded at build time, see
//! `build.rs`), a manifest of the files (`files.json`) and each file by its index. Every path
//! starts with a random 128-bit token, so another user of the machine or a web page probing
//! `localhost` cannot read the traces: a request without it is refused (403), any other path is
//! not found (404). The page is opened on `?files=files.json`: it fetches the files and opens them
//! as one drop (run layout, ranks, digests, Flight Recorder dumps as a drop gives them). Files are
//! read from disk per request, with HTTP range requests (`Range: bytes=…`, RFC 9110) for big ones.
//! A blocking server (`tiny_http`) with a thread per request: a handful of requests per session
//! needs no async runtime.

use crate::input::{walk, CliError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tiny_http::{Header, Method, Request, Response, Server, StatusCode};

include!(concat!(env!("OUT_DIR"), "/viewer.rs"));

pub const NO_VIEWER: &str = "this build of tracelight has no viewer page: build the app, then \
the CLI (trunk build --release && node scripts/single_file.mjs && cargo build --release -p \
tracelight-cli), or install the wheel (pip install tracelight), which carries it";

/// One file the page may fetch: the name the page gives it (its base name, as a drop does) and
/// where it is on disk.
#[derive(Debug, Clone)]
pub struct Served {
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
}

/// What `view` serves of `paths`: each file named, and each folder's files (recursively, hidden
/// ones left out) whose names look like profiler output — the page's rule for a dropped folder
/// (`web/platform/drop.rs`), applied here so a checkpoint beside the traces is never read. The
/// second list names the folders' files left out.
pub fn collect(paths: &[&String]) -> Result<(Vec<Served>, Vec<PathBuf>), CliError> {
    let mut out = Vec::new();
    let mut left = Vec::new();
    for p in paths {
        let path = Path::new(p.as_str());
        let meta = std::fs::metadata(path).map_err(|e| io_error(p, &e))?;
        if meta.is_dir() {
            let mut all = Vec::new();
            walk(path, &mut all).map_err(|e| io_error(p, &e))?;
            for f in all {
                let name = base_name(&f);
                if looks_openable(&name) {
                    let size = std::fs::metadata(&f)
                        .map_err(|e| io_error(&f.display().to_string(), &e))?
                        .len();
                    out.push(Served {
                        name,
                        path: f,
                        size,
                    });
                } else {
                    left.push(f);
                }
            }
        } else {
            out.push(Served {
                name: base_name(path),
                path: path.to_path_buf(),
                size: meta.len(),
            });
        }
    }
    if out.is_empty() {
        return Err(CliError::Usage(format!(
            "nothing to view: no .json, .json.gz, .pickle, .parquet or Flight Recorder dump (rank_N) files in {}",
            paths.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok((out, left))
}

/// The page's rule for the files of a dropped folder (`looks_openable` in
/// `crates/web/src/platform/drop.rs`; a test below keeps the two bodies equal).
pub fn looks_openable(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let base = n.rsplit('/').next().unwrap_or(&n);
    [".json", ".json.gz", ".gz", ".pickle", ".pkl", ".parquet"]
        .iter()
        .any(|e| n.ends_with(e))
        || (!base.contains('.') && base.ends_with(|c: char| c.is_ascii_digit()))
}

fn base_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn io_error(path: &str, e: &std::io::Error) -> CliError {
    CliError::Input(
        tracelight_core::Error::new(tracelight_core::ErrorKind::Io(e.to_string()), 0).in_file(path),
    )
}

/// A running server: its port and token, and what it serves.
pub struct Viewer {
    server: Server,
    shared: Arc<Shared>,
    pub port: u16,
}

struct Shared {
    token: String,
    page: &'static [u8],
    files: Vec<Served>,
    manifest: String,
}

impl Viewer {
    /// Binds 127.0.0.1:`port` (0: a free port the system picks) and draws the token.
    pub fn start(files: Vec<Served>, page: &'static [u8], port: u16) -> std::io::Result<Viewer> {
        let mut raw = [0u8; 16];
        getrandom::fill(&mut raw).map_err(|e| std::io::Error::other(e.to_string()))?;
        let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let server = Server::http(("127.0.0.1", port)).map_err(std::io::Error::other)?;
        let port = server.server_addr().to_ip().map_or(port, |a| a.port());
        let manifest = manifest(&files);
        Ok(Viewer {
            server,
            shared: Arc::new(Shared {
                token,
                page,
                files,
                manifest,
            }),
            port,
        })
    }

    /// The page's URL: the token, then `?files=` naming the manifest.
    pub fn url(&self) -> String {
        format!(
            "http://127.0.0.1:{}/{}/?files=files.json",
            self.port, self.shared.token
        )
    }

    /// Answers requests until `stop` says so (asked a few times a second) or the socket fails.
    pub fn serve(&self, stop: &dyn Fn() -> bool) -> std::io::Result<()> {
        loop {
            if stop() {
                return Ok(());
            }
            if let Some(req) = self.server.recv_timeout(Duration::from_millis(200))? {
                let shared = Arc::clone(&self.shared);
                std::thread::spawn(move || answer(req, &shared));
            }
        }
    }
}

/// `{"files": [{"name", "url", "size"}]}`; the URLs are relative to the page's (`f/INDEX/NAME`).
fn manifest(files: &[Served]) -> String {
    let list: Vec<serde_json::Value> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            serde_json::json!({
                "name": f.name,
                "url": format!("f/{i}/{}", percent_encode(&f.name)),
                "size": f.size,
            })
        })
        .collect();
    serde_json::json!({ "files": list }).to_string()
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What a request gets. Only GET and HEAD; the token must be the path's first segment.
fn route(method: &Method, url: &str, sh: &Shared) -> Route {
    if !matches!(method, Method::Get | Method::Head) {
        return Route::Status(405);
    }
    let path = url.split(['?', '#']).next().unwrap_or("");
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let first = parts.next().unwrap_or("");
    if !same(first.as_bytes(), sh.token.as_bytes()) {
        return Route::Status(403);
    }
    match parts.next() {
        Some("") => Route::Page,
        Some("files.json") => Route::Manifest,
        Some(rest) => {
            let mut seg = rest.splitn(3, '/');
            match (
                seg.next(),
                seg.next().and_then(|i| i.parse::<usize>().ok()),
                seg.next(),
            ) {
                (Some("f"), Some(i), Some(name))
                    if sh
                        .files
                        .get(i)
                        .is_some_and(|f| percent_encode(&f.name) == name) =>
                {
                    Route::File(i)
                }
                _ => Route::Status(404),
            }
        }
        None => Route::Status(404),
    }
}

#[derive(Debug, PartialEq)]
enum Route {
    Page,
    Manifest,
    File(usize),
    Status(u16),
}

/// Equality that takes the same time wherever the first difference is (the token is a secret).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn header(k: &str, v: &str) -> Option<Header> {
    Header::from_bytes(k.as_bytes(), v.as_bytes()).ok()
}

fn answer(req: Request, sh: &Shared) {
    let route = route(req.method(), req.url(), sh);
    let range = req
        .headers()
        .iter()
        .find(|h| h.field.equiv("Range"))
        .map(|h| h.value.as_str().to_owned());
    // The token is in the URL: no Referer may carry it anywhere; nothing is cached.
    let common = [
        header("Cache-Control", "no-store"),
        header("Referrer-Policy", "no-referrer"),
        header("X-Content-Type-Options", "nosniff"),
    ];
    let base = |status: u16, ctype: &str, body: Vec<u8>| {
        let mut r = Response::from_data(body).with_status_code(StatusCode(status));
        for h in common
            .iter()
            .flatten()
            .cloned()
            .chain(header("Content-Type", ctype))
        {
            r.add_header(h);
        }
        r
    };
    let result = match route {
        Route::Page => req.respond(base(200, "text/html; charset=utf-8", sh.page.to_vec())),
        Route::Manifest => req.respond(base(
            200,
            "application/json",
            sh.manifest.as_bytes().to_vec(),
        )),
        Route::Status(s) => {
            let text = match s {
                403 => "forbidden: this server answers only its own URL (with its token)\n",
                405 => "method not allowed\n",
                _ => "not found\n",
            };
            req.respond(base(
                s,
                "text/plain; charset=utf-8",
                text.as_bytes().to_vec(),
            ))
        }
        Route::File(i) => {
            let f = &sh.files[i];
            match open_range(f, range.as_deref()) {
                Ok((status, reader, len, content_range)) => {
                    let mut r = Response::new(
                        StatusCode(status),
                        Vec::new(),
                        reader,
                        Some(len as usize),
                        None,
                    );
                    for h in common
                        .iter()
                        .flatten()
                        .cloned()
                        .chain(header("Content-Type", "application/octet-stream"))
                        .chain(header("Accept-Ranges", "bytes"))
                        .chain(content_range.and_then(|c| header("Content-Range", &c)))
                    {
                        r.add_header(h);
                    }
                    req.respond(r)
                }
                Err(Unreadable::Range) => {
                    let mut r = base(
                        416,
                        "text/plain; charset=utf-8",
                        b"range not satisfiable\n".to_vec(),
                    );
                    if let Some(h) = header("Content-Range", &format!("bytes */{}", f.size)) {
                        r.add_header(h);
                    }
                    req.respond(r)
                }
                Err(Unreadable::Io(e)) => {
                    let msg = format!("tracelight: {}: {e}\n", f.path.display());
                    let _ = std::io::stderr().write_all(msg.as_bytes());
                    req.respond(base(500, "text/plain; charset=utf-8", msg.into_bytes()))
                }
            }
        }
    };
    // A browser that went away mid-body: nothing to tell anyone.
    drop(result);
}

enum Unreadable {
    Range,
    Io(std::io::Error),
}

type Body = (u16, std::io::Take<std::fs::File>, u64, Option<String>);

/// The file, or the part a `Range` header asks for: (status, body, length, Content-Range).
fn open_range(f: &Served, range: Option<&str>) -> Result<Body, Unreadable> {
    let mut file = std::fs::File::open(&f.path).map_err(Unreadable::Io)?;
    // The size now, not at start: a trace still being written grows.
    let size = file.metadata().map_err(Unreadable::Io)?.len();
    match range.map_or(Ask::Whole, |r| parse_range(r, size)) {
        Ask::Whole => Ok((200, file.take(size), size, None)),
        Ask::Unsatisfiable => Err(Unreadable::Range),
        Ask::Part(start, end) => {
            file.seek(SeekFrom::Start(start)).map_err(Unreadable::Io)?;
            let len = end - start;
            Ok((
                206,
                file.take(len),
                len,
                Some(format!("bytes {start}-{}/{size}", end - 1)),
            ))
        }
    }
}

/// What a `Range` header asks of a file.
#[derive(Debug, PartialEq, Eq)]
pub enum Ask {
    /// The whole file: no range, or one to ignore (not bytes, several ranges, malformed: RFC
    /// 9110 lets the server send the whole file).
    Whole,
    /// Bytes `start..end`.
    Part(u64, u64),
    /// A range that starts past the end (416).
    Unsatisfiable,
}

/// A single byte range of `Range: bytes=…` over a file of `size` bytes.
pub fn parse_range(h: &str, size: u64) -> Ask {
    let Some(spec) = h.trim().strip_prefix("bytes=") else {
        return Ask::Whole;
    };
    if spec.contains(',') {
        return Ask::Whole;
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return Ask::Whole;
    };
    let (a, b) = (a.trim(), b.trim());
    if a.is_empty() {
        // The last N bytes.
        let Ok(n) = b.parse::<u64>() else {
            return Ask::Whole;
        };
        if n == 0 || size == 0 {
            return Ask::Unsatisfiable;
        }
        return Ask::Part(size.saturating_sub(n), size);
    }
    let Ok(start) = a.parse::<u64>() else {
        return Ask::Whole;
    };
    let end = if b.is_empty() {
        size
    } else {
        match b.parse::<u64>() {
            Ok(last) if last >= start => (last + 1).min(size),
            _ => return Ask::Whole,
        }
    };
    if start >= size {
        return Ask::Unsatisfiable;
    }
    Ask::Part(start, end)
}

/// Whether a browser can be opened here: not over SSH (it would open on the remote machine, or
/// fail), and on Linux and the BSDs only with a display.
fn can_open_browser() -> bool {
    let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    if env("SSH_CONNECTION") || env("SSH_TTY") {
        return false;
    }
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        return true;
    }
    env("DISPLAY") || env("WAYLAND_DISPLAY")
}

/// The one `ssh -L` line that reaches the server from the laptop: the user and the address the
/// current SSH session came in on (`SSH_CONNECTION`'s third field), else the host's name.
fn ssh_line(port: u16) -> String {
    let user = std::env::var("USER").unwrap_or_default();
    let host = std::env::var("SSH_CONNECTION")
        .ok()
        .and_then(|c| c.split_whitespace().nth(2).map(str::to_owned))
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_owned())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "THIS-HOST".into());
    let at = if user.is_empty() {
        host
    } else {
        format!("{user}@{host}")
    };
    format!("ssh -N -L {port}:127.0.0.1:{port} {at}")
}

/// `tracelight view PATH… [--port N] [--no-browser]`: prints where the page is, opens it when a
/// browser can be, and serves until `stop` says so (Ctrl-C ends the process otherwise).
pub fn view(args: &[String], out: &mut dyn Write, stop: &dyn Fn() -> bool) -> Result<(), CliError> {
    let mut paths = Vec::new();
    let mut port = 0u16;
    let mut browser = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix("--port=") {
            port = v
                .parse()
                .map_err(|_| CliError::Usage("--port takes a port number".into()))?;
            continue;
        }
        match a.as_str() {
            "--no-browser" => browser = false,
            "--port" => {
                port = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| CliError::Usage("--port takes a port number".into()))?;
            }
            s if s.starts_with("--") => {
                return Err(CliError::Usage(format!("view: unknown flag {s:?}")))
            }
            _ => paths.push(a),
        }
    }
    if paths.is_empty() {
        return Err(CliError::Usage(
            "view needs at least one trace, run folder or digest folder".into(),
        ));
    }
    let (files, left) = collect(&paths)?;
    let Some(page) = VIEWER else {
        return Err(CliError::Usage(NO_VIEWER.into()));
    };
    let n = files.len();
    let names: Vec<String> = files.iter().take(4).map(|f| f.name.clone()).collect();
    let more = if n > 4 {
        format!(", … {} more", n - 4)
    } else {
        String::new()
    };
    let viewer = Viewer::start(files, page, port)
        .map_err(|e| CliError::Usage(format!("view: cannot listen on 127.0.0.1:{port}: {e}")))?;
    let url = viewer.url();
    let mut text = format!(
        "tracelight view: {n} file{} ({}{more}) on 127.0.0.1:{}\n",
        if n == 1 { "" } else { "s" },
        names.join(", "),
        viewer.port
    );
    if !left.is_empty() {
        text.push_str(&format!(
            "  not served ({} file{} not profiler output by name): {}\n",
            left.len(),
            if left.len() == 1 { "" } else { "s" },
            left.iter()
                .take(5)
                .map(|p| base_name(p))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    text.push_str(&format!("  open {url}\n"));
    let opened = browser && can_open_browser() && open::that_detached(&url).is_ok();
    if !opened {
        text.push_str(&format!(
            "  from another machine (SSH), first run there: {}\n  then open the URL above in its browser\n",
            ssh_line(viewer.port)
        ));
    }
    text.push_str("Ctrl-C stops the server.\n");
    // A closed stdout must not stop the server; the URL is also all a caller needs.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    viewer
        .serve(stop)
        .map_err(|e| CliError::Usage(format!("view: the server stopped: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of `fn looks_openable`'s body in `src`.
    fn body(src: &str) -> &str {
        let start = src.find("pub fn looks_openable").unwrap_or(0);
        let rest = &src[start..];
        &rest[..rest.find("\n}\n").unwrap_or(rest.len())]
    }

    #[test]
    fn a_folder_is_filtered_by_the_pages_own_rule() {
        let page = include_str!("../../web/src/platform/drop.rs");
        let here = include_str!("view.rs");
        assert!(body(page).contains(".json.gz"));
        assert_eq!(body(here), body(page));
        assert!(looks_openable("rank_3") && looks_openable("a.pt.trace.json.gz"));
        assert!(!looks_openable("model.pt") && !looks_openable("table.txt"));
    }

    #[test]
    fn ranges_follow_rfc_9110() {
        assert_eq!(parse_range("bytes=0-99", 1000), Ask::Part(0, 100));
        assert_eq!(parse_range("bytes=900-", 1000), Ask::Part(900, 1000));
        assert_eq!(parse_range("bytes=900-5000", 1000), Ask::Part(900, 1000));
        assert_eq!(parse_range("bytes=-100", 1000), Ask::Part(900, 1000));
        assert_eq!(parse_range("bytes=-5000", 1000), Ask::Part(0, 1000));
        assert_eq!(parse_range("bytes=1000-", 1000), Ask::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 1000), Ask::Unsatisfiable);
        assert_eq!(parse_range("bytes=0-1,5-6", 1000), Ask::Whole);
        assert_eq!(parse_range("items=0-1", 1000), Ask::Whole);
        assert_eq!(parse_range("bytes=5-1", 1000), Ask::Whole);
        assert_eq!(parse_range("bytes=x-1", 1000), Ask::Whole);
    }

    #[test]
    fn only_the_token_and_the_listed_paths_route() {
        let sh = Shared {
            token: "ab12".into(),
            page: b"",
            files: vec![Served {
                name: "rank 0.json".into(),
                path: PathBuf::from("/nonexistent"),
                size: 0,
            }],
            manifest: String::new(),
        };
        let get = |u: &str| route(&Method::Get, u, &sh);
        assert_eq!(get("/ab12/"), Route::Page);
        assert_eq!(get("/ab12/?files=files.json"), Route::Page);
        assert_eq!(get("/ab12/files.json"), Route::Manifest);
        assert_eq!(get("/ab12/f/0/rank%200.json"), Route::File(0));
        assert_eq!(get("/ab12/f/0/other.json"), Route::Status(404));
        assert_eq!(get("/ab12/f/1/rank%200.json"), Route::Status(404));
        assert_eq!(get("/ab12/../etc/passwd"), Route::Status(404));
        assert_eq!(get("/ab12"), Route::Status(404));
        assert_eq!(get("/"), Route::Status(403));
        assert_eq!(get("/ab13/"), Route::Status(403));
        assert_eq!(get("/ab1/"), Route::Status(403));
        assert_eq!(get("/files.json"), Route::Status(403));
        assert_eq!(route(&Method::Post, "/ab12/", &sh), Route::Status(405));
    }
}
