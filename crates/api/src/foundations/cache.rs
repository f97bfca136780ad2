//! In-process caches that are exact, not approximately fresh: an entry is used only by a request
//! that observed the write generation it was computed at (see `state::Generation`: the
//! in-process generation on SQLite, the shared one every node bumps on PostgreSQL).
//!
//! Each cache is bounded by approximate bytes (its share of `PLATFORM_CACHE_BYTES`), so a
//! node's memory stays flat however large the data grows: an entry's weight is what its
//! cache's weigh function says (bodies and keys by length, small values by a fixed estimate)
//! plus [`ENTRY`]. A put that would pass the bound first drops the entries of older
//! generations (no request can use them again), then others until a quarter of the shard is
//! free (no LRU: refills are one read; freeing a quarter at once keeps a put's cost constant). A
//! value heavier than the whole bound is not kept.
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::{Mutex, MutexGuard};

use foldhash::quality::RandomState;

const SHARDS: usize = 16;
/// Bytes an entry costs beyond its weight: the map's slot, the generation, allocator slack.
pub const ENTRY: usize = 64;

struct Shard<K, V> {
    map: HashMap<K, (u64, usize, V), RandomState>,
    bytes: usize,
}

pub struct GenCache<K, V> {
    shards: Vec<Mutex<Shard<K, V>>>,
    hasher: RandomState,
    /// Bytes per shard at most.
    per_shard: usize,
    weigh: fn(&K, &V) -> usize,
}

impl<K: Hash + Eq, V: Clone> GenCache<K, V> {
    /// A cache of at most `bytes` (approximately), entries weighed by `weigh`.
    pub fn new(bytes: usize, weigh: fn(&K, &V) -> usize) -> Self {
        GenCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard { map: HashMap::default(), bytes: 0 })).collect(),
            hasher: RandomState::default(),
            per_shard: (bytes / SHARDS).max(ENTRY),
            weigh,
        }
    }

    fn shard(&self, k: &K) -> MutexGuard<'_, Shard<K, V>> {
        self.shards[self.hasher.hash_one(k) as usize % SHARDS].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value cached for `k` if it was computed at generation `generation`.
    pub fn get(&self, k: &K, generation: u64) -> Option<V> {
        self.shard(k).map.get(k).filter(|(g, _, _)| *g == generation).map(|(_, _, v)| v.clone())
    }

    /// Stores a value computed from reads that started at `generation`.
    pub fn put(&self, k: K, generation: u64, v: V) {
        let w = (self.weigh)(&k, &v) + ENTRY;
        if w > self.per_shard {
            return;
        }
        let mut s = self.shard(&k);
        if let Some((_, old, _)) = s.map.remove(&k) {
            s.bytes -= old;
        }
        if s.bytes + w > self.per_shard {
            let Shard { map, bytes } = &mut *s;
            map.retain(|_, (g, w, _)| {
                let keep = *g == generation;
                if !keep {
                    *bytes -= *w;
                }
                keep
            });
            // Down to three quarters, not just to what this entry needs: a full shard would
            // otherwise scan every entry on every later put.
            let limit = (self.per_shard / 4 * 3).saturating_sub(w);
            map.retain(|_, (_, w, _)| {
                let keep = *bytes <= limit;
                if !keep {
                    *bytes -= *w;
                }
                keep
            });
        }
        s.bytes += w;
        s.map.insert(k, (generation, w, v));
    }

    /// Approximate bytes held.
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).bytes).sum()
    }

    pub fn clear(&self) {
        for s in &self.shards {
            let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
            s.map.clear();
            s.bytes = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{GenCache, ENTRY, SHARDS};

    #[test]
    fn entries_live_for_one_generation() {
        let c = GenCache::new(1 << 20, |_, _| 8);
        c.put("a", 1, 10);
        assert_eq!(c.get(&"a", 1), Some(10));
        assert_eq!(c.get(&"a", 2), None);
        for i in 0..100 {
            c.put(if i % 2 == 0 { "x" } else { "y" }, 3, i);
        }
        assert_eq!(c.get(&"y", 3), Some(99));
    }

    #[test]
    fn bytes_stay_within_the_bound() {
        let bound = 64 * 1024;
        let c: GenCache<u32, Vec<u8>> = GenCache::new(bound, |_, v| v.len());
        for i in 0..10_000 {
            c.put(i, 1, vec![0; 100 + (i as usize % 400)]);
            assert!(c.bytes() <= bound, "{} bytes held after {i} puts", c.bytes());
        }
        // Still caching: the latest entry is there, and many others are.
        assert_eq!(c.get(&9_999, 1).map(|v| v.len()), Some(100 + 9_999 % 400));
        let kept = (0..10_000).filter(|i| c.get(i, 1).is_some()).count();
        assert!(kept > bound / (500 + ENTRY) / 2, "{kept} entries kept");
        // A value heavier than a shard's share is not kept; replacing an entry re-weighs it.
        c.put(20_000, 1, vec![0; bound / SHARDS]);
        assert_eq!(c.get(&20_000, 1), None);
        c.put(2, 1, vec![0; 10]);
        c.put(2, 1, vec![0; 20]);
        assert_eq!(c.get(&2, 1).map(|v| v.len()), Some(20));
        c.clear();
        assert_eq!(c.bytes(), 0);
    }
}
