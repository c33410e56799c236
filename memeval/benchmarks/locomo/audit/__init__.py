"""The independent LoCoMo audit (github.com/dial481/locomo-audit), fetched by the user and never committed.

Its files are CC BY-NC 4.0 and its reasons are its prose, so `memeval data fetch locomo-audit` stores the pinned
files byte for byte under data/locomo-audit/ and they are parsed on use: the corrected answer key and the
ceilings (`key.py`), the recorded judgments of its baselines (read by the importer and the leniency tables).
"""
