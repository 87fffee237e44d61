//! Snapshot test: the analysis of every template in `../shared/templates` must equal
//! `fixtures/analysis/<template-stem>.json`. `CHATPARSE_BLESS=1` rewrites the snapshots.

use std::fs;
use std::path::Path;

use chatparse::analyze::analyze;
use chatparse::analyze::scenario::ProbeSet;
use chatparse::shared_data::shared_path_or_skip;
use chatparse::template::ChatTemplate;

fn snapshot_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/analysis"))
}

/// A line diff of two texts (only differing lines, with line numbers).
fn line_diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<_>, Vec<_>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        let (x, y) = (e.get(i).copied(), a.get(i).copied());
        if x != y {
            out.push_str(&format!(
                "  line {}:\n    - {}\n    + {}\n",
                i + 1,
                x.unwrap_or("<none>"),
                y.unwrap_or("<none>")
            ));
        }
    }
    out
}

#[test]
fn analysis_snapshots() {
    let Some(dir) = shared_path_or_skip("templates", "analysis_snapshots") else {
        return;
    };
    let bless = std::env::var_os("CHATPARSE_BLESS").is_some();
    let mut paths: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut failures = Vec::new();
    for path in &paths {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let source = fs::read_to_string(path).unwrap();
        let template = ChatTemplate::new(stem.clone(), source).unwrap();
        let analysis = analyze(&template);
        // Analysis results only: capability notes quote template error messages.
        let mut value = serde_json::to_value(&analysis).unwrap();
        if let Some(caps) = value["capabilities"].as_object_mut() {
            caps.remove("notes");
        }
        let actual = serde_json::to_string_pretty(&value).unwrap() + "\n";
        for probe in ProbeSet::PRIMARY
            .all()
            .into_iter()
            .chain(ProbeSet::CHECK.all())
        {
            assert!(
                !actual.contains(probe),
                "{stem}: the analysis contains probe {probe:?}"
            );
        }
        let snapshot = snapshot_dir().join(format!("{stem}.json"));
        if bless {
            fs::write(&snapshot, &actual).unwrap();
            continue;
        }
        match fs::read_to_string(&snapshot) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!("{stem}:\n{}", line_diff(&expected, &actual))),
            Err(_) => failures.push(format!("{stem}: no snapshot {}", snapshot.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} analyses differ from their snapshots (CHATPARSE_BLESS=1 rewrites them):\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
