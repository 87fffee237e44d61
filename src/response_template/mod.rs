//! (response_template: module under construction)
