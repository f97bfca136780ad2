//! In-process caches that are exact, not approximately fresh: an entry is used only by a request
//! that observed the write generation it was computed at (see `state::Generation`: the
//! in-process generation on SQLite, the shared one every node bumps on PostgreSQL).
use std::hash::Hash;

use crate::sharded::Sharded;

pub struct GenCache<K, V> {
    map: Sharded<K, (u64, V)>,
    /// Entries per shard before the shard is emptied (a bound, not an LRU: refills are cheap).
    per_shard: usize,
}

impl<K: Hash + Eq, V: Clone> GenCache<K, V> {
    pub fn new(capacity: usize) -> Self {
        GenCache { map: Sharded::default(), per_shard: (capacity / Sharded::<K, (u64, V)>::SHARDS).max(1) }
    }

    /// The value cached for `k` if it was computed at generation `generation`.
    pub fn get(&self, k: &K, generation: u64) -> Option<V> {
        self.map.shard(k).get(k).filter(|(g, _)| *g == generation).map(|(_, v)| v.clone())
    }

    /// Stores a value computed from reads that started at `generation`.
    pub fn put(&self, k: K, generation: u64, v: V) {
        let mut map = self.map.shard(&k);
        if map.len() >= self.per_shard {
            map.retain(|_, (g, _)| *g == generation);
            if map.len() >= self.per_shard {
                map.clear();
            }
        }
        map.insert(k, (generation, v));
    }

    pub fn clear(&self) {
        self.map.clear();
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
