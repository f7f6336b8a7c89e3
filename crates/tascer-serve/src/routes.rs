//! The HTTP routes: the page (no token needed: it holds no data) and the
//! JSON API under `/api` (token required). Every route checks the `Host`.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use tascer_ledger::audit::{attest_session, verify_sessions};
use tascer_ledger::{AuditError, LedgerError};

use crate::access::{Access, require_host, require_token};
use crate::contracts::Contracts;
use crate::error::ApiError;
use crate::home::Home;
use crate::sessions::{SessionQuery, live, page};
use crate::timeline::timeline;

/// The page's HTML.
const INDEX_HTML: &str = include_str!("page/index.html");
/// The page's script.
const APP_JS: &str = include_str!("page/app.js");
/// The page's style sheet.
const STYLE_CSS: &str = include_str!("page/style.css");

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The home read.
    pub home: Arc<Home>,
    /// The contracts read.
    pub contracts: Arc<Contracts>,
}

/// The whole router: page, API, access checks.
pub fn router(state: AppState, access: Access) -> Router {
    let api = Router::new()
        .route("/api/sessions", get(list_sessions))
        .route("/api/sessions/{id}", get(session_timeline))
        .route("/api/sessions/{id}/verify", get(verify))
        .route("/api/sessions/{id}/attestation", get(attestation))
        .route("/api/live", get(live_sessions))
        .route("/api/contracts", get(contracts))
        .route("/api/openapi.json", get(openapi))
        .fallback(|| async { ApiError::not_found("no such API route (see /api/openapi.json)") })
        .layer(from_fn_with_state(access.clone(), require_token));
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
        .merge(api)
        .layer(from_fn_with_state(access, require_host))
        .with_state(state)
}

/// A static file of the page, with headers that keep the token in the
/// page (no referrer) and scripts to the page's own.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Runs `work` (store and ledger reads block) off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the request's work failed: {e}"),
        )
    })?
}

/// Every stored session, most recently updated first (none without a store).
fn all_sessions(home: &Home) -> Result<Vec<tascer_store::SessionInfo>, ApiError> {
    match home.sessions()? {
        Some(store) => store.list(usize::MAX).map_err(|e| ApiError::internal(&e)),
        None => Ok(Vec::new()),
    }
}

async fn list_sessions(
    State(state): State<AppState>,
    query: Result<Query<SessionQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    blocking(move || {
        let sessions = all_sessions(&state.home)?;
        let page = page(sessions, &query, chrono::Utc::now())?;
        Ok(Json(
            serde_json::to_value(page).map_err(|e| ApiError::internal(&e))?,
        ))
    })
    .await
}

async fn live_sessions(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    blocking(move || {
        let open = live(all_sessions(&state.home)?);
        Ok(Json(json!({
            "now": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "sessions": open,
        })))
    })
    .await
}

async fn session_timeline(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    blocking(move || {
        let (Some(store), Some(ledger)) = (state.home.sessions()?, state.home.ledger()?) else {
            return Err(ApiError::not_found(format!(
                "no session {id}: no store yet"
            )));
        };
        let timeline = timeline(&store, &ledger, &id)?;
        Ok(Json(
            serde_json::to_value(timeline).map_err(|e| ApiError::internal(&e))?,
        ))
    })
    .await
}

/// An error of `tascer verify`'s or `tascer export`'s work, as a status.
fn audit_error(err: &AuditError) -> ApiError {
    let status = match err {
        AuditError::UnknownSession { .. } | AuditError::NoDatabase { .. } => StatusCode::NOT_FOUND,
        AuditError::NoSigningKey { .. } => StatusCode::CONFLICT,
        AuditError::Session { source, .. } if matches!(**source, LedgerError::Dsse(_)) => {
            StatusCode::CONFLICT
        }
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError::new(status, tascer_core::error_chain(err))
}

async fn verify(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    blocking(move || {
        let outcome =
            verify_sessions(state.home.path(), Some(&id), None).map_err(|e| audit_error(&e))?;
        Ok(Json(json!({
            "session_id": id,
            "ok": outcome.ok,
            "report": outcome.reports.into_iter().next(),
            "lines": outcome.lines,
        })))
    })
    .await
}

async fn attestation(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    blocking(move || {
        let attestation = attest_session(state.home.path(), &id).map_err(|e| audit_error(&e))?;
        let line =
            serde_json::to_string(&attestation.envelope).map_err(|e| ApiError::internal(&e))?;
        let mut response = format!("{line}\n").into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        // The id is a stored session's (a UUID): no quote to escape, but
        // anything unexpected falls back to a plain name.
        let name = format!("attachment; filename=\"{id}.intoto.jsonl\"");
        headers.insert(
            header::CONTENT_DISPOSITION,
            HeaderValue::from_str(&name).unwrap_or_else(|_| HeaderValue::from_static("attachment")),
        );
        Ok(response)
    })
    .await
}

async fn contracts(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let view = state.contracts.view().await?;
    Ok(Json(
        serde_json::to_value(view).map_err(|e| ApiError::internal(&e))?,
    ))
}

async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}
