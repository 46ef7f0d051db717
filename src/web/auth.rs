//! Authentication and authorisation on the HTTP side.
//!
//! Every route is declared once, with its [`Access`], in `web::routes` (the router and the
//! role × endpoint test are built from that list). A route that needs a role runs
//! [`require`] first:
//!
//! - no valid credentials → 401 `unauthenticated`; a role below the route's → 403
//!   `forbidden` (both in the API's `{"error": {"code", "message"}}` form);
//! - credentials are the `croupier_session` cookie (people: the panel, seat terminals) or
//!   `Authorization: Bearer <local token>` (commands on the table's machine, see
//!   `auth::local_token`): every use of the token is the one actor `local`, and no header
//!   names an actor;
//! - CSRF: the cookie is `SameSite=Strict`, and a state-changing request (anything but
//!   GET/HEAD) authenticated by cookie must say `Content-Type: application/json`, which a
//!   cross-site form cannot send without a CORS preflight (which this server never grants).
//!
//! Handlers get the caller with the [`Principal`] extractor (401 when absent).

use super::api::{Answer, ApiError};
use super::AppState;
use crate::auth::local_token::LOCAL_ACTOR;
use crate::auth::sessions::{LoginError, COOKIE};
use crate::auth::{Principal, Role};
use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::header::{AUTHORIZATION, COOKIE as COOKIE_HEADER, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use std::net::SocketAddr;

/// Who may call a route. It also says whether a route counts against the public cap
/// (`super::edge::is_public`): `Public` and `Player` routes do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, without credentials: the remote audience's pages, feeds and API (counted
    /// against the public cap).
    Public,
    /// Anyone, without credentials, never counted against the public cap: the panel's
    /// pages and files, login, health, the API's contract.
    Open,
    /// A principal with at least this role.
    Role(Role),
    /// A remote player: the bearer token of their launch session (`play::sessions`); the
    /// handler authenticates it. Counted against the public cap.
    Player,
    /// The operator's platform: its credential as a bearer token (`croupier player
    /// platform-key`); the handler checks it.
    Platform,
}

impl Access {
    /// Whether requests to a route with this access count against the public cap.
    pub fn is_public(self) -> bool {
        matches!(self, Access::Public | Access::Player)
    }
}

/// The client's address, for the audit log (set by the server's connect info).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

impl
    axum::extract::connect_info::Connected<
        axum::serve::IncomingStream<'_, super::tcp::NoDelayListener>,
    > for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, super::tcp::NoDelayListener>) -> Peer {
        Peer(*stream.remote_addr())
    }
}

impl
    axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, super::tls::TlsListener>>
    for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, super::tls::TlsListener>) -> Peer {
        Peer(*stream.remote_addr())
    }
}

/// The peer address as text (`-` when unknown, e.g. a router driven without a server).
pub fn peer_of(extensions: &axum::http::Extensions) -> String {
    extensions
        .get::<ConnectInfo<Peer>>()
        .map_or_else(|| "-".to_string(), |c| c.0 .0.to_string())
}

fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// The caller, from a bearer local token or a session cookie; `None` without valid
/// credentials.
pub async fn authenticate(
    app: &AppState,
    headers: &HeaderMap,
) -> Result<Option<Principal>, ApiError> {
    // Any `Authorization` header is the credential: `Bearer <local token>` (the scheme
    // case-insensitive, RFC 9110) or refused — never passed over for the cookie, so a
    // wrong token with a valid cookie is a 401, not the cookie's session.
    if let Some(value) = headers.get(AUTHORIZATION) {
        let value = value.to_str().unwrap_or("").trim();
        let (scheme, token) = value.split_once(char::is_whitespace).unwrap_or((value, ""));
        let bearer = if scheme.eq_ignore_ascii_case("bearer") {
            token.trim()
        } else {
            ""
        };
        return Ok(app
            .local_token
            .as_ref()
            .filter(|t| !bearer.is_empty() && t.matches(bearer))
            // Every use of the token is one and the same actor: nothing the client sends
            // (no header, no body field) names who holds it.
            .map(|_| Principal {
                badge: LOCAL_ACTOR.into(),
                name: "local token".into(),
                role: Role::Admin,
                via: "local_token",
                actor: LOCAL_ACTOR.into(),
                session: None,
            }));
    }
    let Some(token) = cookie_value(headers, COOKIE) else {
        return Ok(None);
    };
    let Some(auth) = &app.auth else {
        return Err(ApiError::Unavailable(
            "accounts are unavailable (the database could not be opened)".into(),
        ));
    };
    match Some(token) {
        Some(token) => auth
            .session(token)
            .await
            .map_err(|e| ApiError::Unavailable(e.to_string())),
        None => Ok(None),
    }
}

/// The middleware of a route with `access`: authenticates, checks the role and the CSRF
/// rule, and puts the [`Principal`] into the request's extensions.
pub async fn require(
    access: Access,
    State(app): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let Access::Role(min) = access else {
        return next.run(req).await;
    };
    let who = match authenticate(&app, req.headers()).await {
        Ok(Some(who)) => who,
        Ok(None) => return ApiError::Unauthenticated.into_response(),
        Err(e) => return e.into_response(),
    };
    if !who.has(min) {
        tracing::warn!(badge = %who.badge, role = %who.role, path = %req.uri().path(), "forbidden: needs {min}");
        return ApiError::Forbidden(format!("this needs the {min} role; you are {}", who.role))
            .into_response();
    }
    if who.session.is_some()
        && !matches!(*req.method(), Method::GET | Method::HEAD)
        && !is_json(req.headers())
    {
        return ApiError::JsonRequired.into_response();
    }
    req.extensions_mut().insert(who);
    next.run(req).await
}

/// The media type is exactly `application/json` (parameters such as `charset` allowed):
/// not `application/jsonp`, not `application/json-seq`, nothing a plain form could send.
fn is_json(headers: &HeaderMap) -> bool {
    super::body::is_json(headers)
}

impl<S: Send + Sync> FromRequestParts<S> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Principal, ApiError> {
        parts
            .extensions
            .get::<Principal>()
            .cloned()
            .ok_or(ApiError::Unauthenticated)
    }
}

/// A login: the badge and its secret (PIN or password).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LoginBody {
    /// The badge.
    badge: String,
    /// Its PIN or password.
    secret: String,
}

/// Who a session (or the local token) belongs to.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Who {
    /// The badge (`local` for the local token).
    pub badge: String,
    /// The name.
    pub name: String,
    /// The role.
    pub role: Role,
    /// When the session ends (RFC 3339; on login).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// `session` or `local_token` (on `/api/me`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<&'static str>,
}

/// The answer to a logout.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct LoggedOut {
    /// Always true.
    pub logged_out: bool,
}

fn cookie(app: &AppState, value: &str, max_age: i64) -> HeaderValue {
    let secure = app.auth.as_ref().is_some_and(|a| a.secure_cookie());
    let text = format!(
        "{COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{}",
        if secure { "; Secure" } else { "" }
    );
    HeaderValue::from_str(&text)
        .unwrap_or_else(|_| HeaderValue::from_static("croupier_session=; Max-Age=0"))
}

/// A small request's headers and body text (at most 4 KiB: a login, a logout).
async fn body_text(req: Request) -> Result<(HeaderMap, String), ApiError> {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, 4096)
        .await
        .map_err(|e| ApiError::Malformed(format!("body: {e}")))?;
    let text = String::from_utf8(bytes.to_vec())
        .map_err(|_| ApiError::Malformed("the body is not UTF-8".into()))?;
    Ok((parts.headers, text))
}

/// `POST /api/login` `{"badge": "...", "secret": "..."}`: sets the session cookie and
/// answers who logged in.
#[utoipa::path(post, path = "/api/login", tag = "public", request_body = LoginBody,
    responses(
        (status = 200, description = "Logged in: the `croupier_session` cookie is set", body = Who,
            headers(("Set-Cookie" = String, description = "croupier_session=...; HttpOnly; SameSite=Strict"))),
        (status = 400, description = "Not a login", body = super::api::ErrorBody),
        (status = 401, description = "Badge or secret not accepted (`invalid_credentials`)", body = super::api::ErrorBody),
        (status = 415, description = "Not `Content-Type: application/json`", body = super::api::ErrorBody),
        (status = 423, description = "Too many failed attempts: locked", body = super::api::ErrorBody),
        (status = 429, description = "Too many logins at once, or failures from this address", body = super::api::ErrorBody,
            headers(("Retry-After" = u64, description = "seconds"))),
        (status = 503, description = "Accounts are unavailable", body = super::api::ErrorBody)))]
pub async fn login(State(app): State<AppState>, req: Request) -> Answer {
    let peer = peer_of(req.extensions());
    let (headers, text) = body_text(req).await?;
    let body: LoginBody =
        super::body::read(&headers, &text, r#"{"badge": "...", "secret": "..."}"#)?;
    let auth = app.auth.as_ref().ok_or_else(|| {
        ApiError::Unavailable("accounts are unavailable (the database could not be opened)".into())
    })?;
    let session = auth
        .login(body.badge.trim(), &body.secret, &peer)
        .await
        .map_err(|e| match e {
            LoginError::Invalid => ApiError::InvalidCredentials,
            LoginError::Locked { until } => ApiError::AccountLocked(until),
            LoginError::Busy => ApiError::TooManyLogins,
            LoginError::Throttled { seconds } => ApiError::TooManyAttempts(seconds),
            LoginError::Auth(e) => ApiError::Unavailable(e.to_string()),
        })?;
    // The cookie lasts the session's lifetime (its end is decided on monotonic time).
    let max_age =
        i64::try_from(auth.config().session_hours.saturating_mul(3600)).unwrap_or(i64::MAX);
    let mut resp = Json(Who {
        badge: session.principal.badge,
        name: session.principal.name,
        role: session.principal.role,
        expires_at: Some(crate::store::audit::rfc3339(session.expires_ms)),
        via: None,
    })
    .into_response();
    resp.headers_mut()
        .insert(SET_COOKIE, cookie(&app, &session.token, max_age.max(0)));
    Ok(resp)
}

/// `POST /api/logout`: ends the session (if any) and clears the cookie: 200, or 415 without
/// `Content-Type: application/json`.
#[utoipa::path(post, path = "/api/logout", tag = "public",
    request_body(content = super::api::EmptyBody, content_type = "application/json", description = super::api::EMPTY_BODY),
    responses(
        (status = 200, description = "Logged out; the cookie is cleared", body = LoggedOut),
        (status = 415, description = "Not `Content-Type: application/json`", body = super::api::ErrorBody),
        (status = 503, description = "Accounts are unavailable", body = super::api::ErrorBody)))]
pub async fn logout(State(app): State<AppState>, req: Request) -> Answer {
    let peer = peer_of(req.extensions());
    // Ending a session changes state: the same JSON-only rule as every cookie request, so
    // a cross-site form cannot log the dealer out.
    let (headers, text) = body_text(req).await?;
    let _: super::api::EmptyBody = super::body::read(&headers, &text, "{}")?;
    if let Ok(Some(who)) = authenticate(&app, &headers).await {
        if let Some(auth) = &app.auth {
            auth.logout(&who, &peer)
                .await
                .map_err(|e| ApiError::Unavailable(e.to_string()))?;
        }
    }
    let mut resp = Json(LoggedOut { logged_out: true }).into_response();
    resp.headers_mut().insert(SET_COOKIE, cookie(&app, "", 0));
    Ok(resp)
}

/// `GET /api/me`: who the session belongs to.
#[utoipa::path(get, path = "/api/me", tag = "dealer",
    responses((status = 200, description = "Who the session belongs to", body = Who)))]
pub async fn me(who: Principal) -> Response {
    Json(Who {
        badge: who.badge,
        name: who.name,
        role: who.role,
        expires_at: None,
        via: Some(who.via),
    })
    .into_response()
}
