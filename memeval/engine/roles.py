"""The model settings of a run (memeval/llm/settings.py), named here for the engine's readers: the run's client is
made from them (memeval/llm/client.py `checked_client`), checked against the roles the task calls before any
call."""

from memeval.llm.settings import ModelSettings

__all__ = ["ModelSettings"]
