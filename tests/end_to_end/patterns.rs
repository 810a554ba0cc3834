//! `catalogExclude` at its documented limit, through the real component: 1,024
//! patterns over 5,000 skills cost a step and a search what they should, not
//! patterns × skills × backtracking (docs/spec.md §3.13).

use std::sync::Arc;
use std::time::Instant;

use skill_host::session::{SessionHeader, SessionLog, SharedSession};
use skill_host::test_support::providers::Fake;
use skill_host::{Decision, Plugin, SandboxLimits, SkillRegistry, StepInput, StepOutcome, ToolOutcome, run_step};

const SKILLS: usize = 5_000;
const PATTERNS: usize = 1_024;

/// Patterns with several stars, none of which a skill below matches except
/// `team-42-*`: the kind that makes a backtracking matcher retry every star.
fn patterns() -> Vec<String> {
    let mut patterns: Vec<String> = (1..PATTERNS).map(|i| format!("*-service-*-{i}x-*-handler*")).collect();
    patterns.push("team-42-*".to_owned());
    patterns
}

#[test]
fn a_thousand_patterns_over_five_thousand_skills_keep_the_deadline() {
    let config = serde_json::json!({ "catalogExclude": patterns(), "skillSearch": true }).to_string();
    let limits = SandboxLimits::default();
    let plugin = Plugin::embedded(&config, limits).unwrap();
    let names: Vec<String> =
        (0..SKILLS).map(|i| format!("team-{i}-service-component-{}-handler-module", i % 97)).collect();
    let skills: Vec<(&str, i64)> = names.iter().map(|name| (name.as_str(), 100)).collect();
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(Arc::new(Fake::new("many", &skills)));
    let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some("/workspace".to_owned()))));
    let input = StepInput { cwd: Some("/workspace".into()), ..StepInput::default() };

    let start = Instant::now();
    let outcome = run_step(&plugin, &registry, &session, &input, Decision::Enter(vec![])).unwrap();
    let StepOutcome::Decided(Decision::Enter(messages)) = outcome else { panic!("{outcome:?}") };
    assert!(start.elapsed() < limits.timeout, "the step took {:?}", start.elapsed());
    let catalog = skill_host::message::single_text(&messages[0]).unwrap();
    assert!(catalog.contains("`team-41-service-component-41-handler-module`"));
    assert!(!catalog.contains("`team-42-"), "team-42-* is excluded");

    let start = Instant::now();
    let outcome = plugin.invoke(&registry, Some("/workspace"), r#"{"query":"component 42"}"#).unwrap();
    assert!(start.elapsed() < limits.timeout, "the search took {:?}", start.elapsed());
    let ToolOutcome::Success { text, .. } = outcome else { panic!("{outcome:?}") };
    assert!(text.starts_with("The best 5 of 5000 skills") || text.starts_with("The best 5 of 4999 skills"), "{text}");
    assert!(!text.contains("`team-42-"), "{text}");
}
