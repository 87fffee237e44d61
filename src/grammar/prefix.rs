//! What a grammar expression reads after a literal the prompt already wrote.
//!
//! A prompt may end with the opener of a call (a recipient marker every message opens with):
//! the model's first call then starts after it. [`after_literal`] gives the language of an
//! expression after such a literal at its start, so a lazy grammar can start right there.

use super::ir::{whitespace, Expr, Rules};
use super::GrammarError;

/// How deep rule references are followed.
const MAX_DEPTH: usize = 24;

/// The language of `e` after `word` at its start (whitespace `e` allows before it skipped):
/// `Some(rest)` when a literal path of `e` starts with `word`. A rule that reads a call (it has
/// a role) is copied with its rest, keeping the role.
pub fn after_literal(
    rules: &mut Rules,
    e: &Expr,
    word: &str,
) -> Result<Option<Expr>, GrammarError> {
    after(rules, e, word, 0)
}

fn after(
    rules: &mut Rules,
    e: &Expr,
    word: &str,
    depth: usize,
) -> Result<Option<Expr>, GrammarError> {
    if word.is_empty() {
        return Ok(Some(e.clone()));
    }
    if depth > MAX_DEPTH {
        return Ok(None);
    }
    Ok(match e {
        Expr::Literal(s) => s.strip_prefix(word).map(Expr::lit),
        Expr::Ref(id) => {
            let rule = rules.rule(*id).clone();
            match after(rules, &rule.body, word, depth + 1)? {
                Some(rest) if rule.role.is_some() => {
                    let copy = rules.define(&format!("{}-after-prompt", rule.name), rest)?;
                    rules.rule_mut(copy).role = rule.role.clone();
                    Some(Expr::Ref(copy))
                }
                found => found,
            }
        }
        Expr::Alt(items) => {
            let mut found = Vec::new();
            for item in items {
                found.extend(after(rules, item, word, depth + 1)?);
            }
            (!found.is_empty()).then(|| Expr::alt(found))
        }
        Expr::Seq(items) => {
            let Some((first, rest)) = items.split_first() else {
                return Ok(None);
            };
            let tail = Expr::seq(rest.iter().cloned());
            if let Some(r) = after(rules, first, word, depth + 1)? {
                Some(Expr::seq([r, tail]))
            } else if let Some(more) = match first {
                Expr::Literal(s) => word.strip_prefix(s.as_str()),
                _ => None,
            } {
                after(rules, &tail, more, depth + 1)?
            } else if only_whitespace(first) && !word.starts_with(char::is_whitespace) {
                after(rules, &tail, word, depth + 1)?
            } else {
                None
            }
        }
        Expr::Repeat { expr, min, max } if *min >= 1 => {
            let Some(r) = after(rules, expr, word, depth + 1)? else {
                return Ok(None);
            };
            let again = Expr::repeat((**expr).clone(), min - 1, max.map(|m| m - 1));
            Some(Expr::seq([r, again]))
        }
        _ => None,
    })
}

/// Whether `e` reads only (possibly no) whitespace.
fn only_whitespace(e: &Expr) -> bool {
    let ws = whitespace();
    match e {
        Expr::Empty => true,
        Expr::Class(c) => c
            .ranges()
            .iter()
            .all(|&(a, b)| (a..=b).all(|ch| ws.contains(ch))),
        Expr::Repeat { expr, .. } => only_whitespace(expr),
        Expr::Seq(items) | Expr::Alt(items) => items.iter().all(only_whitespace),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_after_a_literal_the_prompt_wrote() {
        let mut rules = Rules::new();
        let call = Expr::seq([
            Expr::space(),
            Expr::lit("<|to|>"),
            Expr::alt([Expr::lit("get"), Expr::lit("put")]),
            Expr::lit("<|body|>"),
        ]);
        let rest = after_literal(&mut rules, &call, "<|to|>").unwrap().unwrap();
        assert_eq!(
            rest,
            Expr::seq([
                Expr::alt([Expr::lit("get"), Expr::lit("put")]),
                Expr::lit("<|body|>")
            ])
        );
        // A word that runs past the first literal, and one that starts no text.
        let split = Expr::seq([Expr::lit("<|"), Expr::lit("to|>x")]);
        assert_eq!(
            after_literal(&mut rules, &split, "<|to|>").unwrap(),
            Some(Expr::lit("x"))
        );
        assert_eq!(after_literal(&mut rules, &call, "<|from|>").unwrap(), None);
    }
}
