"""Answerers (readers): the Claude answer prompt and the no-LLM extractive baseline."""
