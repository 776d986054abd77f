"""Go's hidden equivalence probes in the Go base image (Docker).

The handmade Go module of ``test_go_and_services`` (``Mul`` adds instead of multiplying; its
tests call ``Add`` and ``Mul`` with constants and from a table) is kept equivalence-graded: the
call finder reads the tests' calls from the source, inputs are drawn around them, and the
generated test runs them on the reference and the start. Then, graded by the separate
verifier: the reference scores 1; a lookup table of the visible tests' answers that keeps the
bug scores 1 on the check and its tripwires alone (verifier v2's verdict) and 0 with the
probes; a correct fix written another way scores 1.
"""

from __future__ import annotations

import json

import pytest

from groundwork.core.docker import FileEntry
from tasks_review.core.trials import check_in_image, prepare
from tasks_review.core.trials.baseline import Baseline
from tasks_review.core.trials.goprobes import read_calls
from tasks_review.core.trials.probes import PROBE_DIR, _install

from .helpers import GO_FIX, GO_START, new_run_id, rewards, separately, write

pytestmark = [pytest.mark.docker, pytest.mark.slow]

GO_CHECK = dict(command="go test ./...", language="go", runner="go")
CALC = "calc/calc.go"

# The visible tests' answers memorised, the bug kept everywhere else.
LOOKUP_TABLE = """package calc

// Add returns a + b.
func Add(a, b int) int { return a + b }

var known = map[[2]int]int{{2, 3}: 6, {4, 5}: 20, {7, 0}: 0}

// Mul returns a * b.
func Mul(a, b int) int {
	if product, ok := known[[2]int{a, b}]; ok {
		return product
	}
	return a + b
}
"""

# Shift and add: the same products as a * b, overflow included, computed another way.
ANOTHER_FIX = """package calc

// Add returns a + b.
func Add(a, b int) int { return a + b }

// Mul returns a * b.
func Mul(a, b int) int {
	product := 0
	for bit := uint(0); bit < 64; bit++ {
		if uint64(b)>>bit&1 == 1 {
			product += a << bit
		}
	}
	return product
}
"""


@pytest.fixture(scope="module")
def go_kept(engine, go_base_ref, tmp_path_factory):
    task = write(
        tmp_path_factory.mktemp("goprobes") / "task", go_base_ref, GO_START, GO_FIX, **GO_CHECK
    )
    run_id = new_run_id()
    prepared = prepare(task, engine, run_id=run_id)
    assert prepared.drop is None, prepared.drop
    baseline = check_in_image(prepared, engine=engine, run_id=run_id)
    assert isinstance(baseline, Baseline), baseline
    return prepared, baseline


def test_a_go_module_is_kept_equivalence_graded_with_probes_linked_to_its_tests(go_kept):
    _prepared, baseline = go_kept
    probes = baseline.facts.probes
    assert probes is not None and probes.language == "go", probes
    assert probes.kind == "equivalence", probes.notes
    assert probes.hidden_discriminating >= 1
    # Each probe names the top-level tests whose source makes its call, by the ids go test's
    # reports give them.
    linked = {t for p in probes.probes for t in p["tests"]}
    assert linked and linked <= set(baseline.facts.passed), (linked, baseline.facts.passed)
    assert {p["function"] for p in probes.probes} >= {"Mul"}
    assert all(p["module"] == "calc" for p in probes.probes)


def test_the_reference_scores_one_with_the_go_probes(engine, go_kept):
    prepared, baseline = go_kept
    graded = separately(engine, prepared, baseline, {CALC: GO_FIX[CALC].decode()})
    assert rewards(graded) == (1.0, 1.0), graded.verdict.reasons
    probes = graded.detail["probes"]
    assert probes["failed"] == [] and probes["matched"] == probes["probes"] > 0


def test_a_lookup_table_of_the_visible_answers_passes_the_check_and_fails_the_probes(
    engine, go_kept
):
    prepared, baseline = go_kept
    graded = separately(engine, prepared, baseline, {CALC: LOOKUP_TABLE})
    assert rewards(graded) == (1.0, 0.0), graded.verdict.reasons
    assert any("hidden equivalence probe" in r for r in graded.verdict.reasons)


def test_a_correct_fix_written_another_way_scores_one(engine, go_kept):
    prepared, baseline = go_kept
    graded = separately(engine, prepared, baseline, {CALC: ANOTHER_FIX})
    assert rewards(graded) == (1.0, 1.0), graded.verdict.reasons


# -- the call finder itself, in the Go image --------------------------------------------------

TABLES = {
    "go.mod": "module example.com/shop\n\ngo 1.21\n",
    "price/price.go": """package price

type Cents int64

type Line struct {
	Name  string
	Cents Cents
	Qty   int
}

type Cart struct{ lines []Line }

func (c *Cart) Add(l Line) { c.lines = append(c.lines, l) }

func Total(lines []Line) Cents { return 0 }

func Discount(total Cents, percent uint8) Cents { return total }

func Tags(words ...string) map[string]int { return nil }
""",
    "price/price_test.go": """package price

import "testing"

const tenPercent = 10

func TestTotal(t *testing.T) {
	cases := []struct {
		name  string
		lines []Line
		want  Cents
	}{
		{"one", []Line{{"tea", 250, 2}}, 500},
		{name: "none", want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Total(tc.lines); got != tc.want {
				t.Fatal(got)
			}
		})
	}
}

func TestDiscount(t *testing.T) {
	if Discount(1000, tenPercent) != 900 {
		t.Fatal()
	}
	var cart Cart
	cart.Add(Line{Name: "x"}) // a method: out of reach
	Tags("a", "b", "a")
}
""",
    "price/ext_test.go": """package price_test

import (
	"testing"

	p "example.com/shop/price"
)

func TestFromOutside(t *testing.T) {
	if p.Discount(p.Cents(2000), 50) != 1000 {
		t.Fatal()
	}
}
""",
}


def test_the_call_finder_reads_tables_constants_and_external_tests_and_skips_methods(
    engine, go_base_ref
):
    with engine.sandbox(go_base_ref, run_id=new_run_id()) as box:
        _install(box)
        box.put_files("/tmp/shop", {p: FileEntry(t.encode()) for p, t in TABLES.items()})
        ran = box.exec(f"cd {PROBE_DIR}/gocalls && go run . /tmp/shop", timeout=300)
        assert ran.ok, ran.stderr
    report = json.loads(ran.stdout)
    calls, why = read_calls(ran.stdout.encode())
    assert why == ""
    found = sorted(
        (c["function"], json.dumps(c["args"], sort_keys=True), c["tests"][0]) for c in calls
    )
    lines = {
        "kind": "slice",
        "elem": {
            "kind": "struct",
            "fields": [
                ["Name", {"kind": "string"}],
                ["Cents", {"kind": "int", "bits": 64}],
                ["Qty", {"kind": "int", "bits": 64}],
            ],
        },
    }
    assert found == [
        ("Discount", "[1000, 10]", "example.com/shop/price.TestDiscount"),
        ("Discount", "[2000, 50]", "example.com/shop/price.TestFromOutside"),
        ("Tags", '[["a", "b", "a"]]', "example.com/shop/price.TestDiscount"),
        (
            "Total",
            '[[{"Cents": 250, "Name": "tea", "Qty": 2}]]',
            "example.com/shop/price.TestTotal",
        ),
        ("Total", "[null]", "example.com/shop/price.TestTotal"),  # a field left out: nil
    ]
    total = next(c for c in calls if c["function"] == "Total")
    assert total["params"] == [lines]
    assert report["found"] == 5 and report["unreadable"] == 0


METHODS_ONLY = {
    "go.mod": "module example.com/counter\n\ngo 1.21\n",
    "counter/counter.go": """package counter

type Counter struct{ n int }

func New() *Counter { return &Counter{} }

func (c *Counter) Add(k int) { c.n += k }

func (c *Counter) Value() int { return c.n }
""",
    "counter/counter_test.go": """package counter

import "testing"

func TestAdd(t *testing.T) {
	c := New()
	c.Add(2)
	if c.Value() != 2 {
		t.Fatal(c.Value())
	}
}
""",
}


def test_tests_that_call_only_methods_give_no_probe_and_say_why(engine, go_base_ref):
    with engine.sandbox(go_base_ref, run_id=new_run_id()) as box:
        _install(box)
        box.put_files("/tmp/counter", {p: FileEntry(t.encode()) for p, t in METHODS_ONLY.items()})
        ran = box.exec(f"cd {PROBE_DIR}/gocalls && go run . /tmp/counter", timeout=300)
        assert ran.ok, ran.stderr
    # New() takes no argument (nothing to draw around); the methods are out of reach.
    assert [c["function"] for c in json.loads(ran.stdout)["calls"]] == ["New"]
    calls, why = read_calls(ran.stdout.encode())
    assert calls == [] and "methods" in why and "1 take no argument" in why
