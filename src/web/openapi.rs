//! The API's contract, generated with `utoipa`: each handler carries its
//! `#[utoipa::path]` (path, parameters, request body, answers), the request and response
//! types derive `ToSchema`, and [`Access`] completes every operation from the router's one
//! list of routes (`super::route_specs`): no security on public routes; the session cookie
//! or the local token on staff ones, with their minimum role (`x-min-role`) and the
//! answers the auth middleware gives (401, 403, and 415 for a cookie without JSON).
//! Served at `GET /api/openapi.json`; `tests/it/schemathesis.rs` fuzzes the running binary
//! against it.
//!
//! Responses built from the table's own serialisation (snapshot, views, recalled rounds,
//! audit rows) are described as opaque JSON objects here: their shapes belong to the
//! engine and the store, which stay free of documentation dependencies.

use super::api::ErrorBody;
use super::auth::Access as RouteAccess;
use std::borrow::Cow;
use std::sync::OnceLock;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

/// What the document says about the API as a whole.
const DESCRIPTION: &str = "One table. Roles dealer < supervisor < admin (`x-min-role` per \
operation; public operations have `security: []`). Staff authenticate with the \
`croupier_session` cookie from `POST /api/login`, or the service's local token as a bearer \
token. Remote players (`/api/play/*`, tag `players`) send their launch token as a bearer \
token (`playerToken`); the operator's platform opens their sessions with its own \
credential (`platformKey`). Every error is `{\"error\": {\"code\", \"message\"}}` with a stable code, the answers \
given before a handler runs (a rejected path, query or body, 405, 413) included. A malformed \
request changes nothing. Any other `/api/...` path answers 404 `not_found`.";

#[derive(OpenApi)]
#[openapi(
    info(title = "croupier", description = DESCRIPTION),
    paths(
        super::pages::index,
        super::pages::public_page,
        super::pages::ui_file,
        super::pages::page,
        super::streams::public_ws,
        super::streams::public_sse,
        serve,
        super::api::public,
        super::api::results,
        super::table_key::table_key,
        super::auth::login,
        super::auth::logout,
        super::ops::healthz,
        super::ops::readyz,
        super::ops::metrics,
        super::auth::me,
        super::streams::dealer,
        super::api::view,
        super::api::open_betting,
        super::api::close_betting,
        super::api::place_bet,
        super::api::decision,
        super::api::shuffle,
        super::api::sim_deal,
        super::api::alarm,
        super::staff::staff,
        super::staff::call_supervisor,
        super::api::round,
        super::rounds,
        super::status,
        super::stream,
        super::input,
        super::clear,
        super::api::audit,
        super::disputes::history,
        super::disputes::raise_by_staff,
        super::disputes::raise_by_player,
        super::disputes::current,
        super::disputes::propose,
        super::disputes::confirm,
        super::disputes::withdraw,
        super::play::page,
        super::play::state,
        super::play::info::history,
        super::play::info::help,
        super::play::join,
        super::play::leave,
        super::play::seat_bets::bet,
        super::play::behind::behind,
        super::play::boxes::boxes,
        super::play::decide::decision,
        super::play::platform::open_session,
        super::play::platform::revoke_sessions,
        super::play::platform::disable_player,
    ),
    components(schemas(
        ErrorBody,
        super::api::Amount,
        super::ops::Reason,
        // Answered through response types (`IntoResponses`), which name their bodies
        // without adding them here.
        super::disputes::Raised,
        super::api::Seq,
    )),
    modifiers(&Access)
)]
struct ApiDoc;

/// The document.
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// `GET /api/openapi.json`: the document (built once).
#[utoipa::path(get, path = "/api/openapi.json", tag = "public",
    responses((status = 200, description = "This document (OpenAPI 3.1)", body = Object)))]
pub async fn serve() -> axum::response::Response {
    static JSON: OnceLock<String> = OnceLock::new();
    let text = JSON.get_or_init(|| document().to_json().unwrap_or_else(|_| "{}".into()));
    axum::response::IntoResponse::into_response((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        text.as_str(),
    ))
}

/// Completes every operation from the router's list of routes (see the module doc).
struct Access;

/// A JSON error answer.
fn error_response(description: &str) -> RefOr<utoipa::openapi::Response> {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Error")))
                .build(),
        )
        .into()
}

impl Modify for Access {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        // utoipa names a `u8` (a seat, a box, a hand) `int32` from 0: say where it ends, so
        // a value past 255 is out of contract, not a surprise 400 (issue #32 item 14).
        if let Some(RefOr::T(utoipa::openapi::schema::Schema::Object(o))) =
            components.schemas.get_mut("u8")
        {
            o.maximum = Some(255.into());
        }
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::auth::sessions::COOKIE,
                "Set by POST /api/login. State-changing requests with the cookie must send \
                 Content-Type: application/json (415 json_required otherwise).",
            ))),
        );
        components.add_security_scheme(
            "localToken",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The service's local token (<db>.token, readable by the service's \
                         user only): acts with the admin role, recorded as the actor `local`.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "playerToken",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A remote player's launch token: the `t` of the launch link \
                         (`/play#t=TOKEN`) that `croupier player add` prints or \
                         `POST /api/play/sessions` answers. Reaches the players' routes only.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "platformKey",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The operator platform's credential (`croupier player platform-key`): \
                         opens players' sessions.",
                    ))
                    .build(),
            ),
        );
        for spec in super::route_specs() {
            let Some(item) = doc.paths.paths.get_mut(spec.path) else {
                continue;
            };
            let op = match spec.method {
                "GET" => item.get.as_mut(),
                "POST" => item.post.as_mut(),
                _ => None,
            };
            let Some(op) = op else { continue };
            let responses = &mut op.responses.responses;
            if spec.method == "POST" {
                responses.insert(
                    "413".into(),
                    error_response("The body is over the limit (`too_large`)"),
                );
            }
            // Every body is read by `web::body`: JSON only, held to its schema.
            if op.request_body.is_some() {
                responses.entry("400".into()).or_insert_with(|| {
                    error_response("Not JSON, or outside the body's schema (`malformed`)")
                });
                responses.entry("415".into()).or_insert_with(|| {
                    error_response("Not `Content-Type: application/json` (`json_required`)")
                });
            }
            match spec.access {
                RouteAccess::Public | RouteAccess::Open => op.security = Some(Vec::new()),
                RouteAccess::Player | RouteAccess::Platform => {
                    let (scheme, no_token) = if spec.access == RouteAccess::Player {
                        ("playerToken", "No valid bearer token (`unauthenticated`)")
                    } else {
                        (
                            "platformKey",
                            "Not the platform's credential (`unauthenticated`)",
                        )
                    };
                    op.security = Some(vec![SecurityRequirement::new::<_, _, String>(scheme, [])]);
                    // What every players' and platform's route may answer before its
                    // own work: written once here rather than on each handler.
                    responses
                        .entry("401".into())
                        .or_insert_with(|| error_response(no_token));
                    responses.entry("404".into()).or_insert_with(|| {
                        error_response("Remote play is off at this table (`no_remote_play`)")
                    });
                    responses.entry("503".into()).or_insert_with(|| {
                        error_response(
                            "The wallet or the database did not answer (`wallet_unavailable`, \
                             `unavailable`)",
                        )
                    });
                }
                RouteAccess::Role(min) => {
                    // The token first: a bearer header is what the server reads first
                    // (`auth::authenticate`), whatever cookie comes with it.
                    op.security = Some(vec![
                        SecurityRequirement::new::<_, _, String>("localToken", []),
                        SecurityRequirement::new::<_, _, String>("session", []),
                    ]);
                    let role = ExtensionsBuilder::new()
                        .add("x-min-role", min.as_str())
                        .build();
                    match &mut op.extensions {
                        Some(ext) => ext.merge(role),
                        None => op.extensions = Some(role),
                    }
                    responses.insert(
                        "401".into(),
                        error_response("No valid session or token (`unauthenticated`)"),
                    );
                    responses.insert(
                        "403".into(),
                        error_response("The caller's role is too low (`forbidden`)"),
                    );
                    if spec.method == "POST" {
                        responses.insert(
                            "415".into(),
                            error_response(
                                "Not `Content-Type: application/json` (`json_required`): the \
                                 session cookie's rule for every POST, and every body's",
                            ),
                        );
                    }
                    // Without accounts (the database could not be opened) a cookie cannot
                    // be checked.
                    responses
                        .entry("503".into())
                        .or_insert_with(|| error_response("Accounts are unavailable"));
                }
            }
        }
    }
}

/// Opaque JSON answers: the table's own serialisation (see the module doc).
macro_rules! opaque {
    ($($(#[doc = $doc:literal])+ $name:ident: $kind:expr;)+) => {$(
        $(#[doc = $doc])+
        pub struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new()
                    .schema_type($kind)
                    .description(Some(concat!($($doc),+).trim()))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    )+};
}

opaque! {
    /// The table's full snapshot (operators: the hole card included), as `table::Snapshot` serialises.
    Snapshot: SchemaType::Type(Type::Object);
    /// The dealer panel's view (`web::view::dealer_view`).
    DealerView: SchemaType::Type(Type::Object);
    /// The public view: no hidden card (`web::view::public_view`).
    PublicView: SchemaType::Type(Type::Object);
    /// `{"state", "alarm", "broken"}`: the table's state, its alarm or null, why the store is broken or null.
    AlarmStatus: SchemaType::Type(Type::Object);
    /// One settled round's result (public).
    SettledResult: SchemaType::Type(Type::Object);
    /// One round recalled from the store: its log rows and result.
    RoundRecall: SchemaType::Type(Type::Object);
    /// One audit row, as `croupier audit export` writes it.
    AuditRow: SchemaType::Type(Type::Object);
    /// One past dispute from the store.
    DisputeRow: SchemaType::Type(Type::Object);
    /// The open dispute as the panel shows it.
    PanelDispute: SchemaType::Type(Type::Object);
    /// A proposed resolution's preview: the corrected round (redacted like the panel) and its `proposal` hash.
    ProposalPreview: SchemaType::Type(Type::Object);
    /// An engine input: `"shuffle"`, `{"card": "TD"}`, `{"bets": [...]}`, ... (an override).
    InputDoc: SchemaType::AnyValue;
}

/// The schema of an `engine::Action`: its wire names.
pub fn action_schema() -> utoipa::openapi::Object {
    use crate::engine::Action;
    let mut names: Vec<serde_json::Value> = Vec::new();
    for a in std::iter::once(Action::Hit).chain(Action::ALL) {
        if let Ok(name) = serde_json::to_value(a) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .enum_values(Some(names))
        .build()
}
