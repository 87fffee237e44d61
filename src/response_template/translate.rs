//! Translating Python regular expressions (`re`/`regex` syntax, `DOTALL` only) to the syntax
//! of Rust's engines.
//!
//! Rules: `(?P<name>...)` is kept; `\Z` becomes `\z`; `$` (end, or before a final newline)
//! becomes `(?:\n?\z)`, so the match swallows that final newline instead of stopping before
//! it; `\b`/`\B` are ASCII word boundaries for the automata (a DFA cannot do Unicode ones);
//! escaped punctuation such as `\<` is a literal; a `{` that does not start a repetition is a
//! literal and `{,n}` means `{0,n}`; `[` inside a class is a literal; `(?#...)` comments are
//! dropped. For [`Target::Automaton`], lookarounds, backreferences, atomic groups and
//! possessive quantifiers are errors; [`Target::Backtracking`] passes them through.

/// Which engine a translation targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The finite-automata engines: no lookaround, no backreference.
    Automaton,
    /// `fancy-regex`: lookarounds and backreferences allowed.
    Backtracking,
}

/// Translates a Python pattern to Rust `regex` syntax. Errors name the unsupported construct.
pub(crate) fn translate(py: &str, target: Target) -> Result<String, String> {
    let chars: Vec<char> = py.chars().collect();
    let mut out = String::with_capacity(py.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    while let Some(&c) = chars.get(i) {
        if in_class {
            match c {
                '\\' => {
                    let next = chars.get(i + 1).copied();
                    match next {
                        None => return Err("pattern ends with a lone backslash".into()),
                        Some('b') => out.push_str("\\x08"),
                        Some(n) if n.is_ascii_alphanumeric() => {
                            escape_alnum(&chars, &mut i, &mut out, true, target)?;
                            continue;
                        }
                        Some(n) => push_literal(&mut out, n),
                    }
                    i += 2;
                    continue;
                }
                ']' => {
                    in_class = false;
                    out.push(']');
                }
                '[' | '&' | '~' | '-' if c != '-' || chars.get(i + 1) == Some(&'-') => {
                    out.push('\\');
                    out.push(c);
                }
                _ => out.push(c),
            }
            i += 1;
            continue;
        }
        match c {
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    return Err("pattern ends with a lone backslash".into());
                };
                if n.is_ascii_alphanumeric() {
                    escape_alnum(&chars, &mut i, &mut out, false, target)?;
                    continue;
                }
                push_literal(&mut out, n);
                i += 2;
            }
            '[' => {
                in_class = true;
                out.push('[');
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                // A `]` right after `[` or `[^` is a literal.
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
            }
            '(' if chars.get(i + 1) == Some(&'?') => {
                i = group_prefix(&chars, i, &mut out, target)?;
            }
            '{' => match repetition(&chars, i) {
                Some((text, end)) => {
                    out.push_str(&text);
                    i = end;
                    if matches!(chars.get(i), Some('+')) && target == Target::Automaton {
                        return Err("possessive quantifiers are not supported".into());
                    }
                }
                None => {
                    out.push_str("\\{");
                    i += 1;
                }
            },
            '}' => {
                out.push_str("\\}");
                i += 1;
            }
            '$' => {
                out.push_str("(?:\\n?\\z)");
                i += 1;
            }
            '*' | '+' | '?' => {
                out.push(c);
                i += 1;
                if chars.get(i) == Some(&'+') && target == Target::Automaton {
                    return Err("possessive quantifiers are not supported".into());
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    if in_class {
        return Err("unterminated character class".into());
    }
    Ok(out)
}

/// Pushes a character as a literal, escaping it when Rust's syntax would treat it specially.
fn push_literal(out: &mut String, c: char) {
    if regex_syntax::is_meta_character(c) {
        out.push('\\');
    }
    out.push(c);
}

/// Handles `\` followed by an ASCII letter or digit at `chars[*i]`.
fn escape_alnum(
    chars: &[char],
    i: &mut usize,
    out: &mut String,
    in_class: bool,
    target: Target,
) -> Result<(), String> {
    let n = chars.get(*i + 1).copied().unwrap_or('\\');
    *i += 2;
    match n {
        'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'n' | 't' | 'r' | 'f' | 'v' | 'a' => {
            out.push('\\');
            out.push(n);
        }
        'A' if !in_class => out.push_str("\\A"),
        'Z' | 'z' if !in_class => out.push_str("\\z"),
        'b' | 'B' if !in_class => match target {
            Target::Automaton => {
                out.push_str("(?-u:\\");
                out.push(n);
                out.push(')');
            }
            Target::Backtracking => {
                out.push('\\');
                out.push(n);
            }
        },
        'x' | 'u' | 'U' => {
            let len = match n {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let digits: String = chars.iter().skip(*i).take(len).collect();
            if digits.len() != len || !digits.chars().all(|d| d.is_ascii_hexdigit()) {
                return Err(format!("bad escape \\{n}"));
            }
            out.push_str(&format!("\\x{{{digits}}}"));
            *i += len;
        }
        '0' => {
            // Octal escape: up to two more octal digits.
            let mut value = 0u32;
            let mut taken = 0;
            while taken < 2 {
                match chars.get(*i).and_then(|d| d.to_digit(8)) {
                    Some(d) => {
                        value = value * 8 + d;
                        *i += 1;
                        taken += 1;
                    }
                    None => break,
                }
            }
            out.push_str(&format!("\\x{{{value:x}}}"));
        }
        '1'..='9' if !in_class => {
            if target == Target::Automaton {
                return Err("backreferences are not supported".into());
            }
            out.push('\\');
            out.push(n);
        }
        other => return Err(format!("bad escape \\{other}")),
    }
    Ok(())
}

/// Translates the `(?...` group prefix at `chars[i]`; returns the index after it.
fn group_prefix(
    chars: &[char],
    i: usize,
    out: &mut String,
    target: Target,
) -> Result<usize, String> {
    let rest: String = chars.iter().skip(i + 2).take(3).collect();
    let lookaround = rest.starts_with('=')
        || rest.starts_with('!')
        || rest.starts_with("<=")
        || rest.starts_with("<!");
    if lookaround {
        if target == Target::Automaton {
            return Err(
                "lookaround assertions ((?=...), (?!...), (?<=...), (?<!...)) are \
                        not supported in open/close/anchor patterns"
                    .into(),
            );
        }
        out.push_str("(?");
        return Ok(i + 2);
    }
    if rest.starts_with("P=") {
        if target == Target::Automaton {
            return Err("named backreferences (?P=name) are not supported".into());
        }
        // fancy-regex spells a named backreference \k<name>.
        let mut j = i + 4;
        let mut name = String::new();
        while let Some(&c) = chars.get(j) {
            j += 1;
            if c == ')' {
                out.push_str(&format!("\\k<{name}>"));
                return Ok(j);
            }
            name.push(c);
        }
        return Err("unterminated (?P=name)".into());
    }
    if rest.starts_with('>') {
        if target == Target::Automaton {
            return Err("atomic groups (?>...) are not supported".into());
        }
        out.push_str("(?>");
        return Ok(i + 3);
    }
    if rest.starts_with('#') {
        // A comment group: skip it entirely.
        let mut j = i + 3;
        while let Some(&c) = chars.get(j) {
            j += 1;
            if c == ')' {
                return Ok(j);
            }
        }
        return Err("unterminated comment group".into());
    }
    out.push_str("(?");
    Ok(i + 2)
}

/// If `chars[i] == '{'` starts a Python repetition (`{m}`, `{m,}`, `{,n}`, `{m,n}`), returns
/// its Rust spelling and the index after it.
fn repetition(chars: &[char], i: usize) -> Option<(String, usize)> {
    let mut j = i + 1;
    let mut min = String::new();
    let mut max = String::new();
    let mut comma = false;
    loop {
        let c = *chars.get(j)?;
        j += 1;
        match c {
            '0'..='9' if !comma => min.push(c),
            '0'..='9' => max.push(c),
            ',' if !comma => comma = true,
            '}' => break,
            _ => return None,
        }
    }
    if min.is_empty() && (!comma || max.is_empty()) {
        return None;
    }
    let min = if min.is_empty() { "0".to_owned() } else { min };
    let text = match (comma, max.is_empty()) {
        (false, _) => format!("{{{min}}}"),
        (true, true) => format!("{{{min},}}"),
        (true, false) => format!("{{{min},{max}}}"),
    };
    let mut end = j;
    if chars.get(end) == Some(&'?') {
        end += 1;
        return Some((format!("{text}?"), end));
    }
    Some((text, end))
}

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
