//! The dealer panel's own routes beside the table's: the names of the people behind the
//! audit actors the panel shows (`user:601` is "Ana Silva" to the people at the table), and
//! the touch "call supervisor", which does exactly what the button box's does.

use super::api::{Answer, ApiError, ErrorBody};
use super::AppState;
use crate::auth::{Principal, Role};
use crate::table::Command;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use croupier_drivers::buttons::{ButtonAction, ButtonEvent};
use serde::Serialize;
use tracing::info;
use utoipa::ToSchema;

/// One member of staff, as the panel names them (never a secret, a lock or a count).
#[derive(Debug, Serialize, ToSchema)]
pub struct Person {
    /// The badge: the actor `user:<badge>` at the table, `floor:<badge>` on the pit page.
    pub badge: String,
    /// The person's name.
    pub name: String,
    /// The role.
    pub role: Role,
}

/// Everyone with an account at this table.
#[derive(Debug, Serialize, ToSchema)]
pub struct Staff {
    /// By badge; disabled accounts too, since what they did stays on the record.
    pub people: Vec<Person>,
}

/// `GET /api/staff`: the staff's badges, names and roles, so the panel shows "raised by Ana
/// Silva" rather than an audit actor.
#[utoipa::path(get, path = "/api/staff", tag = "dealer",
    responses(
        (status = 200, description = "Everyone with an account, by badge", body = Staff),
        (status = 503, description = "Accounts are unavailable", body = ErrorBody)))]
pub async fn staff(State(app): State<AppState>) -> Answer {
    let auth = app
        .auth
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("accounts are not available".into()))?;
    let people = crate::auth::accounts::list(auth.pool())
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?
        .into_iter()
        .map(|u| Person {
            badge: u.badge,
            name: u.name,
            role: u.role,
        })
        .collect();
    Ok(Json(Staff { people }).into_response())
}

/// The answer to a call.
#[derive(Debug, Serialize, ToSchema)]
pub struct Called {
    /// Always true: the call went to the table, which locks it (the alarm shows).
    pub called: bool,
}

/// The pin a call from the panel is reported on: no GPIO pin is 0 on the button box (its
/// pins are BCM 2 to 27), so the table's log line tells a panel call from a box's.
const PANEL_PIN: u8 = 0;

/// `POST /api/call-supervisor`: the touch twin of the button box's call-supervisor press.
/// It sends the table the same button event, so the table raises the same
/// `supervisor_called` alarm (locked until a supervisor clears it) through the same path.
#[utoipa::path(post, path = "/api/call-supervisor", tag = "dealer",
    request_body(content = super::api::EmptyBody, content_type = "application/json", description = super::api::EMPTY_BODY),
    responses(
        (status = 200, description = "The table has the call", body = Called),
        (status = 503, description = "The table is not running", body = ErrorBody)))]
pub async fn call_supervisor(
    State(app): State<AppState>,
    who: Principal,
    _: super::body::JsonBody<super::api::EmptyBody>,
) -> Answer {
    info!(actor = %who.actor, "supervisor called from the panel");
    let press = ButtonEvent::Action {
        action: ButtonAction::CallSupervisor,
        pin: PANEL_PIN,
        long: false,
    };
    app.table
        .commands()
        .send(Command::Button(press))
        .await
        .map_err(|_| ApiError::Unavailable("the table is not running".into()))?;
    Ok(Json(Called { called: true }).into_response())
}
