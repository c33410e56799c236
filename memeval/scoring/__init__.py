"""Scorers (token F1 in three modes, BLEU-1) and aggregation.

The scorers load lazily: `memeval.scoring.aggregate` is imported by MEMAUDIT sweeps, which must not pay for
nltk (and the scipy it pulls in) on every worker."""

__all__ = ["bleu1", "locomo_f1", "mem0_f1", "score_f1", "token_f1"]


def __getattr__(name: str):
    if name in __all__:
        from memeval.scoring import f1

        return getattr(f1, name)
    raise AttributeError(f"module 'memeval.scoring' has no attribute {name!r}")
