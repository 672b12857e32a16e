//! Errors in the OpenAI wire shape (`{"error": {"message", "type", "code"}}`),
//! which the official clients turn into their typed exceptions.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// An error answered to a client.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    kind: &'static str,
    code: Option<&'static str>,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            code: None,
            message: message.into(),
        }
    }

    /// 400: the request is not one the gateway can serve.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    /// 401: no token, or the wrong one.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "this gateway needs `Authorization: Bearer <gateway.auth.token>`",
        )
    }

    /// A 4xx with OpenAI's `invalid_request_error` type and a `code` that
    /// names the rule (`host_not_allowed`, `too_many_messages` …).
    pub fn refused(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        let mut e = Self::new(status, "invalid_request_error", message);
        e.code = Some(code);
        e
    }

    /// 429: the client runs as many turns as it may.
    pub fn too_many_turns(max: usize) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            format!("this client already runs {max} turns (gateway.limits.maxTurnsPerClient); wait for one to end"),
        );
        e.code = Some("too_many_turns");
        e
    }

    /// 404: no such agent, session or entry.
    pub fn not_found(message: impl Into<String>) -> Self {
        let mut e = Self::new(StatusCode::NOT_FOUND, "invalid_request_error", message);
        e.code = Some("not_found");
        e
    }

    /// 409: the operation could not be done in the host's present state.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict_error", message)
    }

    /// 503: the session store cannot be reached now; retry later.
    pub fn unavailable(message: impl Into<String>) -> Self {
        let mut e = Self::new(StatusCode::SERVICE_UNAVAILABLE, "server_error", message);
        e.code = Some("store_unavailable");
        e
    }

    /// 500: the turn or the store failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error", message)
    }

    /// The JSON body (also sent as an SSE event when a stream fails).
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {
            "message": self.message,
            "type": self.kind,
            "param": null,
            "code": self.code,
        }})
    }
}

impl From<clawhost_sessions::SessionError> for ApiError {
    fn from(e: clawhost_sessions::SessionError) -> Self {
        use clawhost_sessions::SessionError as E;
        match e {
            E::NotFound { .. } | E::NoEntry { .. } => Self::not_found(e.to_string()),
            E::BadId(_) => Self::bad_request(e.to_string()),
            E::NeedsRepair { .. } | E::Conflict { .. } => Self::conflict(e.to_string()),
            E::Unavailable(_) => Self::unavailable(e.to_string()),
            _ => Self::internal(e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body())).into_response()
    }
}
