//! The reference's semantics that the transformers oracle pinned down (see
//! `tests/response_template_oracle.rs`), one by one.

use serde_json::{json, Value};

use super::*;

fn template(v: Value) -> ResponseTemplate {
    ResponseTemplate::from_value(&v).unwrap_or_else(|e| panic!("{e}"))
}

fn parse(tpl: &ResponseTemplate, text: &str) -> Result<Value> {
    parse_response(tpl, text, Some(""), None)
}

/// (initial events, events of one feed of `text`, final events) as JSON.
fn phases(
    tpl: &ResponseTemplate,
    prefix: &str,
    text: &str,
) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let json = |events: &[Event]| events.iter().map(Event::to_json).collect::<Vec<_>>();
    let mut parser = ResponseParser::new(tpl, Some(prefix), None).unwrap_or_else(|e| panic!("{e}"));
    let initial = json(parser.initial_events());
    let fed = json(&parser.feed(text).unwrap_or_else(|e| panic!("{e}")));
    let (_, last) = parser.finalize().unwrap_or_else(|e| panic!("{e}"));
    (initial, fed, json(&last))
}

#[test]
fn a_prefix_is_required() {
    let tpl = template(json!({"start_anchor": "A", "fields": {"c": {}}}));
    let err = ResponseParser::new(&tpl, None, None)
        .err()
        .map(|e| e.kind());
    assert_eq!(err, Some(ErrorKind::Init));
    let err = parse_response(&tpl, "x", None, None)
        .err()
        .map(|e| e.kind());
    assert_eq!(err, Some(ErrorKind::Init));
    assert_eq!(parse(&tpl, "x").ok(), Some(json!({"c": "x"})));
}

#[test]
fn ties_go_to_the_field_name_that_sorts_first() {
    let tpl = template(json!({"start_anchor": "A", "fields": {
        "z": {"open": "<t>", "close": "</t>"},
        "a": {"open": "<t>", "close": "</t>"}
    }}));
    assert_eq!(parse(&tpl, "<t>x</t>").ok(), Some(json!({"a": "x"})));
}

#[test]
fn a_regex_match_at_the_end_of_the_text_waits_for_more() {
    let literal = template(json!({"start_anchor": "A", "fields": {
        "t": {"open": "<t>", "close": "</t>"}
    }}));
    let regex = template(json!({"start_anchor": "A", "fields": {
        "t": {"open": "<t>", "close_pattern": "</t>"}
    }}));
    let close = json!({"type": "region_close", "field": "t", "value": "x"});
    // A literal close is final at the end of the prefix; a regex one waits for the first feed.
    let (initial, fed, _) = phases(&literal, "A<t>x</t>", "");
    assert_eq!((initial.last(), fed.len()), (Some(&close), 0));
    let (initial, fed, _) = phases(&regex, "A<t>x</t>", "y");
    assert!(!initial.contains(&close));
    assert_eq!(fed.first(), Some(&close));
    // At the end of the text, a regex match is decided by `finalize`.
    let (_, fed, last) = phases(&regex, "", "<t>x</t>");
    assert!(!fed.contains(&close));
    assert_eq!(last, [close]);
}

#[test]
fn required_fields_are_met_by_defaults() {
    let tpl = template(
        json!({"start_anchor": "A", "defaults": {"t": "d"}, "fields": {
            "t": {"open": "<t>", "close": "</t>", "optional": false},
            "c": {}
        }}),
    );
    assert_eq!(parse(&tpl, "x").ok(), Some(json!({"t": "d", "c": "x"})));
}

#[test]
fn repeats_and_join_extend_defaults() {
    let fields = |extra: Value| {
        let mut t = json!({"open": "<t>", "close": "</t>", "repeats": true});
        if let (Some(t), Some(extra)) = (t.as_object_mut(), extra.as_object()) {
            t.extend(extra.clone());
        }
        json!({"t": t})
    };
    let tpl = template(
        json!({"start_anchor": "A", "defaults": {"t": ["d"]}, "fields": fields(json!({}))}),
    );
    assert_eq!(parse(&tpl, "<t>x</t>").ok(), Some(json!({"t": ["d", "x"]})));
    let tpl =
        template(json!({"start_anchor": "A", "defaults": {"t": "d"}, "fields": fields(json!({}))}));
    assert_eq!(
        parse(&tpl, "<t>x</t>").err().map(|e| e.kind()),
        Some(ErrorKind::Feed)
    );
    let tpl = template(
        json!({"start_anchor": "A", "defaults": {"t": "d"}, "fields": fields(json!({"join": "+"}))}),
    );
    assert_eq!(
        parse(&tpl, "<t>x</t><t>y</t>").ok(),
        Some(json!({"t": "d+x+y"}))
    );
    // `transform_each` with `repeats`: each region's list is one item.
    let tpl = template(json!({"start_anchor": "A", "fields": fields(json!({
        "content": "json", "transform_each": true, "transform": "{k}"
    }))}));
    assert_eq!(
        parse(&tpl, r#"<t>[{"k": 1}, {"k": 2}]</t><t>[{"k": 3}]</t>"#).ok(),
        Some(json!({"t": [[1, 2], [3]]}))
    );
}

#[test]
fn transform_scopes() {
    // transform_each: the item's keys, no `content`; every item must be a dict.
    let each = |transform: Value| {
        template(json!({"start_anchor": "A", "fields": {"t": {
            "open": "<t>", "close": "</t>", "content": "json",
            "transform_each": true, "transform": transform
        }}}))
    };
    assert_eq!(
        parse(&each(json!("{k}")), r#"<t>[{"k": 1}]</t>"#).ok(),
        Some(json!({"t": [1]}))
    );
    assert!(parse(&each(json!("{content}")), r#"<t>[{"k": 1}]</t>"#).is_err());
    assert!(parse(&each(json!("{k}")), r#"<t>[{"k": 1}, 2]</t>"#).is_err());
    // A group that takes no part in the match is not in the scope.
    let tpl = template(json!({"start_anchor": "A", "fields": {"t": {
        "open_pattern": "<t(?: (?P<a>\\w+))?>", "close": "</t>", "transform": {"a": "{a}"}
    }}}));
    assert_eq!(
        parse(&tpl, "<t x>1</t>").ok(),
        Some(json!({"t": {"a": "x"}}))
    );
    assert!(parse(&tpl, "<t>1</t>").is_err());
    // Deliberate deviation: the close pattern's groups join the scope (as documented).
    let tpl = template(json!({"start_anchor": "A", "fields": {"t": {
        "open": "<t>", "close_pattern": "</t (?P<b>\\w+)>", "transform": {"b": "{b}", "v": "{content}"}
    }}}));
    assert_eq!(
        parse(&tpl, "<t>1</t y>").ok(),
        Some(json!({"t": {"b": "y", "v": "1"}}))
    );
}

#[test]
fn empty_matches() {
    // An explicit close that matches empty closes the region right where it opened.
    let tpl = template(json!({"start_anchor": "A", "fields": {
        "t": {"open": "<t>", "close_pattern": "(?:</t>)?"},
        "c": {}
    }}));
    assert_eq!(
        parse(&tpl, "x<t>ab</t>y").ok(),
        Some(json!({"c": "ab</t>y"}))
    );
    // Deliberate deviation: an implicit close matching empty where its region is empty does
    // not stop parsing (each empty match closes a one-character region).
    let tpl = template(json!({"start_anchor": "A", "fields": {
        "c": {"close_pattern": "(?:<e>)?"}
    }}));
    assert_eq!(parse(&tpl, "ab<e>cd").ok(), Some(json!({"c": "d"})));
}

#[test]
fn text_a_dead_attempt_held_is_handed_out_with_the_feed_that_ends_it() {
    // `[` may start the close; the next feed shows it does not, and ends with another `[`.
    let tpl = template(json!({"start_anchor": "A", "fields": {
        "meta": {"open": "[ANSWER]", "close": "[/ANSWER]"}
    }}));
    let mut parser = ResponseParser::new(&tpl, Some(""), None).unwrap_or_else(|e| panic!("{e}"));
    let json = |events: Vec<Event>| events.iter().map(Event::to_json).collect::<Vec<_>>();
    let fed = parser.feed("[ANSWER][").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json(fed), [json!({"type": "region_open", "field": "meta"})]);
    let fed = parser
        .feed("ab\n[ANSWER][")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        json(fed),
        [json!({"type": "region_chunk", "field": "meta", "text": "[ab\n[ANSWER]", "dirty": false})]
    );
}

#[test]
fn dollar_takes_a_final_newline() {
    // Deliberate deviation: `$` takes the final newline (no stray "\n" region follows); a
    // match only the end of the stream can confirm waits for it.
    let tpl = template(json!({"start_anchor": "A", "fields": {
        "t": {"open": "<t>", "close_pattern": "</t>$"},
        "c": {}
    }}));
    assert_eq!(parse(&tpl, "<t>x</t>\n").ok(), Some(json!({"t": "x"})));
    assert_eq!(
        parse(&tpl, "<t>x</t>\ny").ok(),
        Some(json!({"t": "x</t>\ny"}))
    );
    let (_, fed, last) = phases(&tpl, "", "<t>x</t>\n");
    assert!(fed.iter().all(|e| e["type"] != "region_close"), "{fed:?}");
    assert_eq!(
        last,
        [json!({"type": "region_close", "field": "t", "value": "x"})]
    );
}

#[test]
fn a_held_literal_is_decided_by_the_next_feed() {
    // `</n>` could still become `</n>\n`: held at the end of a feed, decided by the next.
    let tpl = template(json!({"start_anchor": "A", "fields": {
        "n": {"open": "<n>", "close": ["</n>", "</n>\n"]}
    }}));
    let mut parser = ResponseParser::new(&tpl, Some(""), None).unwrap_or_else(|e| panic!("{e}"));
    let json = |events: Vec<Event>| events.iter().map(Event::to_json).collect::<Vec<_>>();
    let fed = json(parser.feed("<n>{}</n>").unwrap_or_else(|e| panic!("{e}")));
    assert!(fed.iter().all(|e| e["type"] != "region_close"), "{fed:?}");
    let fed = json(parser.feed("<").unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(
        fed,
        [json!({"type": "region_close", "field": "n", "value": "{}"})]
    );
}
