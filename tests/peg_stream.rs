//! End-to-end use of the PEG engine the way the parser generator and the streaming mapper
//! will use it: a constructed (XML-style) tool-call grammar over a real benchmark output,
//! parsed in one shot and streamed in small chunks.

use chatparse::peg::{Ast, Grammar, GrammarBuilder, Status};
use chatparse::shared_data::shared_path_or_skip;

/// Qwen3-Coder style: content, then `<tool_call>` `<function=NAME>` parameters `</function>`
/// `</tool_call>`.
fn qwen3_coder() -> Grammar {
    let b = GrammarBuilder::new().name("qwen3-coder");
    let arg = b.tag(
        "tool_arg",
        b.seq([
            b.literal("<parameter="),
            b.tag("tool_arg_name", b.chars("[a-zA-Z0-9_]", 1, None)),
            b.literal(">\n"),
            b.tag("tool_arg_string_value", b.until("\n</parameter>")),
            b.literal("\n</parameter>\n"),
        ]),
    );
    let call = b.trigger_rule(
        "tool-call",
        b.tag(
            "tool",
            b.seq([
                b.literal("<tool_call>\n<function="),
                b.atomic(b.tag("tool_name", b.chars("[a-zA-Z0-9_]", 1, None))),
                b.literal(">\n"),
                b.zero_or_more(arg),
                b.literal("</function>\n</tool_call>"),
            ]),
        ),
    );
    let root = b.seq([
        b.tag("content", b.until("<tool_call>")),
        b.zero_or_more(call),
        b.space(),
        b.end(),
    ]);
    b.build(root).unwrap()
}

fn texts<'a>(ast: &Ast<'_>, tag: &str, text: &'a str) -> Vec<&'a str> {
    ast.find(tag).map(|id| ast.text(id, text)).collect()
}

#[test]
fn qwen3_coder_tool_call_one_shot_and_streamed() {
    let Some(path) = shared_path_or_skip(
        "bench/llama-cpp/Qwen3-Coder/tool-10k.txt",
        "qwen3_coder_tool_call_one_shot_and_streamed",
    ) else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let g = qwen3_coder();
    let one = g.parse(&text);
    assert!(one.is_success(), "{:?}", one.error);
    assert_eq!(
        texts(&one.ast, "content", &text),
        ["I'll write the file now.\n"]
    );
    assert_eq!(texts(&one.ast, "tool_name", &text), ["write_file"]);
    assert_eq!(texts(&one.ast, "tool_arg_name", &text), ["path", "content"]);
    let tool = one.ast.find_first("tool").unwrap();
    assert_eq!(one.ast.children(tool).count(), 3); // tool_name, 2 × tool_arg

    // Streamed: partial values only grow, and the end result equals the one-shot parse.
    let mut s = g.session();
    let mut last_value = String::new();
    for chunk in text.as_bytes().chunks(5) {
        assert_eq!(s.feed(chunk), Status::NeedMore);
        let ast = s.ast();
        if let Some(id) = ast.find("tool_arg_string_value").last() {
            let value = ast.text(id, s.text());
            if ast.is_partial(id) && value.len() >= last_value.len() {
                assert!(value.starts_with(&last_value));
            }
            last_value = value.to_owned();
        }
        // The tool name is atomic: never shown half-written.
        if let Some(id) = ast.find_first("tool_name") {
            assert_eq!(ast.text(id, s.text()), "write_file");
        }
    }
    assert!(s.finish().is_success());
    assert_eq!(s.ast(), one.ast);
}

#[test]
fn failure_reports_furthest_position() {
    let g = qwen3_coder();
    let text =
        "hi<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_cal>";
    let p = g.parse(text);
    let e = p.error.unwrap();
    assert_eq!(e.rule(), Some("tool-call"));
    assert_eq!(e.grammar(), Some("qwen3-coder"));
    assert_eq!(e.expected(), ["`</function>\\n</tool_call>`"]);
    assert_eq!((e.line(), e.column()), (7, 11));
}
