//! Formats a preamble states **in words** and shows no example of: a sentence that names a
//! marker and says JSON follows it ("respond with `<|calls|>` followed by a JSON list of the
//! calls", "write `[FN]` and then a JSON object").
//!
//! What the sentence states is read from its form, never from one template's wording:
//!
//! - **The marker**: one the preamble shows and the prompt without tools does not use.
//! - **JSON** among the first words after it (no other marker and no negation between).
//! - **List or object**: the word after `JSON` (`list`/`array` wrap all calls in one list
//!   after the marker; otherwise the marker opens each call's object).
//! - **A closing marker**: the marker's closing pair (`</call>` of `<call>`) named in the same
//!   sentence closes each call (or the list). A sentence that says JSON and names a marker
//!   pair ("a JSON object within `<call></call>` tags") states one object per call between
//!   the two.
//!
//! The call objects hold what every call of a request holds, under the request's own field
//! names: `{"name": …, "arguments": {…}}` (the `function` of an OpenAI tool call). The format
//! is then derived and checked like an example's (`super::derive`, `super::check`).

use crate::analyze::markers::pairs;
use crate::analyze::prose::{self, words, NEGATIONS};

use super::syntax::{Args, NameForm, Syntax};

/// How many words after the marker may come before `JSON`.
const JSON_WITHIN_WORDS: usize = 6;

/// How far after the marker a sentence is read, in bytes.
const SENTENCE_BYTES: usize = 240;

/// Words after `JSON` that state a list of calls.
const LIST_WORDS: &[&str] = &["list", "array", "lists", "arrays"];

/// Words after `JSON` that say how it is written, not what it is (`JSON-formatted list`).
const FORM_WORDS: &[&str] = &["formatted", "encoded", "serialized", "style", "valid"];

/// A stated call format read from a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The marker the sentence names.
    pub marker: String,
    /// Its closing pair, when the sentence names it too.
    pub close: Option<String>,
    /// Whether the calls are one JSON list after the marker (else one object per call, each
    /// after its own marker).
    pub list: bool,
    /// The sentence, from the marker on (reports).
    pub sentence: String,
}

impl Statement {
    /// A short name of what was read (reports).
    pub fn shape(&self) -> &'static str {
        if self.list {
            "prose:json_list"
        } else {
            "prose:json_object"
        }
    }

    /// How calls are written as the sentence states.
    pub fn syntax(&self) -> Syntax {
        let closer = self.close.clone().unwrap_or_default();
        let (open, close, separator, head, tail) = if self.list {
            let open = format!("{}[", self.marker);
            (
                open,
                format!("]{closer}"),
                ", ",
                String::new(),
                String::new(),
            )
        } else {
            (
                String::new(),
                String::new(),
                "\n",
                self.marker.clone(),
                closer,
            )
        };
        Syntax {
            open,
            close,
            separator: separator.to_owned(),
            separator_stated: false,
            head: format!("{head}{{\"name\": "),
            mid: ", \"arguments\": ".to_owned(),
            tail: format!("}}{tail}"),
            args_first: false,
            name: NameForm::Json,
            args: Args::Json {
                colon: ": ".to_owned(),
                comma: ", ".to_owned(),
                python: false,
            },
        }
    }
}

/// The sentence that starts at the beginning of `text`: up to a full stop followed by
/// whitespace, a line break, or [`SENTENCE_BYTES`].
fn sentence(text: &str) -> &str {
    let mut end = text.len().min(SENTENCE_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let mut cut = text.len();
    for (i, c) in text.char_indices() {
        let next = text[i + c.len_utf8()..].chars().next();
        if c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace)) {
            cut = i;
            break;
        }
    }
    &text[..cut]
}

/// The closing pair of `marker` among `markers` that `text` names.
fn closer_in(text: &str, marker: &str, markers: &[String]) -> Option<String> {
    markers
        .iter()
        .find(|m| pairs(marker, m) && text.contains(m.as_str()))
        .cloned()
}

/// Where the sentence holding byte `at` of `text` starts (after the previous sentence's full
/// stop or line break, at most [`SENTENCE_BYTES`] before `at`).
fn sentence_start(text: &str, at: usize) -> usize {
    let stop = prose::sentence_start(text, at);
    let mut floor = at.saturating_sub(SENTENCE_BYTES);
    while !text.is_char_boundary(floor) {
        floor += 1;
    }
    stop.max(floor)
}

/// Every statement in `text` about one of `markers` (see the module docs), in order.
pub fn statements(text: &str, markers: &[String]) -> Vec<Statement> {
    let mut found: Vec<(usize, Statement)> = Vec::new();
    for marker in markers {
        for (at, _) in text.match_indices(marker.as_str()) {
            let after = sentence(&text[at + marker.len()..]);
            let close = closer_in(after, marker, markers);
            if let Some(list) = states_json(after, markers) {
                let sentence = format!("{marker}{after}");
                let (marker, list) = (marker.clone(), list);
                found.push((
                    at,
                    Statement {
                        marker,
                        close,
                        list,
                        sentence,
                    },
                ));
                continue;
            }
            // "JSON ... within <call></call>": JSON said before the pair.
            let Some(close) = close else {
                continue;
            };
            let lead = &text[sentence_start(text, at)..at];
            let lead_words = words(lead);
            let Some(json) = lead_words.iter().position(|(_, w)| w == "json") else {
                continue;
            };
            let negated = lead_words[..json]
                .iter()
                .any(|(_, w)| NEGATIONS.contains(&w.as_str()));
            if !negated {
                let sentence = format!("{lead}{marker}{after}");
                let marker = marker.clone();
                let close = Some(close);
                found.push((
                    at,
                    Statement {
                        marker,
                        close,
                        list: false,
                        sentence,
                    },
                ));
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    found.dedup_by(|a, b| a.1 == b.1);
    found.into_iter().map(|(_, s)| s).collect()
}

/// Whether `after` (the sentence after a marker) says JSON follows: `Some(list)`.
fn states_json(after: &str, markers: &[String]) -> Option<bool> {
    let words = words(after);
    let json = words
        .iter()
        .take(JSON_WITHIN_WORDS)
        .position(|(_, w)| w == "json")?;
    let before_json = &after[..words[json].0];
    let negated = words[..json]
        .iter()
        .any(|(_, w)| NEGATIONS.contains(&w.as_str()));
    if negated || markers.iter().any(|m| before_json.contains(m.as_str())) {
        return None;
    }
    // "a JSON-formatted list": a word on how the JSON is written comes before what it is.
    let what = words[json + 1..]
        .iter()
        .find(|(_, w)| !FORM_WORDS.contains(&w.as_str()));
    let list = what.is_some_and(|(_, w)| LIST_WORDS.contains(&w.as_str()));
    Some(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, markers: &[&str]) -> Vec<(String, bool)> {
        let markers: Vec<String> = markers.iter().map(|m| (*m).to_owned()).collect();
        statements(text, &markers)
            .into_iter()
            .map(|s| (s.marker, s.list))
            .collect()
    }

    fn closers(text: &str, markers: &[&str]) -> Vec<(String, Option<String>)> {
        let markers: Vec<String> = markers.iter().map(|m| (*m).to_owned()).collect();
        statements(text, &markers)
            .into_iter()
            .map(|s| (s.marker, s.close))
            .collect()
    }

    #[test]
    fn a_marker_pair_named_with_json_closes_each_call() {
        let m = &["<call>", "</call>"];
        let pair = ("<call>".to_owned(), Some("</call>".to_owned()));
        let within = "Return a JSON object with the name and arguments within <call></call> tags.";
        assert_eq!(closers(within, m), std::slice::from_ref(&pair));
        let then = "Write <call> followed by a JSON object, then </call>.";
        assert_eq!(closers(then, m), [pair]);
        assert!(closers("Never use JSON; wrap text in <call></call>.", m).is_empty());
        assert!(closers("JSON is fine.\nWrap notes in <call></call>.", m).is_empty());
    }

    #[test]
    fn a_marker_followed_by_a_json_list() {
        let text =
            "Call tools by replying with <|fn|> followed by a JSON list of calls. Else answer.";
        assert_eq!(read(text, &["<|fn|>"]), [("<|fn|>".to_owned(), true)]);
    }

    #[test]
    fn a_word_on_how_json_is_written_comes_before_list() {
        let text = "Write 'Call:' followed by a json-formatted list of actions.";
        assert_eq!(read(text, &["Call:"]), [("Call:".to_owned(), true)]);
    }

    #[test]
    fn a_marker_then_one_json_object() {
        let text = "For each call write [CALL] and then one JSON object\nTools:";
        assert_eq!(read(text, &["[CALL]"]), [("[CALL]".to_owned(), false)]);
    }

    #[test]
    fn json_too_far_negated_or_in_another_sentence_states_nothing() {
        let m = &["<x>"];
        assert!(read(
            "Write <x> before your final answer, which is plain text and JSON.",
            m
        )
        .is_empty());
        assert!(read("Do <x> not followed by JSON.", m).is_empty());
        assert!(read("Use <x> sparingly. JSON lists are for data.", m).is_empty());
        assert!(read("Write <x> then <y> and a JSON list.", &["<x>", "<y>"])
            .iter()
            .all(|(m, _)| m == "<y>"));
    }

    #[test]
    fn sentences_stop_at_a_full_stop_or_a_line_break() {
        assert_eq!(
            sentence(" followed by a list.\nNext"),
            " followed by a list"
        );
        assert_eq!(sentence(" v1.2 is a version"), " v1.2 is a version");
        assert_eq!(sentence(" one\ntwo"), " one");
    }
}
