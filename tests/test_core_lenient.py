"""Lenient replay: one bad object or word is repaired or dropped and counted, never the table."""

from __future__ import annotations

import math

from gridgen import expected_grid, oracle_objects
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.reconstruct import reconstruct
from worker.core.replay import ReplayError, parse_payload, payload
from worker.core.sanitise import sanitise
from worker.core.types import RulingLines, StructureObject, Word


def test_each_kind_of_bad_box_is_fixed_and_counted():
    objs = [
        StructureObject("table row", 0.9, (-6.4, 0, 50, 10)),  # clipped
        StructureObject("table row", 0.9, (0, 0, 50, 10.5)),  # clipped
        StructureObject("table row", 0.9, (0, math.nan, 50, 10)),  # dropped
        StructureObject("table row", 0.9, (10, 0, 5, 10)),  # inverted: dropped
        StructureObject("table row", 0.9, (5, 5, 5, 10)),  # zero area: dropped
        StructureObject("table rows", 0.9, (0, 0, 1, 1)),  # unknown label: ignored
        StructureObject("table", 1.3, (0, 0, 50, 10)),  # score clamped
        StructureObject("table column", 0.9, (60, 20, 70, 30)),  # outside: dropped
    ]
    words = [Word("a", (-1, 1, 4, 4)), Word("b", (1, 1, math.inf, 4))]
    out = sanitise(objs, words, (50.0, 10.0))
    assert [o.bbox for o in out.objects] == [(0, 0, 50, 10), (0, 0, 50, 10), (0, 0, 50, 10)]
    assert out.objects[-1].score == 1.0
    assert [w.bbox for w in out.words] == [(0, 1, 4, 4)]
    assert sorted(out.repairs) == sorted(
        [
            "2 object box(es) reaching outside the image clipped to it",
            "1 object(s) with a non-finite box dropped",
            "1 object(s) with an inverted box dropped",
            "1 object(s) with a zero-area box dropped",
            "1 object(s) with an unknown label ignored",
            "1 object score(s) outside [0, 1] clamped",
            "1 object(s) wholly outside the image dropped",
            "1 word box(es) reaching outside the image clipped to it",
            "1 word(s) with a non-finite box dropped",
        ]
    )


def test_payload_with_bad_values_parses_and_rebuilds_with_repairs():
    objs, words, size = oracle_objects(3, 2, [(0, 0, 1, 2)], header_rows=1)
    raw = payload(size, objs, words, lines=RulingLines((30.0,), (80.0,)))
    raw["objects"].append({"label": "table row", "score": 0.9, "bbox": [-6.4, 0, 10, 30]})
    raw["objects"].append({"label": "table spanning cell", "score": 0.7, "bbox": [10, 0, 5, 30]})
    raw["objects"].append({"label": "something new", "score": 0.7, "bbox": [1, 1, 5, 5]})
    item = parse_payload(raw)
    assert item.lines == RulingLines((30.0,), (80.0,))
    grid = reconstruct(item.objects, item.words, item.image_size, lines=item.lines)
    assert grid.shape_signature() == expected_grid(3, 2, [(0, 0, 1, 2)])
    assert any("clipped" in r for r in grid.repairs)
    assert any("inverted" in r for r in grid.repairs)
    assert any("unknown label" in r for r in grid.repairs)


def test_only_what_is_not_a_payload_fails():
    for bad in (
        [],
        {},
        {"objects": "x"},
        {"objects": [{"label": "table row", "score": "high", "bbox": [0, 0, 1, 1]}]},
        {"objects": [{"label": "table row", "score": 0.5, "bbox": [0, 0, 1]}]},
        {"objects": [], "lines": {"h": ["a"]}},
    ):
        try:
            parse_payload(bad)
        except ReplayError as exc:
            assert "\n" not in str(exc)
        else:
            raise AssertionError(f"accepted {bad!r}")


finite_or_not = st.one_of(st.floats(-50, 400), st.just(math.nan), st.just(math.inf), st.just(-math.inf))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["table row", "table column", "table spanning cell", "table", "bogus"]),
            st.floats(-1, 2),
            st.tuples(finite_or_not, finite_or_not, finite_or_not, finite_or_not),
        ),
        max_size=12,
    )
)
def test_any_extra_objects_never_raise_and_keep_a_partition(extra):
    objs, words, size = oracle_objects(3, 3, [(1, 1, 2, 2)], header_rows=1)
    junk = [StructureObject(label, score, box) for label, score, box in extra]
    grid = reconstruct(objs + junk, words, size)
    grid.owner_map()
    assert grid.n_rows >= 1 and grid.n_cols >= 1
