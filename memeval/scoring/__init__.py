"""Scorers (token F1 in three modes, BLEU-1) and aggregation."""

from memeval.scoring.f1 import bleu1, locomo_f1, mem0_f1, score_f1, token_f1

__all__ = ["bleu1", "locomo_f1", "mem0_f1", "score_f1", "token_f1"]
