//! The pages' static files (`dealer-ui/`, `src/web/status.js`), built into the binary
//! gzipped and served with an `ETag`: the panel, the players' and the public pages, and
//! the relay's lobby (`crate::relay` serves the same files).

use crate::web::api::ApiError;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

/// An embedded file by name: `build.rs` gzips each of `dealer-ui/` and `src/web/status.js`
/// into `OUT_DIR/assets/NAME.gz`.
macro_rules! embedded {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/assets/", $name, ".gz"))
    };
}

/// `(name, media type, gzipped bytes)` of an embedded file: the name is said once, as
/// [`ASSETS`] serves it and as `build.rs` wrote it.
macro_rules! asset {
    ($name:literal, $mime:expr) => {
        ($name, $mime, embedded!($name))
    };
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const TEXT: &str = "text/plain; charset=utf-8";

/// The panel's static files, built into the binary gzipped (`build.rs`: the Pi's binary
/// has a size budget, and the files shrink to about a quarter), each unpacked once on first
/// use ([`bodies`]). `(name, media type, gzipped bytes)`.
const ASSETS: &[(&str, &str, &[u8])] = &[
    asset!("index.html", HTML),
    asset!("public.html", HTML),
    asset!("lobby.html", HTML),
    asset!("lobby.js", JS),
    asset!("panel.js", JS),
    asset!("dispute.js", JS),
    asset!("play.html", HTML),
    asset!("play.js", JS),
    asset!("play-bets.js", JS),
    asset!("cues.js", JS),
    asset!("play.css", CSS),
    asset!("play-en.ftl", TEXT),
    asset!("play-de.ftl", TEXT),
    asset!("play-fr.ftl", TEXT),
    asset!("money.js", JS),
    asset!("public.js", JS),
    asset!("table.js", JS),
    asset!("trust.js", JS),
    asset!("i18n.js", JS),
    // @fluent/bundle 0.19.1, vendored (Apache-2.0; see dealer-ui/fluent-bundle.README).
    asset!("fluent-bundle.js", JS),
    asset!("messages-en.ftl", TEXT),
    asset!("style.css", CSS),
    asset!("status.js", JS),
];

/// Each embedded file unpacked, in [`ASSETS`]' order: done once, on the first request for
/// any (some 370 kB, in a few milliseconds).
fn bodies() -> &'static [String] {
    static BODIES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    BODIES.get_or_init(|| {
        ASSETS
            .iter()
            .map(|(name, _, packed)| {
                use std::io::Read;
                let mut body = String::new();
                // Infallible: the bytes are this very build's own gzip of a UTF-8 file
                // (build.rs reads each file as a string before packing it).
                flate2::read::GzDecoder::new(*packed)
                    .read_to_string(&mut body)
                    .unwrap_or_else(|e| panic!("the embedded {name} does not unpack: {e}"));
                body
            })
            .collect()
    })
}

/// Each embedded file's `ETag` (a quoted prefix of its sha256), in [`ASSETS`]' order.
fn etags() -> &'static [String] {
    static TAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TAGS.get_or_init(|| {
        use sha2::Digest;
        bodies()
            .iter()
            .map(|body| {
                let digest = sha2::Sha256::digest(body.as_bytes());
                format!("\"{}\"", hex::encode(&digest[..12]))
            })
            .collect()
    })
}

/// [`asset`], answering 304 when the browser's copy is current (`If-None-Match`): the
/// pages are revalidated on every load (`no-cache`) but sent again only after an upgrade.
pub fn cached_asset(name: &str, request: &HeaderMap) -> Response {
    let Some(i) = ASSETS.iter().position(|(n, _, _)| *n == name) else {
        return ApiError::NotFound(format!("no such file: {name}")).into_response();
    };
    let tag = &etags()[i];
    let current = request
        .get(axum::http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
    if current {
        return (
            StatusCode::NOT_MODIFIED,
            [
                (axum::http::header::ETAG, tag.as_str()),
                (axum::http::header::CACHE_CONTROL, "no-cache"),
            ],
        )
            .into_response();
    }
    let (_, mime, _) = ASSETS[i];
    (
        [
            (axum::http::header::CONTENT_TYPE, mime),
            (axum::http::header::CACHE_CONTROL, "no-cache"),
            (axum::http::header::ETAG, tag.as_str()),
        ],
        bodies()[i].as_str(),
    )
        .into_response()
}

/// An embedded `dealer-ui/` file (404 for any other name); the relay serves the same.
pub async fn asset(name: &str) -> Response {
    cached_asset(name, &HeaderMap::new())
}

/// [`asset`] for an owned name (a path parameter).
pub async fn asset_owned(name: String) -> Response {
    asset(&name).await
}
