use super::*;

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
