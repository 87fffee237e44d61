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
            extendable: false,
            may_end_here: true
        }
    );
    let s = p.next(p.start(None), b'a');
    assert!(p.end_info(s).extendable);
}

#[test]
fn end_info_of_a_match_only_the_end_confirms() {
    // `x$` after `x\n`: only the end of input confirms the match; more text kills it.
    let p = Pattern::python(r"x$").unwrap_or_else(|e| panic!("{e}"));
    let s = p.next(p.next(p.start(None), b'x'), b'\n');
    let info = p.end_info(s);
    assert!(
        !info.ends_here && !info.extendable && info.may_end_here,
        "{info:?}"
    );
    assert!(p.undecided_at_end(s));
}

#[test]
fn tag_pattern_backreference() {
    let t =
        TagPattern::python(r"<(?P<key>\w+)>(?P<value>.*?)</\1>").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        t.pairs("<a>1</b></a><c>2</c>"),
        Ok(vec![(Some("a"), Some("1</b>")), (Some("c"), Some("2"))])
    );
}

#[test]
fn tag_pattern_automaton_path_agrees_with_backtracking() {
    let patterns = [
        r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
        r"<(?P<key>[a-z]+)>(?P<value>[^<]*)</[a-z]+>",
        r"(?P<key>\w+)=(?P<value>\d*)",
        r"\s*(?P<key>\w+): (?P<value>.*?)(?:;|$)",
        r"(?i)<ARG (?P<key>\w+)>(?P<value>.*?)</arg>",
        r"(?:<k>|\[k\])(?P<key>\w*)(?P<value>.?)",
    ];
    let hays = [
        "",
        "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n1\n</parameter></function>",
        "<a>1</a><b></b> <c>x<y</c> <parameter=é>\n é \n</parameter>",
        "k=1 k2= =3 é=4 x=12y",
        "a: 1; b: two;c:3; d: 4",
        "<arg x>1</ARG><Arg y>2</arg>",
        "<k>ab[k]c<k>[k]",
        "<<parameter=a>>1</parameter></parameter><parameter=b>2",
    ];
    for p in patterns {
        let t = TagPattern::python(p).unwrap_or_else(|e| panic!("{e}"));
        assert!(t.auto.is_some(), "{p}");
        for h in hays {
            assert_eq!(t.pairs(h), t.pairs_backtracking(h), "{p} on {h:?}");
        }
    }
}

#[test]
fn ascii_capture_program_agrees_with_unicode() {
    let p = Pattern::python(r"<f=(?P<name>\w+)\s*(?P<rest>.*?)>").unwrap_or_else(|e| panic!("{e}"));
    assert!(p.ascii.is_some(), "an ASCII program is built for \\w/\\s/.");
    for hay in ["<f=get_weather  x y>", "<f=héllo wörld>", "<f=a1_\tz>"] {
        let (start, end) = find(&p, hay).unwrap_or_else(|| panic!("no match in {hay:?}"));
        let mut caps = p.regex.create_captures();
        let input = Input::new(hay).range(start..end).anchored(Anchored::Yes);
        p.regex.search_captures(&input, &mut caps);
        let expected: Vec<(String, Option<String>)> = p
            .names()
            .iter()
            .map(|n| {
                let text = caps.get_group_by_name(n).and_then(|s| hay.get(s.range()));
                (n.clone(), text.map(str::to_owned))
            })
            .collect();
        assert_eq!(p.captures(hay, start, end), expected, "{hay:?}");
    }
    // Non-ASCII characters in the pattern never match an ASCII span in either program.
    let p = Pattern::python(r"<(?P<n>\u00e9+|\w+)>").unwrap_or_else(|e| panic!("{e}"));
    for hay in ["<abc>", "<éé>"] {
        let (start, end) = find(&p, hay).unwrap_or_else(|| panic!("no match in {hay:?}"));
        let expected = hay.get(1..hay.len() - 1).map(str::to_owned);
        assert_eq!(p.captures(hay, start, end), vec![("n".into(), expected)]);
    }
}

#[test]
fn ascii_tag_program_agrees_with_unicode() {
    let t = TagPattern::python(r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>")
        .unwrap_or_else(|e| panic!("{e}"));
    let ascii = "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n2\n</parameter>";
    let mixed = "<parameter=city>\nParís\n</parameter>\n<parameter=días>\n2\n</parameter>";
    let pairs = t.pairs(ascii).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        pairs,
        vec![(Some("city"), Some("Paris")), (Some("days"), Some("2"))]
    );
    let pairs = t.pairs(mixed).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        pairs,
        vec![(Some("city"), Some("París")), (Some("días"), Some("2"))]
    );
    assert_eq!(
        t.pairs_backtracking(ascii)
            .unwrap_or_else(|e| panic!("{e}")),
        t.pairs(ascii).unwrap_or_else(|e| panic!("{e}"))
    );
}
