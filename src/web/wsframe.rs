//! The WebSocket protocol (RFC 6455) for the public fan-out (`super::fanout`), from
//! `tungstenite` (already in the tree under axum's WebSocket): the opening handshake's
//! checks and accept key, server frames encoded once and shared by every viewer, and
//! [`ViewerReader`], a tungstenite protocol context per viewer for what viewers send
//! (pings answered with pongs, a close with a close, a violation closed with its code:
//! 1002 protocol, 1007 text that is not UTF-8, 1009 too big).
//!
//! What the fan-out keeps from the per-connection design: tungstenite's `WebSocket` owns
//! its stream and writes each message through its own buffers, while the shards write one
//! pre-encoded frame (`tungstenite::protocol::frame::Frame::format`, once per message) to
//! thousands of sockets they own. So the context here only reads; the few frames it
//! answers with (pongs, closes) go out through the viewer's shard between whole frames.

use axum::http::{HeaderMap, Method, Version};
use bytes::Bytes;
use std::io::{self, Read, Write};
use tokio::net::TcpStream;
use tungstenite::error::{Error as WsError, ProtocolError};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::frame::{CloseFrame, Frame};
use tungstenite::protocol::{Role, WebSocketConfig, WebSocketContext};
use tungstenite::Message;

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
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// What tungstenite refused: the method, HTTP version, `Connection`, `Upgrade`,
    /// `Sec-WebSocket-Version` or a missing `Sec-WebSocket-Key`.
    #[error("{0}")]
    Refused(ProtocolError),
    /// A `Sec-WebSocket-Key` that is not the base64 of 16 bytes (RFC 6455, section 4.1).
    #[error("send a Sec-WebSocket-Key: the base64 of 16 random bytes")]
    Key,
}

/// Checks an opening handshake (tungstenite's checks, plus the key's form, which
/// tungstenite does not look at) and returns the `Sec-WebSocket-Accept` value.
pub fn accept_request(
    method: &Method,
    version: Version,
    headers: &HeaderMap,
) -> Result<String, HandshakeError> {
    let mut request = axum::http::Request::new(());
    *request.method_mut() = method.clone();
    *request.version_mut() = version;
    *request.headers_mut() = headers.clone();
    let response = match tungstenite::handshake::server::create_response(&request) {
        Ok(response) => response,
        Err(WsError::Protocol(e)) => return Err(HandshakeError::Refused(e)),
        // `create_response` fails with protocol errors only.
        Err(_) => return Err(HandshakeError::Refused(ProtocolError::HandshakeIncomplete)),
    };
    let nonce = headers.get("sec-websocket-key").map(|key| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.decode(key.as_bytes())
    });
    if !nonce.is_some_and(|n| n.is_ok_and(|n| n.len() == 16)) {
        return Err(HandshakeError::Key);
    }
    response
        .headers()
        .get("sec-websocket-accept")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .ok_or(HandshakeError::Key)
}

/// `base64(sha1(key + GUID))` (RFC 6455, section 4.2.2): what a client checks.
pub fn accept_key(key: &[u8]) -> String {
    tungstenite::handshake::derive_accept_key(key)
}

/// `frame` as bytes on the wire.
fn encode(frame: Frame) -> Bytes {
    let mut out = Vec::with_capacity(frame.len());
    // Writing to a `Vec` cannot fail.
    let _ = frame.format(&mut out);
    Bytes::from(out)
}

/// One unmasked, unfragmented text frame: the same bytes go to every viewer.
pub fn text_frame(text: &str) -> Bytes {
    encode(Frame::message(
        Bytes::copy_from_slice(text.as_bytes()),
        tungstenite::protocol::frame::coding::OpCode::Data(
            tungstenite::protocol::frame::coding::Data::Text,
        ),
        true,
    ))
}

/// A close frame with `code` (and no reason).
pub fn close_frame(code: u16) -> Bytes {
    encode(Frame::close(Some(CloseFrame {
        code: CloseCode::from(code),
        reason: "".into(),
    })))
}

/// The largest frame, and message, a viewer may send (they send pings and closes).
pub const MAX_CLIENT_MESSAGE: usize = 64 * 1024;
/// What the context reads from the socket at a time (and keeps allocated per viewer).
const READ_BUFFER: usize = 512;
/// Messages read in one [`ViewerReader::step`] before the reader lets other tasks run.
const MESSAGES_PER_STEP: usize = 16;

/// What to do after a [`ViewerReader::step`].
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Send these bytes (pongs) to the viewer, between whole frames, then step again.
    Reply(Bytes),
    /// Step again (after letting other tasks run).
    More,
    /// Nothing to read until the socket is readable again.
    Wait,
    /// Send this close frame and end the connection.
    Close(Bytes),
    /// The connection ended without a close handshake (or broke).
    Gone,
}

/// A viewer's side of the protocol: a tungstenite context in the server role that reads
/// straight from the socket (never blocking) and writes its answers into a buffer.
pub struct ViewerReader {
    context: WebSocketContext,
}

/// The socket for reading, a buffer for writing.
struct Io<'a> {
    stream: &'a TcpStream,
    out: Vec<u8>,
}

impl Read for Io<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.try_read(buf)
    }
}

impl Write for Io<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ViewerReader {
    /// A reader for a connection whose HTTP server already read `read_ahead` past the
    /// handshake.
    pub fn new(read_ahead: &[u8]) -> ViewerReader {
        let config = WebSocketConfig::default()
            .read_buffer_size(READ_BUFFER)
            .write_buffer_size(0)
            .max_frame_size(Some(MAX_CLIENT_MESSAGE))
            .max_message_size(Some(MAX_CLIENT_MESSAGE));
        ViewerReader {
            context: WebSocketContext::from_partially_read(
                read_ahead.to_vec(),
                Role::Server,
                Some(config),
            ),
        }
    }

    /// Reads what the viewer sent so far from `stream` and says what to do.
    pub fn step(&mut self, stream: &TcpStream) -> Step {
        let mut io = Io {
            stream,
            out: Vec::new(),
        };
        for _ in 0..MESSAGES_PER_STEP {
            match self.context.read(&mut io) {
                // A ping's pong is queued: flush it out and send it before reading on, so
                // a viewer that floods pings waits for its shard.
                Ok(Message::Ping(_)) => {
                    let _ = self.context.flush(&mut io);
                    return match io.out.is_empty() {
                        true => Step::More,
                        false => Step::Reply(Bytes::from(io.out)),
                    };
                }
                // tungstenite echoes a valid code and answers 1002 to one that may not be
                // sent (RFC 6455, section 7.4); a close without a code gets 1000 (where
                // tungstenite would echo the empty close).
                Ok(Message::Close(Some(_))) => {
                    let _ = self.context.flush(&mut io);
                    return Step::Close(match io.out.is_empty() {
                        true => close_frame(close_code::NORMAL),
                        false => Bytes::from(io.out),
                    });
                }
                Ok(Message::Close(None)) => return Step::Close(close_frame(close_code::NORMAL)),
                // Data and pongs are read and ignored.
                Ok(_) => {}
                Err(e) => return self.refused(e, io.out),
            }
        }
        match io.out.is_empty() {
            true => Step::More,
            false => Step::Reply(Bytes::from(io.out)),
        }
    }

    /// What an error from the context means for the connection.
    fn refused(&self, e: WsError, out: Vec<u8>) -> Step {
        let code = match &e {
            WsError::Io(io) if io.kind() == io::ErrorKind::WouldBlock => {
                return match out.is_empty() {
                    true => Step::Wait,
                    false => Step::Reply(Bytes::from(out)),
                };
            }
            // The end of the stream without a close: nobody left to tell.
            WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake)
            | WsError::ConnectionClosed
            | WsError::AlreadyClosed
            | WsError::Io(_) => return Step::Gone,
            WsError::Utf8(_) => close_code::INVALID_DATA,
            WsError::Capacity(_) => close_code::TOO_BIG,
            _ => close_code::PROTOCOL,
        };
        tracing::debug!(error = %e, code, "public viewer broke the protocol");
        Step::Close(close_frame(code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_accept_key_is_the_one_in_rfc_6455() {
        // RFC 6455, section 1.3.
        assert_eq!(
            accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn a_handshake_needs_each_header_a_well_formed_key_and_http_1_1() {
        let accept = |h: &HeaderMap| accept_request(&Method::GET, Version::HTTP_11, h);
        let refused = |r: Result<String, HandshakeError>| match r {
            Err(HandshakeError::Refused(e)) => e.to_string(),
            other => panic!("{other:?}"),
        };
        let mut h = HeaderMap::new();
        assert!(refused(accept(&h)).contains("Connection: upgrade"));
        h.insert(
            "connection",
            HeaderValue::from_static("keep-alive, Upgrade"),
        );
        assert!(refused(accept(&h)).contains("Upgrade: websocket"));
        h.insert("upgrade", HeaderValue::from_static("WebSocket"));
        assert!(refused(accept(&h)).contains("Version: 13"));
        h.insert("sec-websocket-version", HeaderValue::from_static("8"));
        assert!(refused(accept(&h)).contains("Version: 13"));
        h.insert("sec-websocket-version", HeaderValue::from_static("13"));
        assert!(refused(accept(&h)).contains("Key"));
        for bad in ["", "not base64!", "c2hvcnQ="] {
            h.insert("sec-websocket-key", HeaderValue::from_static(bad));
            assert!(matches!(accept(&h), Err(HandshakeError::Key)), "{bad:?}");
        }
        h.insert(
            "sec-websocket-key",
            HeaderValue::from_static("dGhlIHNhbXBsZSBub25jZQ=="),
        );
        assert_eq!(
            accept(&h).ok().as_deref(),
            Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        );
        assert!(matches!(
            accept_request(&Method::GET, Version::HTTP_10, &h),
            Err(HandshakeError::Refused(ProtocolError::WrongHttpVersion))
        ));
        assert!(matches!(
            accept_request(&Method::POST, Version::HTTP_11, &h),
            Err(HandshakeError::Refused(ProtocolError::WrongHttpMethod))
        ));
    }

    #[test]
    fn server_frames_use_the_shortest_length_that_fits() {
        assert_eq!(&text_frame("hi")[..], &[0x81, 2, b'h', b'i']);
        let mid = text_frame(&"x".repeat(300));
        assert_eq!(&mid[..4], &[0x81, 126, 0x01, 0x2C]);
        assert_eq!(mid.len(), 304);
        let big = text_frame(&"y".repeat(70_000));
        assert_eq!(&big[..2], &[0x81, 127]);
        assert_eq!(
            u64::from_be_bytes(big[2..10].try_into().expect("8 bytes")),
            70_000
        );
        assert_eq!(big.len(), 70_010);
        assert_eq!(&close_frame(1000)[..], &[0x88, 2, 0x03, 0xE8]);
        assert_eq!(&close_frame(1009)[..], &[0x88, 2, 0x03, 0xF1]);
    }
}
