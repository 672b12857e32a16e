//! The sessions API: list, show, fork and delete stored sessions.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{ApiError, Gateway};

/// `?agent=` (default `main`).
#[derive(Debug, Deserialize)]
pub(crate) struct AgentQuery {
    #[serde(default)]
    agent: Option<String>,
}

/// `GET /v1/sessions?agent=main`: newest first.
pub(crate) async fn list(
    State(gw): State<Arc<Gateway>>,
    Query(q): Query<AgentQuery>,
) -> Result<Json<Value>, ApiError> {
    let agent = q.agent.as_deref().unwrap_or("main");
    let rows = gw.host.store().list(agent)?;
    Ok(Json(json!({"object": "list", "data": rows})))
}

/// `GET /v1/sessions/{agent}/{id}`: the header and every entry.
pub(crate) async fn show(
    State(gw): State<Arc<Gateway>>,
    Path((agent, id)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let t = gw.host.store().open_read_only(&agent, &id)?;
    Ok(Json(json!({
        "id": t.id(),
        "header": t.header(),
        "entries": t.entries(),
        "warnings": t.warnings(),
    })))
}

/// The fork point (default: the session's last entry).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForkBody {
    #[serde(default)]
    at: Option<String>,
}

/// `POST /v1/sessions/{agent}/{id}/fork`: the new session's id.
pub(crate) async fn fork(
    State(gw): State<Arc<Gateway>>,
    Path((agent, id)): Path<(String, String)>,
    body: Option<crate::body::ApiJson<ForkBody>>,
) -> Result<Json<Value>, ApiError> {
    let at = body.and_then(|crate::body::ApiJson(b)| b.at);
    let fork = gw.host.store().fork(&agent, &id, at.as_deref())?;
    Ok(Json(json!({"id": fork.id(), "parent_session": id})))
}

/// `DELETE /v1/sessions/{agent}/{id}`.
pub(crate) async fn delete(
    State(gw): State<Arc<Gateway>>,
    Path((agent, id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    // Not while a turn runs on it: wait for its lane.
    let _lane = gw.host.runner().lanes().enter(&id).await?;
    gw.host.store().delete(&agent, &id)?;
    Ok(StatusCode::NO_CONTENT)
}
