//! A message shared by a transcript, a session's history and the model
//! requests that carry it: copied as a pointer, with its token estimate
//! computed once however many turns count it.

use std::borrow::Borrow;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{message_tokens, Message};

/// A shared, immutable [`Message`] (serialized as the message itself).
#[derive(Clone)]
pub struct SharedMessage(Arc<Inner>);

#[derive(Clone)]
struct Inner {
    message: Message,
    tokens: OnceLock<u64>,
}

impl SharedMessage {
    /// [`message_tokens`] of the message, computed on first use.
    pub fn tokens(&self) -> u64 {
        *self
            .0
            .tokens
            .get_or_init(|| message_tokens(&self.0.message))
    }

    /// Whether `a` and `b` are the same shared message.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The message to change: this one's own copy when it is shared (the
    /// others keep theirs), its estimate forgotten.
    pub fn make_mut(&mut self) -> &mut Message {
        let inner = Arc::make_mut(&mut self.0);
        inner.tokens = OnceLock::new();
        &mut inner.message
    }

    /// The message, copied only if it is still shared.
    pub fn into_inner(self) -> Message {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => inner.message,
            Err(shared) => shared.message.clone(),
        }
    }
}

impl From<Message> for SharedMessage {
    fn from(message: Message) -> Self {
        Self(Arc::new(Inner {
            message,
            tokens: OnceLock::new(),
        }))
    }
}

impl Deref for SharedMessage {
    type Target = Message;
    fn deref(&self) -> &Message {
        &self.0.message
    }
}

impl Borrow<Message> for SharedMessage {
    fn borrow(&self) -> &Message {
        self
    }
}

impl PartialEq for SharedMessage {
    fn eq(&self, other: &Self) -> bool {
        Self::ptr_eq(self, other) || **self == **other
    }
}

impl std::fmt::Debug for SharedMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for SharedMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SharedMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Message::deserialize(deserializer).map(Self::from)
    }
}

/// What the token estimate of a conversation is summed from: a message
/// (counted each time) or a shared one (counted once).
pub trait CountTokens: Borrow<Message> {
    /// Estimated tokens ([`message_tokens`]).
    fn count_tokens(&self) -> u64;
}

impl CountTokens for Message {
    fn count_tokens(&self) -> u64 {
        message_tokens(self)
    }
}

impl CountTokens for SharedMessage {
    fn count_tokens(&self) -> u64 {
        self.tokens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialized_as_the_message_and_counted_once_per_sharing() {
        let message = Message::user("a few words of text");
        let shared = SharedMessage::from(message.clone());
        assert_eq!(
            serde_json::to_string(&shared).unwrap(),
            serde_json::to_string(&message).unwrap()
        );
        let back: SharedMessage =
            serde_json::from_str(&serde_json::to_string(&message).unwrap()).unwrap();
        assert_eq!(*back, message);
        let copy = shared.clone();
        assert!(SharedMessage::ptr_eq(&shared, &copy));
        assert_eq!(copy.tokens(), message_tokens(&message));
        assert_eq!(
            shared.0.tokens.get(),
            Some(&message_tokens(&message)),
            "shared memo"
        );
        // A change makes a copy of its own and forgets the estimate.
        let mut changed = copy.clone();
        *changed.make_mut() = Message::user("other, much longer text than the first one was");
        assert!(!SharedMessage::ptr_eq(&changed, &shared));
        assert_eq!(*shared, message, "the others keep theirs");
        assert_eq!(changed.tokens(), message_tokens(&changed));
        assert_eq!(copy.into_inner(), message);
    }
}
