//! Traces at the WIT boundary (docs/spec.md §7.2): every call a plugin was
//! made, with its arguments, each import it made and the host's answer,
//! what it returned, and what the host concluded after validating it. Another
//! host replays a trace against the same component, answering the imports
//! from it, and must reach the same results and the same errors.
//!
//! Values are written as serde writes the current bindings' Rust types
//! (`additional_derives` in `crate::bindings`): records as objects with
//! `snake_case` fields, variants as `{"Case": payload}` or `"Case"`, options
//! as `null` or the value, results as `{"Ok": …}` or `{"Err": …}`.

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::HostError;
use crate::imports::CallContext;

thread_local! {
    /// The entry of the call the plugin method running on this thread made:
    /// its outcome goes there, whatever other threads log meanwhile.
    static CALL: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Starts a plugin method's trace on this thread: no call is made yet.
pub(crate) fn begin_call() {
    CALL.with(|call| call.set(None));
}

/// The version of the trace format, its `trace` field.
pub const TRACE_FORMAT: u64 = 1;

/// What one plugin call recorded while it ran.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallTrace {
    /// The call's arguments, by parameter name.
    pub args: Value,
    /// Each import the plugin made, in order: `{"import", "args", "answer"}`
    /// (or `"trap"` instead of `"answer"` when the host ended the call).
    pub imports: Vec<Value>,
    /// What the export returned, when it returned.
    pub returned: Value,
}

/// Records every call of a plugin, shared by its sandbox and the embedder
/// that writes the trace out ([`crate::Plugin::traced`]).
#[derive(Clone, Default)]
pub struct TraceRecorder {
    log: Arc<Mutex<TraceLog>>,
}

#[derive(Default)]
struct TraceLog {
    /// The trace's fields besides `calls`, set when the plugin is loaded.
    header: serde_json::Map<String, Value>,
    calls: Vec<Value>,
}

impl TraceRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    fn log(&self) -> std::sync::MutexGuard<'_, TraceLog> {
        self.log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes what the traced plugin is: its contract version, configuration and limits.
    pub(crate) fn begin(&self, contract: &str, config: &str, limits: crate::SandboxLimits) {
        let header = json!({
            "trace": TRACE_FORMAT,
            "contract": contract,
            "config": config,
            "limits": {
                "timeout_ms": u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX),
                "memory_bytes": limits.memory_bytes,
                "max_added_messages": limits.output.max_added_messages,
                "max_text_bytes": limits.output.max_text_bytes,
                "max_output_bytes": limits.output.max_output_bytes,
            },
        });
        if let Value::Object(header) = header {
            self.log().header = header;
        }
    }

    /// Adds the call `name` that instance `instance` ran; returns its place.
    pub(crate) fn push(&self, instance: u64, name: &str, trace: CallTrace) -> usize {
        let mut log = self.log();
        log.calls.push(json!({
            "instance": instance,
            "call": name,
            "args": trace.args,
            "imports": trace.imports,
            "returned": trace.returned,
        }));
        log.calls.len() - 1
    }

    /// Adds the call a plugin method made on this thread ([`begin_call`]),
    /// for [`conclude`](Self::conclude) to complete.
    pub(crate) fn push_call(&self, instance: u64, name: &str, trace: CallTrace) {
        let index = self.push(instance, name, trace);
        CALL.with(|call| call.set(Some(index)));
    }

    /// Sets what the host concluded from the call at `index`.
    pub(crate) fn set_outcome<T>(&self, index: usize, result: &Result<T, HostError>, value: impl FnOnce(&T) -> Value) {
        let outcome = match result {
            Ok(ok) => json!({ "ok": value(ok) }),
            Err(error) => json!({ "error": error.to_string() }),
        };
        if let Some(Value::Object(call)) = self.log().calls.get_mut(index) {
            call.insert("outcome".to_owned(), outcome);
        }
    }

    /// Sets what the host concluded from the call this thread's plugin
    /// method made: `{"ok": value}`, or `{"error": text}` with the host's
    /// error text. A method that failed before its call ran made none, and
    /// nothing is set.
    pub(crate) fn conclude<T>(&self, result: &Result<T, HostError>, value: impl FnOnce(&T) -> Value) {
        if let Some(index) = CALL.with(Cell::take) {
            self.set_outcome(index, result, value);
        }
    }

    /// Whether a plugin was loaded into the trace (its header is set).
    pub fn is_begun(&self) -> bool {
        !self.log().header.is_empty()
    }

    /// The trace: `{"trace": 1, "contract", "config", "limits", "calls"}`,
    /// the calls recorded so far.
    pub fn to_json(&self) -> Value {
        let log = self.log();
        let mut trace = log.header.clone();
        trace.insert("calls".to_owned(), Value::Array(log.calls.clone()));
        Value::Object(trace)
    }
}

/// A value as the trace writes it.
pub(crate) fn value(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("a WIT value serialises")
}

impl CallContext {
    /// Records one import the plugin made, when the call is traced; `args`
    /// is only built then.
    pub(crate) fn trace_import<T: Serialize>(
        &mut self,
        import: &str,
        args: impl FnOnce() -> Value,
        answer: &wasmtime::Result<T>,
    ) {
        let Some(trace) = &mut self.trace else { return };
        let mut entry = json!({ "import": import, "args": args() });
        match answer {
            Ok(answer) => entry["answer"] = value(answer),
            Err(trap) => entry["trap"] = Value::String(trap.to_string()),
        }
        trace.imports.push(entry);
    }
}

/// Runs one export under `store`, recording its arguments (`args`, from
/// the store's state) before and what it returned after, when the call is
/// traced.
pub(crate) fn traced<R: Serialize>(
    store: &mut wasmtime::Store<crate::sandbox::StoreState>,
    args: impl FnOnce(&crate::sandbox::StoreState) -> Value,
    run: impl FnOnce(&mut wasmtime::Store<crate::sandbox::StoreState>) -> wasmtime::Result<R>,
) -> wasmtime::Result<R> {
    let args = store.data().call.trace.is_some().then(|| args(store.data()));
    if let (Some(args), Some(trace)) = (args, &mut store.data_mut().call.trace) {
        trace.args = args;
    }
    let returned = run(store)?;
    if let Some(trace) = &mut store.data_mut().call.trace {
        trace.returned = value(&returned);
    }
    Ok(returned)
}
