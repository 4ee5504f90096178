"""Shared test set-up: make tests/ importable for small helpers such as gridgen."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402 - after the path set-up above, which the test helpers need


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny random Table Transformers saved to disk, loaded by tests through the real code path.

    `same_table` is a detector whose 15 queries all predict one identical, confident `table`
    (identical query embeddings, a strong `table` logit): the pipeline must make one table of it.
    """
    import torch
    from transformers import TableTransformerForObjectDetection

    from models.random_init import build_random_model

    root = tmp_path_factory.mktemp("tiny-models")
    out = {
        "detection": build_random_model("detection", root / "detection"),
        "structure": build_random_model("structure", root / "structure"),
        "structure_legacy": build_random_model("structure", root / "structure-legacy", legacy_config=True),
    }
    model = TableTransformerForObjectDetection.from_pretrained(out["detection"])
    with torch.no_grad():
        q = model.model.query_position_embeddings.weight
        q[:] = q[0:1].clone()
        bias = model.class_labels_classifier.bias
        bias[:] = -10.0
        bias[0] = 10.0  # `table`
    model.save_pretrained(root / "same-table")
    out["same_table"] = root / "same-table"
    return out


@pytest.fixture(autouse=True)
def outputs_follow_the_contract(request: pytest.FixtureRequest):  # noqa: ANN201 - a generator fixture
    """After every test that used tmp_path: each manifest, page, table and vision-read file it
    wrote there must validate against the committed JSON Schemas (docs/schema/)."""
    if "tmp_path" not in request.fixturenames:
        yield
        return
    root = request.getfixturevalue("tmp_path")  # set up first, so it is torn down after this check
    yield
    from contract_check import contract_problems

    _, problems = contract_problems(root)
    assert not problems, "stored files break the output contract:\n" + "\n".join(problems[:20])
