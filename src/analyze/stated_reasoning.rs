//! Phase R4: reasoning that no render writes but the prompt states to the model, read from
//! the prompt's own words (never from one template's wording):
//!
//! - **Tags**: an opening tag named by a thinking word (`<think>`, `<Thought>`, `[REASONING]`)
//!   opens the reasoning and its conventional closing form (`</think>`, shown or not) ends it;
//!   a tag named by an answer word (`<response>`, `<Output>`) wraps the content after it
//!   ("write your thoughts between <think></think> and your response between
//!   <response></response>", "use the format: <think> {Thought section} </think> {Solution
//!   section}").
//! - **Labels**: two labels the prose quotes, one in a sentence part about thoughts and one
//!   about the response ("write your thoughts after 'Here is my thought process:' and your
//!   response after 'Here is my response:'"): the first opens the reasoning, the second ends
//!   it, and the content follows.
//!
//! Only where phases R1–R3 found nothing, from the prompt of one user message with thinking
//! on. A tag the turns write (header, turn end, a rendered content turn) is no statement, and
//! neither is one in a sentence that negates ("never write <think>"). The model may write the
//! stated blocks or not: the reasoning is optional (no prefill), and so is the wrapper.

use super::frame::Frame;
use super::markers::marker_spans;
use super::prose::{quoted_labels, sentence_start, words, NEGATIONS};
use super::reasoning::{closing_form, MarkerSource, ReasoningAnalysis};

/// Words that name reasoning.
const THINKING_WORDS: &[&str] = &[
    "think",
    "thinking",
    "thought",
    "thoughts",
    "reasoning",
    "reflection",
    "scratchpad",
];

/// Words that name the answer.
const ANSWER_WORDS: &[&str] = &["response", "answer", "output", "solution", "final"];

/// What the prompt states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatedReasoning {
    /// The reasoning markers (source [`MarkerSource::Prompt`]).
    pub reasoning: ReasoningAnalysis,
    /// The content's wrapper (opener, closer), when one is stated.
    pub content: Option<(String, String)>,
}

/// What `prompt` (one user message with thinking on, generation prompt included) states
/// about reasoning; `frame` tells the turns' own markers apart.
pub fn read(prompt: &str, frame: &Frame) -> Option<StatedReasoning> {
    let structural = |m: &str| {
        frame.header.contains(m) || frame.footer.contains(m) || frame.content_body.contains(m)
    };
    from_tags(prompt, &structural).or_else(|| from_labels(prompt))
}

/// Whether the sentence before byte `at` of `text` negates.
fn negated(text: &str, at: usize) -> bool {
    let lead = &text[sentence_start(text, at)..at];
    words(lead)
        .iter()
        .any(|(_, w)| NEGATIONS.contains(&w.as_str()))
}

/// The word an opening tag is named by (`<Thought>` → `thought`), if it is one.
fn tag_word(tag: &str) -> Option<String> {
    closing_form(tag)?;
    let inner: String = tag.chars().filter(|c| c.is_alphanumeric()).collect();
    Some(inner.to_lowercase())
}

fn from_tags(prompt: &str, structural: &dyn Fn(&str) -> bool) -> Option<StatedReasoning> {
    let mut thinking = None;
    let mut answer = None;
    for (from, to) in marker_spans(prompt) {
        let tag = &prompt[from..to];
        let Some(word) = tag_word(tag) else {
            continue;
        };
        if structural(tag) || negated(prompt, from) {
            continue;
        }
        if thinking.is_none() && THINKING_WORDS.contains(&word.as_str()) {
            thinking = Some(tag);
        } else if answer.is_none() && ANSWER_WORDS.contains(&word.as_str()) {
            answer = Some(tag);
        }
    }
    let start = thinking?;
    let end = closing_form(start)?;
    let content = answer.and_then(|a| Some((a.to_owned(), closing_form(a)?)));
    Some(StatedReasoning {
        reasoning: ReasoningAnalysis::with_markers(start, &end, MarkerSource::Prompt),
        content,
    })
}

fn from_labels(prompt: &str) -> Option<StatedReasoning> {
    let mut thinking = None;
    let mut answer = None;
    let mut from = 0;
    for label in quoted_labels(prompt) {
        let Some(at) = prompt[from..].find(label.as_str()).map(|i| from + i) else {
            continue;
        };
        // The sentence part about this label: from the previous label (or the sentence
        // start), through the label itself.
        let lead = sentence_start(prompt, at).max(from);
        let part = words(&prompt[lead..at + label.len()]);
        from = at + label.len();
        if negated(prompt, at) {
            continue;
        }
        let names = |set: &[&str]| part.iter().any(|(_, w)| set.contains(&w.as_str()));
        if thinking.is_none() && names(THINKING_WORDS) {
            thinking = Some(label);
        } else if thinking.is_some() && answer.is_none() && names(ANSWER_WORDS) {
            answer = Some(label);
        }
    }
    let (start, end) = (thinking?, answer?);
    Some(StatedReasoning {
        reasoning: ReasoningAnalysis::with_markers(&start, &end, MarkerSource::Prompt),
        content: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasoning's start and end, and the content's wrapper, stated in `prompt`.
    type Read = (String, String, Option<(String, String)>);

    fn tags(prompt: &str) -> Option<Read> {
        let s = from_tags(prompt, &|m: &str| m == "<turn>")?;
        Some((s.reasoning.start, s.reasoning.end, s.content))
    }

    #[test]
    fn tags_named_by_thinking_and_answer_words() {
        let p = "<turn>system Think in <Thought> tags, then answer inside <Output>.";
        let (start, end, content) = tags(p).unwrap();
        assert_eq!((start.as_str(), end.as_str()), ("<Thought>", "</Thought>"));
        assert_eq!(content, Some(("<Output>".into(), "</Output>".into())));
        let p = "Use the format: [REASONING] {steps} [/REASONING] {Solution}.";
        assert_eq!(tags(p).unwrap().0, "[REASONING]");
        assert_eq!(tags(p).unwrap().2, None);
    }

    #[test]
    fn structural_negated_or_unnamed_tags_state_nothing() {
        assert_eq!(tags("<turn>think about it"), None);
        assert_eq!(tags("Never write <think> tags."), None);
        assert_eq!(tags("Answer in <b>bold</b>."), None);
        // A negation in another sentence does not count.
        assert!(tags("Do not guess. Reason inside <think></think>.").is_some());
    }

    #[test]
    fn labels_for_thoughts_then_the_response() {
        let p = "Write your thoughts after 'My plan:' and your response after 'Answer:'.";
        let s = from_labels(p).unwrap();
        assert_eq!(
            (s.reasoning.start.as_str(), s.reasoning.end.as_str()),
            ("My plan:", "Answer:")
        );
        // A response label alone, or labels about other things, state nothing.
        assert_eq!(from_labels("Write your response after 'Answer:'."), None);
        assert_eq!(from_labels("Start with 'Note:' then 'Todo:'."), None);
    }
}
