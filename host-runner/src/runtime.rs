//! The engine and the sandbox: one `Engine`, `Linker` and `InstancePre` for
//! the host's lifetime; every call under a fresh deadline and the store's
//! memory cap; no capability granted to the plugin beyond the two imports.
//!
//! Instances are reused between calls (so the plugin can remember the catalog
//! it built for a registry revision): an idle instance is taken, or a new one
//! is made and configured. An instance that trapped is dropped with its store
//! and never called again. Instances belong to one `PluginRuntime`, hence to
//! one configuration.

use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::bindings::{SkillPlugin, SkillPluginPre};
use crate::error::HostError;
use crate::host::CallHost;

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
    /// Wall-clock deadline of one call (SPEC §8 default: 1 s). Time spent in
    /// skill providers counts: they must answer before it, less a reserve for
    /// the plugin to finish, or they are abandoned.
    pub timeout: Duration,
    /// Cap on the plugin's linear memory (SPEC §8 default: 64 MiB).
    pub memory_bytes: usize,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        Self { timeout: Duration::from_secs(1), memory_bytes: 64 * 1024 * 1024 }
    }
}

/// The per-call store state: an empty WASI context (no files, network,
/// environment, arguments or stdio; stderr captured), the memory limiter, and
/// the host side of the plugin's imports.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
    pub(crate) host: CallHost,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// A configured instance with its own store.
struct Instance {
    store: Store<CallState>,
    plugin: SkillPlugin,
    stderr: MemoryOutputPipe,
}

/// A compiled plugin and its idle instances.
pub struct PluginRuntime {
    engine: Engine,
    pre: SkillPluginPre<CallState>,
    limits: SandboxLimits,
    config: String,
    idle: Mutex<Vec<Instance>>,
}

impl PluginRuntime {
    /// Compiles `component` once, links it, starts the epoch ticker, and
    /// checks that the plugin accepts `config` (JSON); a refusal is
    /// [`HostError::Config`] with the plugin's own text.
    pub fn new(component: &[u8], config: &str, limits: SandboxLimits) -> Result<Self, HostError> {
        Self::with_cache(component, config, limits, None)
    }

    /// Like [`new`](Self::new), loading and storing the compiled component in
    /// `cache` (see [`crate::component_cache`]) when given.
    pub fn with_cache(
        component: &[u8],
        config: &str,
        limits: SandboxLimits,
        cache: Option<&std::path::Path>,
    ) -> Result<Self, HostError> {
        let mut engine_config = Config::new();
        engine_config.epoch_interruption(true);
        let engine = Engine::new(&engine_config).map_err(|error| HostError::Load(format!("{error:#}")))?;
        let component = match cache {
            Some(dir) => crate::component_cache::load(&engine, component, dir),
            None => Component::new(&engine, component),
        }
        .map_err(|error| HostError::Load(format!("{error:#}")))?;
        let mut linker = Linker::<CallState>::new(&engine);
        // The Rust std on wasm32-wasip2 imports WASI even when unused; it is
        // linked with an empty context, so it grants nothing.
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|error| HostError::Load(format!("{error:#}")))?;
        SkillPlugin::add_to_linker::<_, HasSelf<CallState>>(&mut linker, |state| state)
            .map_err(|error| HostError::Load(format!("{error:#}")))?;
        let pre = linker.instantiate_pre(&component).map_err(|error| HostError::Load(format!("{error:#}")))?;
        let pre = SkillPluginPre::new(pre).map_err(|error| HostError::Load(format!("{error:#}")))?;
        start_epoch_ticker(&engine)?;
        let runtime = Self { engine, pre, limits, config: config.to_owned(), idle: Mutex::new(Vec::new()) };
        // Configure one instance now, so a refused configuration fails here.
        runtime.call("configure", CallHost::detached(), |_, _| Ok(()))?;
        Ok(runtime)
    }

    /// The limits every call runs under.
    pub fn limits(&self) -> SandboxLimits {
        self.limits
    }

    /// Runs `body` against a configured instance under a fresh deadline and
    /// classifies any trap. An instance that failed is dropped with its store,
    /// so nothing is ever called on a store that trapped.
    pub(crate) fn call<R>(
        &self,
        name: &'static str,
        host: CallHost,
        body: impl FnOnce(&mut Store<CallState>, &SkillPlugin) -> wasmtime::Result<R>,
    ) -> Result<R, HostError> {
        let idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
        let mut instance = match idle {
            Some(instance) => instance,
            None => self.instantiate(name)?,
        };
        // Time spent in providers counts against the epoch deadline too, so
        // they get the same deadline, less the plugin's reserve.
        let timeout = self.limits.timeout;
        let provider_deadline = Instant::now().checked_add(timeout - (timeout / 4).min(MAX_PLUGIN_RESERVE));
        instance.store.data_mut().host = CallHost { provider_deadline, ..host };
        instance.store.set_epoch_deadline(deadline_ticks(timeout));
        match body(&mut instance.store, &instance.plugin) {
            Ok(result) => {
                // Release the registry and session before the instance idles.
                instance.store.data_mut().host = CallHost::detached();
                let mut idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if idle.len() < MAX_IDLE {
                    idle.push(instance);
                }
                Ok(result)
            }
            Err(error) => Err(self.classify(name, &error, &instance.stderr)),
        }
    }

    /// A new instance in a new store, configured.
    fn instantiate(&self, name: &'static str) -> Result<Instance, HostError> {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        let wasi = WasiCtxBuilder::new().stderr(stderr.clone()).build();
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory_bytes)
            .instances(4)
            .trap_on_grow_failure(true)
            .build();
        let state = CallState { wasi, table: ResourceTable::new(), limits, host: CallHost::detached() };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limits);
        store.set_epoch_deadline(deadline_ticks(self.limits.timeout));
        let configured = (|| {
            let plugin = self.pre.instantiate(&mut store)?;
            let accepted = plugin.dsh_skill_plugin().call_configure(&mut store, &self.config)?;
            Ok((plugin, accepted))
        })();
        match configured {
            Ok((plugin, Ok(()))) => Ok(Instance { store, plugin, stderr }),
            Ok((_, Err(message))) => Err(HostError::Config(message)),
            Err(error) => Err(self.classify(name, &error, &stderr)),
        }
    }

    fn classify(&self, call: &'static str, error: &wasmtime::Error, stderr: &MemoryOutputPipe) -> HostError {
        if let Some(Trap::Interrupt) = error.downcast_ref::<Trap>() {
            return HostError::Timeout { call, timeout: self.limits.timeout };
        }
        let reason = format!("{error:#}");
        if reason.contains("forcing trap when growing memory") {
            return HostError::MemoryLimit { call, limit_bytes: self.limits.memory_bytes };
        }
        let stderr = String::from_utf8_lossy(&stderr.contents()).trim().to_owned();
        HostError::Trap { call, reason, stderr }
    }
}

fn deadline_ticks(timeout: Duration) -> u64 {
    // Round up, plus one: the current tick may be about to end.
    (timeout.as_nanos().div_ceil(EPOCH_TICK.as_nanos()) as u64).saturating_add(1)
}

/// Advances the epoch every [`EPOCH_TICK`] until the engine is dropped. The
/// thread holds only a weak reference, so it never keeps the engine alive.
fn start_epoch_ticker(engine: &Engine) -> Result<(), HostError> {
    let weak = engine.weak();
    thread::Builder::new()
        .name("skill-host-epoch".to_owned())
        .spawn(move || {
            loop {
                thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => return,
                }
            }
        })
        // Without a ticker deadlines never fire: refuse to run without one.
        .map(drop)
        .map_err(|error| HostError::Load(format!("cannot start the epoch ticker thread: {error}")))
}
