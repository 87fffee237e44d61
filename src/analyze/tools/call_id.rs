//! T7: where the call id sits in a tag-based call and the markers around it.

use crate::analyze::markers::element_prefix;

use super::layout::CallLayout;
use super::{CallIdMarkers, CallIdPosition};

/// The call-id markers of `one`, given where the arguments start and end. Returns the markers
/// and the text between the function name and the arguments that is not part of the id (the
/// function name suffix).
pub fn analyze(one: &str, layout: &CallLayout, args_start: usize) -> (CallIdMarkers, String) {
    let name_end = layout.name.1;
    let Some(id) = layout.id else {
        return (
            CallIdMarkers::default(),
            one[name_end..args_start].to_owned(),
        );
    };
    if id.1 <= layout.name.0 {
        let gap = &one[id.1..layout.name.0];
        let name_prefix = element_prefix(gap);
        let markers = CallIdMarkers {
            position: CallIdPosition::PreFuncName,
            prefix: String::new(), // filled from the call opening by the caller
            suffix: gap[..gap.len() - name_prefix.len()].to_owned(),
        };
        return (markers, one[name_end..args_start].to_owned());
    }
    if id.1 <= args_start {
        let gap = &one[name_end..id.0];
        let prefix = element_prefix(gap);
        let markers = CallIdMarkers {
            position: CallIdPosition::BetweenFuncAndArgs,
            prefix: prefix.to_owned(),
            suffix: one[id.1..args_start].to_owned(),
        };
        return (markers, gap[..gap.len() - prefix.len()].to_owned());
    }
    let gap = &one[layout.args_end()..id.0];
    let markers = CallIdMarkers {
        position: CallIdPosition::PostArgs,
        prefix: element_prefix(gap).to_owned(),
        suffix: String::new(),
    };
    (markers, one[name_end..args_start].to_owned())
}
