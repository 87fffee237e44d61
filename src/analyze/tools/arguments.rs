//! A1/A2/T5: argument name and value markers and the separator between arguments (tagged
//! arguments), read from the gaps between the probe names and values of a two-argument call.

use crate::analyze::markers::{
    aligned_prefix_len, aligned_suffix_len, element_prefix, trailing_marker, trailing_open_marker,
};

use super::layout::CallLayout;
use super::{ArgumentMarkers, NonStringValues, TypedValueMarkers};
use crate::analyze::scenario::{ProbeSet, NUMBER_VALUE};
use crate::analyze::slots::Slot;

/// The argument markers, and where the argument region starts in `one`.
pub fn analyze(one: &str, layout: &CallLayout) -> Result<(ArgumentMarkers, usize), String> {
    let [(a1, v1), (a2, v2)] = layout.args[..] else {
        return Err("expected two arguments".into());
    };
    let before_first = match layout.id {
        Some(id) if id.1 <= a1.0 && id.0 >= layout.name.1 => id.1,
        _ => layout.name.1,
    };
    let g_name_arg = &one[before_first..a1.0];
    let g_arg_value = &one[a1.1..v1.0];
    let g_value_arg = &one[v1.1..a2.0];
    let g_arg_value2 = &one[a2.1..v2.0];
    let g_end = match layout.id {
        Some(id) if id.0 >= v2.1 => &one[v2.1..id.0],
        _ => &one[v2.1..],
    };
    if g_arg_value != g_arg_value2 {
        return Err(format!(
            "the two arguments render with different name/value markers: {g_arg_value:?} vs \
             {g_arg_value2:?}"
        ));
    }
    // The name prefix is what both gaps before an argument name end with: the whole marker
    // sequence (`<|open|>argument key="`), or, where the gaps share only loose text, the
    // element prefix rule (an unclosed marker, a complete marker, or the trailing word).
    let shared = aligned_suffix_len(g_name_arg, g_value_arg);
    let whole = g_value_arg[g_value_arg.len() - shared..].trim_start();
    let (p1, p2) = (element_prefix(g_name_arg), element_prefix(g_value_arg));
    let common = crate::diff::common_suffix_len(p1, p2);
    let by_element = &p2[p2.len() - common..];
    // The sequence starts with a marker of its own (gaps lose the context of a marker the
    // name sits in: `">` of `<call fn="NAME">` is no start).
    let starts_marker = whole.starts_with(['<', '[']);
    let name_prefix =
        if starts_marker && whole.len() > by_element.len() && whole.ends_with(by_element) {
            whole
        } else {
            by_element
        };
    let value_prefix = trailing_open_marker(g_arg_value)
        .or_else(|| trailing_marker(g_arg_value))
        .unwrap_or("");
    let name_suffix = &g_arg_value[..g_arg_value.len() - value_prefix.len()];
    let rest = &g_value_arg[..g_value_arg.len() - name_prefix.len()];
    let value_suffix = &rest[..aligned_prefix_len(rest, g_end)];
    let separator = &rest[value_suffix.len()..];
    let markers = ArgumentMarkers {
        start: String::new(),
        end: String::new(),
        name_prefix: name_prefix.to_owned(),
        name_suffix: name_suffix.to_owned(),
        value_prefix: value_prefix.to_owned(),
        value_suffix: value_suffix.to_owned(),
        separator: separator.to_owned(),
        ..ArgumentMarkers::default()
    };
    Ok((markers, a1.0 - name_prefix.len()))
}

/// Checks how a number argument renders in `text` (a call whose first argument is
/// [`NUMBER_VALUE`]) and records it in `markers`: with the same markers as strings, bare with
/// the strings' extra quotes moved to `string_open`/`string_close`, or with other markers.
pub fn check_non_string(text: &str, markers: &mut ArgumentMarkers) {
    let number = NUMBER_VALUE.to_string();
    let Some(at) = text.find(ProbeSet::PRIMARY.arg_first) else {
        return;
    };
    let after = &text[at + ProbeSet::PRIMARY.arg_first.len()..];
    let opening = format!("{}{}", markers.name_suffix, markers.value_prefix);
    let same = format!("{opening}{number}{}", markers.value_suffix);
    if after.starts_with(&same) {
        markers.non_string_values = NonStringValues::SameMarkers;
        return;
    }
    markers.non_string_values = NonStringValues::Different;
    if strings_quoted(after, &number, &opening, markers) {
        return;
    }
    if let Some(typed) = typed_markers(after, &number, markers) {
        markers.non_string = Some(typed);
        markers.non_string_values = NonStringValues::Typed;
    }
}

/// The non-string markers of a call whose first argument's value is `number` (`after`: the
/// text right after the first argument's name): what sits between the name and the number
/// splits into name suffix and value prefix like the string markers do; the value suffix
/// runs to the separator and name prefix of the second (string) argument. `None` when the
/// text does not have that shape.
fn typed_markers(
    after: &str,
    number: &str,
    markers: &ArgumentMarkers,
) -> Option<TypedValueMarkers> {
    let at = after.find(number)?;
    let gap = &after[..at];
    let rest = &after[at + number.len()..];
    let second = rest.find(ProbeSet::PRIMARY.arg_second)?;
    let between = rest[..second]
        .strip_suffix(markers.name_prefix.as_str())?
        .strip_suffix(markers.separator.as_str())?;
    let value_prefix = trailing_open_marker(gap)
        .or_else(|| trailing_marker(gap))
        .unwrap_or("");
    let name_suffix = &gap[..gap.len() - value_prefix.len()];
    if name_suffix.trim().is_empty() && value_prefix.trim().is_empty() {
        return None;
    }
    Some(TypedValueMarkers {
        name_suffix: name_suffix.to_owned(),
        value_prefix: value_prefix.to_owned(),
        value_suffix: between.to_owned(),
    })
}

/// Explains a non-string render by extra quotes around strings (`'`, `<|"|>`): moves them
/// from the string markers to `string_open`/`string_close` and returns true.
fn strings_quoted(after: &str, number: &str, opening: &str, markers: &mut ArgumentMarkers) -> bool {
    let matched = crate::diff::common_prefix_len(opening, after);
    let Some(rest) = after[matched..].strip_prefix(number) else {
        return false;
    };
    let suffix = &markers.value_suffix;
    // What the number leaves of the value suffix must be followed by the second argument.
    let next = format!(
        "{}{}{}",
        markers.separator,
        markers.name_prefix,
        ProbeSet::PRIMARY.arg_second
    );
    let Some(close_len) = (0..=suffix.len())
        .filter(|k| suffix.is_char_boundary(*k))
        .find(|k| {
            rest.strip_prefix(&suffix[*k..])
                .is_some_and(|r| r.starts_with(&next))
        })
    else {
        return false;
    };
    let open = &opening[matched..];
    if open.is_empty() && close_len == 0 {
        return false;
    }
    // The extra quote comes off the end of name suffix + value prefix and the start of the
    // value suffix.
    markers.string_open = open.to_owned();
    markers.string_close = suffix[..close_len].to_owned();
    markers.value_suffix = suffix[close_len..].to_owned();
    let from_prefix = open.len().min(markers.value_prefix.len());
    markers
        .value_prefix
        .truncate(markers.value_prefix.len() - from_prefix);
    let from_name = open.len() - from_prefix;
    markers
        .name_suffix
        .truncate(markers.name_suffix.len() - from_name);
    markers.non_string_values = NonStringValues::StringsQuoted;
    true
}

/// With typed markers found for a number, checks a call whose first argument is a boolean
/// (`text`): when its markers differ from the number's only in one word (a type attribute:
/// `type="number"` vs `type="boolean"`), that word becomes a [`Slot::Type`], so every
/// non-string type reads with the same markers.
pub fn check_type_word(text: &str, markers: &mut ArgumentMarkers) {
    let Some(number) = markers.non_string.clone() else {
        return;
    };
    let Some(at) = text.find(ProbeSet::PRIMARY.arg_first) else {
        return;
    };
    let after = &text[at + ProbeSet::PRIMARY.arg_first.len()..];
    let Some(boolean) = typed_markers(after, "true", markers) else {
        return;
    };
    if boolean == number || boolean.value_prefix != number.value_prefix {
        return;
    }
    let (a, b) = (&number.name_suffix, &boolean.name_suffix);
    let p = crate::diff::common_prefix_len(a, b);
    let s = crate::diff::common_suffix_len(&a[p..], &b[p..]);
    // Widen to whole words on both sides.
    let word = |c: char| c.is_ascii_alphabetic() || c == '_';
    let mut start = p;
    while start > 0 && a[..start].ends_with(word) {
        start -= 1;
    }
    let mut end = a.len() - s;
    while end < a.len() && a[end..].starts_with(word) {
        end += 1;
    }
    let (wa, wb) = (&a[start..end], &b[start..b.len() - (a.len() - end)]);
    if wa.is_empty() || !wa.chars().all(word) || wb.is_empty() || !wb.chars().all(word) {
        return;
    }
    let slotted = format!("{}{}{}", &a[..start], Slot::Type.char(), &a[end..]);
    if let Some(n) = markers.non_string.as_mut() {
        n.name_suffix = slotted;
    }
}
