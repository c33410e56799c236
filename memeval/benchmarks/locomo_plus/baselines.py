"""Published LoCoMo-Plus results usable beside a run: none yet.

Read at the pinned commit (059f4e3d38f7f1f96765e8e2cb7de3097551bffb): the README has no result table and the paper
(arXiv 2602.10715) is not in the repository. The only figures in its history, evaluation_framework/output/
judge_summary.json at 143cdeb (deleted in 5e6366d), are not results: every judge call there failed ("Incorrect API
key") and the script's word fallback read each failure as "correct", so all 2,240 rows scored 1.0.
"""

from __future__ import annotations

BASELINES: tuple = ()
BASELINES_NOTE = ("None: the benchmark's repository at the pinned commit publishes no result table (the paper's "
                  "tables are not in it), so nothing is set beside this run.")
