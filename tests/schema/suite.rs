//! The validator against the official JSON-Schema-Test-Suite (read at run time from
//! `../shared/conformance/JSON-Schema-Test-Suite`), drafts 2020-12 and 7.
//!
//! For each keyword file, every group (a schema and its tests) is passed (every
//! test answered as the suite says), failed, or skipped as unsupported: skipped
//! only when [`unchecked_keywords`] reports something in its schema, so a skip is
//! never counted as a pass. Every group that is not skipped must pass, but for the
//! [`KNOWN_EXCEPTIONS`]; and the table of counts must be the one in
//! `docs/schema.md`. The suite's `optional/` directories, if present, are not run.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::schema::{PreparedSchema, unchecked_keywords, validate};

const DRAFTS: [&str; 2] = ["draft2020-12", "draft7"];

/// Groups that fail on purpose: (draft, file, group description, why). None: every
/// supported keyword passes all its groups.
const KNOWN_EXCEPTIONS: &[(&str, &str, &str, &str)] = &[];

fn suite_dir() -> Option<PathBuf> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/JSON-Schema-Test-Suite");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "JSON-Schema-Test-Suite not found at {} (required when CI is set)",
        dir.display()
    );
    println!(
        "skipped: JSON-Schema-Test-Suite not found at {}",
        dir.display()
    );
    None
}

/// Groups passed, failed and skipped in one file.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Counts {
    passed: usize,
    failed: usize,
    skipped: usize,
}

/// What happened to one group.
enum Outcome {
    Passed,
    /// The descriptions of the tests answered wrongly.
    Failed(Vec<String>),
    /// The keywords reported unchecked.
    Skipped(Vec<String>),
}

/// A draft 7 document says which draft it is written for; the suite's draft 7
/// files leave that to the reader, so it is said here (it decides how `$ref`
/// treats its siblings).
fn with_dialect(mut schema: Value, draft: &str) -> Value {
    if draft == "draft7" {
        if let Some(object) = schema.as_object_mut() {
            if !object.contains_key("$schema") {
                let mut with = Object::new();
                with.push(
                    "$schema",
                    Value::from("http://json-schema.org/draft-07/schema#"),
                );
                for (name, value) in std::mem::take(object).into_vec() {
                    with.push(name, value);
                }
                *object = with;
            }
        }
    }
    schema
}

fn run_group(group: &Value, draft: &str) -> Outcome {
    let schema = with_dialect(group["schema"].clone(), draft);
    let unchecked = unchecked_keywords(&schema);
    if !unchecked.is_empty() {
        return Outcome::Skipped(unchecked);
    }
    let prepared = PreparedSchema::new(schema.clone());
    let mut wrong = Vec::new();
    for test in group["tests"].as_array().expect("tests") {
        let data = &test["data"];
        let expected = test["valid"].as_bool().expect("valid");
        let answer = validate(&schema, data);
        // The prepared path answers as the general one, on every test of the suite.
        assert_eq!(prepared.validate(data), answer, "{schema} {data}");
        if answer.is_ok() != expected {
            let description = test["description"].as_str().unwrap_or_default();
            wrong.push(format!("{description} ({answer:?})"));
        }
    }
    if wrong.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(wrong)
    }
}

/// Runs every file of a draft: file stem -> counts, and the unexpected failures.
fn run_draft(dir: &Path, draft: &str) -> (BTreeMap<String, Counts>, Vec<String>) {
    let mut table = BTreeMap::new();
    let mut failures = Vec::new();
    let mut paths: Vec<PathBuf> = fs::read_dir(dir.join("tests").join(draft))
        .expect("a readable draft directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let keyword = path
            .file_stem()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        let options = json::ParseOptions {
            max_depth: 512,
            ..json::ParseOptions::DEFAULT
        };
        let bytes = fs::read(&path).expect("a readable file");
        let groups = json::parse_with(&bytes, &options).expect("a JSON file");
        let mut counts = Counts::default();
        for group in groups.as_array().expect("an array of groups") {
            let description = group["description"].as_str().unwrap_or_default();
            match run_group(group, draft) {
                Outcome::Passed => counts.passed += 1,
                Outcome::Skipped(keywords) => {
                    counts.skipped += 1;
                    println!("{draft}/{keyword}: skipped {description:?}: {keywords:?}");
                }
                Outcome::Failed(tests) => {
                    counts.failed += 1;
                    let known = KNOWN_EXCEPTIONS
                        .iter()
                        .any(|&(d, k, g, _)| (d, k, g) == (draft, keyword.as_str(), description));
                    if !known {
                        failures.push(format!("{draft}/{keyword}: {description}: {tests:?}"));
                    }
                }
            }
        }
        table.insert(keyword, counts);
    }
    (table, failures)
}

/// The table of `docs/schema.md`: a row per keyword file, a passed/failed/skipped
/// cell per draft (`-` where a draft has no such file).
fn table(drafts: &[BTreeMap<String, Counts>]) -> String {
    let mut keywords: Vec<&String> = drafts.iter().flat_map(BTreeMap::keys).collect();
    keywords.sort();
    keywords.dedup();
    let mut out = String::from(
        "| keyword file | draft2020-12 passed / failed / skipped | draft7 passed / failed / skipped |\n|---|---|---|\n",
    );
    let cell = |c: Option<&Counts>| match c {
        Some(c) => format!("{} / {} / {}", c.passed, c.failed, c.skipped),
        None => "-".to_string(),
    };
    for keyword in &keywords {
        let cells: Vec<String> = drafts.iter().map(|d| cell(d.get(*keyword))).collect();
        out.push_str(&format!("| `{keyword}` | {} |\n", cells.join(" | ")));
    }
    let total = |d: &BTreeMap<String, Counts>| {
        let sum = d.values().fold(Counts::default(), |a, c| Counts {
            passed: a.passed + c.passed,
            failed: a.failed + c.failed,
            skipped: a.skipped + c.skipped,
        });
        cell(Some(&sum))
    };
    let totals: Vec<String> = drafts.iter().map(total).collect();
    out.push_str(&format!("| all | {} |\n", totals.join(" | ")));
    out
}

#[test]
fn json_schema_test_suite() {
    let Some(dir) = suite_dir() else {
        return;
    };
    let mut drafts = Vec::new();
    let mut failures = Vec::new();
    for draft in DRAFTS {
        let (counts, failed) = run_draft(&dir, draft);
        drafts.push(counts);
        failures.extend(failed);
    }
    let table = table(&drafts);
    println!("{table}");
    assert!(
        failures.is_empty(),
        "groups of supported keywords failed:\n{}",
        failures.join("\n")
    );
    let docs = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema.md"))
        .expect("docs/schema.md");
    assert!(
        docs.contains(&table),
        "docs/schema.md does not have the suite's table; it is now:\n{table}"
    );
    // The module docs sum it up.
    let sum =
        |d: &BTreeMap<String, Counts>, f: fn(&Counts) -> usize| d.values().map(f).sum::<usize>();
    let (new, old) = (&drafts[0], &drafts[1]);
    let summary = format!(
        "keywords checked here passes: {} groups of draft 2020-12 and {} of draft 7,\n//! none failing. The {} and {} others are skipped",
        sum(new, |c| c.passed),
        sum(old, |c| c.passed),
        sum(new, |c| c.skipped),
        sum(old, |c| c.skipped),
    );
    let module =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/schema/mod.rs"))
            .expect("src/schema/mod.rs");
    assert!(
        module.contains(&summary),
        "src/schema/mod.rs should say: {summary}"
    );
}

/// A skip is a skip: a schema the validator checks whole is never skipped, and one
/// with a keyword it does not check always is.
#[test]
fn groups_are_skipped_only_for_unchecked_keywords() {
    let group = |schema: &str| {
        let text = format!(
            r#"{{"description":"g","schema":{schema},"tests":[{{"description":"t","data":"ab","valid":false}}]}}"#
        );
        json::parse(text.as_bytes()).expect("JSON")
    };
    assert!(matches!(
        run_group(&group(r#"{"minLength":3}"#), "draft2020-12"),
        Outcome::Passed
    ));
    assert!(matches!(
        run_group(&group(r#"{"maxLength":3}"#), "draft2020-12"),
        Outcome::Failed(_)
    ));
    match run_group(&group(r#"{"pattern":"^(?=a)"}"#), "draft7") {
        Outcome::Skipped(keywords) => assert_eq!(keywords, ["pattern"]),
        _ => panic!("a schema with `pattern` is skipped"),
    }
}
