"""The mirror writer: applies watch events and re-lists to KubeObject, in batches.

Each chunk of up to 500 events is one short write (the previous state is read before it
starts): a transaction, or autocommit statements when it only updates mirrored rows. It
returns what changed, with the state each object had before, so the watcher can decide
which changes deserve a reconcile.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from django.db import connection, transaction
from django.utils import timezone

from controllers.base import NODE, Body, Kind
from controllers.fields import controlling_ref
from opsboard.db_retry import retrying
from opsboard.mirror.models import KindWatch, KubeObject, body_copies
from opsboard.mirror.object_health import derive_health

if TYPE_CHECKING:
    import psycopg

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
# KubeObject's columns in the order of _Row.values; uid is the conflict target.
_COLUMNS = (
    "api_version",
    "kind",
    "namespace",
    "name",
    "uid",
    "resource_version",
    "generation",
    "observed_generation",
    "labels",
    "annotations",
    "owner_references",
    "owner_uid",
    "spec",
    "status",
    "body",
    "health",
    "created_at",
    "deleted_at",
    "mirrored_at",
)
_JSON_COLUMNS = frozenset(("labels", "annotations", "owner_references", "spec", "status", "body"))
_TABLE = KubeObject._meta.db_table
_CHUNK = 500


@dataclass(frozen=True)
class Snapshot:
    """The fields of an object that decide whether a change of it is worth a reconcile."""

    uid: str
    resource_version: str
    generation: int
    labels: dict[str, str]
    annotations: dict[str, str]
    deleting: bool


@dataclass(frozen=True)
class _Row:
    """One object as the upsert writes it: its parameters, and what the writer checks first."""

    uid: str
    namespace: str
    name: str
    resource_version: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class SpecWriter:
    """A managedFields entry that owns spec fields: its manager owns what it last wrote."""

    manager: str
    time: str  # "" where the API server leaves it out (v1.28 does for a /scale write)
    fields: Body  # its fieldsV1 under f:spec: {"f:size": {}, "f:app": {"f:replicas": {}}}


@dataclass(frozen=True)
class Change:
    type: str  # ADDED, MODIFIED or DELETED
    kind: Kind
    body: Body
    previous: Snapshot | None  # None: the mirror did not know the object
    # Who wrote which spec fields (from managedFields, which the mirror does not keep), told
    # only for a change that brings a new generation: the change history names its writer.
    spec_writers: tuple[SpecWriter, ...] = ()


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def controller_owner_uid(body: Body) -> str:
    if body.get("kind") == "Event":  # so an object's Events are one indexed query away
        return str((body.get("involvedObject") or {}).get("uid") or "")
    ref = controlling_ref(body["metadata"].get("ownerReferences"))
    return str(ref.get("uid", "")) if ref is not None else ""


def snapshot(body: Body) -> Snapshot:
    meta = body["metadata"]
    return Snapshot(
        uid=meta["uid"],
        resource_version=str(meta.get("resourceVersion", "")),
        generation=int(meta.get("generation") or 0),
        labels=meta.get("labels") or {},
        annotations=meta.get("annotations") or {},
        deleting=bool(meta.get("deletionTimestamp")),
    )


def _row(kind: Kind, body: Body, now: Any) -> _Row:
    """`now`: the batch's time as the database takes it (the same for all its rows)."""
    meta = body["metadata"]
    copies = body_copies(body)
    generation = int(meta.get("generation") or 0)
    observed = copies["status"].get("observedGeneration")
    observed = int(observed) if isinstance(observed, int) else None
    stale = observed is not None and observed < generation and not meta.get("deletionTimestamp")
    vendor = connection.vendor
    return _Row(
        uid=meta["uid"],
        namespace=meta.get("namespace", ""),
        name=meta["name"],
        resource_version=str(meta.get("resourceVersion", "")),
        values=(
            kind.api_version,
            kind.kind,
            meta.get("namespace", ""),
            meta["name"],
            meta["uid"],
            str(meta.get("resourceVersion", "")),
            generation,
            observed,
            _json(copies["labels"]),
            _json(copies["annotations"]),
            _json(copies["owner_references"]),
            controller_owner_uid(body),
            _json(copies["spec"]),
            _json(copies["status"]),
            _json(body),
            derive_health(kind.kind, copies["status"], stale=stale),
            _when(vendor, meta.get("creationTimestamp")),
            _when(vendor, meta.get("deletionTimestamp")),
            now,
        ),
    )


@lru_cache(maxsize=4096)
def _when(vendor: str, stamp: str | None) -> Any:
    """A timestamp as the database takes it, worked out once per second of time: the
    ORM's conversion (settings, the time zone, the connection) per row and column was
    5 % of the watcher's CPU, and objects created together share their second."""
    del vendor  # part of the cache's key: the conversion is the database's
    return connection.ops.adapt_datetimefield_value(_time(stamp))


def _json(value: object) -> str:
    # orjson: a tenth of json.dumps' time, and the mirror writes every watched object's body.
    return orjson.dumps(value).decode()


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _with_type(kind: Kind, body: Body) -> Body:
    # Items of a LIST response carry no apiVersion/kind; watch events do.
    if body.get("kind") != kind.kind or body.get("apiVersion") != kind.api_version:
        body = {"apiVersion": kind.api_version, "kind": kind.kind, **body}
    return trimmed(body)


def spec_writers(body: Body) -> tuple[SpecWriter, ...]:
    return tuple(
        SpecWriter(str(entry.get("manager") or ""), str(entry.get("time") or ""), fields)
        for entry in body.get("metadata", {}).get("managedFields") or []
        if isinstance(fields := (entry.get("fieldsV1") or {}).get("f:spec"), dict)
    )


def trimmed(body: Body) -> Body:
    """Without what no page or controller reads, and which is often most of an object:
    managedFields (kubectl get -o yaml hides them too), kubectl's last-applied copy, and
    the images a Node holds (kubelet reports up to 50, often most of the Node)."""
    meta = body.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    status = body.get("status") or {}
    images = body.get("kind") == NODE.kind and "images" in status
    if "managedFields" not in meta and LAST_APPLIED not in annotations and not images:
        return body
    meta = {k: v for k, v in meta.items() if k != "managedFields"}
    if LAST_APPLIED in annotations:
        meta["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
    if images:
        return {
            **body,
            "metadata": meta,
            "status": {k: v for k, v in status.items() if k != "images"},
        }
    return {**body, "metadata": meta}


def version_number(value: object) -> int | None:
    """A resourceVersion as an integer. They are opaque, but every API server we know counts
    them up as integers; when one is not, comparisons with it say "not known older/newer"."""
    text = str(value or "")
    return int(text) if text.isdigit() else None


def _not_newer(body: Body, known: Snapshot | None) -> bool:
    mine = version_number(body["metadata"].get("resourceVersion"))
    theirs = version_number(known.resource_version) if known else None
    return mine is not None and theirs is not None and mine <= theirs


def _newer_than(body: Body, version: int | None) -> bool:
    mine = version_number(body["metadata"].get("resourceVersion"))
    return version is not None and mine is not None and mine > version


_Place = tuple[str, str, str, str]  # api_version, kind, namespace, name


@dataclass
class _Mirrored:
    """What the mirror holds of a chunk's objects before it is written: the rows by uid,
    and the rows named as the objects added (an object re-created under its old name)."""

    known: dict[str, Snapshot]
    named: dict[_Place, tuple[int, str, str]]  # -> (id, uid, resource_version)
    asked: set[tuple[str, str, str]]  # the (api_version, kind, name) looked up


def _existing(uids: Iterable[str], names: Mapping[Kind, Iterable[str]]) -> _Mirrored:
    """The rows of `uids`, and in the same query the rows of each kind with those `names`
    (asked for the objects added: those are the ones that may clash with an older row)."""
    wanted = list(uids)
    where: list[str] = []
    params: list[str] = []
    if wanted:
        marks, padded = _in(wanted)
        where.append(f"uid IN ({marks})")
        params += padded
    asked: set[tuple[str, str, str]] = set()
    for kind, of_kind in names.items():
        chosen = sorted(set(of_kind))
        if chosen:
            marks, padded = _in(chosen)
            where.append(f"(api_version = %s AND kind = %s AND name IN ({marks}))")
            params += [kind.api_version, kind.kind, *padded]
            asked.update((kind.api_version, kind.kind, name) for name in chosen)
    mirrored = _Mirrored(known={}, named={}, asked=asked)
    if not where:
        return mirrored
    with _cursor() as cursor:
        cursor.execute(
            "SELECT id, uid, api_version, kind, namespace, name, resource_version, generation,"
            f" labels, annotations, deleted_at FROM {_TABLE} WHERE {' OR '.join(where)}",
            params,
        )
        rows = cursor.fetchall()
    by_uid = set(wanted)
    for id_, uid, api_version, kind_, namespace, name, version, generation, *rest in rows:
        if (api_version, kind_, name) in asked:
            mirrored.named[(api_version, kind_, namespace, name)] = (id_, uid, version)
        if uid in by_uid:
            labels, annotations, deleted_at = rest
            mirrored.known[uid] = Snapshot(
                uid=uid,
                resource_version=version,
                generation=generation,
                labels=orjson.loads(labels),
                annotations=orjson.loads(annotations),
                deleting=deleted_at is not None,
            )
    return mirrored


# SQLite keeps each distinct statement prepared (the sqlite3 module caches 128 per
# connection): about 1 MB for an upsert of 500 rows, and a watcher that had written
# batches of every size from 1 to 500 held tens of MB of them. So statements take a few
# shapes only: an upsert goes in pieces of _PIECE rows and powers of two below it, an IN
# list is padded up to a power of two.
_PIECE = 64
_T = TypeVar("_T")


@contextmanager
def _cursor() -> Iterator[Any]:
    """A cursor for the writer's own statements, in the connection's transaction.

    On PostgreSQL a psycopg RawCursor, whose "$1" placeholders the writer numbers once
    per statement text (_numbered): psycopg converts "%s" itself, but caches that only for
    statements under 50 parameters, and the writer's have up to 1,216 (an upsert piece of
    64 rows), so each was split again by a regular expression: about a fifth of the
    writer's CPU there. The writer's statements hold no literal "%"."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    import psycopg  # here: 9 MB of RSS that no process on SQLite needs

    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.RawCursor(connection.connection) as raw:
        yield _Numbered(raw)


class _Numbered:
    """A RawCursor taking the writer's "%s" statements."""

    def __init__(self, raw: psycopg.RawCursor[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any]) -> None:
        self.raw.execute(_numbered(sql), params)

    def fetchall(self) -> list[Any]:
        return self.raw.fetchall()


@lru_cache(maxsize=64)
def _numbered(sql: str) -> str:
    parts = sql.split("%s")
    return "".join(f"{part}${n}" for n, part in enumerate(parts[:-1], 1)) + parts[-1]


def _pieces(count: int) -> list[int]:
    """`count` rows as statement sizes: _PIECE as often as it goes, then powers of two."""
    rest = count % _PIECE
    return [_PIECE] * (count // _PIECE) + [
        1 << bit for bit in reversed(range(_PIECE.bit_length())) if rest & (1 << bit)
    ]


def _in(values: Sequence[_T]) -> tuple[str, list[_T]]:
    """An IN list's placeholders and values, the last repeated up to a power of two: the
    same rows match."""
    padded = [*values, *[values[-1]] * ((1 << (len(values) - 1).bit_length()) - len(values))]
    return ", ".join(["%s"] * len(padded)), padded


def _write(final: dict[str, tuple[str, Kind, Body]], new: set[str], mirrored: _Mirrored) -> None:
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    # In uid order: every writer locks rows in one order (no deadlock on PostgreSQL).
    gone = sorted(uid for uid, (type_, _, _) in final.items() if type_ == DELETED)
    added: dict[_Place, str] = {}  # the objects new to the mirror, by name
    unasked: dict[Kind, set[str]] = {}  # new to the mirror though not ADDED (a replay)
    for uid, (type_, kind, body) in final.items():
        if type_ != DELETED and uid in new:
            namespace, name = body["metadata"].get("namespace", ""), body["metadata"]["name"]
            added[(kind.api_version, kind.kind, namespace, name)] = uid
            if (kind.api_version, kind.kind, name) not in mirrored.asked:
                unasked.setdefault(kind, set()).add(name)
    named = {**mirrored.named, **_existing([], unasked).named}  # no query if none unasked
    kinds = {kind for _, kind, _ in final.values()}
    # A row of another uid under an added object's name is an older incarnation, deleted
    # and its name reused: drop it. Unless a change (not an ADDED) is older than that row:
    # a late writer (a deposed leader still flushing) must not put an object deleted since
    # back over its successor. An ADDED always wins: it is what a re-list reports, and
    # after a restore from backup the server's versions may start below the mirror's.
    stale_ids: list[int] = []
    superseded: set[str] = set()
    for place, (id_, uid, version) in named.items():
        mine = added.get(place, uid)
        if mine == uid:
            continue
        type_, _, body = final[mine]
        if type_ == MODIFIED and _older(body["metadata"].get("resourceVersion") or "", version):
            superseded.add(mine)
        else:
            stale_ids.append(id_)
    live = sorted(
        (
            _row(kind, body, now)
            for uid, (type_, kind, body) in final.items()
            if type_ != DELETED and uid not in superseded
        ),
        key=lambda row: row.uid,
    )

    # Reads above, writes below: the write lock (SQLite has one) is held only for these.
    def write() -> None:
        with transaction.atomic(), _cursor() as cursor:
            _serialize_writers_of(cursor, kinds)
            if gone:
                marks, padded = _in(gone)
                cursor.execute(f"DELETE FROM {_TABLE} WHERE uid IN ({marks})", padded)
            if stale_ids:
                marks, ids = _in(sorted(stale_ids))
                cursor.execute(f"DELETE FROM {_TABLE} WHERE id IN ({marks})", ids)
            _upsert(cursor, live)

    def upsert_alone() -> None:
        with _cursor() as cursor:
            _upsert(cursor, live)

    # The upsert itself keeps a newer row (its WHERE: what a late writer, a deposed leader
    # still flushing, committed since the read above), so a chunk that only updates rows
    # already mirrored, the usual one, is autocommit statements, one per piece (on
    # PostgreSQL a round trip for up to 64 rows, not four: BEGIN, the advisory lock, the
    # upsert, COMMIT). A chunk with a row new to the mirror takes the lock: ON CONFLICT
    # (uid) arbitrates on the uid alone, so two writers inserting one object at once could
    # meet on its name's unique index instead (an IntegrityError, not an update).
    alone = not gone and not stale_ids and not new
    what = f"mirror write of {len(final)} {'/'.join(sorted(k.kind for k in kinds))}"
    retrying(upsert_alone if alone else write, what=what)


def _upsert(cursor: Any, rows: list[_Row]) -> None:
    """A statement per piece of the rows (see _pieces), not one per row: the ORM's
    bulk_create with conflict handling spent more time building its query than the
    database writing it, and psycopg's executemany a pipeline round per row."""
    start = 0
    for size in _pieces(len(rows)):  # in uid order still (see _write)
        piece, start = rows[start : start + size], start + size
        sql = _upsert_sql(connection.vendor, size)
        cursor.execute(sql, [value for row in piece for value in row.values])


@lru_cache(maxsize=16)
def _upsert_sql(vendor: str, rows: int) -> str:
    """INSERT … ON CONFLICT (uid) DO UPDATE of `rows` rows (distinct uids), which SQLite
    and PostgreSQL both speak."""
    jsonb = "::jsonb" if vendor == "postgresql" else ""
    marks = ", ".join(f"%s{jsonb}" if c in _JSON_COLUMNS else "%s" for c in _COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS if c != "uid")
    return (
        f"INSERT INTO {_TABLE} ({', '.join(_COLUMNS)}) VALUES "
        + ", ".join([f"({marks})"] * rows)
        + f" ON CONFLICT (uid) DO UPDATE SET {updates} WHERE NOT ({_older_sql(vendor)})"
    )


def _older_sql(vendor: str) -> str:
    """SQL true where the upserted row's resourceVersion is older than the mirrored one's,
    as _older decides: both all digits, compared as numbers."""
    mine, theirs = "excluded.resource_version", f"{_TABLE}.resource_version"
    if vendor == "postgresql":
        digits = "{} ~ '^[0-9]+$'"
        number = "{}::numeric"
    else:  # SQLite: no regular expressions; GLOB finds a non-digit, CAST reads the number
        digits = "({0} <> '' AND {0} NOT GLOB '*[^0-9]*')"
        number = "CAST({} AS INTEGER)"
    return (
        f"{digits.format(mine)} AND {digits.format(theirs)}"
        f" AND {number.format(mine)} < {number.format(theirs)}"
    )


def _serialize_writers_of(cursor: Any, kinds: Iterable[Kind]) -> None:
    """Makes the writers of these kinds' mirror take turns, until the transaction ends.

    During a failover the old leader may still flush while the new one re-lists. SQLite
    has one writer at a time anyway; on PostgreSQL row locks cannot cover rows that do
    not exist yet, so two writers could insert one object at two versions. A transaction
    advisory lock per kind makes them take turns, uncontended in the usual case; taken in
    one order, so two writers of several kinds never wait for each other in a circle.
    """
    if connection.vendor == "postgresql":
        for lock in sorted({_lock_of(kind) for kind in kinds}):
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock])


def _lock_of(kind: Kind) -> int:
    return zlib.crc32(f"opsboard.mirror:{kind.api_version}/{kind.kind}".encode())


def _older(version: str, mirrored: str | None) -> bool:
    mine, theirs = version_number(version), version_number(mirrored)
    return mine is not None and theirs is not None and mine < theirs


@dataclass(frozen=True)
class KindEvents:
    """One kind's watch events, in order, and its `queued_through` (see mirror_apply)."""

    kind: Kind
    events: Sequence[tuple[str, Body]]
    queued_through: int | None = None


def mirror_apply(
    *, kind: Kind, events: Sequence[tuple[str, Body]], queued_through: int | None = None
) -> list[Change]:
    """Applies watch events (in order) to the mirror, a write per 500 (see _write).

    The leading watcher is the mirror's usual writer, so reading the previous state before
    writing is safe, and keeps the write short; a late writer (a deposed leader still
    flushing) is caught by the upsert's own guard (its WHERE).

    `queued_through`: the newest resourceVersion of `kind` whose keys are known queued. A
    replay newer than it was mirrored by a watcher that may have died before queueing it,
    so it comes back as news (previous unknown), though the mirror needs no write.
    """
    return mirror_apply_kinds([KindEvents(kind, events, queued_through)])


def mirror_apply_kinds(runs: Sequence[KindEvents]) -> list[Change]:
    """`mirror_apply` of several kinds at once: up to 500 events of any kinds are one read
    and one write, not one of each per kind (a watcher's batch of Pods, ReplicaSets and
    Deployments was three of each). Changes come kind by kind, each in its events' order."""
    changes: list[Change] = []
    chunk: list[KindEvents] = []
    room = _CHUNK
    for run in runs:
        events = run.events
        while events:
            part, events = events[:room], events[room:]
            chunk.append(KindEvents(run.kind, part, run.queued_through))
            room -= len(part)
            if not room:
                changes.extend(_apply_chunk(chunk))
                chunk, room = [], _CHUNK
    if chunk:
        changes.extend(_apply_chunk(chunk))
    return changes


def _apply_chunk(runs: list[KindEvents]) -> list[Change]:
    typed = [
        (run, [(type_, _with_type(run.kind, body)) for type_, body in run.events]) for run in runs
    ]
    names: dict[Kind, set[str]] = {}
    for run, chunk in typed:
        added = {body["metadata"]["name"] for type_, body in chunk if type_ == ADDED}
        names.setdefault(run.kind, set()).update(added)
    mirrored = _existing(
        {body["metadata"]["uid"] for _, chunk in typed for _, body in chunk}, names
    )
    known = dict(mirrored.known)
    changes: list[Change] = []
    final: dict[str, tuple[str, Kind, Body]] = {}
    for run, chunk in typed:
        kind = run.kind
        for (type_, body), (_, original) in zip(chunk, run.events, strict=True):
            uid = body["metadata"]["uid"]
            if type_ != DELETED and _not_newer(body, known.get(uid)):
                # A replay (resuming from an older version): already mirrored.
                if _newer_than(body, run.queued_through):
                    changes.append(Change(type_, kind, body, None))
                continue
            previous = known.get(uid)
            generation = int(body["metadata"].get("generation") or 0)
            new_spec = type_ != DELETED and (previous is None or previous.generation != generation)
            writers = spec_writers(original) if new_spec else ()
            changes.append(Change(type_, kind, body, previous, writers))
            known[uid] = snapshot(body)
            final[uid] = (type_, kind, body)
    if final:
        _write(final, {uid for uid in final if uid not in mirrored.known}, mirrored)
    return changes


def mirror_relist(
    *,
    kind: Kind,
    items: Sequence[Body],
    namespaces: Sequence[str] = (),
    queued_through: int | None = None,
) -> list[Change]:
    """Makes the mirror of `kind` equal to a fresh list, as the events that would explain it.

    Objects unchanged since the mirror saw them (same resourceVersion) yield no change,
    unless newer than `queued_through` (see mirror_apply); objects missing from the list
    yield DELETED, so nothing is missed across a 410 Gone.
    """
    mirrored = KubeObject.objects.filter(api_version=kind.api_version, kind=kind.kind)
    if namespaces:
        mirrored = mirrored.filter(namespace__in=namespaces)
    versions = dict(mirrored.values_list("uid", "resource_version"))
    events: list[tuple[str, Body]] = []
    listed: set[str] = set()
    for item in items:
        meta = item["metadata"]
        listed.add(meta["uid"])
        version = versions.get(meta["uid"])
        if version is None:
            events.append((ADDED, item))
        elif version != str(meta.get("resourceVersion", "")) or _newer_than(item, queued_through):
            events.append((MODIFIED, item))
    gone = [uid for uid in versions if uid not in listed]
    for start in range(0, len(gone), _CHUNK):
        for body in KubeObject.objects.filter(uid__in=gone[start : start + _CHUNK]).values_list(
            "body", flat=True
        ):
            events.append((DELETED, body))
    return mirror_apply(kind=kind, events=events, queued_through=queued_through)


def kind_watches_save(points: Mapping[Kind, tuple[str, bool, bool]]) -> None:
    """Records how far the watcher got in the stream of each kind (its resume point), as
    kind → (resourceVersion, re-listed, saw an event), in one transaction."""
    now = timezone.now()
    at = connection.ops.adapt_datetimefield_value(now)
    table = KindWatch._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:  # after every batch: plain SQL
        for kind, (resource_version, listed, event) in points.items():
            stamps = [c for c, seen in (("listed_at", listed), ("last_event_at", event)) if seen]
            cursor.execute(
                f"UPDATE {table} SET {', '.join(f'{c} = %s' for c in ['resource_version', *stamps])}"
                " WHERE api_version = %s AND kind = %s",
                [resource_version, *[at] * len(stamps), kind.api_version, kind.kind],
            )
            if not cursor.rowcount:
                KindWatch.objects.create(
                    api_version=kind.api_version,
                    kind=kind.kind,
                    resource_version=resource_version,
                    **dict.fromkeys(stamps, now),
                )


def kind_watch_resume_point(*, kind: Kind) -> str:
    row = KindWatch.objects.filter(api_version=kind.api_version, kind=kind.kind).first()
    return row.resource_version if row else ""
