//! T7: where the call id sits in a tag-based call and the markers around it.

use crate::analyze::markers::element_prefix;

use super::layout::CallLayout;
use super::{CallIdMarkers, CallIdPosition};
use crate::analyze::slots::Slot;

/// The call-id markers of `one`, given where the arguments start and end. Returns the markers
/// and the text between the function name and the arguments that is not part of the id (the
/// function name suffix). Fails when the id, the name and the arguments overlap or are out of
/// order in a way no call layout has (hostile templates can render that).
pub fn analyze(
    one: &str,
    layout: &CallLayout,
    args_start: usize,
) -> Result<(CallIdMarkers, String), String> {
    let slice = |from: usize, to: usize| {
        one.get(from..to).ok_or_else(|| {
            format!("the call id, function name and arguments overlap (bytes {from}..{to})")
        })
    };
    let name_end = layout.name.1;
    let Some(id) = layout.id else {
        return Ok((
            CallIdMarkers::default(),
            slice(name_end, args_start)?.to_owned(),
        ));
    };
    if id.1 <= layout.name.0 {
        let gap = slice(id.1, layout.name.0)?;
        let name_prefix = element_prefix(gap);
        let markers = CallIdMarkers {
            position: CallIdPosition::PreFuncName,
            prefix: String::new(), // filled from the call opening by the caller
            suffix: gap[..gap.len() - name_prefix.len()].to_owned(),
            counter: false,
        };
        return Ok((markers, slice(name_end, args_start)?.to_owned()));
    }
    if id.1 <= args_start {
        let gap = slice(name_end, id.0)?;
        let prefix = element_prefix(gap);
        let markers = CallIdMarkers {
            position: CallIdPosition::BetweenFuncAndArgs,
            prefix: prefix.to_owned(),
            suffix: slice(id.1, args_start)?.to_owned(),
            counter: false,
        };
        return Ok((markers, gap[..gap.len() - prefix.len()].to_owned()));
    }
    let gap = slice(layout.args_end(), id.0)?;
    let markers = CallIdMarkers {
        position: CallIdPosition::PostArgs,
        prefix: element_prefix(gap).to_owned(),
        suffix: String::new(),
        counter: false,
    };
    Ok((markers, slice(name_end, args_start)?.to_owned()))
}

/// When two calls differ between name and arguments only by a number (`:0` vs `:1`), the
/// template writes a call counter there: returns the text before and after the number.
pub fn counter(first: &str, second: &str) -> Option<(String, String)> {
    let p = crate::diff::common_prefix_len(first, second);
    let s = crate::diff::common_suffix_len(&first[p..], &second[p..]);
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    (digits(&first[p..first.len() - s]) && digits(&second[p..second.len() - s]))
        .then(|| (first[..p].to_owned(), first[first.len() - s..].to_owned()))
}

/// A counter slot glued to the function name (`:` then the counter, right after the name, as
/// in `functions.NAME:0`): the name and the counter form one reference, the call's id. Returns
/// the text before and after the counter. A counter set apart (by whitespace, quotes or a
/// marker, as in `name="NAME" index="0"`) is only a counter, not part of an id.
pub fn glued_counter(name_suffix: &str) -> Option<(String, String)> {
    let (glue, rest) = name_suffix.split_once(Slot::Counter.char())?;
    let glued = glue.len() <= 2
        && glue
            .chars()
            .all(|c| matches!(c, ':' | '_' | '-' | '.' | '#'));
    glued.then(|| (glue.to_owned(), rest.to_owned()))
}
