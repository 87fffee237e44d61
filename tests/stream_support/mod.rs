//! Shared by the streaming properties: a stream in given chunks against the one-shot parse.

#![allow(dead_code)]

use chatparse::generate::ChatParser;
use chatparse::message::{check_stream, compare, ChatMessage, DeltaAccumulator};

/// The final message: `finish` for complete outputs, the last accumulation for partial ones.
pub fn one_shot(parser: &ChatParser, output: &str, partial: bool) -> ChatMessage {
    if partial {
        parser.parse_partial(output).stable_message()
    } else {
        parser.parse(output).message
    }
}

/// Streams `output` cut at `cuts` (increasing byte offsets, the last one `output.len()`): the
/// accumulated deltas must equal the one-shot parse, and the deltas over the prefix parses must
/// form a valid stream (nothing retracted).
pub fn check(
    parser: &ChatParser,
    output: &str,
    partial: bool,
    cuts: &[usize],
) -> Result<(), String> {
    let expected = one_shot(parser, output, partial);
    let mut stream = parser.stream();
    let mut acc = DeltaAccumulator::new();
    let mut from = 0;
    for &cut in cuts {
        if let Some(delta) = stream.feed(&output.as_bytes()[from..cut]) {
            acc.apply(&delta)
                .map_err(|e| format!("at byte {cut}: {e}"))?;
        }
        from = cut;
    }
    let streamed = if partial {
        acc.into_message()
    } else {
        let (delta, _) = stream.finish();
        if let Some(delta) = delta {
            acc.apply(&delta).map_err(|e| format!("finish: {e}"))?;
        }
        acc.into_message()
    };
    compare(&expected, &streamed).map_err(|d| format!("stream vs one shot: {d}"))?;
    // The delta stream over the prefix parses at the char-boundary cuts is valid.
    let snapshots: Vec<_> = cuts
        .iter()
        .filter(|&&c| output.is_char_boundary(c))
        .map(|&c| parser.parse_partial(&output[..c]))
        .collect();
    check_stream(&snapshots).map_err(|e| format!("delta stream: {e}"))?;
    Ok(())
}

/// Cut offsets for chunks of the given sizes, repeated until the end of `len` bytes.
pub fn cuts_from_sizes(len: usize, sizes: &[usize]) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut at = 0;
    for &size in sizes.iter().cycle().take(len.max(1)) {
        at = (at + size).min(len);
        cuts.push(at);
        if at == len {
            break;
        }
    }
    if cuts.last() != Some(&len) {
        cuts.push(len);
    }
    cuts
}
