//! `croupier alarm …`: commands sent to the running service's API (not to its
//! database: clearing an alarm is the table's own decision, taken in its log).

use super::args::load_config;
use super::fail;
use super::user::read_secret;
use clap::Subcommand;
use croupier::web::client;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `croupier alarm …`.
#[derive(Subcommand)]
pub enum AlarmCommand {
    /// Clears the table's alarm (POST /api/alarm/clear): the refused and held cards are
    /// voided and the table takes inputs again. Needs the supervisor role: by default it
    /// uses the service's local token (`<db>.token`, readable by the service's user only);
    /// with --badge it logs in as that person (secret on the terminal or --secret-stdin).
    Clear {
        /// Why it may be cleared (recorded in the event log and the audit log).
        #[arg(long)]
        reason: String,
        /// Log in with this badge instead of using the local token.
        #[arg(long)]
        badge: Option<String>,
        /// With --badge: read the secret from the first line of stdin.
        #[arg(long)]
        secret_stdin: bool,
        /// The database whose local token to use, instead of the config's store.path.
        #[arg(long)]
        db: Option<PathBuf>,
        /// The table configuration whose http.bind to talk to (default: built-in); with
        /// [http.tls] the command speaks HTTPS, trusting exactly its certificate.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The service's address (host:port), instead of the config's http.bind.
        #[arg(long)]
        addr: Option<String>,
    },
}

/// `croupier alarm …`: exit 0 when the service did it, 2 when it refused or was not
/// reached.
pub async fn alarm_command(command: AlarmCommand) -> ExitCode {
    match command {
        AlarmCommand::Clear {
            reason,
            badge,
            secret_stdin,
            db,
            config,
            addr,
        } => {
            alarm_clear(
                reason,
                config,
                addr,
                Credentials {
                    badge,
                    secret_stdin,
                    db,
                },
            )
            .await
        }
    }
}

/// How `croupier alarm clear` authenticates.
struct Credentials {
    /// Log in as this badge (else the local token).
    badge: Option<String>,
    /// With a badge: the secret on stdin.
    secret_stdin: bool,
    /// The database whose local token to read.
    db: Option<PathBuf>,
}

/// `croupier alarm clear`. With `[http.tls]` in the configuration it speaks HTTPS and
/// trusts exactly the configured certificate (`web::client::Endpoint::pinned`): TLS mode
/// has no plain listener.
async fn alarm_clear(
    reason: String,
    config: Option<PathBuf>,
    addr: Option<String>,
    credentials: Credentials,
) -> ExitCode {
    let loaded = match load_config(config.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let addr = addr.unwrap_or(loaded.http.bind.clone());
    let endpoint = match &loaded.http.tls {
        Some(tls) => match client::Endpoint::pinned(&addr, &tls.cert) {
            Ok(e) => e,
            Err(e) => return fail(format!("http.tls: {e}")),
        },
        None => client::Endpoint::plain(&addr),
    }
    .timeout(Duration::from_secs(10));
    let db = credentials.db.unwrap_or(loaded.store.path.clone());
    // The credentials: a session cookie from a login, or the local token (recorded as the
    // one actor `local`: nothing sent names who holds it).
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut logged_in = false;
    let mut used_token = false;
    if let Some(badge) = &credentials.badge {
        let secret = match read_secret(credentials.secret_stdin, false) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
        match endpoint.send("POST", "/api/login", Some(&body), &[]).await {
            Ok(reply) if reply.status == 200 => match reply.session_cookie() {
                Some(cookie) => {
                    headers.push(("Cookie".into(), cookie));
                    logged_in = true;
                }
                None => return fail(format!("{addr}: the login set no session cookie")),
            },
            Ok(reply) => {
                return fail(format!(
                    "{addr}: login {}",
                    api_error(reply.status, &reply.body)
                ))
            }
            Err(e) => return fail(format!("cannot reach the table service: {e}")),
        }
    } else if let Ok(token) = croupier::auth::local_token::read(&db) {
        used_token = true;
        headers.push(("Authorization".into(), format!("Bearer {token}")));
    }
    // Without either, the request goes out anyway: the service's 401 (or its absence)
    // says more than a guess here.
    let header_refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let body = serde_json::json!({ "reason": reason }).to_string();
    let result = endpoint
        .send("POST", "/api/alarm/clear", Some(&body), &header_refs)
        .await;
    if logged_in {
        let _ = endpoint
            .send("POST", "/api/logout", None, &header_refs)
            .await;
    }
    match result {
        Ok(reply) if reply.status == 200 => {
            let seq = serde_json::from_str::<serde_json::Value>(&reply.body)
                .ok()
                .and_then(|v| v["seq"].as_u64());
            match seq {
                Some(seq) => println!("alarm cleared (log row {seq})"),
                None => println!("alarm cleared"),
            }
            ExitCode::SUCCESS
        }
        Ok(reply) if reply.status == 401 => {
            let token = croupier::auth::local_token::path_for(&db);
            let why = if logged_in {
                "the session was refused".to_string()
            } else if used_token {
                format!(
                    "the service refused the local token read from {}: is it the database this \
                     service runs on (--config / --db)?",
                    token.display()
                )
            } else {
                format!(
                    "no readable local token at {}; run as the service's user or use --badge",
                    token.display()
                )
            };
            fail(format!(
                "{addr}: {} ({why})",
                api_error(reply.status, &reply.body)
            ))
        }
        Ok(reply) => fail(format!("{addr}: {}", api_error(reply.status, &reply.body))),
        Err(e) => fail(format!("cannot reach the table service: {e}")),
    }
}

/// An API refusal for people: its message and code (`{"error": {"code", "message"}}`),
/// or the status and body as they came when the body is not the API's error shape.
fn api_error(status: u16, body: &str) -> String {
    let v: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let e = v.as_ref().map(|v| &v["error"]);
    match (
        e.and_then(|e| e["message"].as_str()),
        e.and_then(|e| e["code"].as_str()),
    ) {
        (Some(message), Some(code)) => format!("refused: {message} ({code}, HTTP {status})"),
        _ => format!("HTTP {status}: {}", body.trim()),
    }
}
