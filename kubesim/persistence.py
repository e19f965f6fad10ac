"""Write-through persistence: every committed object version is appended to a journal.

The journal is a file mapped into memory (MAP_SHARED): a write copies one record into the
mapping, which puts it in the kernel's page cache at once, so it survives a crash of the
process, as SQLite's WAL with synchronous=NORMAL did; only a power loss could drop the
last records, which a laptop emulator accepts. No system call, so the writer keeps the GIL:
an SQLite upsert per write, made while the store's lock was held, let other threads in and
cost about a fifth of kubesim's CPU in a cold start; an `os.write` per write, about an
eighth; this, a twentieth.

A record is its length, written last (a record cut short by a crash has none, and ends the
journal), then rv, the lengths of resource, namespace, name and data (-1: a removal), then
those bytes. The file grows GROW bytes at a time and is mapped afresh each time, so only the
newest part of it counts in kubesim's memory.

The state on disk is a snapshot (every live object once) plus the journal written since.
When the journal outgrows the live data, it is set aside and a new one begun, and a
background thread writes a new snapshot of the objects as they were at that moment (their
encoded bytes are never changed, so it reads them without a lock), then drops the old
journal. Loading replays the snapshot, then a journal set aside (a compaction the process
did not finish), then the journal; replaying a record twice is harmless, since each holds
an object's whole state.
"""

from __future__ import annotations

import fcntl
import logging
import mmap
import os
import sqlite3
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

SNAPSHOT = "snapshot"
JOURNAL = "journal"
SET_ASIDE = "journal.old"
LEGACY = "kubesim.sqlite3"  # the format before the journal: read once, then removed
LENGTH = struct.Struct("<I")
HEADER = struct.Struct("<QHHHi")  # after the length
log = logging.getLogger(__name__)

GROW = 16 << 20
COMPACT_AT = 64 << 20  # journal bytes before a compaction is considered

Key = tuple[str, str, str]


class Persistence:
    def __init__(self, data_dir: str | Path, *, compact_at: int = COMPACT_AT) -> None:
        self._dir = Path(data_dir)
        self._dir.mkdir(parents=True, exist_ok=True)
        self._compact_at = compact_at
        self._live: dict[Key, bytes] = {}  # the bytes the store also keeps: no copy
        self._live_bytes = 0
        self._rv = 0
        self._fd = -1
        self._map: mmap.mmap | None = None
        self._end = 0  # where the next record goes
        self._compactor: threading.Thread | None = None
        # One kubesim per data dir: a second one would write over the first one's journal.
        self._lock = os.open(self._dir / "lock", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock)
            raise RuntimeError(f"{self._dir} is in use by another kubesim") from None

    def load(self) -> tuple[int, Iterator[tuple[str, str, str, bytes]]]:
        """The newest resourceVersion written (an object's or a removal's) and every object."""
        self._import_legacy()
        for name in (SNAPSHOT, SET_ASIDE):
            self._replay(self._dir / name)
        self._end = self._replay(self._dir / JOURNAL)
        if (self._dir / SET_ASIDE).exists() or self._outgrown():
            self._write_snapshot(dict(self._live), self._rv)  # before anything is appended
            (self._dir / SET_ASIDE).unlink(missing_ok=True)
            (self._dir / JOURNAL).unlink(missing_ok=True)
            self._end = 0
        self._open_journal()
        rows = [(*key, data) for key, data in self._live.items()]
        return self._rv, iter(rows)

    def put(self, rv: int, resource: str, namespace: str, name: str, data: bytes | None) -> None:
        """Store one object, or remove it (data None). Called in commit order, one at a time."""
        key = (resource, namespace, name)
        record = memoryview(_record(rv, key, data))
        at, end = self._end, self._end + len(record)
        if self._map is None or end + LENGTH.size > len(self._map):
            self._grow(end + LENGTH.size)
        m = self._map
        assert m is not None
        m[at + LENGTH.size : end] = record[LENGTH.size :]
        # The length last: until it is there, the journal ends before this record.
        m[at : at + LENGTH.size] = record[: LENGTH.size]
        self._end, self._rv = end, rv
        self._apply(key, data)
        if self._outgrown():
            try:
                self._compact()
            except OSError:  # the record is written: this write stands all the same
                log.warning("kubesim could not compact its journal", exc_info=True)

    def _apply(self, key: Key, data: bytes | None) -> None:
        old = self._live.pop(key, None)
        self._live_bytes -= len(old) if old is not None else 0
        if data is not None:
            self._live[key] = data
            self._live_bytes += len(data)

    def close(self) -> None:
        if self._compactor is not None:
            self._compactor.join()
        self._close_journal()
        if self._lock >= 0:
            os.close(self._lock)  # and with it the flock
            self._lock = -1

    # -- the journal file --------------------------------------------------------------

    def _open_journal(self) -> None:
        self._fd = os.open(self._dir / JOURNAL, os.O_RDWR | os.O_CREAT, 0o600)
        os.ftruncate(self._fd, self._end)  # whatever a crash left past the end: zeros now
        self._grow(self._end + GROW)

    def _grow(self, needed: int) -> None:
        size = -(-needed // GROW) * GROW
        if self._map is not None:
            self._map.close()  # and with it the resident pages of the part already written
        # Blocks reserved now (ENOSPC here fails a write cleanly), not when the mapping is
        # first written to: a full disk then would be a SIGBUS.
        os.posix_fallocate(self._fd, 0, size)
        self._map = mmap.mmap(self._fd, size)

    def _close_journal(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd >= 0:
            os.ftruncate(self._fd, self._end)  # no zeros left on disk
            os.close(self._fd)
            self._fd = -1

    # -- compaction --------------------------------------------------------------------

    def _outgrown(self) -> bool:
        return self._end > max(self._compact_at, 2 * self._live_bytes)

    def _compact(self) -> None:
        if self._compactor is not None and self._compactor.is_alive():
            return  # the last one is still writing; the journal may grow meanwhile
        if (self._dir / SET_ASIDE).exists():
            return  # the last one failed (its traceback is on stderr): its journal stays
        self._close_journal()
        try:
            os.replace(self._dir / JOURNAL, self._dir / SET_ASIDE)
        except OSError:
            self._open_journal()  # the same journal, from its end, goes on
            raise
        self._end = 0
        self._open_journal()
        objects, rv = dict(self._live), self._rv

        def compact() -> None:
            self._write_snapshot(objects, rv)
            (self._dir / SET_ASIDE).unlink(missing_ok=True)

        self._compactor = threading.Thread(target=compact, name="kubesim-compact", daemon=True)
        self._compactor.start()

    def _write_snapshot(self, objects: dict[Key, bytes], rv: int) -> None:
        """Every object once, durably, in place of the last snapshot: written aside, synced,
        then renamed, so a crash leaves the old snapshot or the new one, whole."""
        path = self._dir / (SNAPSHOT + ".tmp")
        # 0600, as the journal: Secrets are among the objects.
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            out.write(_record(rv, ("", "", ""), None))  # the counter, should nothing be left
            for key, data in objects.items():
                out.write(_record(rv, key, data))
            out.flush()
            os.fsync(out.fileno())
        os.replace(path, self._dir / SNAPSHOT)
        directory = os.open(self._dir, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself, before the journal it replaces goes
        finally:
            os.close(directory)

    # -- loading -----------------------------------------------------------------------

    def _replay(self, path: Path) -> int:
        """Applies the file's records; returns where the last whole one ends."""
        try:
            content = path.read_bytes()
        except FileNotFoundError:
            return 0
        at, end = 0, len(content)
        while at + LENGTH.size + HEADER.size <= end:
            (length,) = LENGTH.unpack_from(content, at)
            rv, a, b, c, size = HEADER.unpack_from(content, at + LENGTH.size)
            start = at + LENGTH.size + HEADER.size
            stop = start + a + b + c + max(size, 0)
            if length == 0 or stop - at != length or stop > end:
                break  # the end, or a record a crash cut short
            key = (
                content[start : start + a].decode(),
                content[start + a : start + a + b].decode(),
                content[start + a + b : start + a + b + c].decode(),
            )
            self._rv = max(self._rv, rv)
            self._apply(key, content[start + a + b + c : stop] if size >= 0 else None)
            at = stop
        return at

    def _import_legacy(self) -> None:
        legacy = self._dir / LEGACY
        if not legacy.exists():
            return
        if (self._dir / SNAPSHOT).exists():  # imported, and the process died before this
            self._remove_legacy()
            return
        db = sqlite3.connect(legacy)
        try:
            row = db.execute("SELECT value FROM meta WHERE key='resourceVersion'").fetchone()
            rows = db.execute("SELECT resource, namespace, name, data FROM objects").fetchall()
        finally:
            db.close()
        objects = {(r, ns, n): bytes(data) for r, ns, n, data in rows}
        self._write_snapshot(objects, int(row[0]) if row else 0)
        self._remove_legacy()

    def _remove_legacy(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            (self._dir / (LEGACY + suffix)).unlink(missing_ok=True)


def _record(rv: int, key: Key, data: bytes | None) -> bytes:
    """One record, as the journal and the snapshot hold it (see the module's docstring)."""
    resource, namespace, name = (part.encode() for part in key)
    size = -1 if data is None else len(data)
    length = LENGTH.size + HEADER.size + len(resource) + len(namespace) + len(name) + max(size, 0)
    head = LENGTH.pack(length) + HEADER.pack(rv, len(resource), len(namespace), len(name), size)
    return b"".join((head, resource, namespace, name, data or b""))
