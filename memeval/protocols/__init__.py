"""The anchors' own evaluation prompts, fetched by the user and sent byte for byte.

Another project's prompt is its text, so none is committed here: `memeval data fetch protocols` reads the public
source files at pinned commits, checks each file's SHA-256, pulls the templates out by parsing the source (never
importing or running it) and stores them under data/protocols/ with their origin. Judges and readers use them when
present; without them they use this project's own wording and every output says "paraphrased prompts — not the
published protocol".
"""
