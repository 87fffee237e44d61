//! Caching analyses by template hash.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use crate::template::ChatTemplate;

use super::{analyze, Analysis};

/// A cache of analyses keyed by a hash of the template source and its variables (the analysis
/// always renders with the same fixed options, so these determine the result).
#[derive(Debug, Default)]
pub struct AnalysisCache {
    entries: Mutex<HashMap<u64, Arc<Analysis>>>,
}

/// The cache key of `template`.
pub fn key(template: &ChatTemplate) -> u64 {
    key_of(template.source(), template.variables())
}

/// The cache key of a template with this source and these variables.
fn key_of(source: &str, variables: &serde_json::Map<String, serde_json::Value>) -> u64 {
    let mut h = DefaultHasher::new();
    source.hash(&mut h);
    // Variables set on every render (`chat_template_kwargs`) change what renders.
    serde_json::Value::Object(variables.clone())
        .to_string()
        .hash(&mut h);
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

/// A template compiled with a request's variables, with its analysis.
pub type TemplateVariant = Arc<(ChatTemplate, Arc<Analysis>)>;

/// `template` compiled with `variables` set on every render (a request's
/// `chat_template_kwargs`, see [`ChatTemplate::with_variables`]) and its analysis, from a
/// process-wide cache keyed like [`analyze_cached`]. A server that keeps one compiled template
/// per model calls this for requests that carry template variables.
pub fn with_variables_cached(
    template: &ChatTemplate,
    variables: &serde_json::Map<String, serde_json::Value>,
) -> Result<TemplateVariant, crate::template::TemplateError> {
    static CACHE: OnceLock<Mutex<HashMap<(String, u64), TemplateVariant>>> = OnceLock::new();
    let id = (
        template.name().to_owned(),
        key_of(template.source(), variables),
    );
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return Ok(Arc::clone(found));
    }
    let variant = template.recompiled_with(variables.clone())?;
    let analysis = analyze_cached(&variant);
    let entry = Arc::new((variant, analysis));
    Ok(Arc::clone(
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id)
            .or_insert(entry),
    ))
}
