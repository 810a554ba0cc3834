use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::links::outside_code_spans;
use super::rules::split_reason;
use super::*;

fn write(path: &Path, text: impl AsRef<[u8]>) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, text).unwrap();
}

/// The findings of a text as `line: severity: message` lines, sorted by line
/// as a file's findings are printed.
fn lint(text: &str, expected: Option<(&str, NamePlace)>) -> Vec<String> {
    let mut found = lint_text(text, expected);
    found.sort_by_key(|found| found.line);
    found
        .iter()
        .map(|found| {
            format!("{}: {}: {}", found.line.map_or("-".to_string(), |l| l.to_string()), found.severity, found.message)
        })
        .collect()
}

fn skill(frontmatter: &str) -> String {
    format!("---\nname: my-skill\ndescription: Does things.\n{frontmatter}---\n\nBody.\n")
}

const FOLDER: Option<(&str, NamePlace)> = Some(("my-skill", NamePlace::Folder));

#[test]
fn a_clean_skill_has_no_findings() {
    let every_key = "license: MIT\ncompatibility: Needs git.\nmetadata:\n  author: me\nallowed-tools: Read Grep\nwhenToUse: When asked.\ndisable-model-invocation: false\nuser-invocable: true\n";
    assert_eq!(lint(&skill(every_key), FOLDER), Vec::<String>::new());
}

#[test]
fn provider_refusals_are_errors_on_their_line() {
    assert_eq!(
        lint(&skill("userInvocable: false\n"), FOLDER),
        ["4: error: frontmatter field `userInvocable` is unsupported; use `user-invocable`"]
    );
    assert_eq!(
        lint(&skill("user-invocable: maybe\n"), FOLDER),
        [
            "4: error: frontmatter field `user-invocable` must be a boolean (true/false, yes/no, on/off, 1/0), found \"maybe\""
        ]
    );
    assert_eq!(
        lint("---\nname: my-skill\ndescription: d\nmetadata:\n  a: &x 1\n  b: *x\n---\nBody\n", FOLDER),
        ["6: error: YAML aliases are not supported in frontmatter"]
    );
    assert_eq!(
        lint("---\nname: My-Skill\ndescription: d\n---\nBody\n", FOLDER),
        ["2: error: `name` \"My-Skill\" does not match the skill-name grammar ^[a-z0-9]+(?:-[a-z0-9]+)*$"]
    );
    assert_eq!(
        lint("---\nname: my-skill\ndescription: d\n\tbad: tab\n---\nBody\n", FOLDER),
        ["3: error: invalid YAML frontmatter: column 14: while scanning a plain scalar, found a tab"]
    );
}

#[test]
fn file_level_refusals_point_at_the_first_line() {
    assert_eq!(
        lint("# Just Markdown\n", FOLDER),
        ["1: error: missing frontmatter (the first line must be exactly `---`)"]
    );
    assert_eq!(lint("---\nname: my-skill\n", FOLDER), ["1: error: frontmatter is not closed by a `---` line"]);
    assert_eq!(lint("---\nname: my-skill\n---\nBody\n", FOLDER), ["1: error: frontmatter requires `description`"]);
}

#[test]
fn every_fault_is_reported_not_only_the_first() {
    // The provider stops at the missing description; the linter also sees
    // the unknown key and the name that does not match its folder.
    assert_eq!(
        lint("---\nname: other\ntags: [a]\n---\nBody\n", FOLDER),
        [
            "1: error: frontmatter requires `description`",
            "2: error: `name` \"other\" does not match its folder name \"my-skill\"",
            "3: error: unknown frontmatter key `tags` (known: name, description, license, compatibility, metadata, allowed-tools, whenToUse, disable-model-invocation, user-invocable)",
        ]
    );
}

#[test]
fn name_must_match_the_folder_or_the_file_stem() {
    let text = "---\nname: other\ndescription: d\n---\nBody\n";
    assert_eq!(lint(text, FOLDER), ["2: error: `name` \"other\" does not match its folder name \"my-skill\""]);
    assert_eq!(
        lint(text, Some(("my-skill", NamePlace::File))),
        ["2: error: `name` \"other\" does not match its file name \"my-skill.md\""]
    );
    assert_eq!(lint(text, None), Vec::<String>::new());
}

#[test]
fn name_is_at_most_64_characters() {
    let name = "a".repeat(MAX_NAME_CHARS);
    let text = format!("---\nname: {name}\ndescription: d\n---\nBody\n");
    assert_eq!(lint(&text, Some((&name, NamePlace::Folder))), Vec::<String>::new());
    let name = "a".repeat(MAX_NAME_CHARS + 1);
    let text = format!("---\nname: {name}\ndescription: d\n---\nBody\n");
    assert_eq!(
        lint(&text, Some((&name, NamePlace::Folder))),
        ["2: error: `name` is 65 characters; the Agent Skills specification allows at most 64"]
    );
}

#[test]
fn description_is_at_most_1024_characters_counted_as_characters() {
    // `é` is two bytes but one character.
    let fits = "é".repeat(MAX_DESCRIPTION_CHARS);
    let text = format!("---\nname: my-skill\ndescription: {fits}\n---\nBody\n");
    assert_eq!(
        lint(&text, FOLDER),
        [
            "3: warning: `description` is 1024 characters with whitespace collapsed; the catalog cuts it to 500 by default"
        ]
    );
    let over = "é".repeat(MAX_DESCRIPTION_CHARS + 1);
    let text = format!("---\nname: my-skill\ndescription: {over}\n---\nBody\n");
    assert_eq!(
        lint(&text, FOLDER),
        [
            "3: error: `description` is 1025 characters; the Agent Skills specification allows at most 1024",
            "3: warning: `description` is 1025 characters with whitespace collapsed; the catalog cuts it to 500 by default",
        ]
    );
}

#[test]
fn catalog_truncation_is_measured_as_the_catalog_does() {
    // 500 characters once the run of spaces and the newline are collapsed.
    let words = format!("{}   {}\n", "a".repeat(250), "b".repeat(249));
    let text = format!("---\nname: my-skill\ndescription: |\n  {words}---\nBody\n");
    assert_eq!(lint(&text, FOLDER), Vec::<String>::new());
    let words = format!("{}   {}\n", "a".repeat(250), "b".repeat(250));
    let text = format!("---\nname: my-skill\ndescription: |\n  {words}---\nBody\n");
    assert_eq!(
        lint(&text, FOLDER),
        [
            "3: warning: `description` is 501 characters with whitespace collapsed; the catalog cuts it to 500 by default"
        ]
    );
}

#[test]
fn a_blank_description_is_an_error() {
    assert_eq!(
        lint("---\nname: my-skill\ndescription: \"  \"\n---\nBody\n", FOLDER),
        ["3: error: `description` is only whitespace"]
    );
}

#[test]
fn optional_spec_fields_are_checked() {
    assert_eq!(
        lint(&skill(&format!("compatibility: {}\n", "c".repeat(501))), FOLDER),
        ["4: error: `compatibility` is 501 characters; the Agent Skills specification allows at most 500"]
    );
    assert_eq!(
        lint(&skill("compatibility: \"\"\n"), FOLDER),
        ["4: error: `compatibility` is empty; leave it out instead"]
    );
    assert_eq!(
        lint(&skill("compatibility: [a]\n"), FOLDER),
        ["4: error: `compatibility` must be a string, found a sequence"]
    );
    assert_eq!(lint(&skill("license: 2024\n"), FOLDER), ["4: error: `license` must be a string, found a number"]);
    assert_eq!(
        lint(&skill("metadata: [a]\n"), FOLDER),
        ["4: error: `metadata` must be a mapping, found a sequence; it is ignored"]
    );
    assert_eq!(
        lint(&skill("metadata:\n  author: me\n  version: 1.2\n  tags: [a]\n"), FOLDER),
        [
            "6: error: `metadata.version` is a number; the Agent Skills specification allows only string values",
            "7: error: `metadata.tags` is a sequence; the Agent Skills specification allows only string values",
        ]
    );
    assert_eq!(
        lint(&skill("allowed-tools: [Read, Grep]\n"), FOLDER),
        ["4: warning: `allowed-tools` is a sequence; the Agent Skills specification defines a space-separated string"]
    );
    assert_eq!(
        lint(&skill("allowed-tools: {a: 1}\n"), FOLDER),
        ["4: error: `allowed-tools` must be a space-separated string, found a mapping"]
    );
}

#[test]
fn ignored_project_fields_and_odd_policies_are_warnings() {
    assert_eq!(
        lint(&skill("whenToUse: 3\n"), FOLDER),
        ["4: warning: `whenToUse` is ignored: it must be a non-empty string, found a number"]
    );
    assert_eq!(
        lint(&skill("whenToUse: \"\"\n"), FOLDER),
        ["4: warning: `whenToUse` is ignored: it must be a non-empty string, found an empty string"]
    );
    assert_eq!(
        lint(&skill("disable-model-invocation: yes\nuser-invocable: off\n"), FOLDER),
        [
            "4: warning: neither the model nor a user can invoke this skill (`disable-model-invocation` is true and `user-invocable` is false)"
        ]
    );
    assert_eq!(
        lint("---\nname: my-skill\ndescription: d\n---\n\n  \n", FOLDER),
        ["4: warning: no instructions after the frontmatter"]
    );
}

#[test]
fn reasons_split_into_line_and_message() {
    assert_eq!(split_reason("line 12: x: y"), (Some(12), "x: y".to_string()));
    assert_eq!(
        split_reason("invalid YAML frontmatter: line 3 column 1: bad"),
        (Some(3), "invalid YAML frontmatter: column 1: bad".to_string())
    );
    assert_eq!(split_reason("frontmatter requires `name`"), (None, "frontmatter requires `name`".to_string()));
    assert_eq!(split_reason("line x: y"), (None, "line x: y".to_string()));
}

fn report_lines(report: &LintReport, base: &Path) -> Vec<String> {
    report.findings.iter().map(|finding| finding.to_string().replace(&format!("{}/", base.display()), "")).collect()
}

#[test]
fn a_root_is_linted_entry_by_entry_in_byte_order() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("b-skill/SKILL.md"), "---\nname: b-skill\ndescription: d\n---\nBody\n");
    write(&root.join("a-skill/SKILL.md"), "---\nname: wrong\ndescription: d\n---\nBody\n");
    write(&root.join("flat.md"), "---\nname: flat\ndescription: d\n---\nBody\n");
    write(&root.join("README.md"), "# Skills\n");
    write(&root.join("notes.txt"), "not a skill");
    write(&root.join("LOUD.MD"), "---\nname: loud\ndescription: d\n---\nBody\n");
    write(&root.join("lower/skill.md"), "---\nname: lower\ndescription: d\n---\nBody\n");
    write(&root.join("assets/logo.svg"), "<svg/>");
    write(&root.join("binary.md"), b"---\nname: binary\n\0");
    write(&root.join("latin1.md"), b"---\nname: latin1\ndescription: caf\xe9\n---\n");
    // Defines `b-skill` again: the bundle listed first wins.
    write(&root.join("twin.md"), "---\nname: b-skill\ndescription: d\n---\nBody\n");
    let report = lint_root(root, false).unwrap();
    assert_eq!(report.files, 7);
    assert_eq!(
        report_lines(&report, root),
        [
            "LOUD.MD: warning: ignored: a flat skill file's suffix must be `.md` in lower case",
            "README.md:1: error: missing frontmatter (the first line must be exactly `---`)",
            "a-skill/SKILL.md:2: error: `name` \"wrong\" does not match its folder name \"a-skill\"",
            "binary.md:3: error: binary file (contains NUL bytes), not a text skill file",
            "latin1.md:3: error: not UTF-8 text (invalid byte at offset 33)",
            "lower/skill.md: warning: ignored: a bundle's skill file must be named exactly `SKILL.md`",
            "twin.md:2: error: `name` \"b-skill\" does not match its file name \"twin.md\"",
            "twin.md: warning: skill \"b-skill\" is also defined by b-skill/SKILL.md, which wins",
        ]
    );
    assert!(report.has_errors());
    assert_eq!((report.count(Severity::Error), report.count(Severity::Warning)), (5, 3));
}

#[test]
fn lint_path_takes_a_root_a_bundle_or_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    write(&root.join("a-skill/SKILL.md"), "---\nname: a-skill\ndescription: d\nextra: 1\n---\nBody\n");
    write(&root.join("flat.md"), "---\nname: flat\ndescription: d\n---\n");
    let as_root = lint_path(&root).unwrap();
    assert_eq!(as_root.files, 2);
    assert_eq!(as_root.findings.len(), 2);
    let as_bundle = lint_path(&root.join("a-skill")).unwrap();
    assert_eq!(as_bundle.files, 1);
    assert_eq!(as_bundle.findings[0].line, Some(4));
    assert_eq!(as_bundle.findings[0].path, root.join("a-skill/SKILL.md"));
    let as_file = lint_path(&root.join("flat.md")).unwrap();
    assert_eq!(as_file.files, 1);
    assert_eq!(
        as_file.findings[0].to_string(),
        format!("{}:4: warning: no instructions after the frontmatter", root.join("flat.md").display())
    );
    assert_eq!(lint_path(&tmp.path().join("missing")).unwrap_err().kind(), io::ErrorKind::NotFound);
}

#[test]
fn system_folder_is_skipped_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join(".system/SKILL.md"), "no frontmatter");
    assert_eq!(lint_root(tmp.path(), true).unwrap(), LintReport::default());
    assert_eq!(lint_root(tmp.path(), false).unwrap().files, 1);
}

#[cfg(unix)]
#[test]
fn broken_symlinks_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), tmp.path().join("gone")).unwrap();
    fs::create_dir(tmp.path().join("bundle")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), tmp.path().join("bundle/SKILL.md")).unwrap();
    let report = lint_root(tmp.path(), false).unwrap();
    let found: Vec<(PathBuf, Severity, bool)> = report
        .findings
        .iter()
        .map(|f| (f.path.clone(), f.severity, f.line.is_none() && f.message.starts_with("broken symbolic link: ")))
        .collect();
    assert_eq!(
        found,
        [(tmp.path().join("bundle/SKILL.md"), Severity::Error, true), (tmp.path().join("gone"), Severity::Error, true),]
    );
}

#[test]
fn links_to_missing_resources_inside_the_skill_are_warned() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("my-skill");
    write(&bundle.join("reference/here.md"), "present");
    write(
        &bundle.join("SKILL.md"),
        concat!(
            "---\nname: my-skill\ndescription: d\n---\n",
            "See [here](reference/here.md) and [there](./reference/there.md#part).\n",
            "Also [title](<reference/with space.md> \"Title\"), [web](https://example.invalid/x), [top](#top).\n",
            "Outside the skill: [agents](../../AGENTS.md), [mail](mailto:a@b), [abs](/etc/x), [enc](a%20b.md).\n",
            "```\n[in code](missing.md)\n```\n",
            "Inline code shows Markdown: `[English](foo.md)` and ``[x](y.md)``, but [after](after.md) is a link.\n",
            "[leaves and comes back](../my-skill/gone.md) is not judged either.\n",
        ),
    );
    let report = lint_path(&bundle).unwrap();
    assert_eq!(
        report_lines(&report, tmp.path()),
        [
            "my-skill/SKILL.md:5: warning: link target `./reference/there.md#part` does not exist",
            "my-skill/SKILL.md:6: warning: link target `reference/with space.md` does not exist",
            "my-skill/SKILL.md:11: warning: link target `after.md` does not exist",
        ]
    );
}

#[test]
fn code_spans_follow_commonmark() {
    assert_eq!(outside_code_spans("a `b` c"), ["a ", " c"]);
    assert_eq!(outside_code_spans("a ``b ` c`` d"), ["a ", " d"]);
    assert_eq!(outside_code_spans("a ` b"), ["a ` b"]);
    assert_eq!(outside_code_spans("`x`"), ["", ""]);
}

#[test]
fn a_file_over_the_providers_limit_is_an_error_not_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my-skill").join("SKILL.md");
    write(&path, "");
    // 512 MiB, sparse: `lint` reads no more of it than the provider would.
    fs::File::options().write(true).open(&path).unwrap().set_len(512 << 20).unwrap();
    let report = lint_file(&path);
    let messages: Vec<&str> = report.findings.iter().map(|found| found.message.as_str()).collect();
    assert_eq!(messages, ["skill file is 536870912 bytes, over the 8388608-byte limit"]);
}
