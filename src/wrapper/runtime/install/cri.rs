//! The runtime handlers containerd's CRI plugin serves, asked as the
//! kubelet asks: `runtime.v1.RuntimeService/Status` with `verbose`, one
//! gRPC call over HTTP/2 on its socket, written out by hand (a few frames,
//! literal headers) so that the installer needs no gRPC library. The
//! reply's `runtime_handlers` (containerd 1.7 and later) or, before, the
//! `config` it gives in `info` (its `containerd.runtimes`).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

/// Frames read before giving up on a reply.
const FRAMES: usize = 256;
/// The reply read up to this size.
const LIMIT: usize = 8 << 20;
/// The flow-control window offered: the whole reply at once.
const WINDOW: u32 = 8 << 20;

/// The handlers' names; `None` when the reply says nothing of them.
pub fn handlers(mut stream: UnixStream) -> Result<Option<Vec<String>>, String> {
    let io = |e: std::io::Error| e.to_string();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    // SETTINGS: INITIAL_WINDOW_SIZE; then the connection's window.
    out.extend(frame(
        4,
        0,
        0,
        &[&[0, 4][..], &WINDOW.to_be_bytes()].concat(),
    ));
    out.extend(frame(8, 0, 0, &(WINDOW - 65_535).to_be_bytes()));
    let mut headers = Vec::new();
    for (name, value) in [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/runtime.v1.RuntimeService/Status"),
        (":authority", "localhost"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ] {
        // A literal field without indexing, its name new: no table kept.
        headers.push(0);
        for text in [name, value] {
            headers.push(text.len() as u8);
            headers.extend(text.as_bytes());
        }
    }
    out.extend(frame(1, 0x4, 1, &headers));
    // StatusRequest { verbose: true }, as a gRPC message.
    let message = [0x08, 0x01];
    let mut data = vec![0];
    data.extend((message.len() as u32).to_be_bytes());
    data.extend(message);
    out.extend(frame(0, 0x1, 1, &data));
    stream.write_all(&out).map_err(io)?;
    let mut body = Vec::new();
    for _ in 0..FRAMES {
        let mut head = [0u8; 9];
        stream.read_exact(&mut head).map_err(io)?;
        let length = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let (kind, flags) = (head[3], head[4]);
        let id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        if length > LIMIT || body.len() + length > LIMIT {
            return Err("the reply is too long".into());
        }
        let mut payload = vec![0; length];
        stream.read_exact(&mut payload).map_err(io)?;
        match kind {
            // SETTINGS: acknowledged; PING: answered.
            4 if flags & 1 == 0 => stream.write_all(&frame(4, 1, 0, &[])).map_err(io)?,
            6 if flags & 1 == 0 => stream.write_all(&frame(6, 1, 0, &payload)).map_err(io)?,
            // RST_STREAM, GOAWAY.
            3 | 7 => return Err("containerd ended the call".into()),
            0 if id == 1 => {
                let padded = if flags & 0x8 != 0 {
                    let pad = usize::from(*payload.first().unwrap_or(&0));
                    payload
                        .get(1..payload.len().saturating_sub(pad))
                        .unwrap_or(&[])
                } else {
                    &payload[..]
                };
                body.extend(padded);
            }
            _ => {}
        }
        if id == 1 && flags & 0x1 != 0 && matches!(kind, 0 | 1) {
            return parse_reply(&body);
        }
    }
    Err("no end to the reply".into())
}

/// A frame of `kind` with `flags` on stream `id`.
fn frame(kind: u8, flags: u8, id: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    out.extend([kind, flags]);
    out.extend(id.to_be_bytes());
    out.extend(payload);
    out
}

/// The handlers in a gRPC reply body holding one StatusResponse.
fn parse_reply(body: &[u8]) -> Result<Option<Vec<String>>, String> {
    let message = match body {
        [0, a, b, c, d, rest @ ..] => {
            let length = u32::from_be_bytes([*a, *b, *c, *d]) as usize;
            rest.get(..length).ok_or("a short reply")?
        }
        _ => return Err("no reply message (is the CRI plugin off, or not runtime.v1?)".into()),
    };
    let mut handlers = Vec::new();
    let mut config = None;
    for (number, value) in fields(message)? {
        match number {
            // runtime_handlers: RuntimeHandler { name = 1 }.
            3 => {
                if let Some((_, name)) = fields(value)?.into_iter().find(|(n, _)| *n == 1) {
                    handlers.push(String::from_utf8_lossy(name).into_owned());
                }
            }
            // info: map<string, string> entries { key = 1, value = 2 }.
            2 => {
                let entry = fields(value)?;
                let key = entry.iter().find(|(n, _)| *n == 1).map(|(_, v)| *v);
                if key == Some(b"config") {
                    config = entry.iter().find(|(n, _)| *n == 2).map(|(_, v)| *v);
                }
            }
            _ => {}
        }
    }
    if !handlers.is_empty() {
        return Ok(Some(handlers));
    }
    let Some(config) = config else {
        return Ok(None);
    };
    let config: serde_json::Value = serde_json::from_slice(config).map_err(|e| e.to_string())?;
    Ok(config["containerd"]["runtimes"]
        .as_object()
        .map(|runtimes| runtimes.keys().cloned().collect()))
}

/// The length-delimited fields of a protobuf message, by number; the
/// others skipped.
fn fields(mut data: &[u8]) -> Result<Vec<(u64, &[u8])>, String> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let key = varint(&mut data)?;
        match key & 7 {
            0 => {
                varint(&mut data)?;
            }
            1 => data = data.get(8..).ok_or("a short field")?,
            5 => data = data.get(4..).ok_or("a short field")?,
            2 => {
                let length = usize::try_from(varint(&mut data)?).map_err(|e| e.to_string())?;
                let value = data.get(..length).ok_or("a short field")?;
                out.push((key >> 3, value));
                data = &data[length..];
            }
            wire => return Err(format!("wire type {wire} in the reply")),
        }
    }
    Ok(out)
}

fn varint(data: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = data.split_first().ok_or("a short varint")?;
        *data = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a varint too long".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u8, value: &[u8]) -> Vec<u8> {
        [&[number << 3 | 2, value.len() as u8][..], value].concat()
    }

    #[test]
    fn reads_the_handlers_or_the_configs_runtimes() {
        let config = br#"{"containerd":{"runtimes":{"runc":{},"eatmydata":{}}}}"#;
        let entry = [field(1, b"config"), field(2, config)].concat();
        let message = [field(1, &[0x08, 0x01]), field(2, &entry)].concat();
        let body = [&[0][..], &(message.len() as u32).to_be_bytes(), &message].concat();
        let mut names = parse_reply(&body).unwrap().unwrap();
        names.sort();
        assert_eq!(names, ["eatmydata", "runc"]);
        let handler = field(3, &field(1, b"eatmydata"));
        let message = [message, handler].concat();
        let body = [&[0][..], &(message.len() as u32).to_be_bytes(), &message].concat();
        assert_eq!(parse_reply(&body).unwrap().unwrap(), ["eatmydata"]);
        assert!(parse_reply(&[0, 0, 0, 0, 9, 1]).is_err());
        assert_eq!(parse_reply(&[0, 0, 0, 0, 0]).unwrap(), None);
    }
}
