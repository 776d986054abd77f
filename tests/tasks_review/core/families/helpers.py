"""Hand-built sessions for the LLM families' tests, and the recorded answers of their model."""

from __future__ import annotations

from tasks_review.core.families import mine
from tasks_review.core.families.common import Asks
from tasks_review.core.mining.repair import PROJECT_DIR
from tests.tasks_review.core.repair_helpers import ROOT, Mined, Session
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import StateIndex, replay

SALES_CSV = (
    "order,customer,amount\n"
    "1001,Acme,250.00\n"
    "1002,Globex,80.50\n"
    "1003,Acme,120.00\n"
    "1004,Initech,45.25\n"
    "1005,Globex,310.75\n"
)
COUNT_COMMAND = (
    "python3 -c \"import csv; print(sum(1 for r in csv.DictReader(open('sales.csv')) "
    "if float(r['amount']) > 100))\""
)


class FamilySession(Session):
    """A session that also records what the agent says between its calls."""

    def say(self, text: str) -> FamilySession:
        steps = self.builder.steps
        steps.append({"step_id": len(steps) + 1, "source": "agent", "message": text})
        return self

    def mine_families(self, families: tuple[str, ...], llm: Asks | None) -> Mined:
        atif, side = self.builder.build()
        blobs = MemoryBlobs()
        result = replay(atif, side, root=self.root, blobs=blobs)
        candidates, drops = mine(
            result,
            StateIndex.build(result, every=4),
            blobs,
            atif,
            families=families,
            llm=llm,
            project_dir=PROJECT_DIR,
        )
        return Mined(candidates, drops, blobs)


def sales_question(
    question: str = "How many orders in sales.csv are over 100 dollars?",
    *,
    command: str = COUNT_COMMAND,
    output: str = "3",
    reply: str = "There are 3 orders over $100 in sales.csv (1001, 1003 and 1005).",
) -> FamilySession:
    """The agent has read sales.csv; the user asks a question about it; the agent computes and
    answers."""
    return (
        FamilySession()
        .user("Have a look at the sales export in this folder.")
        .read("sales.csv", SALES_CSV)
        .say("It has five orders from three customers.")
        .user(question)
        .run(command, output=output)
        .say(reply)
    )


QA_ANSWER = {
    "is_data_question": True,
    "question": "How many orders in sales.csv have an amount over 100?",
    "answer_type": "numeric",
    "answer": "3",
    "items": [],
    "tolerance": 0,
    "inputs": ["sales.csv"],
    "reason": "",
}
QA_MARKER = "How many orders in sales.csv are over 100 dollars?"
__all__ = ["ROOT", "FamilySession", "Mined", "QA_ANSWER", "QA_MARKER", "sales_question"]
