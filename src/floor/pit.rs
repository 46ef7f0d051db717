//! The pit page (`croupier floor --bind ADDR`): `/floor` and its JSON API under
//! `/floor/api/`. Every route but the page and the login needs a supervisor's session
//! (cookie `floor_session`, from the floor's own accounts, `floor::accounts`); a POST must
//! be `application/json` (a cross-site form cannot send it).
//!
//! | route | answers |
//! |---|---|
//! | `GET /floor` | the page |
//! | `POST /floor/api/login`, `/floor/api/logout` | `{badge, secret}` → the session cookie |
//! | `GET /floor/api/tables` | every table at a glance |
//! | `GET /floor/api/rounds?table=T[&round=N][&card=7H][&player=P][&last=N]` | rounds with inputs and settlements |
//! | `GET /floor/api/report?from_ms=A&to_ms=B[&table=T][&format=csv]` | the shift report |
//! | `GET /floor/api/alarms` | floor alarms |
//! | `GET /floor/api/disputes?table=T` | the table's open disputes and the resolutions that replay on its round |
//! | `GET /floor/uplot.js`, `/floor/uplot.css` | the charting library (vendored, `floor/assets/uplot/`) |
//! | `POST /floor/api/disputes` | `{table, dispute, action: "propose", resolution, reason}` or `{table, dispute, action: "confirm", proposal}`: signed and sent to the table (`publish::floor_commands`), its answer relayed |

use super::accounts::{self, AccountError};
use super::db::FloorDb;
use super::report::{self, FloorRound};
use crate::broker::subjects;
use crate::currency::Currency;
use crate::engine::Variant;
use crate::store::{LogRow, Record};
use crate::web::auth::Peer;
use async_nats::jetstream::Context;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use sqlx::Row;
use std::sync::Arc;

/// What the pit page reads.
pub struct Pit {
    /// The floor's database.
    pub db: FloorDb,
    /// The broker (the tables' latest views and stream heads).
    pub js: Context,
    /// The tables' view bucket.
    pub bucket: String,
    /// The tables' log stream prefix.
    pub log_stream: String,
    /// The key shared with the tables for dispute commands (`None`: none sent).
    pub floor_key: Option<Vec<u8>>,
    /// Whether the page is served over TLS (`--https-cert`): the cookie is then `Secure`.
    pub secure: bool,
    /// The login throttles.
    pub gate: accounts::Gate,
    /// The tables' pinned keys: a view in the bucket is shown only if its table signed it.
    pub keys: Arc<crate::trust::pinned::KeysFile>,
}

const PAGE: &str = include_str!("pit.html");
/// The page's script, a file of its own: the page's Content-Security-Policy allows no
/// inline script (`web::edge::CSP`).
const SCRIPT: &str = include_str!("pit.js");
const COOKIE: &str = "floor_session";
/// uPlot (MIT), vendored: its version and checksums are in `assets/uplot/VERSION`.
const UPLOT_JS: &str = include_str!("assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("assets/uplot/uPlot.min.css");

/// The page's routes, with the table's protective headers (`web::edge::page_headers`).
pub fn router(pit: Arc<Pit>) -> Router {
    let routes = Router::new()
        .route("/floor", get(|| async { Html(PAGE) }))
        .route(
            "/floor/pit.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    SCRIPT,
                )
            }),
        )
        .route(
            "/floor/uplot.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    UPLOT_JS,
                )
            }),
        )
        .route(
            "/floor/uplot.css",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
                    UPLOT_CSS,
                )
            }),
        )
        .route("/floor/api/login", post(login))
        .route("/floor/api/logout", post(logout))
        .route("/floor/api/me", get(me))
        .route("/floor/api/tables", get(tables))
        .route("/floor/api/rounds", get(rounds))
        .route("/floor/api/report", get(report_route))
        .route("/floor/api/alarms", get(alarms))
        .route("/floor/api/disputes", post(dispute).get(open_disputes))
        .with_state(pit);
    crate::web::edge::page_headers(routes)
}

fn error(status: StatusCode, code: &str, message: impl std::fmt::Display) -> Response {
    (
        status,
        Json(json!({"code": code, "message": message.to_string()})),
    )
        .into_response()
}

fn internal(e: impl std::fmt::Display) -> Response {
    error(StatusCode::INTERNAL_SERVER_ERROR, "internal", e)
}

fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_string())
}

/// The session's badge and token, or the 401 to answer.
async fn who(pit: &Pit, headers: &HeaderMap) -> Result<(String, String), Response> {
    let Some(token) = cookie(headers) else {
        return Err(error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "log in first",
        ));
    };
    match accounts::session(pit.db.pool(), &token).await {
        Ok(Some(badge)) => Ok((badge, token)),
        Ok(None) => Err(error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "the session has ended",
        )),
        Err(e) => Err(internal(e)),
    }
}

/// `None` for a JSON request, else the refusal to answer.
fn json_only(headers: &HeaderMap) -> Option<Response> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ct == "application/json" {
        None
    } else {
        Some(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "json_only",
            "send application/json",
        ))
    }
}

#[derive(Deserialize)]
struct LoginBody {
    badge: String,
    secret: String,
}

/// The session cookie: `Secure` when the page is served over TLS.
fn session_cookie(pit: &Pit, token: &str, max_age: Option<u32>) -> String {
    let secure = if pit.secure { "; Secure" } else { "" };
    let age = max_age.map_or_else(String::new, |s| format!("; Max-Age={s}"));
    format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/floor{secure}{age}")
}

async fn login(
    State(pit): State<Arc<Pit>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if let Some(r) = json_only(&headers) {
        return r;
    }
    let Ok(b) = serde_json::from_str::<LoginBody>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "{badge, secret} expected",
        );
    };
    match accounts::login(
        pit.db.pool(),
        &pit.gate,
        Some(peer.ip()),
        &b.badge,
        &b.secret,
    )
    .await
    {
        Ok(token) => (
            [(header::SET_COOKIE, session_cookie(&pit, &token, None))],
            Json(greeting(&pit, &b.badge).await),
        )
            .into_response(),
        Err(AccountError::BadCredentials) => error(
            StatusCode::UNAUTHORIZED,
            "bad_credentials",
            "bad badge or secret",
        ),
        Err(e @ AccountError::Locked(_)) => error(StatusCode::TOO_MANY_REQUESTS, "locked", e),
        Err(e @ AccountError::Throttled(_)) => {
            error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts", e)
        }
        Err(e) => internal(e),
    }
}

async fn logout(State(pit): State<Arc<Pit>>, headers: HeaderMap) -> Response {
    if let Some(r) = json_only(&headers) {
        return r;
    }
    let (badge, token) = match who(&pit, &headers).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    match accounts::logout(pit.db.pool(), &token, &badge).await {
        Ok(()) => (
            [(header::SET_COOKIE, session_cookie(&pit, "", Some(0)))],
            Json(json!({"ok": true})),
        )
            .into_response(),
        Err(e) => internal(e),
    }
}

/// The table's latest public view from the bucket (`None` if it never published one, or
/// the value there is not one its table signed: someone else may write to the key).
async fn view(pit: &Pit, table: &str) -> Option<Value> {
    let key = pit.keys.get(table)?;
    let stream = pit
        .js
        .get_stream_no_info(format!("KV_{}", pit.bucket))
        .await
        .ok()?;
    let m = stream
        .direct_get_last_for_subject(subjects::bucket_key(&pit.bucket, table))
        .await
        .ok()?;
    if !subjects::signed(
        &key,
        crate::trust::wire::SNAPSHOT,
        table,
        &m.payload,
        &m.headers,
    ) {
        return None;
    }
    let v: Value = serde_json::from_slice(&m.payload).ok()?;
    v.get("view").cloned()
}

/// `{badge, name}`: how the page greets a supervisor. The name is a greeting only: a
/// failed read of it leaves it out and fails nothing.
async fn greeting(pit: &Pit, badge: &str) -> Value {
    let name = accounts::name(pit.db.pool(), badge)
        .await
        .ok()
        .flatten()
        .filter(|n| !n.trim().is_empty());
    json!({"badge": badge, "name": name})
}

/// `GET /floor/api/me`: the session's supervisor (the page's first look, and its greeting
/// after a reload).
async fn me(State(pit): State<Arc<Pit>>, headers: HeaderMap) -> Response {
    match who(&pit, &headers).await {
        Ok((badge, _)) => Json(greeting(&pit, &badge).await).into_response(),
        Err(r) => r,
    }
}

async fn tables(State(pit): State<Arc<Pit>>, headers: HeaderMap) -> Response {
    if let Err(r) = who(&pit, &headers).await {
        return r;
    }
    let rows = match sqlx::query(
        "SELECT t.table_id, t.head_seq, t.stream_seq, t.head_at_ms, t.last_card_ms, t.ingested_ms, \
         (SELECT count(*) FROM floor_alarms a WHERE a.table_id = t.table_id) AS alarms, \
         o.disputes, o.first_dispute \
         FROM floor_tables t CROSS JOIN LATERAL (SELECT count(*) AS disputes, \
          min(d.seq) AS first_dispute FROM floor_history d WHERE d.table_id = t.table_id \
          AND d.kind = 'dispute' AND NOT EXISTS (SELECT 1 FROM floor_history r \
          WHERE r.table_id = d.table_id AND r.kind = 'resolve' \
          AND (r.payload::jsonb->>'dispute')::bigint = d.seq)) o \
         ORDER BY t.table_id",
    )
    .fetch_all(pit.db.pool())
    .await
    {
        Ok(r) => r,
        Err(e) => return internal(e),
    };
    let mut out = Vec::new();
    for r in rows {
        let table: String = r.get("table_id");
        let head: i64 = r.get("head_seq");
        let stream_seq: i64 = r.get("stream_seq");
        let view = view(&pit, &table).await;
        // Rows on the broker the floor does not hold yet.
        let on_broker = match pit
            .js
            .get_stream(subjects::stream(&pit.log_stream, &table))
            .await
        {
            Ok(mut s) => s.info().await.ok().map(|i| i.state.last_sequence),
            Err(_) => None,
        };
        out.push(json!({
            "table": table,
            "name": view.as_ref().and_then(|v| v.get("name")).cloned(),
            "game": view.as_ref().and_then(|v| v.get("variant")).cloned(),
            // The game as people call it, where the floor knows it (a built-in variant's
            // `name`); a variant of the operator's own has only its id here.
            "game_name": view
                .as_ref()
                .and_then(|v| v.get("variant"))
                .and_then(Value::as_str)
                .and_then(Variant::built_in_name),
            "state": view.as_ref().and_then(|v| v.get("state")).cloned(),
            "round": view.as_ref().and_then(|v| v.pointer("/round/number")).cloned(),
            "currency": view.as_ref().and_then(|v| v.get("currency")).cloned(),
            "rows": head,
            "alarms": r.get::<i64, _>("alarms"),
            "open_disputes": r.get::<i64, _>("disputes"),
            "dispute": r.get::<Option<i64>, _>("first_dispute"),
            "last_card_ms": r.get::<Option<i64>, _>("last_card_ms"),
            "last_row_ms": r.get::<i64, _>("head_at_ms"),
            "ingested_ms": r.get::<i64, _>("ingested_ms"),
            // Messages, not rows: a branch publishes row numbers again.
            "lag_rows": on_broker.map(|b| b.saturating_sub(u64::try_from(stream_seq.max(head)).unwrap_or(0))),
        }));
    }
    Json(Value::Array(out)).into_response()
}

/// `table`'s history as the floor holds it, from row 1: along its current branch, without
/// the rows a branch superseded (`floor_history`).
async fn log(pit: &Pit, table: &str) -> Result<Vec<LogRow>, Response> {
    let rows = sqlx::query(
        "SELECT seq, at_ms, hash, payload FROM floor_history WHERE table_id = $1 ORDER BY seq",
    )
    .bind(table)
    .fetch_all(pit.db.pool())
    .await
    .map_err(internal)?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let seq: i64 = r.get("seq");
        let payload: String = r.get("payload");
        let record: Record = serde_json::from_str(&payload).map_err(|e| {
            error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "unreadable_row",
                format!("{table} row {seq}: {e}"),
            )
        })?;
        let hash: Vec<u8> = r.get("hash");
        out.push(LogRow {
            seq: u64::try_from(seq).unwrap_or(0),
            at_ms: r.get("at_ms"),
            hash: hex::encode(hash),
            record,
        });
    }
    Ok(out)
}

/// A table's rounds, folded from its rows with its game's rules (named by its view).
async fn table_rounds(pit: &Pit, table: &str) -> Result<Vec<FloorRound>, Response> {
    Ok(table_history(pit, table).await?.rounds)
}

/// A table's rows, its rounds folded from them, the table as they leave it and its
/// currency.
struct History {
    rows: Vec<LogRow>,
    rounds: Vec<FloorRound>,
    follower: crate::table::Follower,
    snapshot: Option<Arc<crate::table::Snapshot>>,
    currency: Currency,
}

/// The currency a table's view names (the euro for a view from before views carried one).
fn view_currency(view: &Value) -> Currency {
    let code = view.pointer("/currency/code").and_then(Value::as_str);
    let exponent = view
        .pointer("/currency/exponent")
        .and_then(Value::as_u64)
        .and_then(|e| u8::try_from(e).ok());
    code.and_then(|c| Currency::new(c, exponent).ok())
        .unwrap_or_default()
}

/// A table's rows and its rounds folded from them.
async fn table_history(pit: &Pit, table: &str) -> Result<History, Response> {
    let view = view(pit, table).await;
    let currency = view.as_ref().map(view_currency).unwrap_or_default();
    let game = view
        .and_then(|v| v.get("variant").and_then(Value::as_str).map(str::to_string))
        .ok_or_else(|| {
            error(
                StatusCode::NOT_FOUND,
                "unknown_table",
                format!("table {table} has published no view"),
            )
        })?;
    let variant = match Variant::built_in(&game) {
        Some(Ok(v)) => Arc::new(v),
        _ => {
            return Err(error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "variant_unknown",
                format!("table {table} plays {game:?}, not a built-in game"),
            ))
        }
    };
    let rows = log(pit, table).await?;
    let folded = report::fold(table, &game, variant, &rows, &currency)
        .map_err(|e| error(StatusCode::UNPROCESSABLE_ENTITY, "does_not_replay", e))?;
    Ok(History {
        rows,
        rounds: folded.rounds,
        follower: folded.follower,
        snapshot: folded.snapshot,
        currency,
    })
}

#[derive(Deserialize)]
struct RoundsQuery {
    table: String,
    round: Option<u64>,
    card: Option<String>,
    player: Option<String>,
    last: Option<usize>,
}

async fn rounds(
    State(pit): State<Arc<Pit>>,
    headers: HeaderMap,
    Query(q): Query<RoundsQuery>,
) -> Response {
    if let Err(r) = who(&pit, &headers).await {
        return r;
    }
    let all = match table_rounds(&pit, &q.table).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let mut found: Vec<&FloorRound> = all
        .iter()
        .filter(|r| q.round.is_none_or(|n| r.round == n))
        .filter(|r| report::matches(r, q.card.as_deref(), q.player.as_deref()))
        .collect();
    let last = q.last.unwrap_or(50);
    if found.len() > last {
        found.drain(..found.len() - last);
    }
    Json(json!(found)).into_response()
}

#[derive(Deserialize)]
struct ReportQuery {
    table: Option<String>,
    from_ms: i64,
    to_ms: i64,
    format: Option<String>,
    /// The charts' slice width (default: the shift in 24, a whole minute, at least one).
    slice_ms: Option<i64>,
}

/// The shift `[from_ms, to_ms)` cut into about 24 slices of whole minutes.
fn default_slice_ms(from_ms: i64, to_ms: i64) -> i64 {
    const MINUTE: i64 = 60_000;
    (((to_ms - from_ms).max(0) / 24 + MINUTE - 1) / MINUTE).max(1) * MINUTE
}

async fn report_route(
    State(pit): State<Arc<Pit>>,
    headers: HeaderMap,
    Query(q): Query<ReportQuery>,
) -> Response {
    let (badge, _) = match who(&pit, &headers).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let names: Vec<String> = match &q.table {
        Some(t) => vec![t.clone()],
        None => match sqlx::query_scalar("SELECT table_id FROM floor_tables ORDER BY table_id")
            .fetch_all(pit.db.pool())
            .await
        {
            Ok(n) => n,
            Err(e) => return internal(e),
        },
    };
    let slice_ms = q
        .slice_ms
        .unwrap_or_else(|| default_slice_ms(q.from_ms, q.to_ms))
        // At most some 1,000 slices whatever is asked: the charts have no use for more.
        .max(1_000)
        .max((q.to_ms - q.from_ms) / 1_000);
    let mut reports = Vec::new();
    for t in &names {
        match table_history(&pit, t).await {
            Ok(h) => {
                let steps = report::clock_steps(&h.rows);
                let r = report::report(t, &h.rounds, &steps, (q.from_ms, q.to_ms), slice_ms);
                reports.push((r, h.currency));
            }
            Err(r) if q.table.is_some() => return r,
            Err(_) => {}
        }
    }
    if q.format.as_deref() == Some("csv") {
        let detail = format!("{} from {} to {}", names.join(" "), q.from_ms, q.to_ms);
        if let Err(e) = accounts::audit(pit.db.pool(), &badge, "report_export", &detail).await {
            return internal(e);
        }
        return (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"floor-report.csv\"",
                ),
            ],
            report::csv(
                &reports.into_iter().map(|(r, _)| r).collect::<Vec<_>>(),
                q.from_ms,
                q.to_ms,
            ),
        )
            .into_response();
    }
    let out: Vec<Value> = reports
        .iter()
        .map(|(r, currency)| {
            let mut v = json!(r);
            v["hold_percent"] = json!((r.hold_percent() * 100.0).round() / 100.0);
            v["hold_margin"] = json!(r.hold_margin().map(|m| (m * 100.0).round() / 100.0));
            v["total_handle"] = json!(r.total_handle());
            v["total_result"] = json!(r.total_result());
            v["currency"] = json!(currency);
            v
        })
        .collect();
    Json(Value::Array(out)).into_response()
}

async fn alarms(State(pit): State<Arc<Pit>>, headers: HeaderMap) -> Response {
    if let Err(r) = who(&pit, &headers).await {
        return r;
    }
    match sqlx::query(
        "SELECT table_id, seq, kind, detail, raised_ms FROM floor_alarms ORDER BY id DESC LIMIT 200",
    )
    .fetch_all(pit.db.pool())
    .await
    {
        Ok(rows) => Json(Value::Array(
            rows.iter()
                .map(|r| {
                    json!({
                        "table": r.get::<String, _>("table_id"),
                        "seq": r.get::<i64, _>("seq"),
                        "kind": r.get::<String, _>("kind"),
                        "detail": r.get::<String, _>("detail"),
                        "raised_ms": r.get::<i64, _>("raised_ms"),
                    })
                })
                .collect(),
        ))
        .into_response(),
        Err(e) => internal(e),
    }
}

#[derive(Deserialize)]
struct DisputeBody {
    table: String,
    dispute: u64,
    #[serde(flatten)]
    action: crate::publish::floor_commands::Action,
}

/// A supervisor's dispute command, signed and sent to the table; its answer relayed (200
/// applied or previewed, 409 refused by the table, 503 no answer).
async fn dispute(State(pit): State<Arc<Pit>>, headers: HeaderMap, body: String) -> Response {
    if let Some(r) = json_only(&headers) {
        return r;
    }
    let (badge, _) = match who(&pit, &headers).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let Some(key) = &pit.floor_key else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "no_floor_key",
            "the floor was started without --floor-key",
        );
    };
    let b: DisputeBody = match serde_json::from_str(&body) {
        Ok(b) => b,
        Err(e) => return error(StatusCode::BAD_REQUEST, "bad_request", e),
    };
    let what = match &b.action {
        crate::publish::floor_commands::Action::Propose { .. } => "dispute_propose",
        crate::publish::floor_commands::Action::Confirm { .. } => "dispute_confirm",
    };
    let command =
        crate::publish::floor_commands::Command::sign(key, &b.table, b.dispute, &badge, b.action);
    let payload = match serde_json::to_vec(&command) {
        Ok(p) => p,
        Err(e) => return internal(e),
    };
    let reply = match pit
        .js
        .client()
        .request(
            crate::publish::floor_commands::subject(&b.table),
            payload.into(),
        )
        .await
    {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "table_unreachable",
                format!("table {}: {e}", b.table),
            )
        }
    };
    let answer: Value = serde_json::from_slice(&reply.payload).unwrap_or(Value::Null);
    let ok = answer["ok"] == json!(true);
    let detail = format!(
        "table {} dispute {}: {}",
        b.table,
        b.dispute,
        if ok {
            "ok"
        } else {
            answer["code"].as_str().unwrap_or("refused")
        }
    );
    if let Err(e) = accounts::audit(pit.db.pool(), &badge, what, &detail).await {
        return internal(e);
    }
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::CONFLICT
    };
    (status, Json(answer)).into_response()
}

#[derive(Deserialize)]
struct DisputesQuery {
    table: String,
}

/// Every card code, for the corrections that replay.
fn every_card() -> Vec<crate::cards::Card> {
    "A23456789TJQK"
        .chars()
        .flat_map(|r| "SHDC".chars().map(move |s| format!("{r}{s}")))
        .filter_map(|c| c.parse().ok())
        .collect()
}

/// A table's open disputes (raised, not yet resolved, along its current branch) and the
/// resolutions that replay on its round as the floor's rows leave it — what the table
/// checks before it previews one (`Follower::replays`), so the page offers nothing the
/// table would refuse as not replaying. A card's correction lists the cards it may become.
async fn open_disputes(
    State(pit): State<Arc<Pit>>,
    headers: HeaderMap,
    Query(q): Query<DisputesQuery>,
) -> Response {
    use crate::table::dispute::Resolution;
    if let Err(r) = who(&pit, &headers).await {
        return r;
    }
    let h = match table_history(&pit, &q.table).await {
        Ok(h) => h,
        Err(r) => return r,
    };
    let mut open: Vec<Value> = Vec::new();
    for row in &h.rows {
        match &row.record {
            Record::Dispute(d) => open.push(json!({
                "dispute": row.seq, "round": d.round, "seat": d.seat, "reason": d.reason,
                "by": d.by, "origin": d.origin.as_str(), "at_ms": row.at_ms,
            })),
            Record::Resolve(r) => {
                open.retain(|d| d["dispute"].as_u64() != Some(r.dispute));
            }
            _ => {}
        }
    }
    let replays = |r: &Resolution| h.follower.replays(r).is_ok();
    let mut options: Vec<Value> = [
        (Resolution::Reject, "Reject: play on as dealt"),
        (Resolution::UndoDecision, "Undo the last decision"),
        (Resolution::Cancel, "Cancel the round: every stake back"),
    ]
    .into_iter()
    .filter(|(r, _)| replays(r))
    .map(|(r, label)| json!({"label": label, "resolution": r}))
    .collect();
    // The round's cards as the dealer panel lists them: the face-down hole card, which
    // nobody can name, is never among them.
    let cards = h
        .snapshot
        .as_deref()
        .and_then(crate::web::view::panel_dispute)
        .map(|d| d.cards)
        .unwrap_or_default();
    let every = every_card();
    for place in &cards {
        let Some(card) = place.card else { continue };
        let index = place.index;
        let void = Resolution::Void { index, card };
        if replays(&void) {
            options.push(json!({
                "label": format!("Void {card} ({})", place.place.as_deref().unwrap_or("held")),
                "resolution": void, "card": card.to_string(), "place": place.place,
            }));
        }
        let to: Vec<String> = every
            .iter()
            .filter(|to| {
                **to != card
                    && replays(&Resolution::Correct {
                        index,
                        card,
                        to: **to,
                    })
            })
            .map(ToString::to_string)
            .collect();
        if !to.is_empty() {
            options.push(json!({
                "label": format!("Correct {card} ({})", place.place.as_deref().unwrap_or("held")),
                "resolution": {"op": "correct", "index": index, "card": card.to_string()},
                "card": card.to_string(), "place": place.place, "to": to,
            }));
        }
    }
    Json(json!({
        "table": q.table,
        "currency": h.currency,
        "disputes": open,
        "options": if open.is_empty() { Vec::new() } else { options },
    }))
    .into_response()
}
