//! The HTTP edge around the router (tower-http layers and the public gate), outermost
//! first:
//!
//! 1. `SetRequestIdLayer`: every request gets an `x-request-id` (a UUID, or the one the
//!    client sent), which the trace span carries and `PropagateRequestIdLayer` echoes.
//! 2. `TraceLayer`: one `http` span per request (method, path, request id) and its status
//!    and latency at debug level; a failed response at error level, but for a 503
//!    ([`on_failure`]).
//! 3. Security headers on every response: a CSP without inline script, `X-Frame-Options`,
//!    `Referrer-Policy`, `X-Content-Type-Options`.
//! 4. [`PublicGate`]: the cap on public requests and streams, and the connections kept
//!    free for staff.
//! 5. `TimeoutLayer`: 408 when a request is not answered in `request_timeout_ms` (body
//!    read included). Streams answer at once; their bodies are not timed.
//! 6. `RequestBodyLimitLayer`: 413 above `body_limit_bytes`, before any handler runs.
//!
//! The connection-level limits (header-read timeout, connection cap) are hyper's, in
//! `super::server`; compression and cache validators of the embedded files in `super`.

use super::api::ApiError;
use crate::metrics::{Metrics, Stream};
use crate::table::config::HttpSection;
use axum::body::HttpBody;
use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper::body::{Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Semaphore;
use tower_http::classify::ServerErrorsFailureClass;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// The pages' Content-Security-Policy: scripts only from the service's own files (no
/// inline script or handler: `dealer-ui/*.html` and the status page load theirs from
/// `/ui/`), connections only back to it (WebSocket and SSE included), never framed.
/// Inline styles stay allowed: the pages set none that carry script.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
form-action 'self'; frame-ancestors 'none'";

/// Whether `path` counts against the public cap: the route serving it (the most specific
/// pattern of the router's list, `super::route_specs`, as axum picks it) has an access
/// that counts ([`super::auth::Access::is_public`]: the remote audience's pages, feeds and
/// API, and the players' own). The panel, staff's API, the platform's routes, login and
/// health never do; nor does a path no route but the catch-all serves.
pub fn is_public(path: &str) -> bool {
    static ROUTES: std::sync::OnceLock<Vec<super::RouteSpec>> = std::sync::OnceLock::new();
    let routes = ROUTES.get_or_init(super::route_specs);
    let mut best: Option<(Vec<u8>, bool)> = None;
    for spec in routes {
        let Some(rank) = specificity(spec.path, path) else {
            continue;
        };
        let public = spec.access.is_public();
        match &mut best {
            Some((r, p)) if *r == rank => *p |= public,
            Some((r, _)) if *r > rank => {}
            _ => best = Some((rank, public)),
        }
    }
    best.is_some_and(|(_, public)| public)
}

/// How specifically `pattern` (`/api/rounds/{round}`, `/api/{*rest}`) matches `path`,
/// segment by segment (a literal 2 > a parameter 1 > a catch-all 0, as axum ranks them);
/// `None`: it does not match.
fn specificity(pattern: &str, path: &str) -> Option<Vec<u8>> {
    let mut rank = Vec::new();
    let mut segments = path.split('/');
    for want in pattern.split('/') {
        if want.starts_with("{*") {
            rank.push(0);
            return segments.next().is_some().then_some(rank);
        }
        let got = segments.next()?;
        if want.starts_with('{') {
            if got.is_empty() {
                return None;
            }
            rank.push(1);
        } else if want == got {
            rank.push(2);
        } else {
            return None;
        }
    }
    segments.next().is_none().then_some(rank)
}

/// Admits public requests while there is room, keeping staff's share free.
#[derive(Clone)]
pub struct PublicGate {
    /// Public requests and streams in flight (a permit lives as long as the response body).
    public: Arc<Semaphore>,
    max_public: usize,
    /// The server's connection permits (`super::server::ConnLimits`).
    connections: Arc<Semaphore>,
    staff_reserve: usize,
    /// `/ws/public` viewers handed to the fan-out have left the HTTP server: counted here.
    metrics: Arc<Metrics>,
}

impl PublicGate {
    /// The gate for `http`'s limits over the server's `connections`.
    pub fn new(http: &HttpSection, connections: Arc<Semaphore>, metrics: Arc<Metrics>) -> Self {
        PublicGate {
            public: Arc::new(Semaphore::new(http.max_public)),
            max_public: http.max_public,
            connections,
            staff_reserve: http.staff_reserve,
            metrics,
        }
    }

    async fn admit(self, req: Request, next: Next) -> Response {
        if !is_public(req.uri().path()) {
            return next.run(req).await;
        }
        let in_flight = self.max_public - self.public.available_permits();
        let viewers = usize::try_from(self.metrics.subscribers(Stream::PublicWs)).unwrap_or(0);
        if in_flight + viewers >= self.max_public {
            return busy("the public capacity is in use");
        }
        if self.connections.available_permits() < self.staff_reserve {
            return busy("the connections left are kept for staff");
        }
        let Ok(permit) = Arc::clone(&self.public).try_acquire_owned() else {
            return busy("the public capacity is in use");
        };
        let (parts, body) = next.run(req).await.into_parts();
        let body = Held {
            inner: body,
            _permit: permit,
        };
        Response::from_parts(parts, axum::body::Body::new(body))
    }
}

/// A response body holding a public permit: an SSE stream keeps it until it ends. Its
/// size is the inner body's, so short answers keep their `Content-Length`.
struct Held {
    inner: axum::body::Body,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl HttpBody for Held {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// 503, try again in a few seconds; the connection is closed so it frees its slot.
fn busy(why: &str) -> Response {
    let mut resp = ApiError::Unavailable(why.into()).into_response();
    let headers = resp.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// `router` with the pages' protective headers on every answer: [`CSP`] (own scripts
/// only, never framed), `X-Frame-Options: DENY` for browsers without `frame-ancestors`, no
/// referrer, no content sniffing. The table's edge, the relay and the floor's pit page use
/// the same set (issue #32 item 10), so a page of croupier is never framed or fed a script
/// from elsewhere, whichever process serves it.
pub fn page_headers<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    let header = |name: HeaderName, value: &'static str| {
        SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(value))
    };
    router
        .layer(header(header::CONTENT_SECURITY_POLICY, CSP))
        .layer(header(header::X_FRAME_OPTIONS, "DENY"))
        .layer(header(header::REFERRER_POLICY, "no-referrer"))
        .layer(header(header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
}

/// `router` with the edge's layers (see the module doc) for `http`'s settings.
pub fn layers(router: Router, http: &HttpSection, gate: PublicGate) -> Router {
    let router = router
        .layer(RequestBodyLimitLayer::new(http.body_limit_bytes))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_millis(http.request_timeout_ms),
        ))
        // The body limit's 413 and the timeout's 408 in the one error shape, too.
        .layer(axum::middleware::from_fn(super::api::json_errors))
        .layer(axum::middleware::from_fn(move |req, next| {
            gate.clone().admit(req, next)
        }));
    page_headers(router)
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    let id = req
                        .headers()
                        .get("x-request-id")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-");
                    tracing::info_span!(
                        "http",
                        method = %req.method(),
                        path = %req.uri().path(),
                        request_id = %id,
                    )
                })
                .on_failure(on_failure),
        )
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
}

/// A response tower-http classes as failed (a 5xx, or a body that failed): an error — but
/// a 503, which is the service answering as it means to (`/readyz` not ready, `/healthz`
/// stalled, the public cap, an out-of-service table refusing an input): the answer is the
/// report, `/readyz` is asked every few seconds, and what makes it 503 is logged where
/// it happens (the shoe's link, the store); so a 503 is at debug level, with the other
/// responses.
fn on_failure(class: ServerErrorsFailureClass, latency: Duration, _: &tracing::Span) {
    let ms = latency.as_millis();
    match class {
        ServerErrorsFailureClass::StatusCode(StatusCode::SERVICE_UNAVAILABLE) => {
            tracing::debug!(latency_ms = ms, "response: 503")
        }
        class => tracing::error!(classification = %class, latency_ms = ms, "response failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staff_routes_are_not_public() {
        for p in [
            "/",
            "/ui/panel.js",
            "/api/me",
            "/ws/dealer",
            "/healthz",
            "/metrics",
            "/api/play/sessions",
            "/api/rounds/7",
            "/api/disputes/3/propose",
            "/api/login",
            "/api/openapi.json",
            "/api/nothing",
            "/nothing",
        ] {
            assert!(!is_public(p), "{p}");
        }
        for p in [
            "/public",
            "/ws/public",
            "/sse/public",
            "/api/results",
            "/play",
            "/api/play/bet",
            "/api/play/behind",
            "/api/play/state",
            "/api/table-key",
            "/api/disputes/player",
        ] {
            assert!(is_public(p), "{p}");
        }
    }
}
