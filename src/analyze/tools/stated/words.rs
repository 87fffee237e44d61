//! Words of a stated example: placeholders (recognised by their form, never by a template's
//! wording) and the marker text written right around an example.

use crate::analyze::markers::pairs;

/// Generic words of a placeholder standing for a tool or function name (`func_name`,
/// `example_function`, `tool_name1`).
const NAME_WORDS: &[&str] = &[
    "name", "func", "function", "fn", "tool", "example", "method", "action",
];

/// Generic words of a placeholder standing for arguments (`tool_args1`, `<parameters>`).
const ARGS_WORDS: &[&str] = &[
    "arg",
    "args",
    "argument",
    "arguments",
    "param",
    "params",
    "parameter",
    "parameters",
    "input",
    "inputs",
    "value",
    "values",
    "json",
];

/// The lower-case words of `text` (split at non-alphanumerics and digits).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `text` is marked as a placeholder by its form: `<...>`, `{...}`, `$NAME`, `...`,
/// or an all-caps word (`FUNCTION_NAME`).
pub fn is_marked_placeholder(text: &str) -> bool {
    let t = text.trim();
    let wrapped =
        |open: char, close: char| t.len() > 2 && t.starts_with(open) && t.ends_with(close);
    if wrapped('<', '>') || wrapped('{', '}') || t.starts_with('$') || t == "..." || t == "…" {
        return true;
    }
    let letters: Vec<char> = t.chars().filter(|c| c.is_alphabetic()).collect();
    letters.len() > 1 && letters.iter().all(|c| c.is_uppercase())
}

/// Whether `text` has the form of a placeholder: marked as one (see
/// [`is_marked_placeholder`]), or a word made of generic slot words (`func_name`,
/// `example_function_name`, `param-value`).
pub fn is_placeholder(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && (is_marked_placeholder(t)
            || has_slot_word(t, NAME_WORDS)
            || has_slot_word(t, ARGS_WORDS))
}

/// Whether one of `text`'s words is one of `slot_words`.
fn has_slot_word(text: &str, slot_words: &[&str]) -> bool {
    words(text).iter().any(|w| slot_words.contains(&w.as_str()))
}

/// Whether a placeholder reads as standing for a name (rather than for arguments).
pub fn names_a_name(text: &str) -> bool {
    has_slot_word(text, NAME_WORDS) && !has_slot_word(text, ARGS_WORDS)
}

/// Whether a placeholder reads as standing for arguments.
pub fn names_arguments(text: &str) -> bool {
    has_slot_word(text, ARGS_WORDS)
}

/// Sentence punctuation that may follow (or quotes that may wrap) a marker in prose.
fn prose_punctuation(c: char) -> bool {
    matches!(
        c,
        '.' | ',' | ';' | ':' | '!' | '?' | '`' | '"' | '\'' | ')'
    )
}

/// Whether `run` (no whitespace) has the form of a marker: at least two characters, starting
/// and ending with a symbol (`<|calls|>`, `[CALL]`, `⟪calls⟫`, `<tool_request>`).
pub fn is_marker(run: &str) -> bool {
    let (Some(first), Some(last)) = (run.chars().next(), run.chars().last()) else {
        return false;
    };
    let symbol = |c: char| !c.is_alphanumeric() && !c.is_whitespace() && !prose_punctuation(c);
    run.chars().count() >= 2 && symbol(first) && symbol(last)
}

/// Where `run` splits into markers written back to back (`</call><|end|>`): after a `>` or
/// `]` that a `<` or `[` follows.
fn marker_boundaries(run: &str) -> impl Iterator<Item = usize> + '_ {
    run.char_indices()
        .zip(run.chars().skip(1))
        .filter(|((_, a), b)| matches!(a, '>' | ']') && matches!(b, '<' | '['))
        .map(|((i, a), _)| i + a.len_utf8())
}

/// The marker written right before byte `at` of `text`: the run of non-whitespace glued to
/// it, or (with one line break or a few spaces between) the run before that; returned with
/// the whitespace between, and its start. Prose right before gives nothing.
pub fn marker_before(text: &str, at: usize) -> (usize, &str) {
    let before = &text[..at];
    let trimmed = before.trim_end_matches([' ', '\t', '\n', '\r']);
    let gap = &before[trimmed.len()..];
    if gap.matches('\n').count() > 1 {
        return (at, "");
    }
    let start = trimmed.rfind(char::is_whitespace).map_or(0, |i| {
        i + trimmed[i..].chars().next().map_or(1, char::len_utf8)
    });
    // Of markers written back to back, the last one.
    let start = start + marker_boundaries(&trimmed[start..]).last().unwrap_or(0);
    let run = &trimmed[start..];
    // Leading quotes or backticks of prose (`\`<tool_call>`) are not part of the marker.
    let lead = run.len() - run.trim_start_matches(['`', '"', '\'']).len();
    let run = &run[lead..];
    // A word glued to the example's opening bracket (`functools[`) names the calls.
    let glued_word = gap.is_empty()
        && text[at..].starts_with('[')
        && run.len() > 1
        && run.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if is_marker(run) || glued_word {
        (start + lead, &text[start + lead..at])
    } else if let Some(fence) = fence_opener(&trimmed[start..]) {
        // A code fence (```json), with the one-word label it follows on its line
        // (`Action: ```json`).
        let mut from = start + (trimmed[start..].len() - fence.len());
        let head = trimmed[..from].trim_end_matches([' ', '\t']);
        if head.len() < from && head.ends_with(':') {
            let word_at = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
            let word = &head[word_at..head.len() - 1];
            if !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_') {
                from = word_at;
            }
        }
        (from, &text[from..at])
    } else {
        (at, "")
    }
}

/// The code fence `run` is (three or more backticks and an optional language word:
/// ```json, ```tool_calls), as a marker opening an example; `None` otherwise.
fn fence_opener(run: &str) -> Option<&str> {
    let ticks = run.len() - run.trim_start_matches('`').len();
    let lang = &run[ticks..];
    (ticks >= 3
        && lang
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
    .then_some(run)
}

/// The marker written right after byte `at` of `text` (see [`marker_before`]), without
/// trailing sentence punctuation; returned with the whitespace before it, and its end.
pub fn marker_after(text: &str, at: usize) -> (usize, &str) {
    let after = &text[at..];
    let trimmed = after.trim_start_matches([' ', '\t', '\n', '\r']);
    let gap = after.len() - trimmed.len();
    if after[..gap].matches('\n').count() > 1 {
        return (at, "");
    }
    let len = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
    // Of markers written back to back, the first one; a marker that sentence punctuation
    // follows ends there (`<|/act|>.[/TOOLS]`).
    let len = marker_boundaries(&trimmed[..len]).next().unwrap_or(len);
    let run = &trimmed[..len];
    let len = run
        .char_indices()
        .zip(run.chars().skip(1))
        .find(|((_, a), b)| matches!(a, '>' | ']') && prose_punctuation(*b))
        .map_or(len, |((i, a), _)| i + a.len_utf8());
    let run = trimmed[..len].trim_end_matches(prose_punctuation);
    let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
    if is_marker(run) {
        let end = at + gap + run.len();
        (end, &text[at..end])
    } else if ticks >= 3 {
        // A code fence's closer.
        let end = at + gap + ticks;
        (end, &text[at..end])
    } else {
        (at, "")
    }
}

/// The marker written right after an example that ends at `at` (see [`marker_after`]),
/// unless it closes a block opened earlier in the text than the example's own opener
/// `before` (which starts at `before_at`): the end of a system block that holds the example
/// (`[SYS]… example[/SYS]`) is not where calls end.
pub fn closer_after<'t>(
    text: &'t str,
    before_at: usize,
    before: &str,
    at: usize,
) -> (usize, &'t str) {
    let (end, after) = marker_after(text, at);
    let marker = after.trim();
    if marker.is_empty() || pairs(before, marker) {
        return (end, after);
    }
    let opened_earlier = crate::diff::segments(&text[..before_at])
        .any(|s| s.kind == crate::diff::SegmentKind::Marker && pairs(s.text, marker));
    if opened_earlier {
        (at, "")
    } else {
        (end, after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_by_form() {
        for p in [
            "<tool name>",
            "$FUNCTION_NAME",
            "FUNCTION_NAME",
            "func_name",
            "function_name",
            "tool_name1",
            "example_function",
            "<function-name>",
            "...",
            "{args}",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for word in ["Paris", "get_weather", "weather.get-current", "x"] {
            assert!(!is_placeholder(word), "{word}");
        }
        assert!(names_a_name("tool_name1") && names_arguments("tool_args1"));
        assert!(!names_a_name("tool_args1"));
    }

    #[test]
    fn markers_around_examples() {
        let t = "reply with <|calls|>[f()]<|/calls|>. Then";
        let open = t.find('[').unwrap();
        assert_eq!(marker_before(t, open), (11, "<|calls|>"));
        let close = t.find(']').unwrap() + 1;
        assert_eq!(marker_after(t, close).1, "<|/calls|>");
        let t = "Example:\n<tool_request>{}";
        assert_eq!(marker_before(t, t.find('{').unwrap()).1, "<tool_request>");
        let t = "like the following:\n<calls>\n<invoke";
        assert_eq!(marker_before(t, t.find("<invoke").unwrap()).1, "<calls>\n");
        let t = "write it as: {}";
        assert_eq!(marker_before(t, t.find('{').unwrap()).1, "");
        let t = "<|end|><call>{}</call><|end|>";
        assert_eq!(marker_before(t, 13).1, "<call>");
        assert_eq!(marker_after(t, 15).1, "</call>");
        let t = "{} and then";
        assert_eq!(marker_after(t, 2).1, "");
        // A code fence, with the one-word label before it on its line.
        let t = "Reply with Action: ```json\n[{\"name\": x}]\n```<|end|>";
        let open = t.find('[').unwrap();
        assert_eq!(marker_before(t, open), (11, "Action: ```json\n"));
        assert_eq!(marker_after(t, t.find("]\n").unwrap() + 1).1, "\n```");
        let t = "Calls go in\n```tool_code\n[f(x=1)]\n``` blocks.";
        assert_eq!(marker_before(t, t.find('[').unwrap()).1, "```tool_code\n");
        // Backticks quoting prose are no fence.
        let t = "write `[f(x=1)]` as shown";
        assert_eq!(marker_before(t, 7).1, "");
    }
}
