use super::*;

fn skill(name: &str, description: &str, model_invocable: bool) -> SkillSummary {
    SkillSummary::for_test(name, description, model_invocable)
}

fn text_of(message: &Message) -> &str {
    message.single_text().unwrap()
}

#[test]
fn entry_lines_list_only_model_invocable_skills_with_escaped_capped_descriptions() {
    let catalog = Catalog::from_skills(
        &[
            skill("a-skill", "  Use <b> &\n tags  ", true),
            skill("hidden", "Not for the model.", false),
            skill("z-skill", "abcdefghij", true),
        ],
        8,
    );
    // Truncation counts the unescaped characters; escaping comes after.
    assert_eq!(catalog.body, "- `a-skill`: Use &lt;...\n- `z-skill`: abcde...\n");
    assert_eq!(catalog.len, 2);
}

#[test]
fn digest_is_sha256_of_lines_joined_without_trailing_newline() {
    let catalog = Catalog::from_skills(&[skill("a", "One.", true), skill("b", "Two.", true)], 500);
    assert_eq!(catalog.digest, CatalogDigest::of("- `a`: One.\n- `b`: Two."));
    assert_eq!(
        Catalog::from_skills(&[], 500).digest.to_hex(),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn initial_message_is_exact() {
    let message =
        Catalog::from_skills(&[skill("triage-bug", "Triage a bug report.", true)], 500).initial_message(false);
    assert_eq!(message.source, r#"{"kind":"plugin","plugin":"dsh-tool-skill"}"#);
    assert_eq!(
        text_of(&message),
        "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n- `triage-bug`: Triage a bug report.\n</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\n</system-reminder>"
    );
}

#[test]
fn replacement_message_with_entries_is_exact() {
    let message = Catalog::from_skills(&[skill("tag-release", "Create and push an annotated release tag.", true)], 500)
        .replacement_message(false);
    assert_eq!(
        text_of(&message),
        "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n- `tag-release`: Create and push an annotated release tag.\n</available_skills>\n\nUse only names in this replacement catalog. If the user names a listed skill, or the task clearly matches its description, call the `skill` tool with the exact name before acting.\n</system-reminder>"
    );
}

#[test]
fn empty_replacement_message_is_exact() {
    let message = Catalog::from_skills(&[], 500).replacement_message(false);
    assert_eq!(
        text_of(&message),
        "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n</available_skills>\n\nNo skills are currently available through the `skill` tool. Do not use names from earlier skill catalogs.\n</system-reminder>"
    );
}

#[test]
fn user_invocation_adds_one_line_before_the_closing_tag() {
    let listed = Catalog::from_skills(&[skill("a", "One.", true)], 500);
    assert_eq!(
        text_of(&listed.initial_message(true)),
        "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n- `a`: One.\n</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\nA user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.\n</system-reminder>"
    );
    assert_eq!(
        text_of(&listed.replacement_message(true)),
        "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n- `a`: One.\n</available_skills>\n\nUse only names in this replacement catalog. If the user names a listed skill, or the task clearly matches its description, call the `skill` tool with the exact name before acting.\nA user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.\n</system-reminder>"
    );
    assert_eq!(
        text_of(&Catalog::from_skills(&[], 500).replacement_message(true)),
        "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n</available_skills>\n\nNo skills are currently available through the `skill` tool. Do not use names from earlier skill catalogs.\nA user may still invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool for it.\n</system-reminder>"
    );
    // The extra line is outside the markers: the digest does not change.
    assert_eq!(published_digest(&listed.initial_message(true)), Some(listed.digest));
}

/// DeepSeek Harness 0.1.0-rc.8's catalogs, byte for byte (its
/// `renderCatalogMessage` and `renderCatalogUpdate`).
#[test]
fn the_skill_catalog_form_writes_what_the_published_plugin_writes() {
    let skills = [skill("a-skill", "  Use <b> &\n \"tags\"  ", true), skill("hidden", "No.", false)];
    let catalog = Catalog::build(&skills, 500, CatalogForm::SkillCatalog);
    let initial = catalog.initial_message(true);
    assert_eq!(
        initial.source,
        r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a-skill","description":"Use <b> & \"tags\""}]}"#
    );
    assert_eq!(
        text_of(&initial),
        "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n- `a-skill`: Use &lt;b&gt; &amp; \"tags\"\n</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\nA user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.\n</system-reminder>"
    );
    let update = catalog.replacement_message(true);
    assert_eq!(
        update.source,
        r#"{"kind":"skill-catalog","form":"catalog","update":true,"entries":[{"name":"a-skill","description":"Use <b> & \"tags\""}]}"#
    );
    assert_eq!(text_of(&update), text_of(&Catalog::from_skills(&skills, 500).replacement_message(true)));
    let empty = Catalog::build(&[], 500, CatalogForm::SkillCatalog).replacement_message(true);
    assert_eq!(empty.source, r#"{"kind":"skill-catalog","form":"catalog","update":true,"entries":[]}"#);
    assert_eq!(text_of(&empty), text_of(&Catalog::from_skills(&[], 500).replacement_message(true)));
    // Both forms of one catalog have one digest, and each is recognised with it.
    assert_eq!(catalog.digest, Catalog::from_skills(&skills, 500).digest);
    for message in [&initial, &update] {
        assert_eq!(published_digest(message), Some(catalog.digest));
    }
}

#[test]
fn rendered_catalogs_are_recognised_with_their_own_digest() {
    for skills in [vec![skill("a", "One.", true), skill("b", "Two.", true)], vec![]] {
        let catalog = Catalog::from_skills(&skills, 500);
        assert_eq!(published_digest(&catalog.initial_message(false)), Some(catalog.digest));
        assert_eq!(published_digest(&catalog.replacement_message(false)), Some(catalog.digest));
    }
}

#[test]
fn own_generation_needs_source_single_text_block_and_both_markers() {
    let text = "x<available_skills>\n- `a`: One.\n</available_skills>y".to_owned();
    let with = |source: &str, content: Vec<ContentBlock>| Message { source: source.to_owned(), content };
    let good = with(CATALOG_SOURCE, vec![ContentBlock::Text(text.clone())]);
    assert_eq!(published_digest(&good), Some(CatalogDigest::of("- `a`: One.")));
    assert!(is_catalog(&good));
    for not_catalog in [
        with(r#"{"kind":"plugin","plugin":"other"}"#, vec![ContentBlock::Text(text.clone())]),
        with(r#"{"kind":"user"}"#, vec![ContentBlock::Text(text.clone())]),
        with("not json", vec![ContentBlock::Text(text.clone())]),
        with(CATALOG_SOURCE, vec![ContentBlock::Text(text.clone()), ContentBlock::Text(String::new())]),
        with(CATALOG_SOURCE, vec![ContentBlock::Other("{}".to_owned())]),
        with(CATALOG_SOURCE, vec![]),
        with(CATALOG_SOURCE, vec![ContentBlock::Text("<available_skills>- `a`: x</available_skills>".to_owned())]),
        with(CATALOG_SOURCE, vec![ContentBlock::Text("<available_skills>\n- `a`: x".to_owned())]),
        with(CATALOG_SOURCE, vec![ContentBlock::Text("</available_skills><available_skills>\n".to_owned())]),
    ] {
        assert_eq!(published_digest(&not_catalog), None, "{not_catalog:?}");
        assert!(!is_catalog(&not_catalog));
    }
}

#[test]
fn later_generation_is_recognised_from_its_entries() {
    let message = Message {
        source: r#"{"kind":"skill-catalog","form":"catalog","update":true,"entries":[{"name":"a","description":"x < y"},{"name":"b","description":"Two."}]}"#.to_owned(),
        content: vec![ContentBlock::Text("whatever the text says".to_owned())],
    };
    assert_eq!(published_digest(&message), Some(CatalogDigest::of("- `a`: x &lt; y\n- `b`: Two.")));
    // The same catalog published by this plugin has the same digest, so a
    // session moved between hosts never duplicates it.
    let ours = Catalog::from_skills(&[skill("a", "x < y", true), skill("b", "Two.", true)], 500);
    assert_eq!(published_digest(&message), Some(ours.digest));
    let empty =
        Message { source: r#"{"kind":"skill-catalog","form":"catalog","entries":[]}"#.to_owned(), content: vec![] };
    assert_eq!(published_digest(&empty), Some(CatalogDigest::of("")));
}

#[test]
fn malformed_later_generation_entries_are_not_a_catalog() {
    for source in [
        r#"{"kind":"skill-catalog","form":"catalog"}"#,
        r#"{"kind":"skill-catalog","entries":{}}"#,
        r#"{"kind":"skill-catalog","entries":[{"name":"","description":"x"}]}"#,
        r#"{"kind":"skill-catalog","entries":[{"name":"a"}]}"#,
        r#"{"kind":"skill-catalog","entries":[{"name":"a","description":3}]}"#,
        r#"{"kind":"skill-catalog","entries":["a"]}"#,
    ] {
        let message = Message { source: source.to_owned(), content: vec![] };
        assert_eq!(published_digest(&message), None, "{source}");
    }
}

fn budgeted(json: &str) -> Config {
    Config::parse(json).unwrap()
}

#[test]
fn a_budgeted_catalog_cuts_lists_and_says_how_complete_it_is() {
    let skills = [
        skill("alpha", "Short.", true),
        skill("beta", "A much longer description that will not fit whole <here>.", true),
        skill("gamma", "Another long description that has to be shortened too.", true),
        skill("hidden", "Never listed.", false),
    ];
    // Frames 12 + 11 + 12 = 35; "Short." 6; 20 left: 10 each for beta and gamma.
    let catalog = Catalog::for_config(&skills, &budgeted(r#"{"catalogBudget":61}"#));
    assert_eq!(
        catalog.body,
        "- `alpha`: Short.\n- `beta`: A much...\n- `gamma`: Another...\nCatalog coverage: 3 of 3 skills listed, 2 with shortened descriptions.\n"
    );
    assert_eq!((catalog.len, catalog.total()), (3, 3));
    let text = catalog.initial_message(false);
    assert!(text.single_text().unwrap().contains("<available_skills>\n- `alpha`: Short.\n"));
    assert!(text.single_text().unwrap().contains("shortened descriptions.\n</available_skills>\n\nIf the user"));
    // The digest covers the coverage line: what is shown.
    assert_eq!(published_digest(&text), Some(catalog.digest));
    assert_ne!(catalog.digest, Catalog::for_config(&skills, &budgeted(r#"{"catalogBudget":63}"#)).digest);

    // Below the names: the last in name order go first, pinned ones last.
    // gamma whole is 66 characters; alpha's shortest line (15) fits in
    // the 18 left, beta's (14) not in the 3 after it, which alpha's
    // description takes.
    let config = budgeted(r#"{"catalogBudget":84,"catalogPinned":["gamma"],"skillSearch":true}"#);
    let catalog = Catalog::for_config(&skills, &config);
    assert_eq!(
        catalog.body,
        "- `alpha`: Short.\n- `gamma`: Another long description that has to be shortened too.\nCatalog coverage: 2 of 3 skills listed; 1 left out, still loaded by exact name or found with the `skill` tool's `query`.\n"
    );
    assert_eq!((catalog.len, catalog.total()), (2, 3));
    // Not even one name: nothing listed, and the message still lists the tail for skills.
    let catalog = Catalog::for_config(&skills, &budgeted(r#"{"catalogBudget":5}"#));
    assert_eq!(catalog.body, "Catalog coverage: 0 of 3 skills listed; 3 left out, still loaded by exact name.\n");
    assert_eq!((catalog.len, catalog.total()), (0, 3));
    assert!(catalog.replacement_message(false).single_text().unwrap().contains("Use only names in this replacement"));
}

#[test]
fn excluded_skills_are_left_out_before_the_budget_and_not_counted() {
    let skills = [skill("deploy-prod", "Ship.", true), skill("draft-a", "Draft.", true), skill("z", "Z.", true)];
    let catalog = Catalog::for_config(&skills, &budgeted(r#"{"catalogExclude":["draft-*","z"]}"#));
    assert_eq!(catalog.body, "- `deploy-prod`: Ship.\n");
    let catalog = Catalog::for_config(&skills, &budgeted(r#"{"catalogExclude":["draft-*"],"catalogBudget":1000}"#));
    assert_eq!(catalog.body, "- `deploy-prod`: Ship.\n- `z`: Z.\nCatalog coverage: 2 of 2 skills listed.\n");
}

#[test]
fn without_the_new_keys_the_catalog_is_the_references() {
    let skills = [skill("a", "One <b>.", true), skill("b", "Two.", false)];
    assert_eq!(Catalog::for_config(&skills, &Config::default()), Catalog::from_skills(&skills, 500));
}

#[test]
fn the_skill_catalog_form_records_the_coverage_line_in_its_source() {
    let skills = [skill("a", "One.", true), skill("b", "Two.", true)];
    let config = budgeted(r#"{"catalogBudget":100,"catalogSource":"skill-catalog"}"#);
    let catalog = Catalog::for_config(&skills, &config);
    let message = catalog.initial_message(false);
    assert_eq!(
        message.source,
        r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"One."},{"name":"b","description":"Two."}],"coverage":"Catalog coverage: 2 of 2 skills listed."}"#
    );
    assert_eq!(published_digest(&message), Some(catalog.digest));
}

#[test]
fn name_only_skills_are_listed_as_their_name_with_or_without_a_budget() {
    let skills = [skill("legacy-a", "Old <tool>.", true), skill("new", "Fresh.", true), skill("x", "X.", true)];
    let config = budgeted(r#"{"catalogNameOnly":["legacy-*","x"]}"#);
    let catalog = Catalog::for_config(&skills, &config);
    assert_eq!(catalog.body, "- `legacy-a`: ...\n- `new`: Fresh.\n- `x`: ...\n");
    // Under a budget the line is never lengthened, nor counted as shortened.
    let config = budgeted(r#"{"catalogNameOnly":["legacy-*"],"catalogBudget":1000,"catalogSource":"skill-catalog"}"#);
    let catalog = Catalog::for_config(&skills, &config);
    assert_eq!(
        catalog.body,
        "- `legacy-a`: ...\n- `new`: Fresh.\n- `x`: X.\nCatalog coverage: 3 of 3 skills listed.\n"
    );
    assert!(catalog.initial_message(false).source.contains(r#"{"name":"legacy-a","description":"..."}"#));
}

#[test]
fn summaries_show_first_sentences_and_the_coverage_line_counts_them() {
    let skills = [
        skill("alpha", "Short.", true),
        skill("beta", "Drafts release notes. Use when a tag is cut, e.g. before publishing <notes>.", true),
        skill("gamma", "Reviews pull requests. Use when asked for a review of a diff or a branch.", true),
    ];
    // Frames 12 + 11 + 12 = 35; "Short." 6; the first sentences 21 and 22.
    let config = budgeted(r#"{"catalogBudget":84,"catalogSummaries":true}"#);
    let catalog = Catalog::for_config(&skills, &config);
    assert_eq!(
        catalog.body,
        "- `alpha`: Short.\n- `beta`: Drafts release notes.\n- `gamma`: Reviews pull requests.\nCatalog coverage: 3 of 3 skills listed, 2 with only their first sentence.\n"
    );
    // Without the key, the same budget shares equally.
    let shared = Catalog::for_config(&skills, &budgeted(r#"{"catalogBudget":84}"#));
    assert_eq!(
        shared.body,
        "- `alpha`: Short.\n- `beta`: Drafts release not...\n- `gamma`: Reviews pull reque...\nCatalog coverage: 3 of 3 skills listed, 2 with shortened descriptions.\n"
    );
}

#[test]
fn user_only_skills_are_out_of_the_catalog_through_the_registry_view() {
    use crate::types::{Registry, RegistryError, SkillDefinition, Snapshot, SnapshotAnswer};
    use crate::user_only::UserOnly;
    struct Listing(Vec<SkillSummary>);
    impl Registry for Listing {
        fn snapshot(&self, _: Option<u64>) -> Result<SnapshotAnswer, RegistryError> {
            Ok(SnapshotAnswer::Changed(Snapshot { complete: true, revision: 1, skills: self.0.clone() }))
        }
        fn list(&self, _: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
            Ok(self.0.clone())
        }
        fn get(&self, _: &str) -> Result<Option<SkillDefinition>, RegistryError> {
            Ok(None)
        }
    }
    let registry = Listing(vec![skill("deploy-prod", "Ship.", true), skill("review", "Review.", true)]);
    let config = budgeted(r#"{"userOnly":["deploy-*"],"catalogBudget":1000}"#);
    let Ok(SnapshotAnswer::Changed(snapshot)) = UserOnly::new(&registry, &config.user_only).snapshot(None) else {
        panic!()
    };
    // Exactly as `disable-model-invocation: true`: not listed, not counted.
    let catalog = Catalog::for_config(&snapshot.skills, &config);
    let declared = [skill("deploy-prod", "Ship.", false), skill("review", "Review.", true)];
    assert_eq!(catalog, Catalog::for_config(&declared, &budgeted(r#"{"catalogBudget":1000}"#)));
    assert_eq!(catalog.body, "- `review`: Review.\nCatalog coverage: 1 of 1 skill listed.\n");
}

mod budget_properties {
    use proptest::prelude::*;

    use super::*;

    fn skills() -> impl Strategy<Value = Vec<SkillSummary>> {
        // Stops and capitals, so that first sentences end before the whole.
        let description = prop::string::string_regex("[a-zA-Z .!?<>&😀é\t]{0,80}").unwrap();
        prop::collection::btree_map("[a-z]{1,12}(-[a-z0-9]{1,6})?", (description, prop::bool::weighted(0.9)), 0..40)
            .prop_map(|skills| {
                skills
                    .into_iter()
                    .map(|(name, (description, invocable))| skill(&name, &description, invocable))
                    .collect()
            })
    }

    proptest! {
        #[test]
        fn a_budgeted_catalog_fits_its_budget_and_lists_pinned_skills_first_and_whole_when_they_fit(
            skills in skills(),
            budget in 1usize..3000,
            max_length in 3usize..120,
            pin_mask in any::<u64>(),
            name_only_mask in any::<u64>(),
            summaries in any::<bool>(),
        ) {
            let pinned: Vec<String> = skills.iter().enumerate()
                .filter(|(index, skill)| skill.invocation.model_invocable && pin_mask >> (index % 64) & 1 == 1 && index % 3 == 0)
                .map(|(_, skill)| skill.name.clone())
                .collect();
            let name_only: Vec<String> = skills.iter().enumerate()
                .filter(|(index, _)| name_only_mask >> (index % 64) & 1 == 1 && index % 4 == 1)
                .map(|(_, skill)| skill.name.clone())
                .collect();
            let config = Config {
                catalog_budget: Some(budget),
                catalog_description_max_length: max_length,
                catalog_pinned: pinned.clone(),
                catalog_name_only: skill_rules::SkillPatterns::new(name_only.clone()),
                catalog_summaries: summaries,
                ..Config::default()
            };
            let catalog = Catalog::for_config(&skills, &config);
            let lines: Vec<&str> = catalog.body.lines().collect();
            let (coverage, entries) = lines.split_last().expect("a coverage line");
            prop_assert!(coverage.starts_with("Catalog coverage: "));
            let used: usize = entries.iter().map(|line| line.chars().count() + 1).sum();
            prop_assert!(used <= budget, "{used} > {budget}");
            prop_assert_eq!(entries.len(), catalog.len);
            let description = |name: &str| {
                let skill = skills.iter().find(|skill| skill.name == name).unwrap();
                if name_only.iter().any(|only| only == name) {
                    "...".to_owned()
                } else {
                    catalog_description(&skill.description, max_length)
                }
            };
            let line_of = |name: &str, shown: &str| format!("- `{name}`: {}", escape::text(shown));
            let whole_line = |name: &str| line_of(name, &description(name));
            let first_line = |name: &str| line_of(name, skill_rules::first_sentence(&description(name)));
            let pinned_cost: usize = pinned.iter().map(|name| whole_line(name).chars().count() + 1).sum();
            if pinned_cost <= budget {
                for name in &pinned {
                    prop_assert!(entries.contains(&whole_line(name).as_str()), "{name} missing whole");
                }
            }
            // No skill is left out while the names fit (pinned ones at their whole line).
            let eligible: Vec<&SkillSummary> = skills.iter().filter(|skill| skill.invocation.model_invocable).collect();
            let names_cost: usize = eligible.iter().map(|skill| {
                let shortest = if pinned.contains(&skill.name) {
                    whole_line(&skill.name)
                } else {
                    let shown = description(&skill.name);
                    line_of(&skill.name, if escape::text(&shown).chars().count() <= 3 { &shown } else { "..." })
                };
                shortest.chars().count() + 1
            }).sum();
            if names_cost <= budget {
                prop_assert_eq!(catalog.len, eligible.len(), "left out while the names fit");
            }
            // A pinned skill is never left out while an unpinned one is listed.
            let listed: Vec<&str> = entries.iter().map(|entry| &entry[3..entry.find("`: ").unwrap()]).collect();
            let pinned_out = pinned.iter().find(|name| !listed.contains(&name.as_str()));
            let unpinned_in = listed.iter().find(|name| !pinned.iter().any(|pin| pin == *name));
            prop_assert!(pinned_out.is_none() || unpinned_in.is_none(), "{pinned_out:?} out, {unpinned_in:?} in");
            // Every entry is its skill's whole line, its first sentence (with
            // the tier), or a cut; a name-only one is its name.
            let mut cut_seen = false;
            for entry in entries {
                let name = &entry[3..entry.find("`: ").unwrap()];
                let whole = whole_line(name);
                if name_only.iter().any(|only| only == name) {
                    prop_assert_eq!(*entry, format!("- `{name}`: ..."));
                } else if *entry != whole && !(summaries && *entry == first_line(name)) {
                    prop_assert!(entry.ends_with("..."), "{entry}");
                    cut_seen = true;
                }
            }
            // With the tier, no description runs past its first sentence
            // (pinned ones aside) while another is cut short of its own.
            if summaries && cut_seen {
                for entry in entries {
                    let name = &entry[3..entry.find("`: ").unwrap()];
                    if pinned.iter().any(|pin| pin == name) {
                        continue;
                    }
                    // A description of 3 characters or less is whole at its shortest.
                    let longer = first_line(name) != whole_line(name)
                        && escape::text(&description(name)).chars().count() > 3;
                    prop_assert!(!(longer && *entry == whole_line(name)), "{entry} whole while a cut is listed");
                }
            }
            // The same winners give the same bytes.
            prop_assert_eq!(Catalog::for_config(&skills, &config), catalog);
        }
    }
}
