"""The publication: readers of stored results (`readers`), figures drawn from results (`figures`), tables
(`tables`), the README's headline table (`headline`), and the writer behind notebook 07 and `memeval publish`
(`publish`). Notebooks 01–06 draw their figures with the same functions and save them with `style.save_figure`.
"""

from memeval.publication.readers import MissingResults

__all__ = ["MissingResults"]
