"""What keeps a worker's memory flat in the page count (docs/speed.md, Memory), checked on the
real embedded models: pages in flight bounded by the models' batch caps, the ONNX arena shrunk
after each call without changing what the models answer, the C heap's free pages handed back.
Resident memory itself is measured by `tablesight bench memory`, not here: on a shared host a
timed or RSS-bound test would be noise.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from models.embedded.weights import default_dir, fetch
from worker.heap import release_freed_memory
from worker.pipeline import load_stages
from worker.pipeline.pages import group_pages
from worker.settings import Settings


@pytest.fixture(scope="module")
def cpu_stages():
    fetch(default_dir(None))  # no-op when present with the right hashes (what .ci/setup leaves)
    settings = Settings(_env_file=None, engine="embedded", device="cpu", torch_threads=1)
    return settings, load_stages(settings, engine="embedded")


def test_on_cpu_a_group_holds_as_many_pages_as_the_models_take_at_once(cpu_stages) -> None:
    settings, stages = cpu_stages
    assert settings.models.detection_batch_size == 4
    assert stages.detector.max_batch == 1 and stages.structure.max_batch == 1
    assert group_pages(stages, settings) == 1  # a 50-page document then has as many pages in flight as a 2-page one
    raised = settings.replace(cpu_batch_size=3)
    stages.structure.max_batch = 3
    try:
        assert group_pages(stages, raised) == 3  # the larger cap: the structure model batches a group's crops
        stages.structure.max_batch = None  # as on a GPU: the structure model batches, so groups stay
        assert group_pages(stages, settings) == 4
    finally:
        stages.structure.max_batch = 1


def test_arena_shrinking_call_answers_as_the_plain_call(cpu_stages) -> None:
    from models.embedded.layout import preprocess
    from models.embedded.session import run
    from worker.devtools.samples import financial_table, make_page

    _, stages = cpu_stages
    page = make_page([financial_table()], title="Report", seed=3).image
    session = stages.detector.session
    feeds = {"image": preprocess(page, stages.detector.bgr)}
    plain = session.run(None, feeds)
    shrunk = run(session, feeds)
    assert len(plain) == len(shrunk)
    for a, b in zip(plain, shrunk):
        np.testing.assert_array_equal(a, b)
    found = stages.detector.predict([page])[0]
    assert found and found[0]["label"] == "table" and found[0]["score"] > 0.5


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_free_heap_pages_are_handed_back_on_glibc() -> None:
    assert release_freed_memory() is True
