use super::*;

fn tr(py: &str) -> Result<String, String> {
    translate(py, Target::Automaton)
}

#[test]
fn translation() {
    assert_eq!(tr(r"(?P<name>\w+)"), Ok(r"(?P<name>\w+)".into()));
    assert_eq!(tr(r"\Z"), Ok(r"\z".into()));
    assert_eq!(tr("a$"), Ok(r"a(?:\n?\z)".into()));
    assert_eq!(tr(r"\<x\>"), Ok("<x>".into()));
    assert_eq!(tr("{name}"), Ok(r"\{name\}".into()));
    assert_eq!(tr("a{,3}b{2}"), Ok("a{0,3}b{2}".into()));
    assert_eq!(tr("[[a]"), Ok(r"[\[a]".into()));
    assert_eq!(tr("[]a]"), Ok(r"[\]a]".into()));
    assert_eq!(tr("[^<]*"), Ok("[^<]*".into()));
    assert_eq!(tr(r"\b"), Ok(r"(?-u:\b)".into()));
    assert_eq!(tr(r"a(?#note)b"), Ok("ab".into()));
    assert_eq!(tr(r"\x41\u00e9\0"), Ok(r"\x{41}\x{00e9}\x{0}".into()));
}

#[test]
fn rejections() {
    for bad in [
        r"a(?=b)",
        r"a(?!b)",
        r"(?<=a)b",
        r"(?<!a)b",
        r"(a)\1",
        r"(?P<x>a)(?P=x)",
        r"(?>a)",
        "a++",
        "[a",
        "\\",
    ] {
        assert!(tr(bad).is_err(), "{bad}");
    }
    assert!(translate(r"(a)\1(?=c)", Target::Backtracking).is_ok());
}
