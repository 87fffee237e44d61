//! Prose of a prompt read for what it tells the model to write: labels it quotes (`Write
//! 'Action:' followed by …`) and the sentences around them. Shared by the stated tool-call
//! formats (`tools::stated`) and the stated reasoning (`stated_reasoning`).

/// Words that turn a sentence into a prohibition ("never write <x>", "don't use JSON").
pub const NEGATIONS: &[&str] = &["not", "never", "no", "without", "don", "t", "avoid"];

/// The longest label a sentence may quote, in bytes.
const LABEL_BYTES: usize = 40;

/// The most words a label may have.
const LABEL_WORDS: usize = 6;

/// Labels the prose quotes for the model to write (`Write 'Action:' followed by …`): a quoted
/// run of at most [`LABEL_WORDS`] words that ends in a colon, in order, each once. A quote glued to a
/// letter before it is an apostrophe, never an opening quote.
pub fn quoted_labels(text: &str) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    let mut prev = ' ';
    for (i, q) in text.char_indices() {
        let opens = matches!(q, '\'' | '"' | '`') && !prev.is_alphanumeric();
        prev = q;
        if !opens {
            continue;
        }
        let rest = &text[i + 1..];
        let Some(end) = rest.find(q).filter(|&e| e <= LABEL_BYTES) else {
            continue;
        };
        let inner = &rest[..end];
        let words = inner.split(' ').count();
        let label = inner.ends_with(':')
            && inner.starts_with(char::is_alphanumeric)
            && words <= LABEL_WORDS
            && !inner.contains("  ")
            && !inner.contains(|c: char| c != ' ' && c.is_whitespace())
            && !inner.contains(['\'', '"', '`']);
        if label && !labels.iter().any(|l| l == inner) {
            labels.push(inner.to_owned());
        }
    }
    labels
}

/// Where the sentence holding byte `at` of `text` starts: right after the last full stop
/// (followed by whitespace) or line break before `at`, or at the start.
pub fn sentence_start(text: &str, at: usize) -> usize {
    let before = &text[..at];
    before
        .char_indices()
        .rev()
        .find(|&(i, c)| {
            let next = before[i + c.len_utf8()..].chars().next();
            c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_some_and(char::is_whitespace))
        })
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// The lower-case words of `text` (letters only), each with its end offset.
pub fn words(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_alphabetic(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((i, text[s..i].to_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_the_prose_quotes() {
        let t =
            "Write 'Call:' followed by a list, or \"Final answer:\" then text. It's `Tool use:`.";
        assert_eq!(quoted_labels(t), ["Call:", "Final answer:", "Tool use:"]);
        // Apostrophes, quoted prose and quoted words without a colon are no labels.
        let t = "the model's 'own' words: don't 'say this: please' or 'a b c d e f g:'";
        assert!(quoted_labels(t).is_empty());
        assert!(quoted_labels("'Call:\n'").is_empty());
    }

    #[test]
    fn sentences_and_words() {
        let t = "First one. Then write 'A:' here";
        let at = sentence_start(t, t.find("'A").unwrap());
        assert_eq!(&t[at..], " Then write 'A:' here");
        let found: Vec<String> = words("Don't use <think>!")
            .into_iter()
            .map(|(_, w)| w)
            .collect();
        assert_eq!(found, ["don", "t", "use", "think"]);
        assert_eq!(words("ab cd")[1], (5, "cd".to_owned()));
    }
}
