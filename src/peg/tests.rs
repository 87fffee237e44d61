use super::testing::{check_invariants, Desc, GrammarDesc};
use super::*;
use proptest::prelude::*;

/// One-shot full and partial status of `root` (built by `f`) on `input`.
fn check(f: impl Fn(&GrammarBuilder) -> Parser, input: &str) -> (Status, Status) {
    let b = GrammarBuilder::new();
    let root = f(&b);
    let g = b.build(root).unwrap();
    (g.parse(input).status, g.parse_partial(input).status)
}

const MORE: Status = Status::NeedMore;
const FAIL: Status = Status::Failure;
fn ok(end: usize) -> Status {
    Status::Success { end }
}

#[test]
fn eps_start_end() {
    assert_eq!(check(|b| b.eps(), "x"), (ok(0), ok(0)));
    assert_eq!(check(|b| b.start(), ""), (ok(0), ok(0)));
    assert_eq!(check(|b| b.seq([b.any(), b.start()]), "xy"), (FAIL, FAIL));
    assert_eq!(check(|b| b.end(), ""), (ok(0), MORE));
    assert_eq!(check(|b| b.end(), "x"), (FAIL, FAIL));
}

#[test]
fn literal() {
    assert_eq!(check(|b| b.literal("abc"), "abcd"), (ok(3), ok(3)));
    assert_eq!(check(|b| b.literal("abc"), "ab"), (FAIL, MORE));
    assert_eq!(check(|b| b.literal("abc"), "abx"), (FAIL, FAIL));
    assert_eq!(check(|b| b.literal("abc"), ""), (FAIL, MORE));
}

#[test]
fn any_is_one_char() {
    assert_eq!(check(|b| b.any(), "日本"), (ok(3), ok(3)));
    assert_eq!(check(|b| b.any(), ""), (FAIL, MORE));
}

#[test]
fn seq_and_choice() {
    let g =
        |b: &GrammarBuilder| b.seq([b.literal("a"), b.choice([b.literal("b"), b.literal("c")])]);
    assert_eq!(check(g, "ac"), (ok(2), ok(2)));
    assert_eq!(check(g, "ad"), (FAIL, FAIL));
    assert_eq!(check(g, "a"), (FAIL, MORE));
    assert_eq!(check(|b| b.seq([]), "a"), (ok(0), ok(0)));
    assert_eq!(check(|b| b.choice([]), "a"), (FAIL, FAIL));
    // Ordered: the first match wins.
    assert_eq!(
        check(|b| b.choice([b.literal("a"), b.literal("ab")]), "ab"),
        (ok(1), ok(1))
    );
    // Need-more in the first alternative is need-more, not "try the next one".
    assert_eq!(
        check(|b| b.choice([b.literal("ab"), b.literal("a")]), "a"),
        (ok(1), MORE)
    );
}

#[test]
fn repetitions() {
    let a = |b: &GrammarBuilder| b.literal("a");
    assert_eq!(check(|b| b.zero_or_more(a(b)), "aab"), (ok(2), ok(2)));
    assert_eq!(check(|b| b.zero_or_more(a(b)), "aa"), (ok(2), MORE));
    assert_eq!(check(|b| b.one_or_more(a(b)), "b"), (FAIL, FAIL));
    assert_eq!(check(|b| b.one_or_more(a(b)), ""), (FAIL, MORE));
    assert_eq!(check(|b| b.optional(a(b)), "b"), (ok(0), ok(0)));
    assert_eq!(
        check(|b| b.repeat(a(b), 2, Some(3)), "aaaa"),
        (ok(3), ok(3))
    );
    assert_eq!(check(|b| b.repeat(a(b), 2, Some(3)), "ab"), (FAIL, FAIL));
    assert_eq!(check(|b| b.repeat(a(b), 0, Some(0)), "a"), (ok(0), ok(0)));
}

#[test]
fn repetition_without_progress_stops() {
    assert_eq!(check(|b| b.zero_or_more(b.eps()), "x"), (ok(0), ok(0)));
    assert_eq!(check(|b| b.repeat(b.eps(), 5, None), "x"), (ok(0), ok(0)));
    assert_eq!(
        check(|b| b.zero_or_more(b.optional(b.literal("a"))), "aab"),
        (ok(2), ok(2))
    );
}

#[test]
fn lookahead() {
    let g = |b: &GrammarBuilder| b.seq([b.peek(b.literal("ab")), b.any()]);
    assert_eq!(check(g, "ab"), (ok(1), ok(1)));
    assert_eq!(check(g, "ac"), (FAIL, FAIL));
    assert_eq!(check(g, "a"), (FAIL, MORE));
    let n = |b: &GrammarBuilder| b.seq([b.negate(b.literal("ab")), b.any()]);
    assert_eq!(check(n, "ac"), (ok(1), ok(1)));
    assert_eq!(check(n, "ab"), (FAIL, FAIL));
    assert_eq!(check(n, "a"), (ok(1), MORE));
}

#[test]
fn chars_classes() {
    let id = |b: &GrammarBuilder| b.chars("[a-zA-Z0-9_-]", 1, None);
    assert_eq!(check(id, "ab_-9 x"), (ok(5), ok(5)));
    assert_eq!(check(id, "ab"), (ok(2), MORE));
    assert_eq!(check(id, " "), (FAIL, FAIL));
    assert_eq!(
        check(|b| b.chars("[^<]", 0, Some(3)), "日本語x<"),
        (ok(9), ok(9))
    );
    assert_eq!(
        check(|b| b.chars("[^\\n]", 0, None), "ab\nc"),
        (ok(2), ok(2))
    );
    assert_eq!(
        check(|b| b.chars("[a-c]", 2, Some(2)), "abc"),
        (ok(2), ok(2))
    );
    let b = GrammarBuilder::new();
    let p = b.chars("[z-a]", 0, None);
    assert!(b.build(p).is_err());
}

#[test]
fn space_and_rest() {
    assert_eq!(check(|b| b.space(), " \t\nx"), (ok(3), ok(3)));
    assert_eq!(check(|b| b.space(), "  "), (ok(2), MORE));
    assert_eq!(check(|b| b.rest(), "abc"), (ok(3), MORE));
}

#[test]
fn until() {
    let u = |b: &GrammarBuilder| b.until("</think>");
    assert_eq!(check(u, "abc</think>x"), (ok(3), ok(3)));
    assert_eq!(check(u, "abc</th"), (ok(7), MORE));
    assert_eq!(check(u, ""), (ok(0), MORE));
    let b = GrammarBuilder::new();
    let p = b.until("");
    assert!(b.build(p).is_err());
}

#[test]
fn until_partial_span_stops_before_delimiter_prefix() {
    let b = GrammarBuilder::new();
    let root = b.tag("c", b.until("</think>"));
    let g = b.build(root).unwrap();
    for (input, text) in [
        ("abc</th", "abc"),
        ("abc<", "abc"),
        ("abc", "abc"),
        ("a<b", "a<b"),
    ] {
        let p = g.parse_partial(input);
        let id = p.ast.find_first("c").unwrap();
        assert!(p.ast.is_partial(id));
        assert_eq!(p.ast.text(id, input), text, "{input}");
    }
}

#[test]
fn until_one_of() {
    let u = |b: &GrammarBuilder| b.until_one_of(["<a>", "<b>", "xyz"]);
    assert_eq!(check(u, "12<b>"), (ok(2), ok(2)));
    assert_eq!(check(u, "12xy"), (ok(4), MORE));
    assert_eq!(check(u, "1<c>2"), (ok(5), MORE));
    // A later full match cannot be chosen while an earlier delimiter is still possible.
    assert_eq!(check(|b| b.until_one_of(["abc", "b"]), "ab"), (ok(1), MORE));
    assert_eq!(
        check(|b| b.until_one_of(["abc", "b"]), "abx"),
        (ok(1), ok(1))
    );
    let many = |b: &GrammarBuilder| b.until_one_of(["1", "2", "3", "4"]);
    assert_eq!(check(many, "ab4"), (ok(2), ok(2)));
}

#[test]
fn until_one_of_suffix_families() {
    // Two families (a closer and an opener, each with and without a line break before it):
    // the earliest start of any delimiter wins, whichever family's core is searched first.
    let u = |b: &GrammarBuilder| b.until_one_of(["\n</p>", "</p>", "\n<q=", "<q="]);
    assert_eq!(check(u, "ab\n</p>"), (ok(2), ok(2)));
    assert_eq!(check(u, "ab</p>"), (ok(2), ok(2)));
    assert_eq!(check(u, "ab\n<q=x</p>"), (ok(2), ok(2)));
    assert_eq!(check(u, "a<q=\n</p>"), (ok(1), ok(1)));
    assert_eq!(check(u, "a</p>b<q="), (ok(1), ok(1)));
    // No complete delimiter: stop before a partial one at the end.
    assert_eq!(check(u, "abc\n</"), (ok(6), MORE));
    assert_eq!(check(u, "abc<q"), (ok(5), MORE));
    assert_eq!(check(u, "abc"), (ok(3), MORE));
}

#[test]
fn rules_and_recursion() {
    let b = GrammarBuilder::new();
    // r = "(" r ")" / ""
    let body = b.choice([
        b.seq([b.literal("("), b.reference("r"), b.literal(")")]),
        b.eps(),
    ]);
    let r = b.rule("r", body);
    let root = b.seq([r, b.end()]);
    let g = b.build(root).unwrap();
    assert!(g.parse("((()))").is_success());
    assert!(g.parse("(()").is_failure());
    assert!(g.parse_partial("(()").is_need_more());
    assert_eq!(g.rule_names().collect::<Vec<_>>(), ["r"]);
}

#[test]
fn unknown_and_duplicate_rules_are_build_errors() {
    let b = GrammarBuilder::new();
    let root = b.reference("nope");
    let e = b.build(root).unwrap_err();
    assert_eq!(e.rule(), Some("nope"));
    assert_eq!(e.to_string(), "reference to unknown rule `nope`");
    let b = GrammarBuilder::new();
    b.rule("x", b.eps());
    let root = b.rule("x", b.eps());
    assert_eq!(
        b.build(root).unwrap_err().to_string(),
        "rule `x` is defined twice"
    );
}

#[test]
fn triggers_and_schemas() {
    let b = GrammarBuilder::new();
    let t = b.trigger_rule("call", b.literal("x"));
    let s = b.schema(b.json(), "args", serde_json::json!({"type": "object"}));
    let root = b.seq([b.rule("plain", b.eps()), t, s]);
    let g = b.build(root).unwrap();
    assert_eq!(g.trigger_rules().collect::<Vec<_>>(), ["call"]);
    assert_eq!(g.schemas().next().unwrap().0, "args");
    assert!(g.parse("x{}").is_success());
}

#[test]
fn tags_and_ast() {
    let b = GrammarBuilder::new();
    let item = b.tag("item", b.chars("[a-z]", 1, None));
    let list = b.tag(
        "list",
        b.seq([item, b.zero_or_more(b.seq([b.literal(","), item]))]),
    );
    let root = b.seq([b.tag("head", b.literal(">")), list, b.end()]);
    let g = b.build(root).unwrap();
    let input = ">ab,c,def";
    let p = g.parse(input);
    assert!(p.is_success());
    let ast = &p.ast;
    assert_eq!(ast.dump(input), "head 0..1 \">\"\nlist 1..9 \"ab,c,def\"\n  item 1..3 \"ab\"\n  item 4..5 \"c\"\n  item 6..9 \"def\"\n");
    let roots: Vec<_> = ast.roots().map(|id| ast.tag(id)).collect();
    assert_eq!(roots, ["head", "list"]);
    let list = ast.find_first("list").unwrap();
    let items: Vec<_> = ast.children(list).map(|id| ast.text(id, input)).collect();
    assert_eq!(items, ["ab", "c", "def"]);
    assert_eq!(ast.find_in(list, "item").count(), 3);
    assert_eq!(
        ast.node(ast.find_first("item").unwrap()).unwrap().parent(),
        Some(list)
    );
    let mut depths = Vec::new();
    ast.visit(|_, d| depths.push(d));
    assert_eq!(depths, [0, 0, 1, 1, 1]);
    // Partial: open tags are partial nodes.
    let p = g.parse_partial(">ab,c,de");
    assert_eq!(p.ast.dump(">ab,c,de"), "head 0..1 \">\"\nlist~ 1..8 \"ab,c,de\"\n  item 1..3 \"ab\"\n  item 4..5 \"c\"\n  item~ 6..8 \"de\"\n");
}

#[test]
fn backtracking_discards_nodes() {
    let b = GrammarBuilder::new();
    let root = b.choice([
        b.seq([b.tag("x", b.literal("a")), b.literal("b")]),
        b.tag("y", b.literal("ac")),
    ]);
    let g = b.build(root).unwrap();
    let p = g.parse("ac");
    assert_eq!(p.ast.dump("ac"), "y 0..2 \"ac\"\n");
}

#[test]
fn atomic_hides_partial_subtree() {
    let b = GrammarBuilder::new();
    let name = b.tag("name", b.literal("get_weather"));
    let root = b.tag(
        "tool",
        b.seq([
            b.literal("<"),
            b.atomic(b.tag("wrap", name)),
            b.literal(">"),
        ]),
    );
    let g = b.build(root).unwrap();
    let p = g.parse_partial("<get_wea");
    assert_eq!(p.ast.dump("<get_wea"), "tool~ 0..1 \"<\"\n");
    let p = g.parse_partial("<get_weather");
    assert_eq!(p.ast.len(), 3);
}

#[test]
fn undecided_lookahead_hides_its_nodes() {
    let b = GrammarBuilder::new();
    let root = b.seq([
        b.peek(b.tag("probe", b.literal("<tool_call>"))),
        b.tag("rest", b.rest()),
    ]);
    let g = b.build(root).unwrap();
    // Undecided: nothing of the lookahead shows (it would vanish once decided).
    let p = g.parse_partial("<tool_c");
    assert_eq!(p.ast.dump("<tool_c"), "");
    let mut s = g.session();
    s.feed_str("<tool");
    assert!(s.ast().find_first("probe").is_none());
    s.feed_str("_call> x");
    assert!(s.ast().find_first("probe").is_none());
    assert!(s.ast().find_first("rest").is_some());
}

#[test]
fn json_parsers() {
    assert_eq!(
        check(|b| b.json(), r#"{"a": [1, 2.5e3, "x\n"]}z"#),
        (ok(24), ok(24))
    );
    assert_eq!(check(|b| b.json(), r#"{"a": [1, 2"#), (FAIL, MORE));
    assert_eq!(check(|b| b.json_object(), "[1]"), (FAIL, FAIL));
    assert_eq!(check(|b| b.json_array(), "[1]"), (ok(3), ok(3)));
    assert_eq!(check(|b| b.json_string(), r#""a\"b""#), (ok(6), ok(6)));
    assert_eq!(check(|b| b.json_number(), "-12.5,"), (ok(5), ok(5)));
    assert_eq!(check(|b| b.json_number(), "-12.5"), (ok(5), MORE));
    assert_eq!(check(|b| b.json_bool(), "false"), (ok(5), ok(5)));
    assert_eq!(check(|b| b.json_bool(), "nul"), (FAIL, FAIL));
    assert_eq!(check(|b| b.json_null(), "nul"), (FAIL, MORE));
    let content =
        |b: &GrammarBuilder| b.seq([b.literal("\""), b.json_string_content(), b.literal("\"")]);
    assert_eq!(check(content, r#""a\"b"x"#), (ok(6), ok(6)));
    let member = |b: &GrammarBuilder| b.json_member("name", b.json_string());
    assert_eq!(check(member, r#""name" : "x""#), (ok(12), ok(12)));
    assert_eq!(check(member, r#""nam"#), (FAIL, MORE));
}

#[test]
fn python_flavour() {
    let b = GrammarBuilder::new().python_dict(true);
    let root = b.seq([b.literal("{"), b.json_member("a", b.json()), b.literal("}")]);
    let g = b.build(root).unwrap();
    assert!(g.parse("{'a': {'b': True, 'c': None}}").is_success());
    assert!(g.parse(r#"{"a": 'x'}"#).is_success());
    let b = GrammarBuilder::new();
    let root = b.json();
    assert!(b.build(root).unwrap().parse("{'a': 1}").is_failure());
}

#[test]
fn error_position_line_column_expected() {
    let b = GrammarBuilder::new().name("think");
    let think = b.rule(
        "reasoning",
        b.seq([
            b.literal("<think>"),
            b.until("</think>"),
            b.literal("</think>"),
        ]),
    );
    let root = b.seq([
        think,
        b.literal("\n"),
        b.choice([b.literal("A"), b.json()]),
        b.end(),
    ]);
    let g = b.build(root).unwrap();
    let input = "<think>x\ny</think>\n?";
    let p = g.parse(input);
    let e = p.error.unwrap();
    assert_eq!((e.offset(), e.line(), e.column()), (19, 3, 1));
    assert_eq!(e.expected(), ["`A`", "JSON value"]);
    assert_eq!(e.grammar(), Some("think"));
    assert_eq!(
        e.to_string(),
        "parse error at line 3, column 1 (byte 19) of grammar `think`: expected `A` or JSON value"
    );
    let e = g.parse("<think>x").error.unwrap();
    assert_eq!(e.expected(), ["`</think>`"]);
    assert_eq!(e.rule(), Some("reasoning"));
    assert_eq!(e.offset(), 8);
    let e = g.parse("<tink>").error.unwrap();
    assert_eq!((e.offset(), e.column()), (2, 3));
    let e = g.parse("<think>日本</think>\nA!").error.unwrap();
    assert_eq!((e.offset(), e.line(), e.column()), (23, 2, 2));
    assert_eq!(e.expected(), ["end of input"]);
}

#[test]
fn dump_snapshot() {
    let b = GrammarBuilder::new().name("demo").python_dict(true);
    let args = b.schema(b.json_object(), "args", serde_json::json!({}));
    let call = b.trigger_rule(
        "call",
        b.seq([
            b.literal("<call \"x\">\t"),
            b.json_member("arguments", b.tag("args", args)),
            b.repeat(b.chars("[^<]", 1, Some(4)), 2, None),
            b.negate(b.until_one_of(["<a>", "<b>"])),
            b.atomic(b.peek(b.any())),
        ]),
    );
    let root = b.seq([
        b.start(),
        b.space(),
        b.one_or_more(b.reference("call")),
        b.rest(),
        b.end(),
    ]);
    let _ = call;
    assert_eq!(
        b.build(root).unwrap().dump(),
        "grammar demo (flavour python)\n\
         root = seq(start, space, one_or_more(ref call), rest, end)\n\
         rule call [trigger] = seq(\"<call \\\"x\\\">\\t\", seq(json_key(\"arguments\"), space, \":\", space, \
         tag(args, schema(args, json_object))), repeat(chars([^<], 1, 4), 2, *), \
         negate(until_one_of(\"<a>\", \"<b>\")), atomic(peek(any)))\n"
    );
}

#[test]
fn invalid_utf8_is_replaced_and_reported() {
    let b = GrammarBuilder::new();
    let root = b.seq([b.tag("c", b.until("<end>")), b.literal("<end>")]);
    let g = b.build(root).unwrap();
    let input = b"ab\xffc\xe6\x97<end>";
    let p = g.parse_bytes(input, false);
    assert!(p.is_success());
    assert_eq!(p.utf8_errors.len(), 2);
    assert_eq!((p.utf8_errors[0].offset, p.utf8_errors[1].offset), (2, 4));
    let mut s = g.session();
    for byte in input {
        s.feed(std::slice::from_ref(byte));
    }
    assert!(s.status().is_success());
    assert_eq!(s.text(), "ab\u{fffd}c\u{fffd}<end>");
    assert_eq!(s.utf8_errors(), &p.utf8_errors[..]);
    // A split code point is held back, not replaced.
    let mut s = g.session();
    s.feed(b"x\xe6");
    assert_eq!(s.text(), "x");
    s.feed(b"\x97\xa5<end>");
    assert_eq!(s.text(), "x日<end>");
    assert!(s.utf8_errors().is_empty());
    // Held back at the end: replaced at finish.
    let mut s = g.session();
    s.feed(b"x\xe6");
    assert_eq!(s.finish(), Status::Failure);
    assert_eq!(s.text(), "x\u{fffd}");
    assert_eq!(s.utf8_errors()[0].offset, 1);
}

#[test]
fn deep_json_is_bounded() {
    let input = "[".repeat(1 << 20);
    let b = GrammarBuilder::new();
    let root = b.json();
    let g = b.build(root).unwrap();
    let p = g.parse(&input);
    assert!(p.is_failure());
    assert_eq!(p.error.unwrap().offset(), crate::json::DEFAULT_MAX_DEPTH);
    let p = g.parse_partial(&input);
    assert!(p.is_failure());
}

#[test]
fn deep_recursion_is_a_depth_error() {
    let b = GrammarBuilder::new();
    let body = b.choice([
        b.seq([b.literal("["), b.reference("r"), b.literal("]")]),
        b.eps(),
    ]);
    let root = b.rule("r", body);
    let g = b.build(root).unwrap();
    let input = "[".repeat(1 << 20);
    let p = g.parse(&input);
    let e = p.error.unwrap();
    assert_eq!(e.kind(), ParseErrorKind::DepthLimit);
    // Left recursion is caught the same way.
    let b = GrammarBuilder::new();
    let body = b.choice([b.seq([b.reference("l"), b.literal("x")]), b.literal("x")]);
    let root = b.rule("l", body);
    let g = b.build(root).unwrap();
    assert_eq!(
        g.parse("xx").error.unwrap().kind(),
        ParseErrorKind::DepthLimit
    );
}

#[test]
fn backtracking_is_not_exponential() {
    // a = "(" a ")" "x" / "(" a ")" "y" / "z": without memoization this is 2^depth.
    let b = GrammarBuilder::new();
    let inner = || b.seq([b.literal("("), b.reference("a"), b.literal(")")]);
    let body = b.choice([
        b.seq([inner(), b.literal("x")]),
        b.seq([inner(), b.literal("y")]),
        b.literal("z"),
    ]);
    let root = b.rule("a", body);
    let g = b.build(root).unwrap();
    let depth = 200;
    let input = format!("{}z{}", "(".repeat(depth), ")y".repeat(depth));
    let p = g.parse(&input);
    assert!(p.is_success());
    assert!(p.work < 100 * input.len() as u64, "work {}", p.work);
}

fn content_grammar() -> Grammar {
    let b = GrammarBuilder::new();
    let call = b.seq([
        b.literal("<tool_call>"),
        b.tag("args", b.json()),
        b.literal("</tool_call>"),
    ]);
    let root = b.seq([
        b.tag("content", b.until("<tool_call>")),
        b.optional(call),
        b.end(),
    ]);
    b.build(root).unwrap()
}

#[test]
fn incremental_work_is_linear() {
    let g = content_grammar();
    let n = 1 << 20;
    let text: String = "lorem ipsum <tool dolor\n"
        .chars()
        .cycle()
        .take(n)
        .collect();
    let mut s = g.session();
    for chunk in text.as_bytes().chunks(4) {
        assert_eq!(s.feed(chunk), Status::NeedMore);
    }
    assert!(s.finish().is_success());
    assert!(s.work() <= 8 * n as u64, "work {} for {n} bytes", s.work());
    // A long JSON string and many small JSON tokens, fed in 3-byte chunks.
    for args in [
        format!("{{\"s\": \"{}\"}}", "ab\\\"".repeat(n / 4)),
        format!("[{}1]", "1, {\"a\": [true, null]}, ".repeat(n / 24)),
    ] {
        let text = format!("hi<tool_call>{args}</tool_call>");
        let mut s = g.session();
        for chunk in text.as_bytes().chunks(3) {
            s.feed(chunk);
        }
        assert!(s.finish().is_success());
        assert!(s.work() <= 8 * text.len() as u64, "work {}", s.work());
    }
    // Repetitions and sequences resume where they were.
    let b = GrammarBuilder::new();
    let item = b.tag("w", b.chars("[a-z]", 1, None));
    let root = b.seq([b.zero_or_more(b.seq([item, b.literal(" ")])), b.end()]);
    let g = b.build(root).unwrap();
    let text = "abc de f ".repeat(n / 9);
    let mut s = g.session();
    for chunk in text.as_bytes().chunks(4) {
        s.feed(chunk);
    }
    assert!(s.finish().is_success());
    assert!(s.work() <= 8 * text.len() as u64, "work {}", s.work());
}

#[test]
fn chunked_equals_one_shot_on_tool_call() {
    let g = content_grammar();
    let text = r#"Let me call <tool> <tool_call>{"a": [1, "x\u00e9\"", {"b": null}], "c": -1.5e3}</tool_call>"#;
    for size in 1..8 {
        let cuts: Vec<usize> = (0..text.len()).step_by(size).collect();
        check_invariants(&g, text.as_bytes(), &cuts).unwrap();
    }
}

fn arb_desc() -> impl Strategy<Value = Desc> {
    let word = prop::sample::select(vec!["a", "b", "ab", "ba", "<x>", "{", "}", "\"", " ", "é"]);
    let leaf = prop_oneof![
        Just(Desc::Eps),
        Just(Desc::End),
        Just(Desc::Any),
        Just(Desc::Space),
        Just(Desc::Rest),
        Just(Desc::Json),
        Just(Desc::JsonString),
        Just(Desc::JsonNumber),
        Just(Desc::Ref),
        word.clone().prop_map(|w| Desc::Lit(w.into())),
        word.clone().prop_map(|w| Desc::Until(w.into())),
        prop::collection::vec(word.clone(), 1..3)
            .prop_map(|v| Desc::UntilOneOf(v.into_iter().map(String::from).collect())),
        (
            prop::sample::select(vec!["[a-b]", "[^a]", "[ <>x]"]),
            0..2u32,
            prop::option::of(1..3u32)
        )
            .prop_map(|(c, min, max)| Desc::Chars(c.into(), min, max)),
    ];
    leaf.prop_recursive(4, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Desc::Seq),
            prop::collection::vec(inner.clone(), 0..4).prop_map(Desc::Choice),
            (inner.clone(), 0..2u32, prop::option::of(1..3u32))
                .prop_map(|(p, min, max)| Desc::Repeat(Box::new(p), min, max)),
            inner.clone().prop_map(|p| Desc::Peek(Box::new(p))),
            inner.clone().prop_map(|p| Desc::Negate(Box::new(p))),
            (prop::sample::select(vec!["t", "u"]), inner.clone())
                .prop_map(|(t, p)| Desc::Tag(t.into(), Box::new(p))),
            inner.clone().prop_map(|p| Desc::Atomic(Box::new(p))),
            inner
                .clone()
                .prop_map(|p| Desc::JsonMember("a".into(), Box::new(p))),
        ]
    })
}

fn arb_input() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop::sample::select(vec![
        "a", "b", "ab", "<x>", "<", "{", "}", "\"", " ", "é", "1", "[", "]", ":", ",", "\"a\"",
        "\\", "true", "null", "\u{ff}",
    ]);
    (prop::collection::vec(piece, 0..12), any::<bool>()).prop_map(|(v, bad)| {
        let mut bytes = v.concat().into_bytes();
        if bad && !bytes.is_empty() {
            let at = bytes.len() / 2;
            bytes.insert(at, 0xE6);
        }
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    #[test]
    fn prop_invariants(
        root in arb_desc(),
        rule in prop::option::of(arb_desc()),
        python in any::<bool>(),
        input in arb_input(),
        cuts in prop::collection::vec(0..40usize, 0..6),
    ) {
        let g = GrammarDesc { root, rule, python }.build().unwrap();
        if let Err(e) = check_invariants(&g, &input, &cuts) {
            panic!("{e}\n{}", g.dump());
        }
    }

    #[test]
    fn prop_valid_inputs(
        input in "(a|b|<x>| |\\{\"a\": \\[1, \"b\"\\]\\})*",
        cuts in prop::collection::vec(0..40usize, 0..6),
    ) {
        // A grammar the inputs always match, so the prefix property is exercised.
        let b = GrammarBuilder::new();
        let item = b.choice([b.tag("j", b.json()), b.tag("x", b.literal("<x>")), b.chars("[ab ]", 1, None)]);
        let root = b.seq([b.zero_or_more(item), b.end()]);
        let g = b.build(root).unwrap();
        prop_assert!(g.parse(&input).is_success());
        check_invariants(&g, input.as_bytes(), &cuts).unwrap();
    }
}

#[test]
fn session_lifecycle() {
    let b = GrammarBuilder::new();
    let root = b.literal("ab");
    let g = b.build(root).unwrap();
    let mut s = g.session();
    assert_eq!(s.status(), Status::NeedMore);
    assert_eq!(s.feed(b"a"), Status::NeedMore);
    assert_eq!(s.feed(b"bc"), Status::Success { end: 2 });
    // Success is final; more text is kept but changes nothing.
    assert_eq!(s.feed(b"zz"), Status::Success { end: 2 });
    assert_eq!(s.text(), "abczz");
    assert_eq!(s.finish(), Status::Success { end: 2 });
    assert!(s.is_finished());
    assert_eq!(s.feed(b"more"), Status::Success { end: 2 });
    assert_eq!(s.text(), "abczz");
    // Failure is final too, with an error.
    let mut s = g.session();
    assert_eq!(s.feed(b"ax"), Status::Failure);
    assert_eq!(s.error().unwrap().expected(), ["`ab`"]);
    // Finishing without input.
    let mut s = g.session();
    assert_eq!(s.finish(), Status::Failure);
}

#[test]
fn grammar_and_session_are_thread_friendly() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Grammar>();
    send::<Session<'static>>();
}

#[test]
fn empty_ast_navigation() {
    let b = GrammarBuilder::new();
    let root = b.eps();
    let g = b.build(root).unwrap();
    let p = g.parse("");
    assert!(p.ast.is_empty());
    assert_eq!(p.ast.roots().count(), 0);
    assert_eq!(p.ast.find("nothing").count(), 0);
}

#[test]
fn shared_bench_files_chunked_equal_one_shot() {
    let Some(dir) = crate::shared_data::shared_path_or_skip(
        "bench/llama-cpp/Qwen2.5-7B",
        "shared_bench_files_chunked_equal_one_shot",
    ) else {
        return;
    };
    let b = GrammarBuilder::new();
    let call = b.seq([
        b.literal("<tool_call>"),
        b.space(),
        b.tag("tool", b.json_object()),
        b.space(),
        b.literal("</tool_call>"),
    ]);
    let root = b.seq([
        b.tag("content", b.until("<tool_call>")),
        b.optional(call),
        b.space(),
        b.end(),
    ]);
    let g = b.build(root).unwrap();
    for name in ["content-10k.txt", "tool-10k.txt", "tool-100k.txt"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let one = g.parse(&text);
        assert!(one.is_success(), "{name}: {:?}", one.error);
        let mut s = g.session();
        for chunk in text.as_bytes().chunks(7) {
            s.feed(chunk);
        }
        assert_eq!(s.finish(), one.status);
        assert_eq!(s.ast(), one.ast);
        assert!(
            s.work() <= 4 * text.len() as u64,
            "{name}: work {}",
            s.work()
        );
    }
}

proptest! {
    #[test]
    fn prop_incremental_utf8_matches_lossy(
        bytes in prop::collection::vec(prop::sample::select(
            b"a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\xff\x80\xed\xa0".to_vec()), 0..32),
        chunk in 1..6usize,
    ) {
        let b = GrammarBuilder::new();
        let root = b.rest();
        let g = b.build(root).unwrap();
        let mut s = g.session();
        for piece in bytes.chunks(chunk) {
            s.feed(piece);
        }
        s.finish();
        let lossy = String::from_utf8_lossy(&bytes);
        prop_assert_eq!(s.text(), &*lossy);
        let one = g.parse_bytes(&bytes, false);
        prop_assert_eq!(s.utf8_errors(), &one.utf8_errors[..]);
    }
}

#[test]
fn deeply_nested_grammar_is_a_depth_error_not_a_crash() {
    let b = GrammarBuilder::new();
    let mut p = b.literal("x");
    for _ in 0..100_000 {
        p = b.optional(b.seq([p]));
    }
    let g = b.build(p).unwrap();
    let e = g.parse("x").error.unwrap();
    assert_eq!(e.kind(), ParseErrorKind::DepthLimit);
    assert!(g.dump().contains('…'));
    let mut s = g.session();
    assert_eq!(s.feed(b"x"), Status::Failure);
}

#[test]
fn rule_memo_reuses_tagged_results() {
    // The same rule is tried twice at the same offset; the second time comes from the memo
    // and must reproduce the same nodes.
    let b = GrammarBuilder::new();
    let item = b.rule(
        "item",
        b.tag(
            "item",
            b.seq([b.tag("k", b.chars("[a-z]", 1, None)), b.literal("=1")]),
        ),
    );
    let root = b.choice([b.seq([item, b.literal(";")]), b.seq([item, b.literal(".")])]);
    let g = b.build(root).unwrap();
    let p = g.parse("abc=1.");
    assert!(p.is_success());
    assert_eq!(
        p.ast.dump("abc=1."),
        "item 0..5 \"abc=1\"\n  k 0..3 \"abc\"\n"
    );
}

#[test]
fn suffix_family_until_matches_the_general_search() {
    // `["\n</p>", "</p>"]` takes the memmem path (the core `</p>` ends both delimiters); adding
    // a delimiter that never occurs and is not in the family forces the general loop.
    let grammar = |extra: bool| {
        let b = GrammarBuilder::new();
        let mut delims = vec!["\n</p>", "</p>"];
        if extra {
            delims.push("\u{1}zz");
        }
        let root = b.seq([
            b.tag("v", b.until_one_of(&delims)),
            b.optional(b.literal("\n")),
            b.literal("</p>"),
            b.tag("rest", b.rest()),
        ]);
        b.build(root).unwrap()
    };
    let (family, general) = (grammar(false), grammar(true));
    let texts = [
        "a < b\n<p\n</p>tail",
        "x</p>",
        "\n</p>",
        "line\n\n</p>\n</p>",
        "no end <\n</",
        "<</p</p>",
        "",
        "\n",
        "ab\n</",
    ];
    for text in texts {
        for cut in 0..=text.len() {
            let prefix = &text[..cut];
            let (f, g) = (family.parse_partial(prefix), general.parse_partial(prefix));
            assert_eq!((f.status, &f.ast), (g.status, &g.ast), "partial {prefix:?}");
            let (f, g) = (family.parse(prefix), general.parse(prefix));
            assert_eq!((f.status, &f.ast), (g.status, &g.ast), "full {prefix:?}");
        }
        for size in 1..5 {
            let mut s = family.session();
            for chunk in text.as_bytes().chunks(size) {
                s.feed(chunk);
            }
            s.finish();
            let one = general.parse(text);
            assert_eq!(
                (s.status(), s.ast()),
                (one.status, one.ast),
                "{text:?} in {size}"
            );
        }
    }
}

#[test]
fn feeds_inside_a_leaf_only_move_the_frontier() {
    use crate::peg::Change;
    let g = content_grammar();
    let mut s = g.session();
    s.feed(b"hello");
    let mut frontier_only = 0;
    for chunk in b" there, a long text without markers".chunks(4) {
        s.feed(chunk);
        if let Change::Frontier(at) = s.last_change() {
            frontier_only += 1;
            // What the AST would show: the open content node ends there.
            let ast = s.ast();
            let id = ast.find_first("content").unwrap();
            assert!(ast.is_partial(id));
            assert_eq!(ast.span(id).end, at);
        }
    }
    assert!(frontier_only >= 8, "{frontier_only}");
    // A marker changes the tree.
    s.feed(b"<tool_call>{");
    assert_eq!(s.last_change(), Change::Tree);
    // Inside the JSON arguments: only the scanner advances.
    s.feed(b"\"name\": \"f\", \"arguments\": {\"s\": \"");
    s.feed(b"abcd");
    assert!(matches!(s.last_change(), Change::Frontier(_)));
    s.finish();
}
