//! A1/A2/T5: argument name and value markers and the separator between arguments (tagged
//! arguments), read from the gaps between the probe names and values of a two-argument call.

use crate::analyze::markers::{
    aligned_prefix_len, element_prefix, trailing_marker, trailing_open_marker,
};

use super::layout::CallLayout;
use super::ArgumentMarkers;

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
    let (p1, p2) = (element_prefix(g_name_arg), element_prefix(g_value_arg));
    let common = crate::diff::common_suffix_len(p1, p2);
    let name_prefix = &p2[p2.len() - common..];
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
    };
    Ok((markers, a1.0 - name_prefix.len()))
}
