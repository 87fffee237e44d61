//! Caching analyses by template hash.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use crate::template::ChatTemplate;

use super::{analyze, Analysis};

/// A cache of analyses keyed by a hash of the template source (the analysis always renders
/// with the same fixed options, so the source determines the result).
#[derive(Debug, Default)]
pub struct AnalysisCache {
    entries: Mutex<HashMap<u64, Arc<Analysis>>>,
}

/// The cache key of `template`.
pub fn key(template: &ChatTemplate) -> u64 {
    let mut h = DefaultHasher::new();
    template.source().hash(&mut h);
    // The analysis options are fixed; bump this when they change.
    1u32.hash(&mut h);
    h.finish()
}

impl AnalysisCache {
    /// An empty cache.
    pub fn new() -> AnalysisCache {
        AnalysisCache::default()
    }

    /// The analysis of `template`, computed on first use.
    pub fn get(&self, template: &ChatTemplate) -> Arc<Analysis> {
        let key = key(template);
        if let Some(found) = self.lock().get(&key) {
            return Arc::clone(found);
        }
        let analysis = Arc::new(analyze(template));
        Arc::clone(self.lock().entry(key).or_insert(analysis))
    }

    /// How many analyses are cached.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Analysis>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The analysis of `template` from the process-wide cache.
pub fn analyze_cached(template: &ChatTemplate) -> Arc<Analysis> {
    static CACHE: OnceLock<AnalysisCache> = OnceLock::new();
    CACHE.get_or_init(AnalysisCache::new).get(template)
}
