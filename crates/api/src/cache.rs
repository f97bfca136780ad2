//! In-process caches that are exact, not approximately fresh: an entry is used only while the
//! store's write generation is the one it was computed at (see `Store::generation`). They are
//! on only when this process is the database's single writer (SQLite); on a shared PostgreSQL
//! every lookup goes to the database.
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::Mutex;

const SHARDS: usize = 8;

pub struct GenCache<K, V> {
    shards: Vec<Mutex<HashMap<K, (u64, V)>>>,
    hasher: std::collections::hash_map::RandomState,
    /// Entries per shard before the shard is emptied (a bound, not an LRU: refills are cheap).
    per_shard: usize,
}

impl<K: Hash + Eq, V: Clone> GenCache<K, V> {
    pub fn new(capacity: usize) -> Self {
        GenCache {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            hasher: Default::default(),
            per_shard: (capacity / SHARDS).max(1),
        }
    }

    fn shard(&self, k: &K) -> &Mutex<HashMap<K, (u64, V)>> {
        &self.shards[self.hasher.hash_one(k) as usize % SHARDS]
    }

    /// The value cached for `k` if it was computed at generation `generation`.
    pub fn get(&self, k: &K, generation: u64) -> Option<V> {
        let map = self.shard(k).lock().unwrap_or_else(|e| e.into_inner());
        map.get(k).filter(|(g, _)| *g == generation).map(|(_, v)| v.clone())
    }

    /// Stores a value computed from reads that started at `generation`.
    pub fn put(&self, k: K, generation: u64, v: V) {
        let mut map = self.shard(&k).lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= self.per_shard {
            map.retain(|_, (g, _)| *g == generation);
            if map.len() >= self.per_shard {
                map.clear();
            }
        }
        map.insert(k, (generation, v));
    }

    pub fn clear(&self) {
        for s in &self.shards {
            s.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn entries_live_for_one_generation() {
        let c = super::GenCache::new(16);
        c.put("a", 1, 10);
        assert_eq!(c.get(&"a", 1), Some(10));
        assert_eq!(c.get(&"a", 2), None);
        for i in 0..100 {
            c.put(if i % 2 == 0 { "x" } else { "y" }, 3, i);
        }
        assert_eq!(c.get(&"y", 3), Some(99));
    }
}
