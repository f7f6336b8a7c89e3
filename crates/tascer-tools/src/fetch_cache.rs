//! WebFetch's answers kept for a while: a small least-recently-used cache
//! keyed by URL and prompt, whose entries expire.

use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;

/// How long an answer is reused (Claude Code keeps fetched pages 15
/// minutes).
pub(crate) const FETCH_CACHE_TTL: Duration = Duration::from_secs(15 * 60);
/// Most answers kept; the least recently used goes first.
pub(crate) const FETCH_CACHE_ENTRIES: usize = 64;

/// One kept answer: the tool's text and raw output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CachedFetch {
    pub text: String,
    pub raw: Value,
}

#[derive(Debug)]
struct Entry {
    url: String,
    prompt: String,
    stored: Instant,
    value: CachedFetch,
}

/// The cache; entries are ordered from least to most recently used.
#[derive(Debug)]
pub(crate) struct FetchCache {
    entries: Mutex<Vec<Entry>>,
    capacity: usize,
    ttl: Duration,
}

impl FetchCache {
    /// A cache of at most `capacity` answers, each kept for `ttl`.
    pub(crate) fn new(capacity: usize, ttl: Duration) -> Self {
        FetchCache {
            entries: Mutex::new(Vec::new()),
            capacity,
            ttl,
        }
    }

    /// The fresh answer for `url` and `prompt`, marked as just used.
    pub(crate) fn get(&self, url: &str, prompt: &str) -> Option<CachedFetch> {
        let mut entries = self.entries.lock();
        let ttl = self.ttl;
        entries.retain(|e| e.stored.elapsed() < ttl);
        let at = entries
            .iter()
            .position(|e| e.url == url && e.prompt == prompt)?;
        let entry = entries.remove(at);
        let value = entry.value.clone();
        entries.push(entry);
        Some(value)
    }

    /// Keeps `value` for `url` and `prompt`, dropping the least recently
    /// used answer when full.
    pub(crate) fn put(&self, url: &str, prompt: &str, value: CachedFetch) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock();
        entries.retain(|e| !(e.url == url && e.prompt == prompt));
        while entries.len() >= self.capacity {
            entries.remove(0);
        }
        entries.push(Entry {
            url: url.to_string(),
            prompt: prompt.to_string(),
            stored: Instant::now(),
            value,
        });
    }
}

impl Default for FetchCache {
    fn default() -> Self {
        FetchCache::new(FETCH_CACHE_ENTRIES, FETCH_CACHE_TTL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> CachedFetch {
        CachedFetch {
            text: text.into(),
            raw: Value::Null,
        }
    }

    #[test]
    fn keyed_by_url_and_prompt_and_bounded() {
        let cache = FetchCache::new(2, FETCH_CACHE_TTL);
        cache.put("u1", "p", answer("a"));
        cache.put("u2", "p", answer("b"));
        assert_eq!(cache.get("u1", "p"), Some(answer("a")));
        assert_eq!(cache.get("u1", "other"), None);
        // u2 is now the least recently used: a third answer drops it.
        cache.put("u3", "p", answer("c"));
        assert_eq!(cache.get("u2", "p"), None);
        assert_eq!(cache.get("u1", "p"), Some(answer("a")));
        assert_eq!(cache.get("u3", "p"), Some(answer("c")));
    }

    #[test]
    fn entries_expire() {
        let cache = FetchCache::new(4, Duration::ZERO);
        cache.put("u", "p", answer("a"));
        assert_eq!(cache.get("u", "p"), None);
    }
}
