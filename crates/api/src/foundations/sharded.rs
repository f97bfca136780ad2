//! A map split over a few mutexes so concurrent requests rarely wait on each other.
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use foldhash::quality::RandomState;
use std::sync::{Mutex, MutexGuard};

const SHARDS: usize = 16;

pub struct Sharded<K, V> {
    shards: Vec<Mutex<HashMap<K, V, RandomState>>>,
    hasher: RandomState,
}

impl<K: Hash + Eq, V> Default for Sharded<K, V> {
    fn default() -> Self {
        Sharded { shards: (0..SHARDS).map(|_| Mutex::new(HashMap::default())).collect(), hasher: Default::default() }
    }
}

impl<K: Hash + Eq, V> Sharded<K, V> {
    pub const SHARDS: usize = SHARDS;

    /// The locked shard holding `k` (a poisoned lock is still usable: entries are plain data).
    pub fn shard(&self, k: &K) -> MutexGuard<'_, HashMap<K, V, RandomState>> {
        self.shards[self.hasher.hash_one(k) as usize % SHARDS].lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn clear(&self) {
        for s in &self.shards {
            s.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }
}
