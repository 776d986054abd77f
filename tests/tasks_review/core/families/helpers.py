"""Hand-built sessions for the LLM families' tests, and the recorded answers of their model."""

from __future__ import annotations

from tasks_review.core.families import mine
from tasks_review.core.families.common import Asks
from tasks_review.core.mining.repair import PROJECT_DIR
from tests.tasks_review.core.mining.repair_helpers import Mined, Session
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


# -- build and extend: shapes.py written from an empty folder, then a triangle added ----------

SHAPES = """import math


def circle_area(radius):
    return math.pi * radius * radius


def rectangle_area(width, height):
    return width * height
"""
TEST_SHAPES = """import math
import unittest

from shapes import circle_area, rectangle_area


class AreaTests(unittest.TestCase):
    def test_unit_circle(self):
        self.assertAlmostEqual(circle_area(1), math.pi)

    def test_circle_of_radius_two(self):
        self.assertAlmostEqual(circle_area(2), 4 * math.pi)

    def test_rectangle(self):
        self.assertEqual(rectangle_area(3, 4), 12)

    def test_square(self):
        self.assertEqual(rectangle_area(5, 5), 25)
"""
TRIANGLE = """

def triangle_area(base, height):
    return base * height / 2
"""
TEST_TRIANGLE = """import unittest

from shapes import triangle_area


class TriangleTests(unittest.TestCase):
    def test_triangle(self):
        self.assertEqual(triangle_area(4, 3), 6)

    def test_flat_triangle(self):
        self.assertEqual(triangle_area(4, 0), 0)
"""
UNITTEST = "python3 -m unittest discover -s tests -v"
BUILD_REQUEST = "Write a Python module shapes.py with area functions for circles and rectangles."
EXTEND_REQUEST = "Now add triangle_area(base, height) to shapes.py as well."


def shapes_session(*, extend: bool = True) -> FamilySession:
    session = (
        FamilySession()
        .user(BUILD_REQUEST)
        .write("shapes.py", SHAPES)
        .write("tests/test_shapes.py", TEST_SHAPES)
        .run(UNITTEST, output="Ran 4 tests in 0.001s\n\nOK")
        .say("shapes.py has circle_area and rectangle_area, with four tests passing.")
    )
    if extend:
        session = (
            session.user(EXTEND_REQUEST)
            .edit(
                "shapes.py", "    return width * height\n", "    return width * height\n" + TRIANGLE
            )
            .write("tests/test_triangle.py", TEST_TRIANGLE)
            .run(UNITTEST, output="Ran 6 tests in 0.001s\n\nOK")
            .say("Added triangle_area with two tests; all six pass.")
        )
    return session


BUILD_ANSWER = {
    "usable": True,
    "reason": "",
    "title": "Area functions for shapes",
    "instruction": (
        "Write a Python module `shapes.py` at the project's root with two functions:\n\n"
        "- `circle_area(radius)`: the area of a circle of that radius (pi times the radius "
        "squared, as a float);\n"
        "- `rectangle_area(width, height)`: the area of a width-by-height rectangle.\n\n"
        "Add unit tests of your own under `tests/` if you like."
    ),
    "interface": ["shapes.py", "circle_area", "rectangle_area"],
}
EXTEND_ANSWER = {
    "usable": True,
    "reason": "",
    "title": "Triangles too",
    "instruction": (
        "`shapes.py` computes the areas of circles and rectangles. Add "
        "`triangle_area(base, height)` to it: half the base times the height. Keep the "
        "existing functions working as they do."
    ),
    "interface": ["shapes.py", "triangle_area"],
}
