//! `chatparse diff A B [--files] [--json]` / `chatparse diff --pair FILE`: shows the diff split
//! of two strings.

use crate::diff::{diff_split, segments, DiffSplit, SegmentKind};
use clap::Args;
use std::path::Path;
use std::process::ExitCode;

/// Split two strings into common prefix, what differs (left: only in A, right: only in B) and
/// common suffix, never cutting through a `<...>` / `[...]` marker.
///
/// Whitespace is shown: `⏎` ends a line, `→` is a tab, `·` a trailing space.
/// Example: `chatparse diff --pair corpus/diff/chatml-generation-prompt`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first string (with --files: a path).
    #[arg(required_unless_present = "pair")]
    a: Option<String>,
    /// The second string (with --files: a path).
    #[arg(required_unless_present = "pair")]
    b: Option<String>,
    /// Read A and B from these files.
    #[arg(long)]
    files: bool,
    /// Read A and B from one file holding A, a NUL byte, then B (the encoding of the seeds in
    /// corpus/diff/).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["a", "b", "files"])]
    pair: Option<String>,
    /// Print the split as a JSON object {prefix, left, right, suffix}.
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand.
pub fn run(args: &DiffArgs) -> ExitCode {
    let (a, b) = match inputs(args) {
        Ok(inputs) => inputs,
        Err(error) => {
            eprintln!("chatparse diff: {error}");
            return ExitCode::from(2);
        }
    };
    let split = diff_split(&a, &b);
    if args.json {
        println!("{}", to_json(&split));
    } else {
        print!("{}", render(&split));
    }
    ExitCode::SUCCESS
}

/// A and B as the arguments give them: literally, from two files, or from one NUL-separated file.
fn inputs(args: &DiffArgs) -> Result<(String, String), String> {
    if let Some(path) = &args.pair {
        let text = read(path)?;
        return match text.split_once('\0') {
            Some((a, b)) => Ok((a.to_owned(), b.to_owned())),
            None => Err(format!("{path} holds no NUL byte separating A from B")),
        };
    }
    let (a, b) = (
        args.a.clone().unwrap_or_default(),
        args.b.clone().unwrap_or_default(),
    );
    if args.files {
        Ok((read(&a)?, read(&b)?))
    } else {
        Ok((a, b))
    }
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(Path::new(path)).map_err(|error| format!("cannot read {path}: {error}"))
}

/// The split as a one-line JSON object.
pub fn to_json(split: &DiffSplit<'_>) -> String {
    serde_json::json!({
        "prefix": split.prefix,
        "left": split.left,
        "right": split.right,
        "suffix": split.suffix,
    })
    .to_string()
}

/// The split as labelled blocks with visible whitespace and the markers of each part listed.
pub fn render(split: &DiffSplit<'_>) -> String {
    let parts = [
        ("prefix", "common start", split.prefix),
        ("left", "only in A", split.left),
        ("right", "only in B", split.right),
        ("suffix", "common end", split.suffix),
    ];
    let mut out = String::new();
    for (name, what, text) in parts {
        let markers: Vec<&str> = segments(text)
            .filter(|segment| segment.kind == SegmentKind::Marker)
            .map(|segment| segment.text)
            .collect();
        let plural = if markers.len() == 1 { "" } else { "s" };
        out.push_str(&format!(
            "── {name}: {what}, {} bytes, {} marker{plural} ──\n",
            text.len(),
            markers.len()
        ));
        if text.is_empty() {
            out.push_str("(empty)\n");
        } else {
            out.push_str(&visible(text));
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// `text` with whitespace made visible: `⏎` before each line break, `→` for tabs, `␍` for
/// carriage returns and `·` for spaces at the end of a line or of the text.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push_str("⏎\n");
        }
        let body = line.trim_end_matches(' ');
        out.push_str(&body.replace('\t', "→").replace('\r', "␍"));
        out.extend(std::iter::repeat_n('·', line.len() - body.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_marks_whitespace() {
        assert_eq!(visible("a \n\tb"), "a·⏎\n→b");
        assert_eq!(visible("x\n"), "x⏎\n");
    }

    #[test]
    fn render_labels_every_part() {
        let a = "<|im_start|>user\nHi<|im_end|>\n";
        let b = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
        let shown = render(&diff_split(a, b));
        assert!(shown.contains(
            "── right: only in B, 22 bytes, 1 marker ──\n<|im_start|>assistant⏎\n── suffix"
        ));
        assert!(shown.contains("── left: only in A, 0 bytes, 0 markers ──\n(empty)\n"));
        assert_eq!(
            to_json(&diff_split("a<1>", "a<2>")),
            r#"{"prefix":"a","left":"<1>","right":"<2>","suffix":""}"#
        );
    }
}
