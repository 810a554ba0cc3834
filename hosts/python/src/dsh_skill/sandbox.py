"""The sandbox (spec §8): one wasmtime engine per process with epoch
interruption, one ticker thread, a store per instance with memory and table
limits, WASI linked with nothing granted (stdin empty, stdout discarded,
stderr captured up to 64 KiB to name a panic), compiled components cached
on disk, and every failure classified into the error texts of spec §8.4.

Calls run synchronously on the caller's thread; the imports reach the call's
:class:`~dsh_skill.imports.CallContext` through a thread-local slot.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import wasmtime
from wasmtime import component as wc
from wasmtime.component._enter import enter_wasm

from .errors import HostError
from .imports import CallContext, HostImportError
from .interface import SIGNATURES, render_func
from .memory_cap import CapError, cap_memory
from .output import OutputLimits
from .versions import ImportFunction, imports, plugin_export, version_of

#: One epoch tick.
TICK_SECONDS = 0.002
#: The guest's stderr kept per call, to name a panic.
MAX_STDERR = 64 * 1024
#: Idle instances kept for reuse.
MAX_IDLE = 4


@dataclass(frozen=True)
class SandboxLimits:
    """The limits of every plugin call (spec §8): a wall-clock deadline, one
    memory budget, and the output caps of §8.5."""

    timeout_ms: int = 1000
    memory_bytes: int = 64 * 1024 * 1024
    output: OutputLimits = field(default_factory=OutputLimits)


class _Ticker:
    """Advances the engine's epoch every 2 ms while a call is in flight,
    counting ticks from the time elapsed so a busy machine does not stretch
    deadlines; it sleeps while no call runs."""

    def __init__(self, engine: wasmtime.Engine) -> None:
        self.engine = engine
        self.active = 0
        self.lock = threading.Condition()
        self.thread = threading.Thread(target=self._run, name="dsh-skill-epoch", daemon=True)
        self.thread.start()

    def begin(self) -> None:
        with self.lock:
            self.active += 1
            self.lock.notify()

    def end(self) -> None:
        with self.lock:
            self.active -= 1

    def _run(self) -> None:
        while True:
            with self.lock:
                while self.active == 0:
                    self.lock.wait()
            started = time.monotonic()
            advanced = 0
            while self.active > 0:
                time.sleep(TICK_SECONDS)
                due = int((time.monotonic() - started) / TICK_SECONDS)
                while advanced < due:
                    self.engine.increment_epoch()
                    advanced += 1


_engine_lock = threading.Lock()
_engine: wasmtime.Engine | None = None
_ticker: _Ticker | None = None


def engine() -> tuple[wasmtime.Engine, _Ticker]:
    """The process's one engine and its ticker."""
    global _engine, _ticker
    with _engine_lock:
        if _engine is None:
            config = wasmtime.Config()
            config.epoch_interruption = True
            _engine = wasmtime.Engine(config)
            _ticker = _Ticker(_engine)
        assert _ticker is not None
        return _engine, _ticker


def default_cache_dir() -> Path:
    """``$DSH_SKILL_CACHE``, else ``$XDG_CACHE_HOME/dsh-skill-wasm``, else ``~/.cache/dsh-skill-wasm``."""
    explicit = os.environ.get("DSH_SKILL_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "dsh-skill-wasm"


def _trusted_dir(directory: Path) -> bool:
    """Owned by this user and writable by no one else (spec §8.6)."""
    try:
        info = directory.stat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return False
    return info.st_mode & 0o022 == 0


def compile_component(bytes_: bytes, cache_dir: Path | None) -> wc.Component:
    """Compiles the component, or loads its compiled form from ``cache_dir``:
    an entry named by the component's SHA-256 and wasmtime's version, whose
    contents match the SHA-256 recorded beside it. Anything else is
    recompiled and rewritten; a cache that cannot be written is skipped."""
    eng, _ = engine()
    if cache_dir is None:
        return _compile(eng, bytes_)
    digest = hashlib.sha256(bytes_).hexdigest()
    entry = cache_dir / f"{digest}-wasmtime{wasmtime.__version__ if hasattr(wasmtime, '__version__') else _wasmtime_version()}.cwasm"
    check = entry.with_suffix(".sha256")
    if _trusted_dir(cache_dir):
        try:
            compiled = entry.read_bytes()
            if hashlib.sha256(compiled).hexdigest() == check.read_text().strip():
                return wc.Component.deserialize(eng, compiled)
        except (OSError, wasmtime.WasmtimeError):
            pass
    component = _compile(eng, bytes_)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if _trusted_dir(cache_dir):
            compiled = bytes(component.serialize())
            for path, data in ((entry, compiled), (check, hashlib.sha256(compiled).hexdigest().encode())):
                handle, temporary = tempfile.mkstemp(dir=cache_dir)
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                os.replace(temporary, path)
    except OSError:
        pass
    return component


def _wasmtime_version() -> str:
    from importlib.metadata import version

    return version("wasmtime")


def _compile(eng: wasmtime.Engine, bytes_: bytes) -> wc.Component:
    try:
        return wc.Component(eng, bytes_)
    except wasmtime.WasmtimeError as error:
        raise HostError.load(_first_line(str(error))) from None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


_current = threading.local()


def _import(function: ImportFunction) -> Callable[..., Any]:
    """An import function, called with the running call's context."""

    def call(_store: Any, *args: Any) -> Any:
        context: CallContext | None = getattr(_current, "context", None)
        if context is None:
            raise HostImportError("the plugin called the host outside a call")
        return function(context, *args)

    return call


class Compiled:
    """A compiled component with its linker and contract version, shared by
    its instances. The memory budget is written into the component before it
    is compiled (:mod:`~dsh_skill.memory_cap`), and the plugin interface is
    checked on the compiled component's type, before any instance runs a
    line of the guest's code."""

    def __init__(self, bytes_: bytes, cache_dir: Path | None, memory_bytes: int = SandboxLimits.memory_bytes) -> None:
        self.engine, self.ticker = engine()
        try:
            capped = cap_memory(bytes_, memory_bytes)
        except CapError as error:
            raise HostError.load(str(error)) from None
        self.component = compile_component(capped, cache_dir)
        exports = self.component.type.exports(self.engine)
        version = version_of(exports)
        _check_interface(self.engine, exports[plugin_export(version)], version)
        self.version = version
        self.linker = wc.Linker(self.engine)
        self.linker.add_wasip2()
        with self.linker.root() as root:
            for interface, functions in imports(version).items():
                with root.add_instance(f"dsh:skill/{interface}@{version}") as instance:
                    for wit_name, function in functions.items():
                        instance.add_func(wit_name, _import(function))


def _check_interface(eng: wasmtime.Engine, export: Any, version: str) -> None:
    """Every function of the plugin interface, by name and type (skill-host's
    texts: wasmtime's type check of its bindings)."""
    interface = plugin_export(version)
    ty = export.ty
    if not isinstance(ty, wc.ComponentInstanceType):
        raise HostError.load(f"export `{interface}` is not an instance")
    functions = ty.exports(eng)
    for name in SIGNATURES[version]:  # every name first, as skill-host's bindings look them up
        if name not in functions:
            raise HostError.load(f"instance export `{interface}` does not have export `{name}`")
    for name, expected in SIGNATURES[version].items():
        item = functions[name]
        if not isinstance(item.ty, wc.FuncType):
            raise HostError.load(f"instance export `{interface}` has export `{name}` that is not a function")
        found = render_func(item.ty)
        if found != expected:
            raise HostError.load(f"instance export `{interface}` has export `{name}` of type {found}, expected {expected}")


_TRAP = re.compile(r"wasm trap: (.*)")
_ALLOC = re.compile(r"^memory allocation of [0-9]+ bytes failed$", re.M)


class Instance:
    """One instance in its own store: never shared, dropped after a failed call."""

    def __init__(self, compiled: Compiled, limits: SandboxLimits, call: str = "configure") -> None:
        self.compiled = compiled
        self.limits = limits
        self.stderr = bytearray()
        self.store = wasmtime.Store(compiled.engine)
        wasi = wasmtime.WasiConfig()
        wasi.stderr_custom = self._stderr
        self.store.set_wasi(wasi)
        budget = limits.memory_bytes
        self.store.set_limits(memory_size=budget, table_elements=budget // 8, instances=32, tables=32, memories=32)
        self.store.set_epoch_deadline(self._ticks())
        # A core module's start function runs here: under the deadline, its
        # failures classified as the call's (the other hosts instantiate
        # inside the first call); a link error is a load error.
        ticker = compiled.ticker
        ticker.begin()
        try:
            self.instance = compiled.linker.instantiate(self.store, compiled.component)
        except wasmtime.WasmtimeError as error:
            if _TRAP.search(str(error)) or _ALLOC.search(self._stderr_text()):
                raise self._classify(call, error) from None
            raise HostError.load(_first_line(str(error))) from None
        finally:
            ticker.end()
        plugin = self.instance.get_export_index(self.store, plugin_export(compiled.version))
        self.functions: dict[str, tuple[wc.Func, list[Any], Any]] = {}
        for name in ("configure", "definition", "pre-step", "invoke", "system-prompt", "expand"):
            index = self.instance.get_export_index(self.store, name, plugin)
            func = None if index is None else self.instance.get_func(self.store, index)
            if func is None:
                raise HostError.load(f"the component's plugin interface has no `{name}`")
            fty = func.type(self.store)
            self.functions[name] = (func, [ty for _, ty in fty.params], fty.result)

    def _stderr(self, data: bytes) -> None:
        room = MAX_STDERR - len(self.stderr)
        if room > 0:
            self.stderr += data[:room]

    def _ticks(self) -> int:
        return math.ceil(self.limits.timeout_ms / 1000 / TICK_SECONDS) + 1

    def call(self, call: str, name: str, args: list[Any], context: CallContext) -> Any:
        """Calls export ``name`` for plugin call ``call``; raises :class:`HostError`."""
        func, params, result = self.functions[name]
        self.stderr.clear()
        store = self.store
        store.set_epoch_deadline(self._ticks())
        ticker = self.compiled.ticker
        _current.context = context
        ticker.begin()
        try:
            value = _call(store, func, params, result, args)
        except HostImportError as error:
            raise HostError.trap(call, str(error), self._stderr_text()) from None
        except wasmtime.WasmtimeError as error:
            raise self._classify(call, error) from None
        finally:
            ticker.end()
            _current.context = None
        return value

    def _stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace").strip()

    def _classify(self, call: str, error: wasmtime.WasmtimeError) -> HostError:
        text = str(error)
        trap = _TRAP.search(text)
        reason = trap.group(1).strip() if trap else None
        if reason == "interrupt":
            return HostError.timeout(call, self.limits.timeout_ms)
        if reason == "call stack exhausted":
            return HostError.stack(call)
        stderr = self._stderr_text()
        if _ALLOC.search(stderr):
            return HostError.memory(call, self.limits.memory_bytes)
        panic = _panic_message(stderr)
        if panic is not None:
            return HostError.panic(call, *panic)
        if reason is None:
            lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
            reason = lines[-1] if lines else text
            if reason.startswith("0: "):
                reason = reason[3:]
        return HostError.trap(call, reason, stderr)


def _panic_message(stderr: str) -> tuple[str, str] | None:
    """The location and message of a Rust panic as the guest's std prints it."""
    at = stderr.rfind(" panicked at ")
    if at < 0:
        return None
    rest = stderr[at + len(" panicked at ") :]
    location, sep, message = rest.partition(":\n")
    if not sep:
        return None
    return location, message.split("\nnote: ")[0].strip()


def _call(store: wasmtime.Store, func: wc.Func, params: list[Any], result: Any, args: list[Any]) -> Any:
    """``Func.__call__`` with the function's type looked up once, not per call."""
    import ctypes

    from wasmtime import _ffi as ffi

    param_capi = (ffi.wasmtime_component_val_t * len(args))()
    n = 0
    try:
        for ty, value in zip(params, args):
            ty.convert_to_c(store, value, ctypes.pointer(param_capi[n]))
            n += 1
        result_space = ffi.wasmtime_component_val_t() if result is not None else None

        def run() -> Any:
            return ffi.wasmtime_component_func_call(
                ctypes.byref(func._func),
                store._context(),
                param_capi,
                n,
                ctypes.byref(result_space) if result_space is not None else None,
                1 if result_space is not None else 0,
            )

        enter_wasm(run)
        value = None if result_space is None else result.convert_from_c(result_space)
    finally:
        for i in range(n):
            ffi.wasmtime_component_val_delete(ctypes.byref(param_capi[i]))
    func.post_return(store)
    return value


class Sandbox:
    """A compiled plugin, its configuration, and a small pool of configured
    instances (spec §8.6): an instance whose call failed is never called again."""

    def __init__(self, compiled: Compiled, config: str, limits: SandboxLimits) -> None:
        self.compiled = compiled
        self.config = config
        self.limits = limits
        self._idle: list[Instance] = []
        self._lock = threading.Lock()

    @classmethod
    def create(
        cls, component: bytes, config: str = "{}", limits: SandboxLimits | None = None, cache_dir: Path | None = None
    ) -> Sandbox:
        """Compiles (or loads from the cache) and configures a first instance;
        a refused configuration raises ``HostError`` of kind ``config``."""
        limits = limits or SandboxLimits()
        sandbox = cls(Compiled(component, cache_dir, limits.memory_bytes), config, limits)
        sandbox._release(sandbox._fresh("configure"))
        return sandbox

    @property
    def version(self) -> str:
        return self.compiled.version

    def _fresh(self, call: str) -> Instance:
        instance = Instance(self.compiled, self.limits, call)
        refused = instance.call(call, "configure", [self.config], CallContext())
        if refused is not None:  # result<_, string>: None is ok, a str the refusal
            raise HostError.config(refused)
        return instance

    def _release(self, instance: Instance) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append(instance)

    def call(self, call: str, name: str, args: list[Any], context: CallContext) -> Any:
        """Runs export ``name`` on an idle instance (or a fresh, configured one)."""
        with self._lock:
            instance = self._idle.pop() if self._idle else None
        if instance is None:
            instance = self._fresh(call)
        value = instance.call(call, name, args, context)  # a failure drops the instance
        self._release(instance)
        return value
