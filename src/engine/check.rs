//! The checks the harness applies to any engine's answers, with the conformance rule
//! ([`compare`](crate::message::compare())):
//!
//! - **one shot**: the message equals the expectation; when the case says whether the parse
//!   must report a problem and the engine reports problems, it agrees;
//! - **streamed**, for every chunking: the deltas fold (a call index never skips ahead); no
//!   delta splits a code point (a U+FFFD the output does not hold); where the engine gives its
//!   own message after a chunk, the accumulated deltas equal it; the accumulated deltas are
//!   never a *retraction*; and the final accumulation equals the expectation (for a cut-off
//!   output, which may hold back what is not settled: leads to it, as a prefix);
//! - a **retraction**: after some chunk, what the deltas streamed is not a prefix of the
//!   stream's final message (the engine's own, else its one-shot parse): text the client was
//!   shown and that the answer does not hold. Text fields are compared with whitespace at the
//!   ends ignored, calls by count, id and name prefixes, and arguments as a text prefix (or
//!   equal JSON values, or, while unfinished, a prefix once whitespace outside strings is
//!   dropped).
//!
//! A panic of an in-process engine is caught and reported as an engine error.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::message::{compare, ChatDelta, ChatMessage, DeltaAccumulator};

use super::chunking::{pieces, to_char_boundaries, Chunking};
use super::{EngineError, EngineSession, OneShot, StreamRun};

/// The text of a panic payload.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panic".to_owned())
}

/// The one-shot parse of `output` (a panic becomes `the parser panicked: ...`).
pub fn one_shot(
    session: &mut dyn EngineSession,
    output: &str,
    partial: bool,
) -> Result<OneShot, EngineError> {
    match catch_unwind(AssertUnwindSafe(|| session.one_shot(output, partial))) {
        Ok(answer) => answer,
        Err(payload) => Err(EngineError::Failed(format!(
            "the parser panicked: {}",
            panic_text(&*payload)
        ))),
    }
}

/// Judges a one-shot answer against the expectation; `problem` is whether the case expects
/// the parse to report a problem (unchecked for a cut-off output, or when either side does
/// not say).
pub fn judge_one_shot(
    expected: &ChatMessage,
    answer: &OneShot,
    problem: Option<bool>,
    partial: bool,
) -> Result<(), String> {
    compare(expected, &answer.message).map_err(|d| d.to_string())?;
    if let (Some(want), Some(reported), false) = (problem, &answer.problem, partial) {
        if reported.is_some() != want {
            return Err(match reported {
                Some(p) => format!("the parse reports a problem the case does not expect: {p}"),
                None => {
                    "the case expects the parse to report a problem; it reports none".to_owned()
                }
            });
        }
    }
    Ok(())
}

/// What the streamed runs of a case showed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamVerdict {
    /// The first failure (`stream (<chunking>) ...: why`), if any.
    pub failure: Option<String>,
    /// The first retraction, if any chunking retracted.
    pub retraction: Option<String>,
    /// The engine error that stopped the runs, if any.
    pub error: Option<EngineError>,
    /// The chunkings run.
    pub runs: usize,
}

impl StreamVerdict {
    /// `Ok` when every chunking passed.
    pub fn result(&self) -> Result<(), String> {
        match &self.failure {
            None => Ok(()),
            Some(why) => Err(why.clone()),
        }
    }
}

/// Runs `chunkings` of `output` through the engine and checks each (see the module docs).
/// `reference` is the engine's one-shot message, used for retractions when a stream gives no
/// final message; `expected` is compared with the final accumulation of a complete output.
/// Chunkings go on after a failed one (to find retractions); an engine error stops them.
pub fn check_streams(
    session: &mut dyn EngineSession,
    byte_chunks: bool,
    output: &str,
    partial: bool,
    chunkings: &[Chunking],
    expected: Option<&ChatMessage>,
    reference: Option<&ChatMessage>,
) -> StreamVerdict {
    let mut verdict = StreamVerdict::default();
    for chunking in chunkings {
        let chunking = if byte_chunks {
            chunking.clone()
        } else {
            to_char_boundaries(output, chunking)
        };
        let chunks = pieces(output.as_bytes(), &chunking.cuts);
        verdict.runs += 1;
        let run = match catch_unwind(AssertUnwindSafe(|| session.stream(&chunks, !partial))) {
            Ok(Ok(run)) => run,
            Ok(Err(error)) => {
                verdict
                    .failure
                    .get_or_insert_with(|| format!("stream ({}): {error}", chunking.label));
                verdict.error = Some(error);
                return verdict;
            }
            Err(payload) => {
                let error =
                    EngineError::Failed(format!("the stream panicked: {}", panic_text(&*payload)));
                verdict.failure.get_or_insert_with(|| error.to_string());
                verdict.error = Some(error);
                return verdict;
            }
        };
        let reference = run.message.as_ref().or(reference);
        if let Err(problem) = check_run(&run, &chunking, output, partial, expected, reference) {
            if problem.retraction {
                verdict
                    .retraction
                    .get_or_insert_with(|| problem.why.clone());
            }
            verdict.failure.get_or_insert(problem.why);
        }
    }
    verdict
}

/// Why one stream run failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunProblem {
    /// What failed.
    pub why: String,
    /// Whether it is a retraction.
    pub retraction: bool,
}

fn problem(why: String) -> RunProblem {
    RunProblem {
        why,
        retraction: false,
    }
}

/// Checks one stream run of `chunking` (see the module docs).
pub fn check_run(
    run: &StreamRun,
    chunking: &Chunking,
    output: &str,
    partial: bool,
    expected: Option<&ChatMessage>,
    reference: Option<&ChatMessage>,
) -> Result<(), RunProblem> {
    let label = &chunking.label;
    let want = chunking.cuts.len() + usize::from(!partial);
    if run.deltas.len() != want {
        return Err(problem(format!(
            "stream ({label}): {} delta lists for {} chunks{}",
            run.deltas.len(),
            chunking.cuts.len(),
            if partial { "" } else { " and the finish" }
        )));
    }
    let mut acc = DeltaAccumulator::new();
    let output_has_replacement = output.contains('\u{FFFD}');
    for (k, &cut) in chunking.cuts.iter().enumerate() {
        let at = format!("stream ({label}) at byte {cut}");
        fold(&mut acc, &run.deltas[k], output_has_replacement, &at)?;
        if let Some(Some(snapshot)) = run.snapshots.get(k) {
            if acc.message() != snapshot {
                return Err(problem(format!(
                    "{at}: deltas {:?} differ from the prefix parse {:?}",
                    acc.message().to_case_value(),
                    snapshot.to_case_value()
                )));
            }
        }
        if let Some(reference) = reference {
            if let Some(why) = retracted(acc.message(), reference) {
                return Err(RunProblem {
                    why: format!("{at}: retraction: {why}"),
                    retraction: true,
                });
            }
        }
    }
    if !partial {
        let at = format!("stream ({label}) finish");
        fold(&mut acc, &run.deltas[want - 1], output_has_replacement, &at)?;
        if let Some(why) = reference.and_then(|r| retracted(acc.message(), r)) {
            return Err(RunProblem {
                why: format!("{at}: retraction: {why}"),
                retraction: true,
            });
        }
        if let Some(expected) = expected {
            compare(expected, acc.message())
                .map_err(|d| problem(format!("stream ({label}) final: {d}")))?;
        }
    } else if let Some(why) = expected.and_then(|e| retracted(acc.message(), e)) {
        // A cut-off stream may hold back what is not settled yet, but what it streamed must
        // lead to the expectation.
        return Err(problem(format!(
            "stream ({label}) final: not a prefix of the expected message: {why}"
        )));
    }
    Ok(())
}

fn fold(
    acc: &mut DeltaAccumulator,
    deltas: &[ChatDelta],
    output_has_replacement: bool,
    at: &str,
) -> Result<(), RunProblem> {
    for delta in deltas {
        acc.apply(delta)
            .map_err(|e| problem(format!("{at}: {e}")))?;
        if !output_has_replacement && delta_texts(delta).any(|t| t.contains('\u{FFFD}')) {
            return Err(problem(format!(
                "{at}: a delta splits a code point (U+FFFD where the output has none)"
            )));
        }
    }
    Ok(())
}

fn delta_texts(delta: &ChatDelta) -> impl Iterator<Item = &str> {
    let calls = delta.tool_calls.iter().flatten().flat_map(|c| {
        [&c.id, &c.function.name, &c.function.arguments]
            .into_iter()
            .flatten()
    });
    [&delta.content, &delta.reasoning_content]
        .into_iter()
        .flatten()
        .chain(calls)
        .map(String::as_str)
}

/// Why `streamed` (the accumulation so far) is not a prefix of `reference` (see the module
/// docs), or `None` when it is.
pub fn retracted(streamed: &ChatMessage, reference: &ChatMessage) -> Option<String> {
    for (field, s, r) in [
        ("content", &streamed.content, &reference.content),
        (
            "reasoning_content",
            &streamed.reasoning_content,
            &reference.reasoning_content,
        ),
    ] {
        if !r.trim_start().starts_with(s.trim()) {
            return Some(format!(
                "{field} streamed {:?} is not a prefix of the final {:?}",
                excerpt(s),
                excerpt(r)
            ));
        }
    }
    if streamed.tool_calls.len() > reference.tool_calls.len() {
        return Some(format!(
            "{} tool calls streamed, the final message has {}",
            streamed.tool_calls.len(),
            reference.tool_calls.len()
        ));
    }
    for (i, (s, r)) in streamed
        .tool_calls
        .iter()
        .zip(&reference.tool_calls)
        .enumerate()
    {
        if !r.id.starts_with(&s.id) || !r.name.starts_with(&s.name) {
            return Some(format!(
                "tool_calls[{i}] streamed id {:?} name {:?}, the final has {:?} {:?}",
                s.id, s.name, r.id, r.name
            ));
        }
        if !arguments_prefix(&s.arguments, &r.arguments) {
            return Some(format!(
                "tool_calls[{i}].arguments streamed {:?} is not a prefix of the final {:?}",
                excerpt(&s.arguments),
                excerpt(&r.arguments)
            ));
        }
    }
    None
}

fn arguments_prefix(streamed: &str, reference: &str) -> bool {
    if reference.starts_with(streamed) {
        return true;
    }
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
    match (parse(streamed), parse(reference)) {
        (Some(s), Some(r)) => s == r,
        (Some(_), None) => false,
        (None, _) => compact_json(reference).starts_with(&compact_json(streamed)),
    }
}

/// JSON text without the whitespace outside strings.
fn compact_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// At most 80 characters of `text` (its end, where streams differ).
fn excerpt(text: &str) -> String {
    let count = text.chars().count();
    if count <= 80 {
        return text.to_owned();
    }
    let tail: String = text.chars().skip(count - 77).collect();
    format!("...{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn message(content: &str, calls: &[(&str, &str)]) -> ChatMessage {
        ChatMessage {
            content: content.to_owned(),
            tool_calls: calls
                .iter()
                .map(|(name, args)| ToolCall::new("", *name, *args))
                .collect(),
            ..ChatMessage::assistant()
        }
    }

    #[test]
    fn retraction_is_streamed_text_the_final_message_lacks() {
        let fin = message("Hello world", &[("f", r#"{"a": 1}"#)]);
        assert_eq!(retracted(&message("Hello ", &[]), &fin), None);
        assert_eq!(retracted(&message("\nHello wo", &[]), &fin), None);
        assert_eq!(
            retracted(&message("Hello world", &[("f", "{\"a\"")]), &fin),
            None
        );
        assert_eq!(
            retracted(&message("Hello world", &[("f", "{\"a\":1}")]), &fin),
            None
        );
        assert_eq!(
            retracted(&message("Hello world", &[("f", "{ \"a\":")]), &fin),
            None
        );
        assert!(retracted(&message("Hello <tool", &[]), &fin).is_some());
        assert!(retracted(&message("Hello world", &[("g", "")]), &fin).is_some());
        assert!(retracted(&message("Hello world", &[("f", "{\"a\": 2}")]), &fin).is_some());
        assert!(retracted(&message("", &[("f", ""), ("f", "")]), &fin).is_some());
    }

    #[test]
    fn compact_json_keeps_string_whitespace() {
        assert_eq!(
            compact_json(r#"{ "a b": [1, "x\" y"] }"#),
            r#"{"a b":[1,"x\" y"]}"#
        );
    }
}
