//! What `catalogExclude` at its limit costs (docs/performance.md): 1,024
//! patterns against 10,000 skill names, compiled once into one automaton
//! (`SkillPatterns`, what the plugin and `skill-host catalog` use) and, for
//! comparison, each pattern tried in turn by the rule.
//!
//! `cargo bench -p skill-plugin --bench patterns`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use skill_rules::{SkillPatterns, matches_skill_pattern};

/// A third each: star-heavy patterns (the backtracking kind), prefixes, and
/// exact names; `team-42-*` is the only one that matches.
fn patterns() -> Vec<String> {
    let mut patterns: Vec<String> = (0..1023)
        .map(|i| match i % 3 {
            0 => format!("*-service-*-{i}x-*-handler*"),
            1 => format!("legacy-{i}-*"),
            _ => format!("old-skill-{i}"),
        })
        .collect();
    patterns.push("team-42-*".to_owned());
    patterns
}

fn names() -> Vec<String> {
    (0..10_000).map(|i| format!("team-{i}-service-component-{}-handler-module", i % 97)).collect()
}

fn patterns_bench(c: &mut Criterion) {
    let (patterns, names) = (patterns(), names());
    let mut group = c.benchmark_group("catalogExclude (1024 patterns x 10000 skills)");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(5));
    group.bench_function("compiled once (SkillPatterns)", |b| {
        let compiled = SkillPatterns::new(patterns.clone());
        b.iter(|| names.iter().filter(|name| compiled.matches(black_box(name))).count())
    });
    group.bench_function("compile, then match", |b| {
        b.iter(|| {
            let compiled = SkillPatterns::new(black_box(&patterns).clone());
            names.iter().filter(|name| compiled.matches(name)).count()
        })
    });
    group.bench_function("each pattern in turn (the rule)", |b| {
        b.iter(|| {
            names
                .iter()
                .filter(|name| patterns.iter().any(|pattern| matches_skill_pattern(pattern, black_box(name))))
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, patterns_bench);
criterion_main!(benches);
