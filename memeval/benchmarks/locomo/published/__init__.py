"""Results the field published in its own harnesses' formats, read as data (`memeval locomo import`).

Only the files' formats and their own statistics live here; what LoCoMo's tables make of them (`../recorded.py`)
sits in the folder above, which depends on this package and never the reverse."""
