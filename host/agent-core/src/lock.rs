//! Taking a lock whose holder may have panicked.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Lock `mutex`, taking it over if a holder panicked: every value the host
/// keeps behind a `std` mutex (counters, maps, captured output) stays valid
/// when one update is cut short, so a panic elsewhere must not take the
/// lock's other users down with it.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_taken_over() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let held = m.clone();
        let _ = std::thread::spawn(move || {
            let _guard = held.lock().unwrap();
            panic!("poison it");
        })
        .join();
        assert!(m.is_poisoned());
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 2);
    }
}
