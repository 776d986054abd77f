"""Display helpers shared by the stepper and the review desk: text or binary, diffs within one set
of limits, escaped highlighting, lexers by file name, and file trees in a person's order."""

from __future__ import annotations

from trajectories.display import (
    BINARY_SNIFF_BYTES,
    FIELD_CHARS,
    JSON,
    LIST_ITEMS,
    MAX_DIFF_BYTES,
    MAX_DIFF_CHARS,
    MAX_DIFF_LINES,
    MAX_HIGHLIGHT_CHARS,
    MORE_CHARS,
    TEXT,
    Fields,
    bytes_diff,
    capped,
    collapsed,
    decoded,
    highlighted,
    lexer_for,
    tree_nodes,
)


def test_content_is_text_unless_it_has_a_nul_byte_early_or_is_not_utf8():
    assert decoded("naïve\n".encode()) == "naïve\n"
    assert decoded(b"a\0b") is None
    assert decoded(b"\xff\xfe not utf-8") is None
    late_nul = b"x" * BINARY_SNIFF_BYTES + b"\0"
    assert decoded(late_nul) == late_nul.decode()


def test_a_diff_counts_its_lines_and_highlights_them_without_the_file_header():
    view = bytes_diff("a.py", "modified", b"one\ntwo\n", b"one\nthree\nfour\n", note="Seen.")
    assert (view.path, view.change, view.note) == ("a.py", "modified", "Seen.")
    assert (view.added, view.removed) == (2, 1)
    assert '<span class="gi">+three</span>' in view.html and "@@" in view.html
    assert "---" not in view.html and "+++" not in view.html


def test_a_missing_final_newline_is_said_as_git_says_it():
    view = bytes_diff("a.txt", "modified", b"a\n", b"b")
    assert "\\ No newline at end of file" in view.html


def test_a_diff_says_why_it_is_not_shown():
    missing = bytes_diff("a", "modified", None, b"x")
    assert missing.html is None and "missing from the blob store" in missing.note
    big = bytes_diff("a", "modified", b"x" * (MAX_DIFF_BYTES + 1), b"")
    assert big.html is None and big.note == f"Too large to diff ({MAX_DIFF_BYTES + 1} → 0 bytes)."
    binary = bytes_diff("a", "added", b"", b"\0\1", note="never said without a diff")
    assert binary.html is None and binary.note == "Binary file (0 → 2 bytes)."
    same = bytes_diff("a", "modified", b"x\n", b"x\n")
    assert same.html is None and same.note == "Same content."


def test_a_long_diff_is_cut_and_says_how_much_was_left_out():
    new = "".join(f"line {i}\n" for i in range(MAX_DIFF_LINES + 50)).encode()
    view = bytes_diff("a", "added", b"", new)
    assert view.added == MAX_DIFF_LINES + 50  # the counts are of the whole diff
    assert "more diff lines not shown" in view.html
    assert f"line {MAX_DIFF_LINES + 49}" not in view.html


def test_a_diff_of_a_few_very_long_lines_is_cut_by_characters_too():
    assert 2 * 9_002 <= MAX_DIFF_CHARS < 3 * 9_002  # a "+" line of 9,000 x is 9,002 characters
    new = ("x" * 9_000 + "\n").encode() * 40
    view = bytes_diff("a", "added", b"", new)
    assert view.added == 40 and view.html.count("x" * 9_000) == 2
    assert f"… {40 * 9_002 - 2 * 9_002} more characters of this diff not shown" in view.html


def test_highlighting_escapes_and_falls_back_to_plain_text_when_long():
    html = highlighted("<script>alert(1)</script>", lexer_for("page.html"))
    assert "<script>" not in html and "&lt;" in html
    long = "x = 1\n" * (MAX_HIGHLIGHT_CHARS // 6 + 1)
    assert '<span class="n">x</span>' in highlighted("x = 1\n", lexer_for("a.py"))
    assert '<span class="n">x</span>' not in highlighted(long, lexer_for("a.py"))


def test_lexers_are_chosen_by_file_name_and_plain_text_otherwise():
    assert lexer_for("src/app.py").name == "Python"
    assert lexer_for("Makefile").name == "Makefile"
    assert lexer_for("notes.unknown-extension") is TEXT


def test_a_tree_lists_each_directory_once_before_its_files_in_natural_order():
    paths = ["src/mod_10.py", "README.md", "src/lib/x.py", "src/mod_2.py", "src/**", "a/B.py"]
    rows = [(n.depth, n.name, n.is_dir) for n in tree_nodes(paths)]
    assert rows == [
        (0, "a", True),
        (1, "B.py", False),
        (0, "src", True),
        (1, "**", False),
        (1, "lib", True),
        (2, "x.py", False),
        (1, "mod_2.py", False),
        (1, "mod_10.py", False),
        (0, "README.md", False),
    ]
    assert [n.path for n in tree_nodes(["src/lib/x.py"])] == ["src", "src/lib", "src/lib/x.py"]


# -- caps ------------------------------------------------------------------------------------------


def test_a_field_shows_its_first_characters_and_knows_how_many_are_left():
    part = capped("<b>" * 5_000, None, key="out")
    assert (part.key, part.end, part.total, part.rest) == ("out", FIELD_CHARS, 15_000, 5_000)
    assert "<b>" not in part.html and part.html.count("&lt;b&gt;") == FIELD_CHARS // 3
    small = capped("ok", TEXT)
    assert small.rest == 0 and small.html == highlighted("ok", TEXT)  # exactly as before
    assert capped("", None).html == "" and capped("", TEXT).html == highlighted("", TEXT)


def test_a_page_budget_of_html_is_shared_by_its_fields_and_more_answers_the_next_slice():
    fields = Fields(budget=FIELD_CHARS + 5_000)  # bytes of HTML: an escaped "y" is one byte
    first, second, third = (fields.add(k, "y" * 80_000, None) for k in "abc")
    assert (first.end, second.end, third.end) == (FIELD_CHARS, 5_000, 0)  # halved to fit
    assert third.html == "" and third.rest == 80_000
    more = fields.more("c", 0)
    assert more is not None and (more.end, more.rest) == (MORE_CHARS, 80_000 - MORE_CHARS)
    assert fields.more("c", 10**9) is not None and fields.more("c", 10**9).rest == 0
    assert fields.more("d", 0) is None


def test_a_part_whose_highlighting_outgrows_its_share_is_halved_until_it_fits():
    code = "x = 1\n" * 10_000
    part = capped(code, lexer_for("a.py"), chars=60_000, html_bytes=100_000, numbered=True)
    assert len(part.html) <= 100_000 and part.end % 6 == 0 and 0 < part.end < 60_000
    later = capped(code, lexer_for("a.py"), start=part.end, chars=6, numbered=True)
    assert f'<span class="linenos">{part.end // 6 + 1}</span>' in later.html


def test_nested_json_is_collapsed_past_its_depth_and_long_lists_are_counted():
    deep = [[[[["bottom"]]]], {"k": {"j": 1, "i": 2}}]
    assert collapsed(deep, depth=3) == [[["[… 1 item]"]], {"k": {"j": 1, "i": 2}}]
    assert collapsed(deep, depth=2) == [["[… 1 item]"], {"k": "{… 2 keys}"}]
    wide = collapsed(list(range(LIST_ITEMS + 7)))
    assert len(wide) == LIST_ITEMS + 1 and wide[-1] == "… 7 more items"
    keys = collapsed({str(i): i for i in range(LIST_ITEMS + 2)})
    assert keys["…"] == "2 more keys"
    assert capped("[1, 2]", JSON).rest == 0
