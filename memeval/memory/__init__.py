"""Memory systems under test: one protocol (ingest, search, export), built from plain config."""

from memeval.memory.base import MemoryItem, MemorySystem, SystemConfig
from memeval.memory.registry import build_system, system_names

__all__ = ["MemoryItem", "MemorySystem", "SystemConfig", "build_system", "system_names"]
