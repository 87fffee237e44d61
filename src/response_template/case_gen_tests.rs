use super::*;

#[test]
fn cases_are_deterministic_per_seed_and_index() {
    assert_eq!(generate_case(7, 3), generate_case(7, 3));
    assert_ne!(generate_case(7, 3), generate_case(7, 4));
    assert_ne!(generate_case(7, 3), generate_case(8, 3));
}

#[test]
fn cases_have_the_driver_fields() {
    for case in generate_cases(1, 200) {
        assert!(case["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("gen/1/")));
        assert!(case["template"].is_object());
        assert!(case["prefix"].is_string() || case["prefix"].is_null());
        match case.get("ops") {
            Some(ops) => {
                let ops = ops.as_array().unwrap_or_else(|| panic!("{case}"));
                assert!(ops.iter().any(|op| op[0] == "finalize"), "{case}");
            }
            None => {
                assert!(case["text"].is_string());
                assert!(case["chunk_sizes"]
                    .as_array()
                    .is_some_and(|s| !s.is_empty()));
            }
        }
    }
}

#[test]
fn some_cases_are_ops() {
    let ops = generate_cases(3, 200)
        .filter(|c| c.get("ops").is_some())
        .count();
    assert!((10..100).contains(&ops), "{ops} ops cases of 200");
}

#[test]
fn most_templates_load_and_some_do_not() {
    let (mut ok, mut bad) = (0, 0);
    for case in generate_cases(2, 150) {
        match crate::response_template::ResponseTemplate::from_value(&case["template"]) {
            Ok(_) => ok += 1,
            Err(_) => bad += 1,
        }
    }
    assert!(ok > 50 && bad > 8, "{ok} loaded, {bad} rejected");
}
