"""On-disk response cache (SQLite, WAL): key = hash of everything that changes the output, nothing else.

Only successful responses are stored; the stored request is the key material (model, system, messages,
sampling parameters, template version, repeat index) — never headers, so never an API key.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shlex
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from memeval.data.paths import project_root
from memeval.errors import InputError


def default_cache_dir() -> Path:
    return Path(os.environ.get("MEMEVAL_CACHE_DIR") or project_root() / ".memeval" / "cache")


_SQLITE_FULL, _SQLITE_IOERR = 13, 10  # https://www.sqlite.org/rescode.html (extended codes keep the low byte)


def unusable(path: Path, exc: sqlite3.Error) -> InputError | OSError:
    """A cache SQLite cannot use, as one line: a damaged file says how to move it aside (with its WAL files; the
    next run starts a fresh cache and sends again what is no longer cached); a full disk or an I/O error is the
    machine's (an OSError: exit 1, as for any file); anything else (locked, unreadable) names the file and SQLite's
    reason."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code == _SQLITE_FULL or "disk is full" in reason:
        return OSError(errno.ENOSPC, f"the response cache cannot grow ({reason})", str(path))
    if code == _SQLITE_IOERR or "disk I/O error" in reason:
        return OSError(errno.EIO, f"the response cache could not be written ({reason})", str(path))
    if isinstance(exc, sqlite3.OperationalError) and "malformed" not in reason and "not a database" not in reason:
        return InputError(path, "cache", f"SQLite cannot use it ({reason}); another process may hold it, or use "
                          "another cache directory (MEMEVAL_CACHE_DIR)")
    aside = shlex.quote(str(path.parent / "corrupt"))
    return InputError(path, "cache", f"not a readable SQLite database ({reason}); move it aside with "
                      f"`mkdir -p {aside} && mv {shlex.quote(str(path))}* {aside}/` (a fresh cache is made on the "
                      "next run; what is no longer cached is sent again)")


@dataclass(frozen=True)
class SavedBatch:
    """One row of the `batches` table: a batch id saved the moment the API returned it, so that a killed run
    resumes polling it instead of paying twice."""

    name: str  # "<run name>#<batch id>"
    batch_id: str
    custom_ids: tuple[str, ...]
    saved_utc: str  # SQLite's CURRENT_TIMESTAMP when saved: "YYYY-MM-DD HH:MM:SS", UTC

    @property
    def run(self) -> str:
        return self.name.rpartition("#")[0] or self.name

    def age_s(self, now: datetime | None = None) -> float:
        """Seconds since it was saved (0 when the stored time cannot be read: a batch of unknown age is young)."""
        try:
            saved = datetime.fromisoformat(self.saved_utc).replace(tzinfo=timezone.utc)
        except (TypeError, ValueError):
            return 0.0
        return max(0.0, ((now or datetime.now(timezone.utc)) - saved).total_seconds())


def _guarded(method):
    """Every cache operation: a SQLite error becomes one line naming the cache file (see `unusable`)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise unusable(self.path, exc) from None
    return wrapper


@dataclass(frozen=True)
class Exchange:
    """One cached call as stored: the request's key material (everything sent that changes the reply: model,
    system, messages, sampling; never a header, so never a key) and the reply as the client read it."""

    key: str
    request: dict
    response: dict
    created_utc: str


def read_exchanges(keys: list[str], directory: str | Path | None = None) -> tuple[dict[str, Exchange], str | None]:
    """The cached calls of `keys` that this machine's cache holds, read without writing anything (no cache is
    created, no table added); and a note when the cache exists but cannot be read (every call then absent)."""
    path = (Path(directory) if directory else default_cache_dir()) / "responses.sqlite"
    if not keys or not path.is_file():
        return {}, None
    found: dict[str, Exchange] = {}
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            unique = list(dict.fromkeys(keys))
            for start in range(0, len(unique), 500):  # below SQLite's bound on host parameters
                part = unique[start:start + 500]
                rows = conn.execute("SELECT key, request, response, created FROM responses WHERE key IN "
                                    f"({','.join('?' * len(part))})", part).fetchall()
                for key, request, response, created in rows:
                    found[key] = Exchange(key, json.loads(request), json.loads(response), str(created))
        finally:
            conn.close()
    except (sqlite3.Error, ValueError) as exc:
        return {}, f"this machine's response cache could not be read ({' '.join(str(exc).split())})"
    return found, None


class ResponseCache:
    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory) if directory else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "responses.sqlite"
        self._local = threading.local()
        self._create()

    @_guarded
    def _create(self) -> None:
        with self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, request TEXT NOT NULL, "
                "response TEXT NOT NULL, created TEXT DEFAULT CURRENT_TIMESTAMP)"
            )
            conn.execute("CREATE TABLE IF NOT EXISTS batches (name TEXT PRIMARY KEY, batch_id TEXT NOT NULL, "
                         "custom_ids TEXT NOT NULL, created TEXT DEFAULT CURRENT_TIMESTAMP)")
            conn.execute("CREATE TABLE IF NOT EXISTS token_counts (key TEXT PRIMARY KEY, tokens INTEGER NOT NULL)")
            # one embedding a row: its vector as little-endian float32 bytes (never a JSON list of floats), and the
            # key material it was asked with (provider, model, endpoint, dimensions, text)
            conn.execute("CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, request TEXT NOT NULL, "
                         "dims INTEGER NOT NULL, vector BLOB NOT NULL, created TEXT DEFAULT CURRENT_TIMESTAMP)")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    @_guarded
    def get(self, key: str) -> dict | None:
        row = self._conn().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    @_guarded
    def put(self, key: str, request: dict, response: dict) -> None:
        self._conn().execute(
            "INSERT OR REPLACE INTO responses (key, request, response) VALUES (?, ?, ?)",
            (key, json.dumps(request, sort_keys=True), json.dumps(response, sort_keys=True)),
        )

    @_guarded
    def forget(self, key: str) -> None:
        """Drop a reply its reader could not use (a judge reply with no label), so the next run asks again."""
        self._conn().execute("DELETE FROM responses WHERE key = ?", (key,))

    @_guarded
    def get_count(self, key: str) -> int | None:
        row = self._conn().execute("SELECT tokens FROM token_counts WHERE key = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    @_guarded
    def put_count(self, key: str, tokens: int) -> None:
        self._conn().execute("INSERT OR REPLACE INTO token_counts (key, tokens) VALUES (?, ?)", (key, tokens))

    @_guarded
    def get_vectors(self, keys: list[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of `keys` (those present), each a read-only float32 vector. A row whose blob is not
        its stated length is left out: asked again rather than read wrong."""
        found: dict[str, np.ndarray] = {}
        conn = self._conn()
        for start in range(0, len(keys), 500):  # below SQLite's bound on host parameters
            part = keys[start:start + 500]
            rows = conn.execute(f"SELECT key, dims, vector FROM embeddings WHERE key IN ({','.join('?' * len(part))})",
                                part).fetchall()
            for key, dims, blob in rows:
                if isinstance(blob, bytes) and dims > 0 and len(blob) == 4 * dims:
                    found[key] = np.frombuffer(blob, dtype="<f4")
        return found

    @_guarded
    def put_vectors(self, rows: list[tuple[str, dict, np.ndarray]]) -> None:
        """(key, key material, vector) rows in one transaction: all of a reply's vectors or none."""
        conn = self._conn()
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT OR REPLACE INTO embeddings (key, request, dims, vector) VALUES (?, ?, ?, ?)",
                             [(key, json.dumps(material, sort_keys=True), int(vector.shape[0]),
                               np.asarray(vector, dtype="<f4").tobytes()) for key, material, vector in rows])

    @_guarded
    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    @_guarded
    def save_batch(self, name: str, batch_id: str, custom_ids: list[str]) -> None:
        self._conn().execute("INSERT OR REPLACE INTO batches (name, batch_id, custom_ids) VALUES (?, ?, ?)",
                             (name, batch_id, json.dumps(custom_ids)))

    @_guarded
    def saved_batches(self, prefix: str | None = None) -> list[SavedBatch]:
        """Saved batches, oldest first; with `prefix`, only those of that run (names starting `prefix#`)."""
        query = "SELECT name, batch_id, custom_ids, created FROM batches"
        params: tuple = ()
        if prefix is not None:
            query += " WHERE substr(name, 1, ?) = ?"
            params = (len(prefix) + 1, prefix + "#")
        rows = self._conn().execute(query + " ORDER BY created, name", params).fetchall()
        return [SavedBatch(n, b, tuple(json.loads(c)), str(t)) for n, b, c, t in rows]

    def list_batches(self, prefix: str) -> list[tuple[str, str, list[str]]]:
        """Saved batches whose name starts with `prefix#`: (name, batch_id, custom_ids)."""
        return [(s.name, s.batch_id, list(s.custom_ids)) for s in self.saved_batches(prefix)]

    @_guarded
    def forget_batch(self, name: str) -> None:
        self._conn().execute("DELETE FROM batches WHERE name = ?", (name,))

    @_guarded
    def forget_batch_id(self, batch_id: str) -> list[SavedBatch]:
        """Forget every row saved for `batch_id`, in one transaction; returns what was forgotten (empty: none)."""
        conn = self._conn()
        with conn:  # BEGIN ... COMMIT, ROLLBACK on an error: both statements or neither
            conn.execute("BEGIN IMMEDIATE")
            rows = conn.execute("SELECT name, batch_id, custom_ids, created FROM batches WHERE batch_id = ? "
                                "ORDER BY created, name", (batch_id,)).fetchall()
            conn.execute("DELETE FROM batches WHERE batch_id = ?", (batch_id,))
        return [SavedBatch(n, b, tuple(json.loads(c)), str(t)) for n, b, c, t in rows]

    @_guarded
    def stats(self) -> dict:
        conn = self._conn()
        by_model: dict[str, int] = {}
        for (model,) in conn.execute("SELECT json_extract(request, '$.model') FROM responses"):
            by_model[str(model)] = by_model.get(str(model), 0) + 1
        size = sum(p.stat().st_size for p in self.directory.glob("responses.sqlite*"))
        return {"path": str(self.path), "responses": len(self),
                "token_counts": int(conn.execute("SELECT COUNT(*) FROM token_counts").fetchone()[0]),
                "embeddings": int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]),
                "batches": int(conn.execute("SELECT COUNT(*) FROM batches").fetchone()[0]),
                "by_model": dict(sorted(by_model.items())), "bytes": size}

    @_guarded
    def prune(self, older_than_days: float | None = None, model: str | None = None, dry_run: bool = False) -> int:
        """Delete responses older than `older_than_days` and/or of `model`; returns how many (would) go
        (`prune_counts` says how many of each kind)."""
        return sum(self.prune_counts(older_than_days, model, dry_run).values())

    @_guarded
    def prune_counts(self, older_than_days: float | None = None, model: str | None = None,
                     dry_run: bool = False) -> dict[str, int]:
        """{"responses": n, "embeddings": m}: chat responses and embedding vectors older than `older_than_days`
        and/or of `model`, deleted (or, with `dry_run`, counted)."""
        where, params = [], []
        if older_than_days is not None:
            where.append("created < datetime('now', ?)")
            params.append(f"-{float(older_than_days)} days")
        if model is not None:
            where.append("json_extract(request, '$.model') = ?")
            params.append(model)
        clause = " AND ".join(where) or "1"
        conn = self._conn()
        counts = {}
        for table in ("responses", "embeddings"):
            counts[table] = int(conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {clause}", params).fetchone()[0])
            if not dry_run and counts[table]:
                conn.execute(f"DELETE FROM {table} WHERE {clause}", params)
        return counts

    def all_text(self) -> str:
        """Everything stored, as text (tests check no secret ever lands here)."""
        conn = self._conn()
        parts = [r[0] + r[1] for r in conn.execute("SELECT request, response FROM responses")]
        parts += [r[0] + r[1] for r in conn.execute("SELECT batch_id, custom_ids FROM batches")]
        parts += [r[0] for r in conn.execute("SELECT request FROM embeddings")]
        return "\n".join(parts)
