"""The memory graph store: triples on a networkx MultiDiGraph, with timestamps, supersession and
source-aware deletion.

Semantics (each tested):
- every edge (subject, relation, object) keeps the sources that asserted it, each with its timestamp; the same
  fact from a second source adds a source, not an edge;
- a later fact on the same (subject, relation) supersedes the earlier ones for current-state queries; all stay
  in history;
- deleting a source removes it from every edge; an edge goes only with its last source, an entity with its
  last edge; a deleted source id is tombstoned, so re-ingesting never brings its facts back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from memeval.memory.entities import EntityNormalizer

Embedder = Callable[[Sequence[str]], np.ndarray]  # texts → one row vector per text


def tfidf_scorer(texts: Sequence[str]) -> Callable[[str], np.ndarray]:
    vectorizer = TfidfVectorizer(lowercase=True, sublinear_tf=True)
    matrix = vectorizer.fit_transform(texts)
    return lambda query: (matrix @ vectorizer.transform([query]).T).toarray().ravel()


def embedding_scorer(texts: Sequence[str], embedder: Embedder) -> Callable[[str], np.ndarray]:
    """Cosine similarity under any embedder (rows are L2-normalised here, whatever the embedder returns)."""
    def unit(rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=float)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1, norms)

    matrix = unit(embedder(list(texts)))
    return lambda query: matrix @ unit(embedder([query]))[0]


def sentence_transformer_embedder(model_name: str = "all-MiniLM-L6-v2") -> Embedder:
    """The optional sentence-embedding backend (`pip install -e .[embeddings]`; the model downloads on first use)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ImportError("the embedding backend needs the `embeddings` extra: pip install -e '.[embeddings]'") from None
    model = SentenceTransformer(model_name)
    return lambda texts: model.encode(list(texts), normalize_embeddings=True)


@dataclass(frozen=True)
class Triple:
    subject: str
    relation: str
    object: str
    time: str  # latest assertion (ISO-sortable string; "" when unknown)
    source_ids: tuple[str, ...]
    superseded: bool = False

    @property
    def text(self) -> str:
        return f"{self.subject} {self.relation} {self.object}"


class MemoryGraph:
    def __init__(self, aliases: Mapping[str, str] | None = None, embedder: Embedder | None = None):
        self.embedder = embedder
        self.graph = nx.MultiDiGraph()
        self.normalize = EntityNormalizer(aliases)
        self.deleted_sources: set[str] = set()
        self.refused_assertions = 0
        self._index = None

    # --- writing -------------------------------------------------------------------------------------
    def add(self, subject: str, relation: str, obj: str, source_id: str, time: str = "") -> bool:
        """Assert a fact from one source; False (and counted) when the source was deleted."""
        if source_id in self.deleted_sources:
            self.refused_assertions += 1
            return False
        s, o, r = self.normalize(subject), self.normalize(obj), " ".join(relation.split()).lower()
        if not s or not o or not r:
            return False
        if self.graph.has_edge(s, o, key=r):
            self.graph.edges[s, o, r]["sources"][source_id] = time
        else:
            self.graph.add_edge(s, o, key=r, relation=r, sources={source_id: time})
        self._index = None
        return True

    def delete_source(self, source_id: str) -> int:
        """Remove one source everywhere; returns how many edges disappeared with it."""
        self.deleted_sources.add(source_id)
        gone = []
        for s, o, r, data in self.graph.edges(keys=True, data=True):
            if data["sources"].pop(source_id, None) is not None and not data["sources"]:
                gone.append((s, o, r))
        self.graph.remove_edges_from(gone)
        self.graph.remove_nodes_from([n for n in list(self.graph.nodes) if self.graph.degree(n) == 0])
        self._index = None
        return len(gone)

    # --- reading -------------------------------------------------------------------------------------
    def _triple(self, s: str, o: str, r: str, data: dict, superseded: bool = False) -> Triple:
        sources = data["sources"]
        return Triple(s, r, o, max(sources.values(), default=""), tuple(sources), superseded)

    def triples(self, current_only: bool = False) -> list[Triple]:
        latest = self._latest_times()
        out = []
        for s, o, r, data in self.graph.edges(keys=True, data=True):
            time = max(data["sources"].values(), default="")
            superseded = time < latest[(s, r)]
            if not (current_only and superseded):
                out.append(self._triple(s, o, r, data, superseded))
        return out

    def _latest_times(self) -> dict[tuple[str, str], str]:
        latest: dict[tuple[str, str], str] = {}
        for s, _, r, data in self.graph.edges(keys=True, data=True):
            time = max(data["sources"].values(), default="")
            if time > latest.get((s, r), ""):
                latest[(s, r)] = time
            latest.setdefault((s, r), time)
        return latest

    def current(self, subject: str, relation: str) -> list[str]:
        """Objects of the latest assertion(s) on (subject, relation) — the current state."""
        s, r = self.normalize(subject), " ".join(relation.split()).lower()
        return sorted(t.object for t in self.triples(current_only=True) if t.subject == s and t.relation == r)

    def history(self, subject: str, relation: str) -> list[Triple]:
        s, r = self.normalize(subject), " ".join(relation.split()).lower()
        return sorted((t for t in self.triples() if t.subject == s and t.relation == r), key=lambda t: t.time)

    def entities(self) -> set[str]:
        return set(self.graph.nodes)

    # --- recall --------------------------------------------------------------------------------------
    def _ensure_index(self):
        if self._index is None:
            triples = self.triples()
            scorer = None
            if triples:
                scorer = (tfidf_scorer([t.text for t in triples]) if self.embedder is None
                          else embedding_scorer([t.text for t in triples], self.embedder))
            self._index = (triples, scorer)
        return self._index

    def search(self, query: str, top_k: int = 5, max_hops: int = 1, current_only: bool = False) -> list[Triple]:
        """TF-IDF top-k triples, then every triple within `max_hops` of their entities (seeds first, then by
        hop, each hop in a stable order). Triples sharing no term with the query are not seeds."""
        triples, scorer = self._ensure_index()
        if not triples or top_k <= 0:
            return []
        scores = scorer(query)
        order = [i for i in np.argsort(-scores, kind="stable")[:top_k] if scores[i] > 0]
        chosen = [triples[i] for i in order]
        seen = {(t.subject, t.relation, t.object) for t in chosen}
        frontier = {e for t in chosen for e in (t.subject, t.object)}
        visited = set(frontier)
        by_entity: dict[str, list[Triple]] = {}
        for t in triples:
            by_entity.setdefault(t.subject, []).append(t)
            by_entity.setdefault(t.object, []).append(t)
        for _ in range(max_hops):
            next_frontier = set()
            for entity in sorted(frontier):
                for t in by_entity.get(entity, ()):
                    key = (t.subject, t.relation, t.object)
                    if key not in seen:
                        seen.add(key)
                        chosen.append(t)
                        next_frontier.update(e for e in (t.subject, t.object) if e not in visited)
            visited |= next_frontier
            frontier = next_frontier
        if current_only:
            chosen = [t for t in chosen if not t.superseded]
        return chosen
