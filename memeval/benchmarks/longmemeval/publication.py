"""LongMemEval's part of the publication: its table (tab_longmemeval), written only when notebook 08 ran on the
fetched data. `Benchmark.publication` names `PUBLICATION`."""

from __future__ import annotations

from pathlib import Path

from memeval.artifacts import stored
from memeval.benchmarks.longmemeval.report import longmemeval_report
from memeval.protocols.status import manifest_problem
from memeval.publication.contribution import Contribution
from memeval.publication.readers import MissingResults
from memeval.publication.tables import PublishedTable
from memeval.records import LMEAnswerRow, LMEJudgmentRow, latest, read_records
from memeval.rundir import RunDir


def longmemeval_table(root: Path) -> PublishedTable:
    """Only when notebook 08 (or `memeval longmemeval run` into its directory) ran on fetched data."""
    run = stored("longmemeval_run", root)
    if not RunDir(run).answers.is_file():
        raise MissingResults("no LongMemEval run: fetch the data (memeval data fetch longmemeval --variant s) and "
                             "execute notebook 08_longmemeval")
    answers = list(latest(read_records(RunDir(run).answers, LMEAnswerRow), lambda r: r.key).values())
    judgments = {r.key: r for r in read_records(RunDir(run).judgments, LMEJudgmentRow)}
    markdown = longmemeval_report(answers, judgments,
                                  protocol_problem=manifest_problem(RunDir(run).manifest)).split("\n", 2)[2]
    caption = (f"LongMemEval: {len({a.question_id for a in answers})} questions per system, accuracy by the judge "
               "named under the table (\"not measured\" without one), evidence recall at session and turn level, "
               "and published rows with their judges. It does not show a reader's quality when the reader is "
               "extractive.")
    return PublishedTable(markdown, None, caption)


PUBLICATION = Contribution(tables={"tab_longmemeval": longmemeval_table})
