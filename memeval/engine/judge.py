"""The one judge type. A judge turns an answer row into the requests it sends (under a role) and the replies into
one judgment row; the engine sends, resumes, counts and records. Graded, binary, LongMemEval's yes/no and the
graph study's three-dimension judge are judges (memeval/scoring/judges.py names them)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar


class Judge(ABC):
    name: ClassVar[str]  # the protocol recorded in every judgment row and in the run's identity
    role: ClassVar[str] = "judge"
    temperature: float | None = 0.0  # the protocol's temperature (sent where the model takes one)
    runs: int = 1  # requests per answer
    in_flight: int = 1  # of one answer's requests sent at once
    batchable: bool = False  # whether `--judge-mode batch` may send it through Message Batches

    @abstractmethod
    def version(self) -> str:
        """The prompt version: a hash of the prompt text, so an edited prompt is another protocol."""

    def accepts(self, answer) -> bool:
        """Whether this judge grades `answer` (a final answer row)."""
        return True

    @abstractmethod
    def requests(self, answer) -> list:
        """The LLM requests for one answer row, each naming this judge's role."""

    @abstractmethod
    def judgment(self, answer, replies: Sequence, model: str | None):
        """The judgment row from every request's successful reply (in request order)."""

    def unusable(self, judgment) -> str | None:
        """Why `judgment` holds no usable label (None: it does). Such a judgment is not stored and the replies
        `unusable_replies` names are dropped from the cache, so the run stays incomplete and a rerun asks again."""
        return None

    def unusable_replies(self, judgment) -> list[int]:
        """The indices (in request order) of the replies that gave `judgment` nothing usable."""
        return list(range(self.runs))

    def key(self, answer) -> tuple:
        """The key of the judgment row `answer` gets (what makes it already judged)."""
        return (*answer.key, self.name)

    own_schema = False  # its requests carry memeval's own reply schema, sent as --response-format asks

    def identity(self, client) -> dict:
        """What of this judge changes its judgments: the role's model and sampling (and how its reply schema is
        asked for), the prompt version."""
        from memeval.llm.manifest import role_identity

        return {**role_identity(client, self.role, self.temperature, self.own_schema),
                "prompt_version": self.version()}
