//! Every shared template: the parser builds for a request with tools, and hostile outputs made
//! of the format's own markers never panic; the streamed message equals the one-shot parse.

use chatparse::analyze::analyze_cached;
use chatparse::generate::ChatParser;
use chatparse::message::ChatRequest;
use chatparse::shared_data::shared_path_or_skip;
use chatparse::template::ChatTemplate;
use serde_json::json;

/// A small deterministic generator (no external randomness: failures reproduce).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn marker_soup_never_panics_and_streams_like_one_shot() {
    let Some(dir) = shared_path_or_skip("templates", "marker_soup_never_panics") else {
        return;
    };
    let request: ChatRequest = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
            "properties": {"s": {"type": "string"}, "n": {"type": "integer"}}}}}],
        "parallel_tool_calls": true
    }))
    .unwrap();
    let pieces = [
        "hello ",
        "{",
        "}",
        "\"s\"",
        ": ",
        "1",
        "\n",
        "f",
        "=",
        "(",
        ")",
        "[",
        "]",
        "'x'",
        " ",
        "é🙂",
        "<",
        ">",
        "</",
        "name",
        "arguments",
        ",",
    ];
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    let mut rng = Lcg(7);
    for entry in entries {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "jinja") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let Ok(template) = ChatTemplate::new("t", source) else {
            continue;
        };
        let analysis = analyze_cached(&template);
        let parser = ChatParser::new(&template, &analysis, &request).unwrap();
        let mut vocabulary: Vec<String> = pieces.iter().map(|p| p.to_string()).collect();
        vocabulary.extend(parser.preserved_tokens().iter().cloned());
        vocabulary.extend(parser.triggers().iter().cloned());
        for _ in 0..60 {
            let len = rng.next(24);
            let output: String = (0..len)
                .map(|_| vocabulary[rng.next(vocabulary.len())].as_str())
                .collect();
            let one_shot = parser.parse(&output).message;
            let _ = parser.parse_partial(&output);
            let mut stream = parser.stream();
            let step = 1 + rng.next(5);
            for chunk in output.as_bytes().chunks(step) {
                let _ = stream.feed(chunk);
            }
            let (_, streamed) = stream.finish();
            assert_eq!(streamed.message, one_shot, "{}: {output:?}", path.display());
        }
    }
}
