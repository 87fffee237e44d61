//! Streaming against one-shot parsing where watched delimiters share a literal prefix: the
//! feed paths that skip start bytes departing from it (see `WatchSet::feed_starts`).

use serde_json::{json, Value};

use super::super::events::merge_chunks;
use super::*;

/// gpt-oss-like: three opens sharing `<|channel|>`, closes sharing `<|`.
fn shared_template() -> ResponseTemplate {
    ResponseTemplate::from_value(&json!({
        "start_anchor": "<|start|>assistant",
        "fields": {
            "thinking": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
            "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>"},
            "tool_calls": {
                "open_pattern": "<\\|channel\\|>commentary to=(?P<name>\\w+).*?<\\|message\\|>",
                "close": "<|call|>",
                "repeats": true,
                "content": "json",
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
            }
        }
    }))
    .unwrap()
}

/// Overlapping delimiters: `<a>` and `<ab>` (longest wins), a close that is a prefix of text.
fn overlap_template() -> ResponseTemplate {
    ResponseTemplate::from_value(&json!({
        "start_anchor": "S",
        "fields": {
            "a": {"open": "<<a>", "close": "</a>"},
            "b": {"open": "<<ab>", "close": "</a></b>", "optional": true},
            "c": {"close": "<<end>"}
        }
    }))
    .unwrap()
}

const SHARED_TEXTS: &[&str] = &[
    "<|channel|>analysis<|message|>think <|ch <|chan|> <|start|>x<|end|>\
     <|start|>assistant<|channel|>final<|message|>hi <|e <|en|> <|end|>",
    "<|c<|channel|>final<|message|><|<|end|>",
    "<|channel|>commentary to=f <|constrain|>json<|message|>{\"a\": 1}<|call|>\
     <|channel|>commentary to=g<|channel|><|message|>[1]<|call|><|channel|>final",
    "<|channel|>fin<|channel|>final<|message|>x<|end|<|end|>tail<|chan",
    "<|channel|>analysis<|message|><|channel|>final<|message|>",
    // Pieces of the shared literal while the tool-call open glides: departing (`<|co`,
    // `<|chx`), completing (a second `<|channel|>` inside the open), at a feed's end.
    "<|channel|>commentary to=f <|constrain|>json <|chx <|c<|message|>{}<|call|>",
    "<|channel|>commentary to=f <|channel|>final<|message|>[2]<|call|>x<|end|>",
    "<|channel|>commentary to=ab<|<|channel|>commentary to=g<|message|>1<|call|>",
];

/// The tool-call open without `.*?`: a gliding attempt that dies inside a held piece of the
/// shared literal, where a later attempt must still be found.
fn strict_template() -> ResponseTemplate {
    ResponseTemplate::from_value(&json!({
        "start_anchor": "<|start|>assistant",
        "fields": {
            "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>"},
            "tool_calls": {
                "open_pattern": "<\\|channel\\|>commentary to=(?P<name>\\w+) ?<\\|message\\|>",
                "close": "<|call|>",
                "repeats": true,
                "transform": {"name": "{name}", "arguments": "{content}"}
            }
        }
    }))
    .unwrap()
}

const STRICT_TEXTS: &[&str] = &[
    "<|channel|>commentary to=ab<|channel|>final<|message|>hi<|end|>",
    "<|channel|>commentary to=ab <|chan<|channel|>commentary to=c <|message|>x<|call|>",
    "<|channel|>commentary to=abc<|message|>1<|call|><|channel|>commentary to=d<|me",
];

/// An implicit field whose close shares `<|` with the open.
fn implicit_template() -> ResponseTemplate {
    ResponseTemplate::from_value(&json!({
        "start_anchor": "S",
        "fields": {
            "thinking": {"open": "<|think|>", "close": "<|/think|>", "optional": true},
            "content": {"close": "<|end|>"}
        }
    }))
    .unwrap()
}

const IMPLICIT_TEXTS: &[&str] = &[
    "a<|th<|think|>b<|/thin<|/think|>c<|e<|end|>d<|",
    "<|<|think|><|end|><|/think|>x<|en",
    "<|thinkx|> <|end <|end|><|think|>y",
];

const OVERLAP_TEXTS: &[&str] = &[
    "x<<a>1</a><<ab>2</a></b><<end>y",
    "<<<a><</a</a><<ab</a></a></b><<en<<end><<end>",
    "<<ab><<a></a></b></a><<e",
];

/// The message and merged events of feeding `pieces`, or the error kind. The feeds go
/// through the three event APIs in turn (`feed`, `feed_into`, `feed_with`), so every split
/// also mixes them.
fn stream(tpl: &ResponseTemplate, pieces: &[&str]) -> Result<(Value, Vec<Value>)> {
    let mut parser = ResponseParser::new(tpl, Some(""), None)?;
    let mut events = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        match i % 3 {
            0 => events.extend(parser.feed(piece)?),
            1 => parser.feed_into(piece, &mut events)?,
            _ => parser.feed_with(piece, |event| events.push(event.into_owned()))?,
        }
    }
    let (message, last) = parser.finalize()?;
    events.extend(last);
    Ok((
        message,
        merge_chunks(&events).iter().map(Event::to_json).collect(),
    ))
}

/// Every split of `text` into feeds of `n` bytes (at each offset of the first cut), and every
/// split into two feeds, against one feed and against `parse_response`.
fn check(tpl: &ResponseTemplate, text: &str) {
    let whole = stream(tpl, &[text]).map_err(|e| e.kind());
    let once = parse_response(tpl, text, Some(""), None).map_err(|e| e.kind());
    assert_eq!(whole.as_ref().map(|w| &w.0), once.as_ref(), "{text:?}");
    let check_pieces = |pieces: &[&str]| {
        let got = stream(tpl, pieces).map_err(|e| e.kind());
        assert_eq!(got, whole, "{pieces:?}");
    };
    for n in 1..=6 {
        for first in 0..n.min(text.len()) {
            let mut pieces = vec![&text[..first]];
            let mut at = first;
            while at < text.len() {
                let end = (at + n).min(text.len());
                pieces.push(&text[at..end]);
                at = end;
            }
            check_pieces(&pieces);
        }
    }
    for cut in 0..=text.len() {
        check_pieces(&[&text[..cut], &text[cut..]]);
    }
}

#[test]
fn shared_prefix_feeds_match_one_shot() {
    let tpl = shared_template();
    for text in SHARED_TEXTS {
        check(&tpl, text);
    }
}

#[test]
fn gliding_attempts_with_held_pieces_match_one_shot() {
    let tpl = strict_template();
    for text in STRICT_TEXTS {
        check(&tpl, text);
    }
}

#[test]
fn overlapping_delimiters_match_one_shot() {
    let tpl = overlap_template();
    for text in OVERLAP_TEXTS {
        check(&tpl, text);
    }
}

#[test]
fn feed_starts_skips_departures_from_the_shared_literal() {
    let tpl = shared_template();
    let ws = tpl.watches.first().unwrap();
    assert_eq!(ws.feed_starts(b"ab<|"), 0b0100);
    assert_eq!(ws.feed_starts(b"<|st"), 0);
    assert_eq!(ws.feed_starts(b"<|c<"), 0b1000);
    assert_eq!(ws.feed_starts(b"<|channel|>f"), 1);
    assert_eq!(ws.feed_starts(b"<|chan <|ch"), 0b1000_0000);
    assert_eq!(ws.feed_starts(b"x"), 0);
}

#[test]
fn implicit_field_feeds_match_one_shot() {
    let tpl = implicit_template();
    for text in IMPLICIT_TEXTS {
        check(&tpl, text);
    }
}

/// `feed_with` alone hands out exactly the events `feed` returns, feed by feed (not only
/// after merging), in any chunking.
#[test]
fn feed_with_hands_out_the_events_of_feed() {
    let tpl = shared_template();
    for text in SHARED_TEXTS {
        for n in 1..=5 {
            let mut by_feed = ResponseParser::new(&tpl, Some(""), None).unwrap();
            let mut by_sink = ResponseParser::new(&tpl, Some(""), None).unwrap();
            let bytes: Vec<usize> = (0..text.len()).step_by(n).chain([text.len()]).collect();
            for w in bytes.windows(2) {
                let piece = &text[w[0]..w[1]];
                let expected = by_feed.feed(piece).unwrap();
                let mut got = Vec::new();
                by_sink
                    .feed_with(piece, |event| got.push(event.into_owned()))
                    .unwrap();
                assert_eq!(got, expected, "{text:?} in {n}-byte feeds, at {}", w[0]);
            }
            assert_eq!(by_sink.finalize().unwrap(), by_feed.finalize().unwrap());
        }
    }
}

/// After an error, and after `finalize`, `feed_with` fails like `feed`.
#[test]
fn feed_with_reports_errors_like_feed() {
    let tpl = ResponseTemplate::from_value(&json!({
        "start_anchor": "S",
        "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}}
    }))
    .unwrap();
    let mut parser = ResponseParser::new(&tpl, Some(""), None).unwrap();
    let mut events = Vec::new();
    let err = parser
        .feed_with("<n>x</n>", |event| events.push(event.into_owned()))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Feed);
    // The region opened and its text was handed out before the close failed.
    assert_eq!(events.first().map(Event::field), Some("n"));
    assert!(parser.feed_with("more", |_| {}).is_err());

    let mut done = ResponseParser::new(&tpl, Some(""), None).unwrap();
    done.finalize().unwrap();
    let err = done.feed_with("x", |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Feed);
}

/// `borrowed` and `into_owned` convert between the two event forms without changing them.
#[test]
fn borrowed_and_owned_events_round_trip() {
    let tpl = shared_template();
    let mut parser = ResponseParser::new(&tpl, Some(""), None).unwrap();
    let mut events = parser.feed(SHARED_TEXTS[2]).unwrap();
    events.extend(parser.finalize().unwrap().1);
    assert!(events.len() > 3);
    for event in &events {
        let borrowed = event.borrowed();
        assert_eq!(borrowed.to_json(), event.to_json());
        assert_eq!(&borrowed.into_owned(), event);
    }
}
