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

fn find(p: &Pattern, hay: &str) -> Option<(usize, usize)> {
    p.find_iter(hay).into_iter().next()
}

#[test]
fn literal_lists_prefer_longest() {
    let p = Pattern::literals(&["END".into(), "ENDX".into()]);
    let p = p.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(find(&p, "aENDX"), Some((1, 5)));
    assert_eq!(find(&p, "aENDY"), Some((1, 4)));
}

#[test]
fn python_semantics() {
    let p = Pattern::python(r"a.b").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(find(&p, "a\nb"), Some((0, 3)), "DOTALL");
    let p = Pattern::python(r"\w+").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(find(&p, "-été-"), Some((1, 6)), "Unicode \\w");
    let p = Pattern::python(r"x$").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(find(&p, "x\nx"), Some((2, 3)), "no MULTILINE");
}

#[test]
fn end_info_of_literal() {
    let p = Pattern::literals(&["ab".into()]).unwrap_or_else(|e| panic!("{e}"));
    let s = p.next(p.next(p.start(None), b'a'), b'b');
    assert_eq!(
        p.end_info(s),
        EndInfo {
            ends_here: true,
            extendable: false
        }
    );
    let s = p.next(p.start(None), b'a');
    assert!(p.end_info(s).extendable);
}

#[test]
fn tag_pattern_backreference() {
    let t =
        TagPattern::python(r"<(?P<key>\w+)>(?P<value>.*?)</\1>").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        t.pairs("<a>1</b></a><c>2</c>"),
        Ok(vec![("a".into(), "1</b>".into()), ("c".into(), "2".into())])
    );
}
