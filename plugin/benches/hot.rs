//! Criterion benches for the plugin's hot functions, natively: what a
//! catalog costs to build (normalise, cap, escape, hash) and to recognise.
//!
//! `cargo bench -p skill-plugin`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use skill_plugin::catalog::{Catalog, published_digest};
use skill_plugin::config::Config;
use skill_plugin::description::catalog_description;
use skill_plugin::escape;
use skill_plugin::types::{InvocationPolicy, SkillSummary};

fn skills(n: usize) -> Vec<SkillSummary> {
    (0..n)
        .map(|i| SkillSummary {
            name: format!("review-pdf-forms-{i}"),
            description: "Guides how to review pdf forms safely: collect context first, apply the smallest change, and verify with the project tooling.".to_owned(),
            when_to_use: None,
            invocation: InvocationPolicy { model_invocable: true, user_invocable: true },
            provider: "runtime".to_owned(),
            source: "runtime".to_owned(),
            path: None,
            body_digest: None,
        })
        .collect()
}

fn hot(c: &mut Criterion) {
    let description = "  Guides how to review <pdf> forms &\tsafely: collect context first,\napply the smallest change, and verify with the project tooling.  ";
    c.bench_function("catalog_description (120 chars)", |b| {
        b.iter(|| catalog_description(black_box(description), 500))
    });
    c.bench_function("escape::text (120 chars)", |b| b.iter(|| escape::text(black_box(description))));
    for n in [10, 1000] {
        let skills = skills(n);
        c.bench_function(&format!("Catalog::from_skills ({n} skills)"), |b| {
            b.iter(|| Catalog::from_skills(black_box(&skills), 500))
        });
        let message = Catalog::from_skills(&skills, 500).initial_message(false);
        c.bench_function(&format!("published_digest ({n} skills)"), |b| {
            b.iter(|| published_digest(black_box(&message)))
        });
    }
    // docs/spec.md §3.13: a budget costs at most twice the unbudgeted build.
    let skills = skills(10_000);
    let unbudgeted = Config::default();
    c.bench_function("Catalog::for_config (10000 skills, no budget)", |b| {
        b.iter(|| Catalog::for_config(black_box(&skills), &unbudgeted))
    });
    for budget in [400_000, 8_000] {
        let config = Config::parse(&format!(r#"{{"catalogBudget":{budget}}}"#)).unwrap();
        c.bench_function(&format!("Catalog::for_config (10000 skills, budget {budget})"), |b| {
            b.iter(|| Catalog::for_config(black_box(&skills), &config))
        });
    }
}

criterion_group!(benches, hot);
criterion_main!(benches);
