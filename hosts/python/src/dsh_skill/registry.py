"""The skill registry (spec §4.1): providers and runtime skills merged into
one winning skill per name, complete snapshots cached per cwd, bodies loaded
from the winning provider on every call.

A provider is any object with ``name``, ``list(cwd) -> Listing`` (raising
:class:`ProviderError` when it fails) and ``load(cwd, candidate) ->
Definition | None``; one that serves a skill's files (spec §3.15, contract
0.4.0) has ``list_files(cwd, candidate) -> list[SkillFile] | SkillFiles |
None`` (a list's total is its length; :class:`SkillFiles` gives its own)
and ``read_file(cwd, candidate, path) -> FileAnswer`` too (None and
``unavailable``: no files for that skill).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .names import MAX_SKILL_FILE_READ_BYTES, is_skill_file_path, is_skill_name

#: How many complete snapshots are cached (one per cwd).
DEFAULT_CACHE_CAPACITY = 128
RUNTIME_PROVIDER = "runtime"
RUNTIME_RANK = 250

_revisions = itertools.count(1)
_revision_lock = threading.Lock()


def _next_revision() -> int:
    # Unique in the process, whatever registry hands them out: a plugin
    # instance serving several registries can trust equal revisions.
    with _revision_lock:
        return next(_revisions)


def body_digest(body: str) -> str:
    """``sha256:`` and the SHA-256 of the body's UTF-8 bytes in lowercase hex."""
    return "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Invocation:
    model_invocable: bool = True
    user_invocable: bool = True


@dataclass
class ResourceBase:
    """``kind`` is ``directory``, ``url`` or ``opaque``; ``value`` its path, URL or description."""

    kind: str
    value: str

    def to_json(self) -> dict[str, str]:
        key = {"directory": "path", "url": "url", "opaque": "description"}[self.kind]
        return {"kind": self.kind, key: self.value}


@dataclass
class Candidate:
    """One skill as a provider lists it."""

    name: str
    description: str
    provider: str
    source: str
    invocation: Invocation = field(default_factory=Invocation)
    when_to_use: str | None = None
    resource_base: ResourceBase | None = None
    rank: int = 100
    path: str | None = None
    body_digest: str | None = None
    metadata: dict[str, Any] | None = None
    #: The local skill file the listing read, ``(st_dev, st_ino)``, links
    #: followed; None for every other provider's skills.
    file_identity: tuple[int, int] | None = None
    #: A local bundle's folder as the listing opened it, ``(st_dev, st_ino)``;
    #: None for a flat skill file and for every other provider's skills.
    folder_identity: tuple[int, int] | None = None


@dataclass
class Definition:
    """A skill loaded from its provider: the candidate's fields as of the load, and its body."""

    summary: Candidate
    content: str


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill other than its skill file: its path inside the
    skill (``/``-separated) and its size in bytes when known unread."""

    path: str
    size: int | None = None


@dataclass(frozen=True)
class SkillFiles:
    """``list-skill-files``' answer: the first files by byte order of their
    paths, and how many there are in all."""

    files: list[SkillFile]
    total: int


@dataclass(frozen=True)
class FileAnswer:
    """``read-skill-file``'s answer: ``kind`` is ``text`` (with ``text``),
    ``binary`` or ``too-large`` (with ``size``), ``missing`` or ``unavailable``."""

    kind: str
    text: str | None = None
    size: int | None = None


MISSING = FileAnswer("missing")
UNAVAILABLE = FileAnswer("unavailable")


def too_large(size: int) -> FileAnswer | None:
    """``too-large`` for a file over the cap of one read (decided from its size, unread), else None."""
    return FileAnswer("too-large", size=size) if size > MAX_SKILL_FILE_READ_BYTES else None


def file_answer(data: bytes) -> FileAnswer:
    """A file's bytes as read (at most the cap): ``binary`` when they are
    not UTF-8 or hold a NUL, else ``text``."""
    over = too_large(len(data))
    if over is not None:
        return over
    if b"\0" in data:
        return FileAnswer("binary", size=len(data))
    try:
        return FileAnswer("text", text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return FileAnswer("binary", size=len(data))


@dataclass
class SkippedFile:
    """A file a provider looked at and refused, and why (for diagnostics)."""

    path: str
    reason: str


@dataclass
class Listing:
    """A provider's candidates; ``complete`` False when some state could not
    be read (``problems`` says why, for the registry's warning)."""

    candidates: list[Candidate]
    complete: bool = True
    skipped: list[SkippedFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class Provider(Protocol):
    name: str

    def list(self, cwd: str | None) -> Listing: ...

    def load(self, cwd: str | None, candidate: Candidate) -> Definition | None: ...


class ProviderError(Exception):
    """A provider's failure, in its own words (the model sees ``Error: <message>``)."""


class RegistryFailure(Exception):
    """A registry call the tool cannot answer: a provider failed."""


@dataclass
class RuntimeSkill:
    """A skill registered by the host itself, body included (spec §4.3)."""

    name: str
    description: str
    content: str
    invocation: Invocation = field(default_factory=Invocation)
    when_to_use: str | None = None
    source: str = RUNTIME_PROVIDER
    provider: str = RUNTIME_PROVIDER
    resource_base: ResourceBase | None = None

    def problem(self) -> str | None:
        if not is_skill_name(self.name):
            return f'invalid skill name "{self.name}"'
        if self.description == "":
            return f'skill "{self.name}" requires a description'
        return None

    def candidate(self) -> Candidate:
        return Candidate(
            name=self.name,
            description=self.description,
            provider=self.provider,
            source=self.source,
            invocation=replace(self.invocation),
            when_to_use=self.when_to_use,
            resource_base=self.resource_base,
            rank=RUNTIME_RANK,
            body_digest=body_digest(self.content),
        )


@dataclass
class Winner:
    candidate: Candidate
    provider: int | None  # the provider's index; None for a runtime skill


@dataclass
class Snapshot:
    complete: bool
    revision: int
    skills: list[Winner]
    warnings: list[str]
    invalid_candidate: str | None

    def find(self, name: str) -> Winner | None:
        for winner in self.skills:
            if winner.candidate.name == name:
                return winner
        return None


def _candidate_problem(candidate: Candidate, provider: str) -> str | None:
    if not is_skill_name(candidate.name):
        return f'skill provider "{provider}" returned invalid skill name "{candidate.name}"'
    if candidate.description == "":
        return f'skill provider "{provider}" returned skill "{candidate.name}" without a description'
    if candidate.provider != provider:
        return f'skill provider "{provider}" returned skill "{candidate.name}" for provider "{candidate.provider}"'
    return None


def _definition_problem(definition: Definition) -> str | None:
    summary = definition.summary
    if not is_skill_name(summary.name):
        return f'loaded skill has invalid name "{summary.name}"'
    if summary.description == "":
        return f'loaded skill "{summary.name}" requires a description'
    return None


class SkillRegistry:
    """Providers in registration order, runtime skills, and the per-cwd cache of complete snapshots."""

    def __init__(self, capacity: int = DEFAULT_CACHE_CAPACITY) -> None:
        self._providers: list[Any] = []
        self._runtime: list[RuntimeSkill] = []
        self._generation = 0
        self._cache: OrderedDict[str | None, Snapshot] = OrderedDict()
        self._capacity = max(1, capacity)

    def register_provider(self, provider: Any) -> None:
        self._providers.append(provider)
        self.invalidate()

    def set_providers(self, providers: list[Any]) -> None:
        """Replaces every provider."""
        self._providers = list(providers)
        self.invalidate()

    def register_runtime(self, skill: RuntimeSkill) -> bool:
        """Registers a runtime skill; the first registration of a name wins
        (a later one returns False). Raises :class:`RegistryFailure` for an invalid skill."""
        problem = skill.problem()
        if problem is not None:
            raise RegistryFailure(problem)
        if any(existing.name == skill.name for existing in self._runtime):
            return False
        self._runtime.append(skill)
        self.invalidate()
        return True

    def clear_runtime(self) -> None:
        self._runtime = []
        self.invalidate()

    def invalidate(self) -> None:
        """Drops every cached snapshot."""
        self._generation += 1
        self._cache.clear()

    @property
    def generation(self) -> int:
        return self._generation

    def snapshot(self, cwd: str | None) -> Snapshot:
        """The cached complete snapshot for ``cwd``, or a fresh listing with a
        new revision; one superseded by an invalidation is retried once, then
        returned incomplete."""
        attempt = 1
        while True:
            hit = self._cache.get(cwd)
            if hit is not None:
                return hit
            generation = self._generation
            fresh = self._collect(cwd)
            fresh.revision = _next_revision()
            if self._generation != generation:
                if attempt < 2:
                    attempt += 1
                    continue
                fresh.complete = False
                return fresh
            if fresh.complete:
                if len(self._cache) >= self._capacity:
                    self._cache.popitem(last=False)
                self._cache[cwd] = fresh
            return fresh

    def cached_revision(self, cwd: str | None) -> int | None:
        """The revision of the complete snapshot cached for ``cwd``, asking no provider."""
        hit = self._cache.get(cwd)
        return None if hit is None else hit.revision

    def list(self, cwd: str | None) -> Snapshot:
        """The winners for the tool's lookup; raises :class:`RegistryFailure` on an invalid candidate."""
        snapshot = self.snapshot(cwd)
        if snapshot.invalid_candidate is not None:
            raise RegistryFailure(snapshot.invalid_candidate)
        return snapshot

    def get(self, cwd: str | None, name: str) -> Definition | None:
        """The winning definition of ``name``, loaded afresh; None when nothing
        has it, or when the load found another name (the registry is invalidated)."""
        if not is_skill_name(name):
            return None
        winner = self.list(cwd).find(name)
        if winner is None:
            return None
        definition: Definition | None
        if winner.provider is None:
            skill = next((s for s in self._runtime if s.name == name), None)
            definition = None if skill is None else Definition(skill.candidate(), skill.content)
        else:
            if winner.provider >= len(self._providers):
                return None
            try:
                definition = self._providers[winner.provider].load(cwd, winner.candidate)
            except ProviderError as error:
                raise RegistryFailure(str(error)) from error
        if definition is None:
            return None
        problem = _definition_problem(definition)
        if problem is not None:
            raise RegistryFailure(problem)
        if definition.summary.name != winner.candidate.name:
            self.invalidate()
            return None
        return definition

    def _file_winner(self, cwd: str | None, name: str) -> tuple[Any, Candidate] | None:
        """The provider (an object serving files) and candidate of ``name``'s
        winner, found as :meth:`get` finds it; None when nothing has it, it is
        a runtime skill, or its provider serves no files."""
        if not is_skill_name(name):
            return None
        winner = self.list(cwd).find(name)
        if winner is None or winner.provider is None or winner.provider >= len(self._providers):
            return None
        provider = self._providers[winner.provider]
        if not callable(getattr(provider, "list_files", None)) or not callable(getattr(provider, "read_file", None)):
            return None
        return provider, winner.candidate

    def list_files(self, cwd: str | None, name: str, limit: int) -> SkillFiles | None:
        """``list-skill-files``: the winner's files but its skill file, in byte
        order of their paths (UTF-8), the first ``limit``, and the total; a
        path outside the grammar is never listed, nor one listed twice (the
        first kept, by path then size, an unknown size first, as skill-host
        sorts). The total is the provider's (a list's length), but at least
        the files kept. None when the winner's provider serves no files for
        it, or there is no winner. Raises :class:`RegistryFailure` when a
        provider fails."""
        found = self._file_winner(cwd, name)
        if found is None:
            return None
        provider, candidate = found
        try:
            files = provider.list_files(cwd, candidate)
        except ProviderError as error:
            raise RegistryFailure(str(error)) from error
        if files is None:
            return None
        if isinstance(files, SkillFiles):
            total, files = files.total, files.files
        else:
            files = list(files)
            total = len(files)
        ordered = sorted(
            (file for file in files if is_skill_file_path(file.path)),
            key=lambda file: (file.path.encode("utf-8", "surrogatepass"), file.size is not None, file.size or 0),
        )
        served = [file for index, file in enumerate(ordered) if index == 0 or ordered[index - 1].path != file.path]
        kept = served[: max(limit, 0)]
        return SkillFiles(kept, max(total, len(kept)))

    def read_file(self, cwd: str | None, name: str, path: str) -> FileAnswer:
        """``read-skill-file``: the winner's file ``path``, read afresh;
        ``missing`` for a path outside the grammar (nothing is asked),
        ``unavailable`` when the winner's provider serves no files for it or
        there is no winner. Raises :class:`RegistryFailure` when a provider fails."""
        if not is_skill_file_path(path):
            return MISSING
        found = self._file_winner(cwd, name)
        if found is None:
            return UNAVAILABLE
        provider, candidate = found
        try:
            answer = provider.read_file(cwd, candidate, path)
        except ProviderError as error:
            raise RegistryFailure(str(error)) from error
        # Whatever a provider read, one read returns at most the cap.
        if answer.kind == "text" and answer.text is not None:
            size = len(answer.text.encode("utf-8", "surrogatepass"))
            return too_large(size) or answer
        return answer

    def _collect(self, cwd: str | None) -> Snapshot:
        complete = True
        warnings: list[str] = []
        invalid: str | None = None
        # (rank, provider order, local order) decides duplicates; runtime skills
        # come before every provider at equal rank, sorted by name.
        ranked: list[tuple[int, int, int, Winner]] = []
        for local, skill in enumerate(sorted(self._runtime, key=lambda s: s.name)):
            ranked.append((RUNTIME_RANK, -1, local, Winner(skill.candidate(), None)))
        for index, provider in enumerate(self._providers):
            try:
                listing = provider.list(cwd)
            except ProviderError as error:
                complete = False
                warnings.append(f'skill provider "{provider.name}" skipped: {error}')
                continue
            problem = next(
                (p for p in (_candidate_problem(c, provider.name) for c in listing.candidates) if p is not None), None
            )
            if problem is not None:
                # One invalid candidate discredits the whole listing.
                complete = False
                warnings.append(problem)
                invalid = invalid or problem
                continue
            if not listing.complete:
                complete = False
                why = "; ".join(listing.problems)
                warnings.append(f'skill provider "{provider.name}" listed incompletely' + (f": {why}" if why else ""))
            for local, candidate in enumerate(listing.candidates):
                ranked.append((candidate.rank, index, local, Winner(candidate, index)))
        ranked.sort(key=lambda entry: entry[:3])
        seen: set[str] = set()
        skills: list[Winner] = []
        for *_, winner in ranked:
            if winner.candidate.name in seen:
                continue
            seen.add(winner.candidate.name)
            skills.append(winner)
        skills.sort(key=lambda w: w.candidate.name)
        return Snapshot(complete, 0, skills, warnings, invalid)
