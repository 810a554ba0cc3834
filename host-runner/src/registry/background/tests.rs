use std::collections::VecDeque;
use std::sync::mpsc;

use super::*;
use crate::registry::{InvocationPolicy, SkillRegistry};

/// A provider answering listings from a script (the last answer repeats),
/// each listing first waiting for `gate` when there is one.
struct Scripted {
    answers: Mutex<VecDeque<Result<Listing, ProviderError>>>,
    gate: Mutex<Option<mpsc::Receiver<()>>>,
}

impl Scripted {
    fn new(answers: Vec<Result<Listing, ProviderError>>) -> Self {
        Self { answers: Mutex::new(answers.into()), gate: Mutex::new(None) }
    }
}

impl SkillProvider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn list(&self, _cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        if let Some(gate) = lock(&self.gate).as_ref() {
            let _ = gate.recv();
        }
        let mut answers = lock(&self.answers);
        if answers.len() > 1 { answers.pop_front().unwrap() } else { answers.front().unwrap().clone() }
    }

    fn load(&self, _cwd: Option<&Path>, _candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        Ok(None)
    }
}

fn listing(names: &[&str]) -> Listing {
    let candidates = names
        .iter()
        .map(|name| SkillCandidate {
            name: (*name).to_owned(),
            description: format!("{name} does things."),
            when_to_use: None,
            invocation: InvocationPolicy::default(),
            source: "remote".to_owned(),
            provider: "scripted".to_owned(),
            resource_base: None,
            rank: 350,
            path: None,
            metadata: None,
            body_digest: None,
            listed: None,
        })
        .collect();
    Listing { candidates, complete: true, ..Listing::default() }
}

fn quick() -> RefreshPolicy {
    RefreshPolicy {
        interval: Duration::from_millis(20),
        min_interval: Duration::from_millis(20),
        max_interval: Duration::from_secs(1),
        first_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        first_wait: Duration::from_millis(50),
    }
}

/// Waits (at most 5 s) until `reports` holds `count` reports.
fn reports_after(reports: &Arc<Mutex<Vec<ListingReport>>>, count: usize) -> Vec<ListingReport> {
    let until = Instant::now() + Duration::from_secs(5);
    while lock(reports).len() < count && Instant::now() < until {
        thread::sleep(Duration::from_millis(5));
    }
    lock(reports).clone()
}

fn recorded(listing: &BackgroundListing) -> Arc<Mutex<Vec<ListingReport>>> {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let held = Arc::clone(&reports);
    listing.listen(move |report| lock(&held).push(report.clone()));
    reports
}

#[test]
fn a_hung_provider_costs_the_first_wait_once_and_never_again() {
    let (release, gate) = mpsc::channel();
    let scripted = Scripted::new(vec![Ok(listing(&["late"]))]);
    *lock(&scripted.gate) = Some(gate);
    // A first wait of 1 s against a bound of half of it: a loaded machine's
    // scheduling cannot pass for a second wait.
    let policy = RefreshPolicy { first_wait: Duration::from_secs(1), ..quick() };
    let background = BackgroundListing::new(Arc::new(scripted), None, policy, || None);
    let reports = recorded(&background);
    assert_eq!(background.list(None), Err(ProviderError(FIRST_LISTING_PENDING.to_owned())));
    for _ in 0..20 {
        let asked = Instant::now();
        assert_eq!(background.list(None), Err(ProviderError(FIRST_LISTING_PENDING.to_owned())));
        assert!(asked.elapsed() < Duration::from_millis(500), "{:?}", asked.elapsed());
    }
    release.send(()).unwrap();
    assert_eq!(reports_after(&reports, 1), [ListingReport { changed: true, warning: None }]);
    assert_eq!(background.list(None).unwrap(), listing(&["late"]));
    drop(release);
}

#[test]
fn a_failure_is_warned_once_and_the_recovery_is_reported() {
    let down = || Err(ProviderError("http://x/i.json: cannot read skill index: HTTP status 404".to_owned()));
    let scripted = Scripted::new(vec![down(), down(), down(), Ok(listing(&["back"])), Ok(listing(&["back"]))]);
    let background = BackgroundListing::new(Arc::new(scripted), None, quick(), || None);
    let reports = recorded(&background);
    background.start();
    let seen = reports_after(&reports, 2);
    assert_eq!(
        seen,
        [
            ListingReport {
                changed: true,
                warning: Some(
                    "skill provider \"scripted\" skipped: http://x/i.json: cannot read skill index: HTTP status 404"
                        .to_owned()
                ),
            },
            ListingReport { changed: true, warning: None },
        ]
    );
    // Listed again and again since, unchanged: nothing more is reported.
    thread::sleep(Duration::from_millis(100));
    assert_eq!(lock(&reports).len(), 2);
    assert_eq!(background.list(None).unwrap(), listing(&["back"]));
}

#[test]
fn a_changed_listing_is_reported_and_a_registry_sees_it_once_invalidated() {
    let scripted = Scripted::new(vec![Ok(listing(&["one"])), Ok(listing(&["one", "two"]))]);
    let background = Arc::new(BackgroundListing::new(Arc::new(scripted), None, quick(), || None));
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(Arc::clone(&background) as Arc<dyn SkillProvider>);
    let weak = Arc::downgrade(&registry);
    background.listen(move |_| {
        if let Some(registry) = weak.upgrade() {
            registry.invalidate();
        }
    });
    let names = |registry: &SkillRegistry| -> Vec<String> {
        registry.snapshot(None).skills.iter().map(|winner| winner.candidate.name.clone()).collect()
    };
    assert_eq!(names(&registry), ["one"]);
    let until = Instant::now() + Duration::from_secs(5);
    while names(&registry) != ["one", "two"] && Instant::now() < until {
        thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(names(&registry), ["one", "two"]);
}

#[test]
fn waits_are_the_hint_within_bounds_or_a_doubling_backoff() {
    let policy = RefreshPolicy::default();
    assert_eq!(policy.next_wait(0, None), Duration::from_secs(60));
    assert_eq!(policy.next_wait(0, Some(Duration::ZERO)), Duration::from_secs(5));
    assert_eq!(policy.next_wait(0, Some(Duration::from_secs(300))), Duration::from_secs(300));
    assert_eq!(policy.next_wait(0, Some(Duration::from_secs(86_400))), Duration::from_secs(3600));
    let backoff: Vec<u64> = (1..=8).map(|failures| policy.next_wait(failures, None).as_secs()).collect();
    assert_eq!(backoff, [1, 2, 4, 8, 16, 32, 60, 60]);
    assert_eq!(policy.next_wait(u32::MAX, None), Duration::from_secs(60));
}

/// A skill's files are its provider's: the wrapper passes both file calls on.
#[test]
fn file_calls_reach_the_wrapped_provider() {
    use crate::providers::memory::{LoadOutcome, MemoryProvider, MemorySkill};
    let fields = serde_json::json!({"name": "a", "description": "A.", "content": "Body.", "files": {"x.md": "X"}});
    let skill = MemorySkill { fields: fields.as_object().unwrap().clone(), loaded: LoadOutcome::AsListed };
    let memory = MemoryProvider::new("memory".to_owned(), true, None, vec![skill]).unwrap();
    let background = BackgroundListing::new(Arc::new(memory), None, quick(), || None);
    let candidate = background.list(None).unwrap().candidates.remove(0);
    assert_eq!(
        background.list_files(None, &candidate, 10).unwrap(),
        Some(FileListing { files: vec![("x.md".to_owned(), Some(1))], total: 1 })
    );
    assert_eq!(background.read_file(None, &candidate, "x.md").unwrap(), FileRead::Text("X".to_owned()));
}
