//! Until the engine answers again, and reports the handler where it can
//! tell: dockerd lists its runtimes (`GET /info`); containerd's CRI plugin
//! tells its runtime handlers in its verbose status (`cri.rs`, over its
//! own socket). What cannot be asked is said.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use toml_edit::Item;

use super::args::{Engine, Request};
use super::host::Host;
use super::{Error, engine_name, register};

/// A reply read up to this size.
const LIMIT: u64 = 8 << 20;

/// Waits until `engine` answers a question, whatever it says of the
/// handler: dockerd takes SIGHUP for a reload only once it has set up its
/// handler for it, after its socket accepts (before, SIGHUP ends it).
pub fn until_answers(engine: Engine, host: &Host, request: &Request) -> Result<(), Error> {
    let socket = match &request.address {
        Some(socket) => socket.clone(),
        None => socket(engine, host)?,
    };
    let deadline = Instant::now() + Duration::from_secs(request.timeout);
    loop {
        match reports(engine, &socket) {
            Ok(_) => return Ok(()),
            Err(why) if Instant::now() > deadline => {
                return Err(Error::Engine(format!(
                    "{} on {} does not answer within {} s: {why}",
                    engine_name(engine),
                    socket.display(),
                    request.timeout
                )));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Waits until `engine` answers and its handler is there (`present`) or
/// gone, as far as it can tell.
pub fn until_ready(
    engine: Engine,
    host: &Host,
    request: &Request,
    present: bool,
) -> Result<(), Error> {
    let name = engine_name(engine);
    let socket = match &request.address {
        Some(socket) => socket.clone(),
        None => socket(engine, host)?,
    };
    let deadline = Instant::now() + Duration::from_secs(request.timeout);
    loop {
        let last = match reports(engine, &socket) {
            Ok(Some(listed)) if listed == present => {
                let how = if present {
                    "reports"
                } else {
                    "no longer reports"
                };
                say!(
                    "{name} answers on {} and {how} the handler {}.",
                    socket.display(),
                    register::NAME
                );
                return Ok(());
            }
            Ok(None) => {
                say!(
                    "{name} answers on {}; whether it took the handler cannot be asked here.",
                    socket.display()
                );
                return Ok(());
            }
            Ok(Some(_)) => format!(
                "it does not yet {}list the handler",
                if present { "" } else { "stop to " }
            ),
            Err(why) => why,
        };
        if Instant::now() > deadline {
            return Err(Error::Engine(format!(
                "{name} on {} not ready within {} s: {last}",
                socket.display(),
                request.timeout
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether `engine` lists the handler now (one question): `Ok(None)`
/// when it cannot be asked, `Err` when it does not answer.
pub fn reports_now(engine: Engine, host: &Host, request: &Request) -> Result<Option<bool>, String> {
    let socket = match &request.address {
        Some(socket) => socket.clone(),
        None => socket(engine, host).map_err(|error| error.to_string())?,
    };
    reports(engine, &socket)
}

/// Whether the engine lists the handler; `None` when it cannot be asked.
fn reports(engine: Engine, socket: &std::path::Path) -> Result<Option<bool>, String> {
    let stream = UnixStream::connect(socket).map_err(|e| e.to_string())?;
    let timeout = Some(Duration::from_secs(10));
    let _ = stream.set_read_timeout(timeout);
    let _ = stream.set_write_timeout(timeout);
    match engine {
        Engine::Docker => docker_lists(stream).map(Some),
        Engine::Containerd => super::cri::handlers(stream)
            .map(|handlers| handlers.map(|names| names.iter().any(|n| n == register::NAME))),
        Engine::Crio => Ok(None),
    }
}

/// dockerd's `GET /info`: whether `Runtimes` has ours.
fn docker_lists(mut stream: UnixStream) -> Result<bool, String> {
    stream
        .write_all(b"GET /info HTTP/1.0\r\nHost: docker\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut reply = Vec::new();
    stream
        .take(LIMIT)
        .read_to_end(&mut reply)
        .map_err(|e| e.to_string())?;
    let reply = String::from_utf8_lossy(&reply);
    let (head, body) = reply.split_once("\r\n\r\n").ok_or("no HTTP reply")?;
    if !head.starts_with("HTTP/1.") || head.split(' ').nth(1) != Some("200") {
        return Err(format!("GET /info: {}", head.lines().next().unwrap_or("")));
    }
    let info: serde_json::Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
    Ok(info["Runtimes"].get(register::NAME).is_some())
}

/// The engine's socket: containerd's from its config (`[grpc] address`),
/// else each engine's usual one, under the host's root.
fn socket(engine: Engine, host: &Host) -> Result<PathBuf, Error> {
    let path = match engine {
        Engine::Containerd => {
            let text = register::read(host, "/etc/containerd/config.toml")?.unwrap_or_default();
            let doc = crate::runtime::configure::toml::parse(&text).ok();
            doc.as_ref()
                .and_then(|doc| doc.get("grpc"))
                .and_then(|grpc| grpc.get("address"))
                .and_then(Item::as_str)
                .filter(|address| address.starts_with('/'))
                .unwrap_or("/run/containerd/containerd.sock")
                .to_owned()
        }
        Engine::Crio => "/run/crio/crio.sock".into(),
        Engine::Docker => "/run/docker.sock".into(),
    };
    Ok(host.at(&path))
}
