"""The independent LoCoMo audit (github.com/dial481/locomo-audit), fetched by the user and never committed.

Its files are CC BY-NC 4.0 and its reasons are its prose, so `memeval data fetch locomo-audit` stores the pinned
files byte for byte under data/locomo-audit/ and they are parsed on use, above this package: the corrected answer
key and the ceilings (`../audit_key.py`), the recorded judgments of its baselines (`../audit_leniency.py`, read by
the importer and the leniency tables). This package holds only the files (which, where, fetched how) and imports
nothing of LoCoMo's, so the folder above depends on it and never the reverse.
"""
