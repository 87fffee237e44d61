//! Arbitrary bytes through the JSON / Python-dict scanner, both flavours, partial and full:
//! no panic; agrees with serde_json on complete input (JSON flavour); chunked equals one
//! shot; prefixes of accepted documents are never failures; healing yields valid JSON.
#![no_main]

use chatparse::json::{heal, validate, Flavour, Scan, Scanner, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (chunk, input) = match data.split_first() {
        Some((&c, rest)) => (usize::from(c % 7) + 1, rest),
        None => return,
    };
    for flavour in [Flavour::Json, Flavour::Python] {
        let full = validate(input, flavour, false);
        let _ = validate(input, flavour, true);
        if flavour == Flavour::Json {
            let serde = serde_json::from_slice::<serde_json::Value>(input);
            match (&full, &serde) {
                (Scan::Complete(_), Err(e)) => {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("recursion limit") || msg.contains("number out of range"),
                        "we accept, serde rejects: {msg}"
                    );
                }
                (Scan::Fail { .. }, Ok(_)) => panic!("we reject {full:?}, serde accepts"),
                _ => {}
            }
        }
        if let Scan::Complete(_) = full {
            for k in 0..input.len() {
                let p = validate(&input[..k], flavour, true);
                assert!(!matches!(p, Scan::Fail { .. }), "prefix {k} fails: {p:?}");
            }
        }
        // Chunked scanning equals one shot, in both modes.
        for eof in [false, true] {
            let one = Scanner::new(flavour, Target::Value, 0).resume(input, eof);
            let mut s = Scanner::new(flavour, Target::Value, 0);
            let mut got = Scan::NeedMore;
            let mut end = 0;
            while end < input.len() {
                end = (end + chunk).min(input.len());
                got = s.resume(&input[..end], eof && end == input.len());
                if got != Scan::NeedMore {
                    break;
                }
            }
            if input.is_empty() {
                got = s.resume(input, eof);
            }
            assert_eq!(got, one, "chunked vs one shot (eof {eof})");
        }
        if let Ok(text) = std::str::from_utf8(input) {
            if let Ok(healed) = heal(text, flavour) {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&healed) {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("recursion limit") || msg.contains("number out of range"),
                        "healed text is not JSON: {healed}: {msg}"
                    );
                }
            }
        }
    }
});
