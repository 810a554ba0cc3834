use super::*;

const BODY: &str = "# Guide\nIntro.\n\n## Setup\nInstall it.\n\n```sh\n# not a heading\n```\n### Details ##\nMore.\n## Usage\nRun it.\n#Not a heading\n    # indented code, not a heading\n# Appendix #\nEnd.\n";

#[test]
fn headings_are_atx_lines_outside_fences_with_their_sections() {
    let found = headings(BODY);
    let texts: Vec<(usize, &str)> = found.iter().map(|heading| (heading.level, heading.text)).collect();
    assert_eq!(texts, [(1, "Guide"), (2, "Setup"), (3, "Details"), (2, "Usage"), (1, "Appendix")]);
    let section = |text: &str| find(&found, text).map(|heading| heading.section(BODY));
    assert_eq!(section("Setup"), Some("## Setup\nInstall it.\n\n```sh\n# not a heading\n```\n### Details ##\nMore."));
    assert_eq!(section("Details"), Some("### Details ##\nMore."));
    assert_eq!(section("Usage"), Some("## Usage\nRun it.\n#Not a heading\n    # indented code, not a heading"));
    assert_eq!(section("Appendix"), Some("# Appendix #\nEnd."));
    assert_eq!(find(&found, "Guide").unwrap().section(BODY), BODY[..BODY.find("# Appendix").unwrap()].trim_end());
}

#[test]
fn a_section_is_found_exactly_then_ignoring_case_and_by_its_own_line() {
    let body = "## Setup\na\n## SETUP\nb\n## Ünïcode\nc\n";
    let found = headings(body);
    assert_eq!(find(&found, "SETUP").unwrap().section(body), "## SETUP\nb");
    assert_eq!(find(&found, "setup").unwrap().section(body), "## Setup\na");
    assert_eq!(find(&found, "## Setup").unwrap().section(body), "## Setup\na");
    assert_eq!(find(&found, "ÜNÏCODE").unwrap().section(body), "## Ünïcode\nc");
    assert!(find(&found, "Missing").is_none());
    // A heading that starts with `#` is found by its text as it is.
    let hashed = "## #1 rule\nx\n## 1 rule\ny\n";
    let found = headings(hashed);
    assert_eq!(find(&found, "#1 rule").unwrap().section(hashed), "## #1 rule\nx");
    assert_eq!(find(&found, "# # 1 rule").unwrap().section(hashed), "## 1 rule\ny");
}

#[test]
fn many_headings_are_read_in_one_pass() {
    // 60,000 headings of alternating levels: each section is closed once.
    let body: String = (0..60_000).map(|index| format!("{} h{index}\n", "#".repeat(1 + index % 3))).collect();
    let started = std::time::Instant::now();
    let found = headings(&body);
    assert_eq!(found.len(), 60_000);
    assert_eq!(found[0].section(&body), "# h0\n## h1\n### h2");
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
}

#[test]
fn fences_close_only_with_their_own_character_as_long_or_longer() {
    let body = "````\n```\n# inside\n~~~\n````\n# outside\n~~~\n# in tildes\n";
    let texts: Vec<&str> = headings(body).iter().map(|heading| heading.text).collect();
    assert_eq!(texts, ["outside"]);
}

#[test]
fn the_outline_lists_the_sections_after_the_cut_with_their_sizes() {
    let cut = BODY.find("## Usage").unwrap();
    assert_eq!(
        outline(BODY, cut).unwrap(),
        format!("{OUTLINE_HEAD}\n- ## Usage (66 characters)\n- # Appendix (17 characters)")
    );
    assert_eq!(outline(BODY, BODY.len()), None);
    let many: String = (0..40).map(|index| format!("## S{index} <&>\nx\n")).collect();
    let text = outline(&many, 0).unwrap();
    assert_eq!(text.lines().count(), 1 + MAX_LISTED_HEADINGS + 1);
    assert!(text.contains("- ## S0 <&> (11 characters)"), "{text}");
    assert!(text.ends_with("- and 8 more"), "{text}");
}

#[test]
fn listed_headings_are_quoted_and_capped() {
    let many: String = (0..34).map(|index| format!("# H\"{index}\n")).collect();
    let text = listed(&headings(&many));
    assert!(text.starts_with(r#""H\"0", "H\"1""#), "{text}");
    assert!(text.ends_with(", and 2 more"), "{text}");
}

#[test]
fn a_heading_another_shares_is_named_and_found_by_its_path() {
    let body = "# Guide\n## Build\n### Example\nb\n## Deploy\n### Example\nd\n## Deploy\n#### Example\ne\n";
    let found = headings(body);
    assert_eq!(
        names(&found),
        [
            "Guide",
            "Build",
            "Guide > Build > Example",
            "Guide > Deploy",
            "Guide > Deploy > Example",
            "Guide > Deploy",
            "Guide > Deploy > Example"
        ]
    );
    assert_eq!(find(&found, "Example").unwrap().section(body), "### Example\nb");
    assert_eq!(find(&found, "Guide > Deploy > Example").unwrap().section(body), "### Example\nd");
    assert_eq!(find(&found, "guide > deploy > example").unwrap().section(body), "### Example\nd");
    assert!(listed(&found).contains(r#""Guide > Build > Example", "Guide > Deploy""#), "{}", listed(&found));
    let cut = body.find("## Deploy").unwrap();
    assert_eq!(
        outline(body, cut).unwrap(),
        format!(
            "{OUTLINE_HEAD}\n- ## Guide > Deploy (23 characters)\n- ### Guide > Deploy > Example (13 characters)\n- ## Guide > Deploy (24 characters)\n- #### Guide > Deploy > Example (14 characters)"
        )
    );
}
