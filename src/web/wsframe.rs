//! The WebSocket wire format (RFC 6455) for the public fan-out (`super::fanout`): the
//! opening handshake's checks and accept key, server frames encoded once and shared by
//! every viewer, and an incremental parser for what viewers send (pings and closes; data
//! frames are read and ignored).
//!
//! Why not tungstenite here: the fan-out writes one pre-encoded frame to thousands of
//! sockets it owns, which tungstenite's per-connection `WebSocket` cannot do. The
//! per-connection path under TLS still uses tungstenite through axum.

use axum::http::HeaderMap;
use bytes::{Buf, Bytes, BytesMut};
use sha1::{Digest, Sha1};

/// The GUID every accept key is derived with (RFC 6455, section 1.3).
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Frame opcodes (RFC 6455, section 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opcode {
    /// A continuation of a fragmented data frame.
    Continuation = 0x0,
    /// UTF-8 text.
    Text = 0x1,
    /// Binary data.
    Binary = 0x2,
    /// Close.
    Close = 0x8,
    /// Ping.
    Ping = 0x9,
    /// Pong.
    Pong = 0xA,
}

impl Opcode {
    fn from_bits(bits: u8) -> Option<Opcode> {
        Some(match bits {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xA => Opcode::Pong,
            _ => return None,
        })
    }

    fn is_control(self) -> bool {
        (self as u8) & 0x8 != 0
    }
}

/// Close status codes the fan-out sends (RFC 6455, section 7.4.1).
pub mod close_code {
    /// The peer asked to close, or the server is done.
    pub const NORMAL: u16 = 1000;
    /// The peer broke the protocol (unmasked frame, bad opcode, reserved bits...).
    pub const PROTOCOL: u16 = 1002;
    /// A text message (or close reason) that is not UTF-8.
    pub const INVALID_DATA: u16 = 1007;
    /// A frame larger than the server takes.
    pub const TOO_BIG: u16 = 1009;
}

/// Why a request is not a WebSocket opening handshake this server accepts.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HandshakeError {
    /// `Connection` does not list `upgrade`.
    #[error("send Connection: upgrade")]
    Connection,
    /// `Upgrade` is not `websocket`.
    #[error("send Upgrade: websocket")]
    Upgrade,
    /// `Sec-WebSocket-Version` is not 13.
    #[error("send Sec-WebSocket-Version: 13")]
    Version,
    /// No `Sec-WebSocket-Key`, or not the base64 of 16 bytes (RFC 6455, section 4.1).
    #[error("send a Sec-WebSocket-Key: the base64 of 16 random bytes")]
    Key,
    /// Not HTTP/1.1: an upgrade needs HTTP/1.1 or later (RFC 6455, section 4.1).
    #[error("send the upgrade over HTTP/1.1")]
    HttpVersion,
}

/// [`accept`], checking the request's HTTP version too.
pub fn accept_request(
    version: axum::http::Version,
    headers: &HeaderMap,
) -> Result<String, HandshakeError> {
    if version < axum::http::Version::HTTP_11 {
        return Err(HandshakeError::HttpVersion);
    }
    accept(headers)
}

/// Checks an opening handshake's headers and returns the `Sec-WebSocket-Accept` value.
pub fn accept(headers: &HeaderMap) -> Result<String, HandshakeError> {
    let has_token = |name: &str, token: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str()
                .map(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
                .unwrap_or(false)
        })
    };
    if !has_token("connection", "upgrade") {
        return Err(HandshakeError::Connection);
    }
    if !has_token("upgrade", "websocket") {
        return Err(HandshakeError::Upgrade);
    }
    if !headers
        .get("sec-websocket-version")
        .is_some_and(|v| v.as_bytes() == b"13")
    {
        return Err(HandshakeError::Version);
    }
    let key = headers
        .get("sec-websocket-key")
        .ok_or(HandshakeError::Key)?;
    let nonce = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.decode(key.as_bytes())
    };
    if !nonce.is_ok_and(|n| n.len() == 16) {
        return Err(HandshakeError::Key);
    }
    Ok(accept_key(key.as_bytes()))
}

/// `base64(sha1(key + GUID))` (RFC 6455, section 4.2.2).
pub fn accept_key(key: &[u8]) -> String {
    use base64::Engine;
    let mut sha = Sha1::new();
    sha.update(key);
    sha.update(GUID);
    base64::engine::general_purpose::STANDARD.encode(sha.finalize())
}

/// One unmasked, unfragmented server frame: the same bytes go to every viewer.
pub fn server_frame(opcode: Opcode, payload: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(payload.len() + 10);
    out.extend_from_slice(&[0x80 | opcode as u8]);
    match payload.len() {
        n if n < 126 => out.extend_from_slice(&[n as u8]),
        n if n <= usize::from(u16::MAX) => {
            out.extend_from_slice(&[126]);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.extend_from_slice(&[127]);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out.freeze()
}

/// A close frame with `code` (and no reason).
pub fn close_frame(code: u16) -> Bytes {
    server_frame(Opcode::Close, &code.to_be_bytes())
}

/// What a viewer sent, as far as the fan-out cares.
#[derive(Debug, PartialEq, Eq)]
pub enum ClientFrame {
    /// A ping: answer with a pong carrying `payload`.
    Ping(Bytes),
    /// A close, with the peer's status code when it gave one: answer with a close.
    Close(Option<u16>),
    /// Anything else (data, pongs): read and ignored.
    Ignored,
}

/// A viewer broke the protocol; the connection is closed with [`FrameError::close_code`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    /// Clients must mask every frame (RFC 6455, section 5.1).
    #[error("an unmasked client frame")]
    Unmasked,
    /// Reserved bits set without an extension that defines them.
    #[error("reserved bits set")]
    Reserved,
    /// An opcode RFC 6455 does not define.
    #[error("unknown opcode {0:#x}")]
    Opcode(u8),
    /// A control frame that is fragmented or longer than 125 bytes.
    #[error("a malformed control frame")]
    Control,
    /// A frame longer than the server takes.
    #[error("a {0}-byte frame")]
    TooBig(u64),
    /// A close frame whose code may not be sent (1005, 1006, 1015, unassigned ranges), or
    /// with a one-byte body.
    #[error("close code {0} may not be sent")]
    CloseCode(u16),
    /// A continuation without a message to continue, or a new message before the last
    /// one's final frame.
    #[error("a fragment out of sequence")]
    Fragment,
    /// A text message or close reason that is not UTF-8.
    #[error("text that is not UTF-8")]
    Utf8,
}

impl FrameError {
    /// The close code to answer with.
    pub fn close_code(&self) -> u16 {
        match self {
            FrameError::TooBig(_) => close_code::TOO_BIG,
            FrameError::Utf8 => close_code::INVALID_DATA,
            _ => close_code::PROTOCOL,
        }
    }
}

/// A close code a peer may send (RFC 6455, section 7.4; the IANA registry).
pub fn sendable_close_code(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// Parses frames from what a viewer sends, as it arrives.
#[derive(Debug)]
pub struct ClientFrames {
    buf: BytesMut,
    max_frame: u64,
    /// The data message in progress: whether it is text, and (text only) its bytes so
    /// far, checked as UTF-8 once whole.
    message: Option<(bool, BytesMut)>,
}

impl ClientFrames {
    /// A parser that refuses frames longer than `max_frame` bytes.
    pub fn new(max_frame: usize) -> ClientFrames {
        ClientFrames {
            buf: BytesMut::new(),
            max_frame: max_frame as u64,
            message: None,
        }
    }

    /// Adds bytes read from the socket.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, `None` until one has arrived.
    pub fn next_frame(&mut self) -> Result<Option<ClientFrame>, FrameError> {
        let b = &self.buf[..];
        if b.len() < 2 {
            return Ok(None);
        }
        let (fin, rsv, bits) = (b[0] & 0x80 != 0, b[0] & 0x70, b[0] & 0x0F);
        if rsv != 0 {
            return Err(FrameError::Reserved);
        }
        let opcode = Opcode::from_bits(bits).ok_or(FrameError::Opcode(bits))?;
        if b[1] & 0x80 == 0 {
            return Err(FrameError::Unmasked);
        }
        let (len, header) = match b[1] & 0x7F {
            126 if b.len() >= 4 => (u64::from(u16::from_be_bytes([b[2], b[3]])), 4),
            127 if b.len() >= 10 => {
                let mut n = [0u8; 8];
                n.copy_from_slice(&b[2..10]);
                (u64::from_be_bytes(n), 10)
            }
            126 | 127 => return Ok(None),
            n => (u64::from(n), 2),
        };
        if opcode.is_control() && (!fin || len > 125) {
            return Err(FrameError::Control);
        }
        if len > self.max_frame {
            return Err(FrameError::TooBig(len));
        }
        // `len <= max_frame`, a `usize`: the cast is exact.
        let whole = header + 4 + len as usize;
        if b.len() < whole {
            return Ok(None);
        }
        let mut mask = [0u8; 4];
        mask.copy_from_slice(&b[header..header + 4]);
        self.buf.advance(header + 4);
        let mut payload = self.buf.split_to(len as usize);
        for (i, byte) in payload.iter_mut().enumerate() {
            *byte ^= mask[i % 4];
        }
        Ok(Some(match opcode {
            Opcode::Ping => ClientFrame::Ping(payload.freeze()),
            Opcode::Close => {
                let code = match payload.len() {
                    0 => None,
                    1 => return Err(FrameError::CloseCode(0)),
                    _ => Some(u16::from_be_bytes([payload[0], payload[1]])),
                };
                if let Some(code) = code.filter(|&c| !sendable_close_code(c)) {
                    return Err(FrameError::CloseCode(code));
                }
                if std::str::from_utf8(payload.get(2..).unwrap_or_default()).is_err() {
                    return Err(FrameError::Utf8);
                }
                ClientFrame::Close(code)
            }
            Opcode::Pong => ClientFrame::Ignored,
            data => {
                self.data(data, fin, &payload)?;
                ClientFrame::Ignored
            }
        }))
    }

    /// A data frame: fragments in sequence, and a text message UTF-8 once whole (kept no
    /// longer than the frame limit).
    fn data(&mut self, opcode: Opcode, fin: bool, payload: &[u8]) -> Result<(), FrameError> {
        let (text, mut bytes) = match (opcode, self.message.take()) {
            (Opcode::Continuation, Some(message)) => message,
            (Opcode::Continuation, None) | (_, Some(_)) => return Err(FrameError::Fragment),
            (opcode, None) => (opcode == Opcode::Text, BytesMut::new()),
        };
        if text {
            bytes.extend_from_slice(payload);
            if bytes.len() as u64 > self.max_frame {
                return Err(FrameError::TooBig(bytes.len() as u64));
            }
        }
        if !fin {
            self.message = Some((text, bytes));
        } else if text && std::str::from_utf8(&bytes).is_err() {
            return Err(FrameError::Utf8);
        }
        Ok(())
    }
}

/// A client's frame as a browser sends it, masked with `mask`; `first` is the first byte
/// (FIN, reserved bits, opcode). For tests and load tools: the server never sends one.
pub fn masked_frame(first: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut out = vec![first];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= usize::from(u16::MAX) => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn client(first: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
        masked_frame(first, payload, mask)
    }

    #[test]
    fn the_accept_key_is_the_one_in_rfc_6455() {
        // RFC 6455, section 1.3.
        assert_eq!(
            accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn a_handshake_needs_each_header() {
        let mut h = HeaderMap::new();
        assert_eq!(accept(&h), Err(HandshakeError::Connection));
        h.insert(
            "connection",
            HeaderValue::from_static("keep-alive, Upgrade"),
        );
        assert_eq!(accept(&h), Err(HandshakeError::Upgrade));
        h.insert("upgrade", HeaderValue::from_static("WebSocket"));
        assert_eq!(accept(&h), Err(HandshakeError::Version));
        h.insert("sec-websocket-version", HeaderValue::from_static("8"));
        assert_eq!(accept(&h), Err(HandshakeError::Version));
        h.insert("sec-websocket-version", HeaderValue::from_static("13"));
        assert_eq!(accept(&h), Err(HandshakeError::Key));
        h.insert(
            "sec-websocket-key",
            HeaderValue::from_static("dGhlIHNhbXBsZSBub25jZQ=="),
        );
        assert_eq!(accept(&h).as_deref(), Ok("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    }

    #[test]
    fn server_frames_use_the_shortest_length_that_fits() {
        assert_eq!(
            &server_frame(Opcode::Text, b"hi")[..],
            &[0x81, 2, b'h', b'i']
        );
        let mid = server_frame(Opcode::Text, &[b'x'; 300]);
        assert_eq!(&mid[..4], &[0x81, 126, 0x01, 0x2C]);
        assert_eq!(mid.len(), 304);
        let big = server_frame(Opcode::Binary, &vec![0u8; 70_000]);
        assert_eq!(&big[..2], &[0x82, 127]);
        assert_eq!(u64::from_be_bytes(big[2..10].try_into().unwrap()), 70_000);
        assert_eq!(big.len(), 70_010);
        assert_eq!(&close_frame(1000)[..], &[0x88, 2, 0x03, 0xE8]);
    }

    #[test]
    fn frames_are_parsed_as_they_arrive_in_pieces() {
        let mut wire = client(0x89, b"are you there", [1, 2, 3, 4]);
        wire.extend(client(0x81, &[b'a'; 200], [9, 8, 7, 6]));
        wire.extend(client(0x88, &1001u16.to_be_bytes(), [5, 5, 5, 5]));
        let mut p = ClientFrames::new(1024);
        let mut got = Vec::new();
        for byte in wire {
            p.push(&[byte]);
            while let Some(f) = p.next_frame().expect("valid") {
                got.push(f);
            }
        }
        assert_eq!(
            got,
            vec![
                ClientFrame::Ping(Bytes::from_static(b"are you there")),
                ClientFrame::Ignored,
                ClientFrame::Close(Some(1001)),
            ]
        );
        let mut p = ClientFrames::new(1024);
        p.push(&client(0x88, b"", [0; 4]));
        assert_eq!(p.next_frame(), Ok(Some(ClientFrame::Close(None))));
        assert_eq!(p.next_frame(), Ok(None));
    }

    #[test]
    fn protocol_violations_are_refused_with_their_close_code() {
        let cases: [(Vec<u8>, FrameError); 5] = [
            (vec![0x81, 0x02, b'h', b'i'], FrameError::Unmasked),
            (client(0xC1, b"x", [1; 4]), FrameError::Reserved),
            (client(0x83, b"x", [1; 4]), FrameError::Opcode(3)),
            (client(0x09, b"x", [1; 4]), FrameError::Control),
            (client(0x82, &[0; 2000], [1; 4]), FrameError::TooBig(2000)),
        ];
        for (wire, want) in cases {
            let mut p = ClientFrames::new(1024);
            p.push(&wire);
            let code = want.close_code();
            assert_eq!(p.next_frame(), Err(want));
            assert_eq!(code, if wire.len() > 1000 { 1009 } else { 1002 });
        }
        // The length alone is enough to refuse a huge frame: nothing is buffered for it.
        let mut p = ClientFrames::new(1024);
        p.push(&[0x82, 0x80 | 127, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(p.next_frame(), Err(FrameError::TooBig(1 << 32)));
    }
}
