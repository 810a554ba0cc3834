"""A local skill's files (contract 0.4.0, spec §3.15): listed as the MCP
server's Skills extension walks a bundle (``host-runner/src/mcp/skills/opened.rs``)
and read confined to the bundle's folder.

**What is served.** A bundle (``<root>/<name>/SKILL.md``) serves every
regular file below its folder except hidden ones (a name starting with
``.``), at most :data:`MAX_DEPTH` folders down; a symbolic link only when it
resolves beneath the folder to a file the walk found as itself. A skill of
more than :data:`MAX_SKILL_FILES` files or :data:`MAX_SKILL_BYTES` bytes
(its ``SKILL.md`` counted) is refused as a whole, with the walk's text, and
so is one whose walk would look at more than :data:`MAX_WALK_ENTRIES`
directory entries below its folder (every entry counted, hidden ones,
folders and links among them; the top ``SKILL.md`` not). A flat skill file
serves no other file, and itself as ``SKILL.md``.

**Confinement.** The folder is opened by its path (links followed, as the
listing followed them) and must be the folder the listing opened (device
and inode), and its ``SKILL.md`` the file the listing read; every other path
is resolved beneath that handle one segment at a time by
:func:`open_beneath` (as cap-std resolves where ``openat2`` is missing):
each segment opened or ``stat``-ed relative to the folder handle it is in
with ``O_NOFOLLOW``, a symbolic link read with ``readlinkat`` and its
target resolved the same way, ``..`` taken from the handles already held
(never from the file system), and an absolute link or a ``..`` above the
folder refused as leaving it. A link swapped in while a read runs is met as
a link, never followed by the kernel.

**Identities.** The walk descends by descriptors (each folder opened from
its parent's with ``O_NOFOLLOW``), ``stat``-s what the listing called a
plain file without following it (a link swapped in since is not taken for
the file), and records each file it serves with its identity (device,
inode; for a link, its target's). A read answers ``missing``
unless the descriptor it opened is that very file (``fstat``): a path
swapped for a link between the walk and the read (``a.md`` for
``a.md -> .env``) resolves beneath the folder, to a file the walk did not
serve under that path, and is refused. What is left: a folder below the
skill's that another process moves out of it while a read resolves beneath
it is still resolved from its handle (see hosts/python/README.md).
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from dataclasses import dataclass, field
from typing import Optional, Tuple

from .names import MAX_SKILL_FILE_READ_BYTES, is_skill_file_path
from .registry import MISSING, UNAVAILABLE, Candidate, FileAnswer, ProviderError, SkillFile, file_answer, too_large


def read_at_most(fd: int, limit: int) -> bytes:
    """The bytes of the open file ``fd``, read to its end but no further
    than ``limit + 1`` bytes (so a caller sees that a file is over ``limit``
    without reading all of it)."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, limit + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


#: The skill file at the top of a bundle.
SKILL_FILE = "SKILL.md"
#: The most files one skill may have, its ``SKILL.md`` among them (the Skills extension's).
MAX_SKILL_FILES = 512
#: The most bytes all of one skill's files may have together (16 MiB).
MAX_SKILL_BYTES = 16 * 1024 * 1024
#: Nested folders followed below a skill's folder.
MAX_DEPTH = 16
#: Symbolic links followed in one resolution (Linux's ``MAXSYMLINKS``).
MAX_LINKS = 40
#: The most directory entries one walk looks at below a skill's folder (skill-host's).
MAX_WALK_ENTRIES = 16384

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# A folder on the way is opened for lookups only where the platform can.
_LOOKUP = (getattr(os, "O_PATH", 0) or os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC | _NOFOLLOW

Identity = Optional[Tuple[int, int]]


class Outside(OSError):
    """A path that leads out of the folder (an absolute link, a ``..`` above it)."""

    def __init__(self) -> None:
        super().__init__(errno.EXDEV, "a path that leaves the skill's folder")


def io_error(error: OSError) -> str:
    """An OS error as Rust's ``io::Error`` displays it."""
    if error.errno is None:
        return str(error)
    return f"{os.strerror(error.errno)} (os error {error.errno})"


def open_folder(path: str) -> int:
    """The folder ``path`` opened (links followed) without blocking: a FIFO
    in a folder's place fails at once (``ENOTDIR``) instead of hanging."""
    return os.open(path, _DIRECTORY)


def _identity(info: os.stat_result) -> tuple[int, int]:
    return (info.st_dev, info.st_ino)


def _is_link(name: str, folder: int) -> str | None:
    """The target of ``name`` in ``folder`` when it is a symbolic link."""
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:
        return None


def _resolve(root: int, path: str, final: str) -> int | os.stat_result:
    """Resolves ``path`` beneath the folder handle ``root`` (module docs).
    ``final`` ``stat``: the ``stat`` of what it leads to; ``open``: a
    descriptor of it opened for reading without blocking. Raises
    :class:`Outside` for a path that leaves the folder, OSError otherwise."""
    held: list[int] = []  # the folders entered below root, each held open
    parts = deque(path.split("/"))
    links = 0
    try:
        while parts:
            part = parts.popleft()
            here = held[-1] if held else root
            if part in ("", "."):
                continue
            if part == "..":
                if not held:
                    raise Outside()
                os.close(held.pop())
                continue
            target = None
            if parts:  # a folder on the way
                try:
                    held.append(os.open(part, _LOOKUP, dir_fd=here))
                    continue
                except OSError as error:
                    if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    target = _is_link(part, here)
                    if target is None and error.errno == errno.ENOTDIR:
                        raise  # a file on the way
            elif final == "stat":
                info = os.stat(part, dir_fd=here, follow_symlinks=False)
                if not stat.S_ISLNK(info.st_mode):
                    return info
                target = _is_link(part, here)
            else:
                try:
                    return os.open(part, _FILE | _NOFOLLOW, dir_fd=here)
                except OSError as error:
                    if error.errno not in (errno.ELOOP, errno.EMLINK):
                        raise
                    target = _is_link(part, here)
            if target is None:  # it stopped being a link meanwhile: changed since
                raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
            links += 1
            if links > MAX_LINKS:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
            if target.startswith("/"):
                raise Outside()
            parts.extendleft(reversed(target.split("/")))
        # It led to a folder (`..`, `.`, a trailing `/`): itself.
        here = held[-1] if held else root
        if final == "stat":
            return os.fstat(here)
        return os.open(".", _DIRECTORY, dir_fd=here)
    finally:
        for fd in held:
            os.close(fd)


def stat_beneath(root: int, path: str) -> os.stat_result:
    """What ``path`` leads to beneath ``root``, links followed while they stay beneath it."""
    found = _resolve(root, path, "stat")
    assert isinstance(found, os.stat_result)
    return found


def open_beneath(root: int, path: str) -> int:
    """``path`` opened for reading beneath ``root`` (without blocking), links
    followed while they stay beneath it."""
    found = _resolve(root, path, "open")
    assert isinstance(found, int)
    return found


def _changed(name: str) -> ProviderError:
    return ProviderError(f'skill "{name}" changed on disk since it was listed; list the skills again')


def _too_large(name: str, size: int) -> ProviderError:
    return ProviderError(
        f'skill "{name}" has {size} bytes of files; '
        f"the Skills extension allows at most 16 MiB ({MAX_SKILL_BYTES} bytes) per skill"
    )


def _unreadable(name: str, why: str) -> ProviderError:
    return ProviderError(f'skill "{name}": {why}')


def _too_many_entries(name: str) -> ProviderError:
    return ProviderError(
        f'skill "{name}" has more than {MAX_WALK_ENTRIES} entries below its folder; '
        f"at most {MAX_WALK_ENTRIES} are looked at"
    )


@dataclass
class _Opened:
    """A skill opened as listed: its folder handle (a bundle's) and its skill file."""

    name: str
    folder: int | None
    skill_file: int

    def close(self) -> None:
        os.close(self.skill_file)
        if self.folder is not None:
            os.close(self.folder)


def _open(candidate: Candidate) -> _Opened | None:
    """The skill as the listing opened it; None when it is not a local skill
    file; raises the ``changed`` failure when its folder or skill file is
    no longer what was listed."""
    path = candidate.path
    if path is None or candidate.file_identity is None or not os.path.isabs(path):
        return None
    name = candidate.name
    folder = None
    try:
        if candidate.folder_identity is not None:
            folder = open_folder(os.path.dirname(path))
            if _identity(os.fstat(folder)) != candidate.folder_identity:
                raise _changed(name)
            skill_file = os.open(SKILL_FILE, _FILE, dir_fd=folder)  # links followed, as the listing did
        else:
            skill_file = os.open(path, _FILE)
    except OSError:
        if folder is not None:
            os.close(folder)
        raise _changed(name) from None
    except ProviderError:
        if folder is not None:
            os.close(folder)
        raise
    opened = _Opened(name, folder, skill_file)
    if _identity(os.fstat(skill_file)) != candidate.file_identity:
        opened.close()
        raise _changed(name)
    return opened


#: A file served: its path inside the skill, its size and its identity
#: (for a link, its target's), as the walk found them.
Served = Tuple[str, int, Tuple[int, int]]


@dataclass
class _Walk:
    """The walk of a bundle's folder beneath its handle (``Walk`` in opened.rs),
    by descriptors: each folder listed is opened from its parent's."""

    name: str
    folder: int
    bytes: int
    #: Directory entries looked at so far (:data:`MAX_WALK_ENTRIES`).
    entries: int = 0
    found: list[Served] = field(default_factory=list)
    plain: set[tuple[int, int]] = field(default_factory=set)
    links: list[tuple[str, tuple[int, int]]] = field(default_factory=list)

    def walk(self, listed: int, relative: str, depth: int) -> None:
        """Lists the folder ``listed`` (at ``relative``, ``""`` for the
        skill's own): every regular file but hidden ones, links followed
        while they stay beneath the folder; ``SKILL.md`` at the top is
        already counted."""
        # At most one entry past the bound is read (and the top SKILL.md).
        try:
            entries = _entries(listed, MAX_WALK_ENTRIES - self.entries + 2)
        except OSError as error:
            raise _unreadable(self.name, f"cannot list {relative or '.'}: {io_error(error)}") from None
        for file_name, is_dir, is_link in entries:
            if depth == 0 and file_name == SKILL_FILE:
                continue
            self.entries += 1
            if self.entries > MAX_WALK_ENTRIES:
                raise _too_many_entries(self.name)
            try:
                file_name.encode("utf-8")
            except UnicodeEncodeError:  # not UTF-8: never served
                continue
            if file_name.startswith("."):
                continue
            path = file_name if relative == "" else f"{relative}/{file_name}"
            if is_dir is None:
                continue
            if is_dir:
                if depth < MAX_DEPTH:
                    self._folder(listed, file_name, path, depth)
                continue
            try:
                # What the listing called a plain file is stat'ed as one: a
                # link swapped in since is not followed (nor taken for the
                # file), as skill-host's walk does.
                if is_link:
                    info = stat_beneath(self.folder, path)
                else:
                    info = os.stat(file_name, dir_fd=listed, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            if len(self.found) + 1 == MAX_SKILL_FILES:  # SKILL.md is the first file counted
                raise ProviderError(
                    f'skill "{self.name}" has more than {MAX_SKILL_FILES} files; '
                    f"the Skills extension allows at most {MAX_SKILL_FILES} per skill"
                )
            self.bytes += info.st_size
            if self.bytes > MAX_SKILL_BYTES:
                raise _too_large(self.name, self.bytes)
            if is_link:
                self.links.append((path, _identity(info)))
            else:
                self.plain.add(_identity(info))
            self.found.append((path, info.st_size, _identity(info)))

    def _folder(self, parent: int, file_name: str, path: str, depth: int) -> None:
        """Walks the folder ``file_name`` of ``parent``, opened without
        following a link: one swapped in since it was listed is not entered."""
        try:
            child = os.open(file_name, _DIRECTORY | _NOFOLLOW, dir_fd=parent)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):  # no longer a folder
                return
            raise _unreadable(self.name, f"cannot list {path}: {io_error(error)}") from None
        try:
            self.walk(child, path, depth + 1)
        finally:
            os.close(child)

    def served(self) -> list[Served]:
        """The files found but links to a file the walk did not find as itself."""
        refused = {path for path, target in self.links if target not in self.plain}
        return [found for found in self.found if found[0] not in refused]


def _entries(fd: int, limit: int) -> list[tuple[str, bool | None, bool]]:
    """The first ``limit`` entries of the folder ``fd`` as ``(name, is a
    folder, is a link)`` (None: its kind could not be read), in the order
    the file system gives them (the walk's limits are met in that order, as
    in skill-host); an entry that cannot be read ends the listing there, as
    Rust's iterator does."""
    found: list[tuple[str, bool | None, bool]] = []
    with os.scandir(fd) as entries:
        iterator = iter(entries)
        while len(found) < limit:
            try:
                entry = next(iterator)
            except (StopIteration, OSError):
                return found
            try:  # the kinds are read while the folder is open (d_type, else fstatat)
                found.append((entry.name, entry.is_dir(follow_symlinks=False), entry.is_symlink()))
            except OSError:
                found.append((entry.name, None, False))
    return found


def _served(opened: _Opened) -> list[Served]:
    """The files the skill serves (module docs), ``SKILL.md`` first, walked
    afresh: a bundle's folder, or a flat file alone. Raises
    :class:`ProviderError` over a limit or when a folder cannot be listed."""
    info = os.fstat(opened.skill_file)
    skill_file = (SKILL_FILE, info.st_size, _identity(info))
    if opened.folder is None:
        if info.st_size > MAX_SKILL_BYTES:
            raise _too_large(opened.name, info.st_size)
        return [skill_file]
    walk = _Walk(opened.name, opened.folder, info.st_size)
    top = os.dup(opened.folder)
    try:
        walk.walk(top, "", 0)
    finally:
        os.close(top)
    return [skill_file, *walk.served()]


def list_files(candidate: Candidate) -> list[SkillFile] | None:
    """The files of a local skill but its skill file, with their sizes: a
    bundle's walked (module docs), a flat file's none; None for a skill that
    is not a local skill file. Raises :class:`ProviderError` when the skill
    changed since it was listed, is over a limit, or a folder cannot be listed."""
    opened = _open(candidate)
    if opened is None:
        return None
    try:
        served = _served(opened)
    finally:
        opened.close()
    # The top SKILL.md is the skill file (a file below it of that name is
    # not); a path outside the grammar is not listed, nor counted in the total.
    return [SkillFile(path, size) for path, size, _ in served[1:] if is_skill_file_path(path)]


def read_file(candidate: Candidate, path: str) -> FileAnswer:
    """The file ``path`` (a path inside a skill, checked by the registry)
    of a local skill, read afresh, when the skill serves it (walked afresh,
    :func:`list_files`, ``SKILL.md`` included): the skill file as the
    listing opened it, any other opened beneath the folder
    (:func:`open_beneath`). ``missing`` for a file not served (none there,
    hidden, a link that leaves the folder or leads to a file not served, not
    a regular file) and for one whose opened descriptor is not the file the
    walk served under that path (swapped since), ``too-large`` for one over
    the cap by the walk's size; ``unavailable`` for a skill that is not a
    local skill file."""
    opened = _open(candidate)
    if opened is None:
        return UNAVAILABLE
    try:
        found = next(((size, identity) for served, size, identity in _served(opened) if served == path), None)
        if found is None:
            return MISSING
        size, identity = found
        over = too_large(size)
        if over is not None:
            return over
        if path == SKILL_FILE:
            fd = os.dup(opened.skill_file)
        else:
            assert opened.folder is not None
            try:
                fd = open_beneath(opened.folder, path)
            except Outside:  # swapped for a link out since the walk
                return MISSING
            except OSError as error:
                if error.errno in (errno.ENOENT, errno.ENOTDIR):
                    return MISSING
                raise _unreadable(opened.name, f"cannot read {path}: {io_error(error)}") from None
    finally:
        opened.close()
    try:
        return _read(fd, opened.name, path, identity)
    finally:
        os.close(fd)


def _read(fd: int, name: str, path: str, identity: tuple[int, int]) -> FileAnswer:
    """The answer for the file the walk served as ``identity``: ``missing``
    when ``fd`` is not that file (swapped since the walk) or not a regular
    file; else its size judged before reading it, never more than the cap
    and one byte read, however it grows meanwhile."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or _identity(info) != identity:
            return MISSING
        over = too_large(info.st_size)
        if over is not None:
            return over
        data = read_at_most(fd, MAX_SKILL_FILE_READ_BYTES)
    except OSError as error:
        raise _unreadable(name, f"cannot read {path}: {io_error(error)}") from None
    return file_answer(data)
