//! Turns per client: one client (an IP address) runs at most
//! `gateway.limits.maxTurnsPerClient` turns at once; one more is refused
//! with a 429 until one ends.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiError, Gateway};

/// The turns each client runs.
#[derive(Debug)]
pub struct Clients {
    max: usize,
    running: Mutex<HashMap<IpAddr, usize>>,
}

/// One turn of a client, held until the turn ends (clones share it).
#[derive(Debug, Clone)]
pub struct TurnSlot(#[allow(dead_code)] Arc<Slot>);

#[derive(Debug)]
struct Slot {
    clients: Arc<Clients>,
    ip: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = self.clients.lock();
        if let Some(n) = running.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                running.remove(&self.ip);
            }
        }
    }
}

impl Clients {
    /// At most `max` turns per client.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            running: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        clawhost_agent_core::lock(&self.running)
    }

    /// A slot for one more turn of `ip`, unless it runs as many as it may.
    pub fn take(self: &Arc<Self>, ip: IpAddr) -> Result<TurnSlot, ApiError> {
        let mut running = self.lock();
        let n = running.entry(ip).or_default();
        if *n >= self.max {
            return Err(ApiError::too_many_turns(self.max));
        }
        *n += 1;
        Ok(TurnSlot(Arc::new(Slot {
            clients: self.clone(),
            ip,
        })))
    }
}

/// The middleware of the routes that start a turn: the handler finds the
/// client's [`TurnSlot`] among the request's extensions.
pub(crate) async fn one_turn(
    State(gw): State<Arc<Gateway>>,
    mut request: Request,
    next: Next,
) -> Response {
    let ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
    match gw.clients.take(ip) {
        Ok(slot) => {
            request.extensions_mut().insert(slot);
            next.run(request).await
        }
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_past_its_turns_waits_for_one_to_end() {
        let clients = Clients::new(2);
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let b = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let first = clients.take(a).unwrap();
        let second = clients.take(a).unwrap();
        assert!(clients.take(a).is_err());
        assert!(clients.take(b).is_ok(), "another client is not held back");
        let shared = second.clone();
        drop(second);
        assert!(clients.take(a).is_err(), "a clone still holds the slot");
        drop((first, shared));
        assert!(clients.take(a).is_ok());
        assert!(clients.lock().get(&a).is_none_or(|n| *n <= 1));
    }
}
