//! Criterion benches for the plugin's hot functions, natively: what a
//! catalog costs to build (normalise, cap, escape, hash) and to recognise.
//!
//! `cargo bench -p skill-plugin`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use skill_plugin::catalog::{Catalog, published_digest};
use skill_plugin::description::catalog_description;
use skill_plugin::escape;
use skill_plugin::types::{InvocationPolicy, SkillSummary};

fn skills(n: usize) -> Vec<SkillSummary> {
    (0..n)
        .map(|i| SkillSummary {
            name: format!("review-pdf-forms-{i}"),
            description: "Guides how to review pdf forms safely: collect context first, apply the smallest change, and verify with the project tooling.".to_owned(),
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
}

criterion_group!(benches, hot);
criterion_main!(benches);
