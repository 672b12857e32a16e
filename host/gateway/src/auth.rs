//! Bearer-token authentication, compared in constant time.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::{ApiError, Gateway};

/// The token clients must present, kept as its SHA-256 so every comparison
/// takes the same time whatever the length or content of a guess.
#[derive(Clone)]
pub struct Token([u8; 32]);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// The token `secret`.
    pub fn new(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }

    /// Whether `guess` is the token.
    pub fn matches(&self, guess: &str) -> bool {
        let guess: [u8; 32] = Sha256::digest(guess.as_bytes()).into();
        self.0.ct_eq(&guess).into()
    }
}

/// Refuse a request without `Authorization: Bearer <token>` when a token is set.
pub async fn require_token(
    State(gw): State<Arc<Gateway>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(token) = &gw.token {
        let given = request
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        if !given.is_some_and(|g| token.matches(g)) {
            return ApiError::unauthorized().into_response();
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::Token;

    #[test]
    fn only_the_token_itself_matches() {
        let t = Token::new("s3cret");
        assert!(t.matches("s3cret"));
        for guess in ["", "s3cre", "s3cret ", "S3cret", "s3cretx"] {
            assert!(!t.matches(guess), "{guess:?}");
        }
    }
}
