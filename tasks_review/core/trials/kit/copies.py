"""traj2env control copies for Python tests: a real test function, renamed, maybe with one
assertion turned false.

Standard library only (Python 3.8+). The grader (root) reads the reference's test files with it
to know which tests can be copied and how many assertions each has at its top level; the
runner's harness (unittest or the pytest plugin) builds the copies the grader asked for from the
same files on disk, so a test module substituted in memory does not choose its own controls.

A copy keeps the original's file name and line numbers: in a traceback or a frame it looks like
the test it was made from, under a random name. A **must-pass** copy is the test verbatim; a
**must-fail** copy has one top-level assertion negated (``assertEqual`` -> ``assertNotEqual``,
``assert x`` -> ``assert not (x)``) or its expected value changed. A top-level statement of a
test that passed on the reference runs, so the changed assertion is reached there.
"""

import ast
import copy as _copy
import random
import re

NEGATED = {
    "assertEqual": "assertNotEqual",
    "assertEquals": "assertNotEqual",
    "assertNotEqual": "assertEqual",
    "assertTrue": "assertFalse",
    "assertFalse": "assertTrue",
    "assertIs": "assertIsNot",
    "assertIsNot": "assertIs",
    "assertIsNone": "assertIsNotNone",
    "assertIsNotNone": "assertIsNone",
    "assertIn": "assertNotIn",
    "assertNotIn": "assertIn",
    "assertIsInstance": "assertNotIsInstance",
    "assertNotIsInstance": "assertIsInstance",
    "assertAlmostEqual": "assertNotAlmostEqual",
    "assertNotAlmostEqual": "assertAlmostEqual",
    "assertRegex": "assertNotRegex",
    "assertNotRegex": "assertRegex",
    "assertListEqual": "assertNotEqual",
    "assertTupleEqual": "assertNotEqual",
    "assertDictEqual": "assertNotEqual",
    "assertSetEqual": "assertNotEqual",
    "assertSequenceEqual": "assertNotEqual",
    "assertMultiLineEqual": "assertNotEqual",
    "assertGreater": "assertLessEqual",
    "assertGreaterEqual": "assertLess",
    "assertLess": "assertGreaterEqual",
    "assertLessEqual": "assertGreater",
}
# Assertions whose expected value can be changed instead (two positional arguments, equality).
_EQUALITY = frozenset(
    {"assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual", "assertDictEqual"}
    | {"assertSequenceEqual", "assertMultiLineEqual", "assertSetEqual"}
)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def find(tree, qualname):
    """The ``def`` at ``qualname`` ("Class.method" or "function") in a parsed module, or None."""
    scope = tree.body
    node = None
    for part in qualname.split("."):
        node = next(
            (
                n
                for n in scope
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == part
            ),
            None,
        )
        if node is None:
            return None
        scope = node.body
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _unittest_call(statement):
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    func = statement.value.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
        and func.attr in NEGATED
    ):
        return statement.value
    return None


def assertions(function):
    """Indexes in ``function.body`` of the top-level assertions a must-fail copy can change."""
    return [
        i
        for i, statement in enumerate(function.body)
        if isinstance(statement, ast.Assert) or _unittest_call(statement) is not None
    ]


def _changed(node):
    """An expression whose value differs from ``node``'s, or None when there is no safe one."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            return ast.Constant(not value)
        if isinstance(value, (int, float)):
            return ast.Constant(value + 1)
        if isinstance(value, str):
            return ast.Constant(value + "\u2063")
        if isinstance(value, bytes):
            return ast.Constant(value + b"\x00")
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        elements = [_copy.deepcopy(e) for e in node.elts] + [ast.Constant("\u2063")]
        return type(node)(elts=elements, ctx=ast.Load())
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        arg = node.args[0]
        if (
            isinstance(arg, ast.Constant)
            and isinstance(arg.value, str)
            and _NUMBER.match(arg.value)
        ):
            # Decimal("29.99") -> Decimal("29.90"): still a valid number, a different one.
            last = arg.value[-1]
            text = arg.value[:-1] + str((int(last) + 1) % 10)
            return ast.Call(func=_copy.deepcopy(node.func), args=[ast.Constant(text)], keywords=[])
    return None


def _mutate(statement, rng):
    """``statement`` made false on the reference: negated, or its expected value changed."""
    if isinstance(statement, ast.Assert):
        test = statement.test
        if (
            rng.random() < 0.5
            and isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
        ):
            other = _changed(test.comparators[0])
            if other is not None:
                return ast.Assert(
                    test=ast.Compare(left=test.left, ops=test.ops, comparators=[other]),
                    msg=statement.msg,
                )
        return ast.Assert(test=ast.UnaryOp(op=ast.Not(), operand=test), msg=statement.msg)
    call = _unittest_call(statement)
    name = call.func.attr
    if rng.random() < 0.5 and name in _EQUALITY and len(call.args) >= 2:
        for index in (1, 0):
            other = _changed(call.args[index])
            if other is not None:
                args = list(call.args)
                args[index] = other
                return ast.Expr(value=ast.Call(func=call.func, args=args, keywords=call.keywords))
    func = ast.Attribute(value=call.func.value, attr=NEGATED[name], ctx=ast.Load())
    return ast.Expr(value=ast.Call(func=func, args=call.args, keywords=call.keywords))


def make(function, name, fail_at=None, rng=None):
    """A copy of ``function`` named ``name``; with ``fail_at`` (an index into ``assertions``),
    that assertion is made false."""
    rng = rng or random.SystemRandom()
    copied = _copy.deepcopy(function)
    copied.name = name
    if fail_at is not None:
        spots = assertions(copied)
        where = spots[fail_at % len(spots)]
        copied.body[where] = ast.copy_location(_mutate(copied.body[where], rng), copied.body[where])
    ast.fix_missing_locations(copied)
    return copied


def compile_function(function, filename, namespace):
    """The function object of ``function`` (a def node), defined in ``namespace``'s globals."""
    module = ast.Module(body=[function], type_ignores=[])
    local = {}
    exec(compile(module, filename, "exec"), namespace, local)
    return local[function.name]
