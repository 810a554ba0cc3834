//! The engine and the sandbox: one `Engine`, `Linker` and `InstancePre` for
//! the host's lifetime; every call under a fresh deadline and the store's
//! memory cap; no capability granted to the plugin beyond the two imports.
//!
//! Instances are reused between calls (so the plugin can remember the catalog
//! it built for a registry revision): an idle instance is taken, or a new one
//! is made and configured. An instance that trapped is dropped with its store
//! and never called again. Instances belong to one `Sandbox`, hence to
//! one configuration.

pub mod component_cache;
mod memory_budget;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use self::memory_budget::{MemoryBudget, OverBudget};
use crate::bindings::{ContractVersion, Guest, GuestPre};
use crate::error::HostError;
use crate::imports::{CallContext, CallDeadline};
use crate::trace::{CallTrace, TraceRecorder};
use serde_json::Value;

/// The component built from `plugin/` and embedded at build time.
pub static EMBEDDED_PLUGIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/skill_plugin.wasm"));

/// How often the ticker advances the engine's epoch; deadlines are counted in ticks.
const EPOCH_TICK: Duration = Duration::from_millis(2);
/// How much of the guest's stderr is kept for an error message.
const STDERR_CAPACITY: usize = 64 * 1024;
/// How many idle instances are kept for reuse (one per concurrent caller).
const MAX_IDLE: usize = 4;
/// The most of a call's deadline that is kept back from the registry's
/// providers (a quarter of the timeout when that is less), so that the plugin
/// can still use an incomplete snapshot before the epoch deadline traps it.
const MAX_PLUGIN_RESERVE: Duration = Duration::from_millis(100);

/// Limits applied to every plugin call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxLimits {
    /// Deadline of one call (docs/spec.md §8 default: 1 s), on the [`clock`](Self::clock).
    /// Time spent in skill providers counts: they must answer before it, less
    /// a reserve for the plugin to finish, or they are abandoned.
    pub timeout: Duration,
    /// Cap on the plugin's linear memories and tables together (docs/spec.md §8
    /// default: 64 MiB). It also bounds what the host copies out of the
    /// guest for one import call's arguments or one export's result
    /// (wasmtime's hostcall fuel).
    pub memory_bytes: usize,
    /// Caps on what one call may return, checked before the host uses it.
    pub output: OutputLimits,
    /// What advances the deadline: a ticker thread (the default), or the
    /// embedder by hand (deterministic tests).
    pub clock: DeadlineClock,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(1),
            memory_bytes: 64 * 1024 * 1024,
            output: OutputLimits::default(),
            clock: DeadlineClock::Ticker,
        }
    }
}

/// Caps on a call's output. They apply to what the plugin produced itself:
/// proposed messages a pre-step returns unchanged are the host's own and are
/// not counted. The defaults leave a wide margin over what the real plugin
/// produces for very large catalogs (docs/security.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// The most messages a pre-step may add to the proposed ones (a catalog,
    /// user-invoked skills). Default 64.
    pub max_added_messages: usize,
    /// The most bytes of any one string the plugin returns: a message's
    /// source or content block, the tool's text or one of its value's fields,
    /// a system prompt, an expansion. Default 16 MiB.
    pub max_text_bytes: usize,
    /// The most bytes of all those strings together in one call's output.
    /// Default 32 MiB.
    pub max_output_bytes: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self { max_added_messages: 64, max_text_bytes: 16 * 1024 * 1024, max_output_bytes: 32 * 1024 * 1024 }
    }
}

/// What advances the epoch that plugin deadlines are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeadlineClock {
    /// A ticker thread advances it every 2 ms: `timeout` is wall-clock time.
    #[default]
    Ticker,
    /// Nothing advances it but [`ManualClock::advance`]: a call runs until
    /// the embedder has advanced the clock by `timeout`. For tests that must
    /// not depend on how fast the machine is; skill providers still get a
    /// wall-clock deadline of `timeout`.
    Manual,
}

/// Advances the deadline clock of a plugin whose limits say
/// [`DeadlineClock::Manual`]; see [`crate::Plugin::manual_clock`].
#[derive(Clone)]
pub struct ManualClock {
    engine: Engine,
}

impl ManualClock {
    /// Advances the clock by `by`, rounded up to whole epoch ticks (2 ms):
    /// every running call whose deadline this passes stops at its next
    /// interruption point (a loop back-edge or a function entry). It costs one
    /// atomic increment per tick: ten minutes take about a millisecond.
    pub fn advance(&self, by: Duration) {
        for _ in 0..ticks(by) {
            self.engine.increment_epoch();
        }
    }
}

impl std::fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManualClock").finish_non_exhaustive()
    }
}

/// An instance's store state: an empty WASI context (no files, network,
/// environment, arguments or stdio; stderr captured), the memory limiter, and
/// what the current call may reach through the plugin's imports.
pub(crate) struct StoreState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryBudget,
    pub(crate) call: CallContext,
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// A configured instance with its own store.
struct Instance {
    /// Numbers the sandbox's instances in the order they were made (traces
    /// say which instance served a call).
    id: u64,
    store: Store<StoreState>,
    plugin: Guest,
    stderr: MemoryOutputPipe,
}

/// The engine, the compiled and linked component, and the epoch ticker:
/// built once and shared by every sandbox made from it
/// ([`Sandbox::reconfigured`]).
struct Runtime {
    engine: Engine,
    /// The contract version the component was built for.
    version: ContractVersion,
    pre: GuestPre<StoreState>,
    /// The ticker's count, under [`DeadlineClock::Ticker`].
    ticks: Option<Arc<TickCount>>,
}

/// The runtimes in use under [`DeadlineClock::Ticker`], by the SHA-256 of
/// their component: a component compiled once in this process is not
/// compiled again while a sandbox holds it. (A manual clock advances its
/// engine's epoch for every sandbox on it, so each of those has its own.)
static RUNTIMES: LazyLock<Mutex<HashMap<[u8; 32], Weak<Runtime>>>> = LazyLock::new(Default::default);

impl Runtime {
    /// The runtime for `component`: the live one this process compiled, or
    /// a new one (see [`RUNTIMES`]).
    fn shared(component: &[u8], clock: DeadlineClock, cache: Option<&Path>) -> Result<Arc<Self>, HostError> {
        if clock == DeadlineClock::Manual {
            return Ok(Arc::new(Self::compile(component, clock, cache)?));
        }
        let key: [u8; 32] = Sha256::digest(component).into();
        let runtimes = || RUNTIMES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(runtime) = runtimes().get(&key).and_then(Weak::upgrade) {
            return Ok(runtime);
        }
        // Compiled without the lock held: two threads may both compile a new
        // component once; either copy serves.
        let runtime = Arc::new(Self::compile(component, clock, cache)?);
        let mut live = runtimes();
        live.retain(|_, runtime| runtime.strong_count() > 0);
        live.insert(key, Arc::downgrade(&runtime));
        Ok(runtime)
    }

    /// Compiles `component` (through the on-disk `cache` when given), links
    /// it, and starts the epoch ticker under [`DeadlineClock::Ticker`].
    fn compile(component: &[u8], clock: DeadlineClock, cache: Option<&Path>) -> Result<Self, HostError> {
        let mut engine_config = Config::new();
        engine_config.epoch_interruption(true);
        let engine = Engine::new(&engine_config).map_err(|source| HostError::Engine { source })?;
        let component = match cache {
            Some(dir) => component_cache::load(&engine, component, dir),
            None => Component::new(&engine, component),
        }
        .map_err(|source| HostError::Compile { source })?;
        let mut linker = Linker::<StoreState>::new(&engine);
        // The Rust std on wasm32-wasip2 imports WASI even when unused; it is
        // linked with an empty context, so it grants nothing.
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|error| HostError::Link { source: error })?;
        // Linked through the bindings of the contract version it exports.
        let version = ContractVersion::of(&engine, &component).map_err(HostError::Contract)?;
        let pre = GuestPre::new(version, linker, &component, |state| &mut state.call)
            .map_err(|error| HostError::Link { source: error })?;
        let ticks = match clock {
            DeadlineClock::Ticker => Some(start_epoch_ticker(&engine)?),
            DeadlineClock::Manual => None,
        };
        Ok(Self { engine, version, pre, ticks })
    }
}

/// A configured plugin: a shared [`Runtime`] and its own idle instances.
pub struct Sandbox {
    runtime: Arc<Runtime>,
    limits: SandboxLimits,
    /// Worked out from `limits` once, not on every call.
    deadline_ticks: u64,
    provider_window: Duration,
    config: String,
    /// The next instance's [`Instance::id`].
    next_instance: AtomicU64,
    /// Records every call, when the plugin is traced.
    recorder: Option<TraceRecorder>,
    #[expect(clippy::vec_box, reason = "taking an instance out and putting it back moves a pointer, not the instance")]
    idle: Mutex<Vec<Box<Instance>>>,
}

/// How many whole epoch ticks the ticker has counted since `origin`: the
/// clock the epoch deadline is counted on, read without a clock call.
struct TickCount {
    origin: Instant,
    ticks: AtomicU64,
}

impl Sandbox {
    /// Compiles `component`, links it and starts the epoch ticker, unless
    /// this process already runs it under the ticker (then that compiled
    /// component, engine and ticker are shared: [`RUNTIMES`]), and checks
    /// that the plugin accepts `config` (JSON); a refusal is
    /// [`HostError::Config`] with the plugin's own text.
    pub fn new(component: &[u8], config: &str, limits: SandboxLimits) -> Result<Self, HostError> {
        Self::with_cache(component, config, limits, None)
    }

    /// Like [`new`](Self::new), loading and storing the compiled component in
    /// `cache` (see [`crate::sandbox::component_cache`]) when given.
    pub fn with_cache(
        component: &[u8],
        config: &str,
        limits: SandboxLimits,
        cache: Option<&std::path::Path>,
    ) -> Result<Self, HostError> {
        Self::configured(Runtime::shared(component, limits.clock, cache)?, config, limits, None)
    }

    /// Like [`with_cache`](Self::with_cache), recording every call in
    /// `recorder` (docs/spec.md §7.2), the configuration's first.
    pub fn traced(
        component: &[u8],
        config: &str,
        limits: SandboxLimits,
        cache: Option<&std::path::Path>,
        recorder: TraceRecorder,
    ) -> Result<Self, HostError> {
        let runtime = Runtime::shared(component, limits.clock, cache)?;
        recorder.begin(runtime.version.number(), config, limits);
        Self::configured(runtime, config, limits, Some(recorder))
    }

    /// A sandbox for the same compiled component under the same limits with
    /// another configuration: nothing is compiled again, and the engine and
    /// its ticker are shared. A refused configuration is
    /// [`HostError::Config`].
    pub fn reconfigured(&self, config: &str) -> Result<Self, HostError> {
        Self::configured(Arc::clone(&self.runtime), config, self.limits, None)
    }

    fn configured(
        runtime: Arc<Runtime>,
        config: &str,
        limits: SandboxLimits,
        recorder: Option<TraceRecorder>,
    ) -> Result<Self, HostError> {
        let sandbox = Self {
            runtime,
            limits,
            deadline_ticks: deadline_ticks(limits),
            provider_window: provider_window(limits.timeout),
            config: config.to_owned(),
            next_instance: AtomicU64::new(0),
            recorder,
            idle: Mutex::new(Vec::new()),
        };
        // Configure one instance now, so a refused configuration fails here.
        let instance = sandbox.instantiate("configure")?;
        sandbox.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(Box::new(instance));
        Ok(sandbox)
    }

    /// The recorder of this sandbox's calls, when it is traced.
    pub(crate) fn recorder(&self) -> Option<&TraceRecorder> {
        self.recorder.as_ref()
    }

    /// The configuration the plugin accepted (JSON).
    pub(crate) fn config(&self) -> &str {
        &self.config
    }

    /// The contract version of the component.
    pub fn contract_version(&self) -> ContractVersion {
        self.runtime.version
    }

    /// The limits every call runs under.
    pub fn limits(&self) -> SandboxLimits {
        self.limits
    }

    /// The handle that advances the deadline clock, when the limits say
    /// [`DeadlineClock::Manual`].
    pub fn manual_clock(&self) -> Option<ManualClock> {
        (self.limits.clock == DeadlineClock::Manual).then(|| ManualClock { engine: self.runtime.engine.clone() })
    }

    /// Runs `body` against a configured instance under a fresh deadline and
    /// classifies any trap. An instance that failed is dropped with its store,
    /// so nothing is ever called on a store that trapped.
    pub(crate) fn call<R>(
        &self,
        name: &'static str,
        call: CallContext,
        body: impl FnOnce(&mut Store<StoreState>, &Guest) -> wasmtime::Result<R>,
    ) -> Result<R, HostError> {
        let idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
        let mut instance = match idle {
            Some(instance) => instance,
            None => Box::new(self.instantiate(name)?),
        };
        let window = self.provider_window;
        let deadline = match &self.runtime.ticks {
            // The call starts at the ticker's current tick (at most a tick
            // before now): no clock is read unless a provider is asked.
            Some(count) => CallDeadline::AfterTicks {
                origin: count.origin,
                ticks: count.ticks.load(Ordering::Relaxed),
                tick: EPOCH_TICK,
                window,
            },
            None => CallDeadline::At(Instant::now().checked_add(window)),
        };
        let trace = self.recorder.is_some().then(CallTrace::default);
        instance.store.data_mut().call = CallContext { deadline, trace, ..call };
        instance.store.set_epoch_deadline(self.deadline_ticks);
        let returned = body(&mut instance.store, &instance.plugin);
        if let Some(recorder) = &self.recorder {
            let trace = instance.store.data_mut().call.trace.take().unwrap_or_default();
            recorder.push_call(instance.id, name, trace);
        }
        match returned {
            Ok(result) => {
                // Release the registry and session before the instance idles.
                instance.store.data_mut().call = CallContext::detached();
                let mut idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if idle.len() < MAX_IDLE {
                    idle.push(instance);
                }
                Ok(result)
            }
            Err(error) => Err(self.classify(name, error, &instance.stderr)),
        }
    }

    /// A new instance in a new store, configured.
    fn instantiate(&self, name: &'static str) -> Result<Instance, HostError> {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        let wasi = WasiCtxBuilder::new().stderr(stderr.clone()).build();
        let memory = MemoryBudget::new(self.limits.memory_bytes);
        let state = StoreState { wasi, table: ResourceTable::new(), memory, call: CallContext::detached() };
        let mut store = Store::new(&self.runtime.engine, state);
        store.limiter(|state| &mut state.memory);
        // What one import call's arguments or one export's result may copy
        // out of the guest (strings and lists, aliased or not) is bounded by
        // the same budget.
        store.set_hostcall_fuel(self.limits.memory_bytes);
        store.set_epoch_deadline(self.deadline_ticks);
        let configured = (|| {
            let plugin = self.runtime.pre.instantiate(&mut store)?;
            let accepted = plugin.call_configure(&mut store, &self.config)?;
            Ok((plugin, accepted))
        })();
        let id = self.next_instance.fetch_add(1, Ordering::Relaxed);
        let result = match configured {
            Ok((plugin, Ok(()))) => Ok(Instance { id, store, plugin, stderr }),
            Ok((_, Err(message))) => Err(HostError::Config(message)),
            Err(error) => Err(self.classify(name, error, &stderr)),
        };
        if let Some(recorder) = &self.recorder {
            let args = serde_json::json!({ "config": self.config });
            let returned = match &result {
                Ok(_) => serde_json::json!({ "Ok": null }),
                Err(HostError::Config(message)) => serde_json::json!({ "Err": message }),
                Err(_) => Value::Null,
            };
            let index = recorder.push(id, "configure", CallTrace { args, imports: Vec::new(), returned });
            recorder.set_outcome(index, &result, |_| Value::Null);
        }
        result
    }

    /// Names what ended a call: the deadline, the memory cap, the stack, a
    /// panic (with the message the guest wrote to stderr), or another trap.
    fn classify(&self, call: &'static str, error: wasmtime::Error, stderr: &MemoryOutputPipe) -> HostError {
        let trap = error.downcast_ref::<Trap>().copied();
        match trap {
            Some(Trap::Interrupt) => return HostError::Timeout { call, timeout: self.limits.timeout },
            Some(Trap::StackOverflow) => return HostError::StackExhausted { call },
            _ => {}
        }
        if let Some(refusal) = error.downcast_ref::<OverBudget>() {
            return HostError::MemoryLimit { call, limit_bytes: refusal.limit_bytes };
        }
        let stderr = String::from_utf8_lossy(&stderr.contents()).trim().to_owned();
        // A memory that may not grow past its own declared maximum fails the
        // growth inside the guest, as in the Node host; Rust's allocator then
        // says so on stderr and aborts.
        if allocation_failed(&stderr) {
            return HostError::MemoryLimit { call, limit_bytes: self.limits.memory_bytes };
        }
        if let Some((location, message)) = panic_message(&stderr) {
            return HostError::Panic { call, location, message };
        }
        // The trap's own description, without wasmtime's backtrace.
        let reason = match trap {
            Some(trap) => trap.to_string().trim_start_matches("wasm trap: ").to_owned(),
            None => error.root_cause().to_string(),
        };
        HostError::Trap { call, reason, stderr, source: error }
    }
}

/// Whether the guest's std reported `memory allocation of N bytes failed`.
fn allocation_failed(stderr: &str) -> bool {
    stderr.lines().any(|line| {
        line.strip_prefix("memory allocation of ")
            .and_then(|rest| rest.strip_suffix(" bytes failed"))
            .is_some_and(|bytes| !bytes.is_empty() && bytes.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The location and message of a Rust panic as the guest's std prints it on
/// stderr: `thread '…' panicked at src/lib.rs:1:2:\nmessage\nnote: …`.
fn panic_message(stderr: &str) -> Option<(String, String)> {
    let start = stderr.rfind(" panicked at ")? + " panicked at ".len();
    let (location, rest) = stderr[start..].split_once(":\n")?;
    let message = rest.split("\nnote: ").next().unwrap_or(rest).trim();
    Some((location.to_owned(), message.to_owned()))
}

/// Increments the epoch until it counts every whole tick in `elapsed`, from
/// `advanced` already counted; returns the new count.
fn catch_up(mut advanced: u64, elapsed: Duration, mut increment: impl FnMut()) -> u64 {
    let due = u64::try_from(elapsed.as_nanos() / EPOCH_TICK.as_nanos()).unwrap_or(u64::MAX);
    while advanced < due {
        increment();
        advanced += 1;
    }
    advanced
}

/// Whole epoch ticks in `duration`, rounded up.
fn ticks(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos().div_ceil(EPOCH_TICK.as_nanos())).unwrap_or(u64::MAX)
}

/// How long providers may take in a call: time spent in them counts against
/// the epoch deadline too, so they get the same deadline, less the plugin's
/// reserve.
fn provider_window(timeout: Duration) -> Duration {
    timeout - (timeout / 4).min(MAX_PLUGIN_RESERVE)
}

/// How many ticks past the current epoch a call may run.
fn deadline_ticks(limits: SandboxLimits) -> u64 {
    match limits.clock {
        // Plus one: the ticker's current tick may be about to end.
        DeadlineClock::Ticker => ticks(limits.timeout).saturating_add(1),
        // Nothing else moves a manual clock: exactly the timeout.
        DeadlineClock::Manual => ticks(limits.timeout).max(1),
    }
}

/// Advances the epoch every [`EPOCH_TICK`] until the engine is dropped, and
/// publishes its count. The thread holds only a weak reference, so it never
/// keeps the engine alive.
///
/// It counts ticks from the time elapsed, not from its wake-ups: a sleep
/// overshoots (by half a tick and more on a busy machine), and one increment
/// per wake-up made a 1 s deadline fire after 1.5 s under load.
fn start_epoch_ticker(engine: &Engine) -> Result<Arc<TickCount>, HostError> {
    let weak = engine.weak();
    let count = Arc::new(TickCount { origin: Instant::now(), ticks: AtomicU64::new(0) });
    let published = Arc::clone(&count);
    thread::Builder::new()
        .name("skill-host-epoch".to_owned())
        .spawn(move || {
            let mut advanced = 0_u64;
            loop {
                thread::sleep(EPOCH_TICK);
                let Some(engine) = weak.upgrade() else { return };
                advanced = catch_up(advanced, published.origin.elapsed(), || engine.increment_epoch());
                published.ticks.store(advanced, Ordering::Relaxed);
            }
        })
        // Without a ticker deadlines never fire: refuse to run without one.
        .map(|_| count)
        .map_err(|source| HostError::Ticker { source })
}

#[cfg(test)]
mod tests;
