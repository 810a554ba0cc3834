"""The local filesystem provider (spec §4.2), as skill-host's
``LocalProvider`` lists and loads: skills one level deep in the project,
custom, user and bundled roots, a malformed skill skipped with a reason, any
other I/O failure making the listing incomplete, so the model keeps its last
good catalog instead of seeing skills vanish."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Tuple

from . import local_files
from .frontmatter import SkillFileRefusal, parse_skill_file
from .registry import (
    Candidate,
    Definition,
    FileAnswer,
    Listing,
    ProviderError,
    ResourceBase,
    SkillFile,
    SkippedFile,
    body_digest,
)

#: The provider's registered name.
LOCAL_PROVIDER = "local"
#: The file that makes a folder a skill.
SKILL_FILE = "SKILL.md"
#: The largest skill file read; a larger one is skipped with a reason.
MAX_SKILL_FILE_BYTES = 8 * 1024 * 1024
#: The harness's own skills under the user's DeepSeek Harness root, never listed.
_SYSTEM_DIR = ".system"
_ABSENT = (errno.ENOENT, errno.ENOTDIR)
# Source names and ranks of the roots, lowest rank winning.
PROJECT_DSH = ("project-dsh", 100)
PROJECT_AGENTS = ("project-agents", 200)
CUSTOM = ("custom", 300)
USER_DSH = ("user-dsh", 400)
USER_AGENTS = ("user-agents", 500)
BUNDLED = ("bundled", 600)


def io_error(error: OSError) -> str:
    """An OS error as Rust's ``io::Error`` displays it."""
    if error.errno is None:
        return str(error)
    return f"{os.strerror(error.errno)} (os error {error.errno})"


def absolutize(path: str, cwd: str | None) -> str:
    """``path`` made absolute against ``cwd`` with ``.`` and ``..`` removed
    lexically (``/..`` stays ``/``); symlinks are not resolved, so paths
    shown to the model stay the ones the user configured."""
    if cwd is not None and not os.path.isabs(path):
        path = os.path.join(cwd, path)
    absolute = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not absolute:
                parts.append(part)
            continue
        parts.append(part)
    joined = "/".join(parts)
    return "/" + joined if absolute else joined


def _expand_home(path: str, home: str | None) -> str | None:
    """A leading ``~`` component expanded; None when it needs a home and there is none."""
    if path == "~" or path.startswith("~/"):
        return None if home is None else os.path.join(home, path[2:]) if path != "~" else home
    return path


def _process_cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None


@dataclass
class LocalRoots:
    """Where the provider looks besides the project roots of the cwd."""

    dsh_home: str | None = None
    agents_home: str | None = None
    custom: list[str] = field(default_factory=list)
    bundled: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, cwd: str | None = None) -> LocalRoots:
        """``DSH_HOME`` (else ``~/.dsh``) and ``DSH_AGENTS_HOME`` (else
        ``~/.agents``), blank ones unset, ``~`` from ``HOME``."""
        env = os.environ if environ is None else environ
        cwd = _process_cwd() if cwd is None else cwd
        home = env.get("HOME") or None

        def resolve(key: str, default_dir: str) -> str | None:
            configured = env.get(key)
            if configured is not None and configured.strip():
                path = _expand_home(configured, home)
            else:
                path = None if home is None else os.path.join(home, default_dir)
            return None if path is None else absolutize(path, cwd)

        return cls(dsh_home=resolve("DSH_HOME", ".dsh"), agents_home=resolve("DSH_AGENTS_HOME", ".agents"))


@dataclass
class SkillRoot:
    """One folder of skills, with the source and rank its skills carry."""

    path: str
    source: str
    rank: int
    skip_system: bool = False


def project_root(cwd: str) -> str:
    """The nearest ancestor of ``cwd`` (inclusive) holding ``.git``, else ``cwd``."""
    cwd = absolutize(cwd, _process_cwd())
    directory = cwd
    while True:
        try:
            os.stat(os.path.join(directory, ".git"))
            return directory
        except (OSError, ValueError):
            pass
        parent = os.path.dirname(directory)
        if parent == directory:
            return cwd
        directory = parent


class LocalProvider:
    """Lists and loads skills from the local filesystem."""

    name = LOCAL_PROVIDER

    def __init__(self, roots: LocalRoots | None = None) -> None:
        roots = LocalRoots.from_env() if roots is None else roots
        cwd = _process_cwd()
        fix: Callable[[str | None], str | None] = lambda p: None if p is None else absolutize(p, cwd)  # noqa: E731
        self.roots = LocalRoots(fix(roots.dsh_home), fix(roots.agents_home),
                                [absolutize(p, cwd) for p in roots.custom], fix(roots.bundled))

    def roots_for(self, cwd: str | None) -> list[SkillRoot]:
        """The roots for ``cwd`` in rank order, whether they exist or not."""
        roots: list[SkillRoot] = []
        if cwd is not None:
            project = project_root(cwd)
            roots.append(SkillRoot(os.path.join(project, ".dsh/skills"), *PROJECT_DSH))
            roots.append(SkillRoot(os.path.join(project, ".agents/skills"), *PROJECT_AGENTS))
        roots.extend(SkillRoot(d, *CUSTOM) for d in self.roots.custom)
        if self.roots.dsh_home is not None:
            roots.append(SkillRoot(os.path.join(self.roots.dsh_home, "skills"), *USER_DSH, skip_system=True))
        if self.roots.agents_home is not None:
            roots.append(SkillRoot(os.path.join(self.roots.agents_home, "skills"), *USER_AGENTS))
        if self.roots.bundled is not None:
            roots.append(SkillRoot(self.roots.bundled, *BUNDLED))
        return roots

    def list(self, cwd: str | None) -> Listing:
        listing = Listing([], True)
        for root in self.roots_for(cwd):
            _list_root(root, listing)
        return listing

    def load(self, cwd: str | None, candidate: Candidate) -> Definition | None:
        """The listed file read afresh; None when it is gone, refused or no
        longer parses. A renamed skill is returned as found."""
        path = candidate.path
        if path is None:
            raise ProviderError(f'skill "{candidate.name}" has no file, so the {LOCAL_PROVIDER} provider cannot load it')
        bundle = candidate.folder_identity is not None or (
            candidate.file_identity is None and os.path.basename(path) == SKILL_FILE
        )
        try:
            text, file_identity, folder_identity = read_skill(path, bundle)
        except OSError as error:
            raise ProviderError(f"cannot read skill file {path}: {io_error(error)}") from None
        if not isinstance(text, str) or isinstance(text, Refused):
            return None
        try:
            parsed = parse_skill_file(text)
        except SkillFileRefusal:
            return None
        summary = Candidate(
            name=parsed.name, description=parsed.description, provider=LOCAL_PROVIDER, source=candidate.source,
            invocation=parsed.invocation, when_to_use=parsed.when_to_use, resource_base=candidate.resource_base,
            rank=candidate.rank, path=path, body_digest=body_digest(parsed.body), metadata=parsed.metadata,
            file_identity=file_identity, folder_identity=folder_identity,
        )
        return Definition(summary, parsed.body)

    def list_files(self, cwd: str | None, candidate: Candidate) -> list[SkillFile] | None:
        """A skill's files but its skill file (contract 0.4.0), as the MCP
        server's Skills extension walks a bundle: :func:`~dsh_skill.local_files.list_files`."""
        return local_files.list_files(candidate)

    def read_file(self, cwd: str | None, candidate: Candidate, path: str) -> FileAnswer:
        """One file of a skill, read afresh and confined to its folder:
        :func:`~dsh_skill.local_files.read_file`."""
        return local_files.read_file(candidate, path)


class Refused(str):
    """A reason a file is not a skill file (``read_skill_text``'s refusal)."""


def _is_symlink(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _broken(error: OSError) -> bool:
    """Nothing there (the path or a folder on it is missing), or a link loop."""
    return error.errno in _ABSENT or error.errno == errno.ELOOP


def _skip(listing: Listing, path: str, reason: str) -> None:
    listing.skipped.append(SkippedFile(path, reason))


def _incomplete(listing: Listing, path: str, what: str, error: OSError) -> None:
    listing.complete = False
    listing.problems.append(f"{what} {path}: {io_error(error)}")
    _skip(listing, path, f"{what}: {io_error(error)}")


def _list_root(root: SkillRoot, listing: Listing) -> None:
    for name, path in _root_entries(root, listing):
        if root.skip_system and name == _SYSTEM_DIR:
            continue
        kind = _entry_kind(path, listing)
        if kind == "dir":
            file, base, bundle = os.path.join(path, SKILL_FILE), path, True
        elif kind == "file" and os.fsencode(name).endswith(b".md"):
            file, base, bundle = path, root.path, False
        else:
            continue
        candidate = _read_candidate(root, file, base, bundle, listing)
        if candidate is not None:
            listing.candidates.append(candidate)


def _root_entries(root: SkillRoot, listing: Listing) -> list[tuple[str, str]]:
    """The root's entries in byte order of their names; none when absent or unreadable."""
    try:
        if not stat.S_ISDIR(os.stat(root.path).st_mode):
            _skip(listing, root.path, "skill root is not a directory")
            return []
    except OSError as error:
        if _broken(error):
            if _is_symlink(root.path):
                _skip(listing, root.path, f"skill root is a broken symbolic link: {io_error(error)}")
        else:
            _incomplete(listing, root.path, "cannot read skill root", error)
        return []
    names: list[str] = []
    try:
        with os.scandir(root.path) as entries:
            for entry in entries:
                names.append(entry.name)
    except OSError as error:
        if not (error.errno in _ABSENT and not names):
            _incomplete(listing, root.path, "cannot read skill root", error)
    names.sort(key=os.fsencode)
    return [(name, os.path.join(root.path, name)) for name in names]


def _entry_kind(path: str, listing: Listing) -> str | None:
    """``dir``, ``file`` or ``other`` (sockets, FIFOs, devices), links followed."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if _broken(error):
            if _is_symlink(path):
                _skip(listing, path, f"broken symbolic link: {io_error(error)}")
        else:
            _incomplete(listing, path, "cannot inspect skill entry", error)
        return None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _read_candidate(root: SkillRoot, file: str, base: str, bundle: bool, listing: Listing) -> Candidate | None:
    try:
        text, file_identity, folder_identity = read_skill(file, bundle)
    except OSError as error:
        _incomplete(listing, file, "cannot read skill file", error)
        return None
    if text is None:  # a folder without SKILL.md is just a folder
        return None
    if isinstance(text, Refused):
        _skip(listing, file, str(text))
        return None
    try:
        parsed = parse_skill_file(text)
    except SkillFileRefusal as refusal:
        _skip(listing, file, str(refusal))
        return None
    try:
        base.encode("utf-8")
    except UnicodeEncodeError:  # shown to the model: a lossy form would point nowhere
        _skip(listing, file, "the skill's folder path is not valid UTF-8")
        return None
    return Candidate(
        name=parsed.name, description=parsed.description, provider=LOCAL_PROVIDER, source=root.source,
        invocation=parsed.invocation, when_to_use=parsed.when_to_use,
        resource_base=ResourceBase("directory", base), rank=root.rank, path=file,
        body_digest=body_digest(parsed.body), metadata=parsed.metadata,
        file_identity=file_identity, folder_identity=folder_identity,
    )


def read_skill_text(path: str, bundle: bool) -> str | Refused | None:
    """The skill file's text; a :class:`Refused` reason; None when there is
    no such file. Raises OSError for failures that leave its state unknown."""
    return read_skill(path, bundle)[0]


Identity = Optional[Tuple[int, int]]


def read_skill(path: str, bundle: bool) -> tuple[str | Refused | None, Identity, Identity]:
    """:func:`read_skill_text`, with the identities ``(st_dev, st_ino)`` of
    the file read and of a bundle's folder it was opened beneath (None for a
    flat file): what the listing opened, which a skill's files are served from."""
    try:
        fd, folder_identity = _open_skill_file(path, bundle)
    except OSError as error:
        if _broken(error):
            return (Refused(f"broken symbolic link: {io_error(error)}") if _is_symlink(path) else None), None, None
        raise
    try:
        info = os.fstat(fd)
        data = _read_regular(fd, info)
    finally:
        os.close(fd)
    identity = (info.st_dev, info.st_ino)
    if isinstance(data, Refused):
        return data, identity, folder_identity
    if b"\0" in data:
        return Refused("binary file (contains NUL bytes), not a text skill file"), identity, folder_identity
    try:
        return data.decode("utf-8"), identity, folder_identity
    except UnicodeDecodeError as error:
        return Refused(f"not UTF-8 text (invalid byte at offset {error.start})"), identity, folder_identity


def _open_skill_file(path: str, bundle: bool) -> tuple[int, Identity]:
    """Opens without blocking (a FIFO in a skill file's place must not hang
    the listing); a bundle's ``SKILL.md`` beneath its folder, opened first
    (its identity returned with it)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    if not bundle:
        return os.open(path, flags), None
    folder = local_files.open_folder(os.path.dirname(path))
    try:
        info = os.fstat(folder)
        return os.open(os.path.basename(path), flags, dir_fd=folder), (info.st_dev, info.st_ino)
    finally:
        os.close(folder)


def _read_regular(fd: int, info: os.stat_result) -> bytes | Refused:
    """The bytes of a regular file of at most the limit, judged on what was
    opened (``info``, its ``fstat``); a file growing meanwhile is still never read past the limit."""
    if not stat.S_ISREG(info.st_mode):
        return Refused("not a regular file")
    limit = MAX_SKILL_FILE_BYTES
    if info.st_size > limit:
        return Refused(f"skill file is {info.st_size} bytes, over the {limit}-byte limit")
    data = local_files.read_at_most(fd, limit)
    if len(data) > limit:
        return Refused(f"skill file is more than {limit} bytes, over the {limit}-byte limit")
    return data
