"""docker/k8s/: every overlay renders (tests/k8s_render.py) and validates offline, strictly,
against the Kubernetes schemas (PyPI's kubernetes-validate) and KEDA's own CRD schemas
(vendored in docker/k8s/schemas/keda/), and keeps the invariants the guide promises: the GPU
worker asks for a GPU on GPU nodes with one process, stopping pods outlive a page, the KEDA
triggers read the lists Celery really writes, and no secret value is written down."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from k8s_render import containers, pod_spec, render

from worker.settings import Settings

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "docker" / "k8s"
OVERLAYS = ("cpu", "gpu")
KEDA_CRDS = K8S / "schemas" / "keda"
KUBERNETES_VERSION = "1.33"  # the oldest release still supported upstream when this was written
# keys of the Redis scaler's trigger metadata (kedacore/keda v2.20.2, pkg/scalers/redis_scaler.go)
REDIS_TRIGGER_KEYS = {
    "address",
    "host",
    "port",
    "databaseIndex",
    "listName",
    "listLength",
    "activationListLength",
    "enableTLS",
    "unsafeSsl",
    "username",
}
SECRET_NAME = re.compile(r"PASSWORD|SECRET|TOKEN|API_KEY|ACCESS_KEY", re.I)


@pytest.fixture(scope="module", params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    return request.param, render(K8S / "overlays" / request.param)


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def worker_args(deployment: dict[str, Any]) -> list[str]:
    return pod_spec(deployment)["containers"][0]["args"]


def option(args: list[str], name: str) -> str:
    assert name in args, f"{name} missing from {shlex.join(args)}"
    return args[args.index(name) + 1]


def workers(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {n: d for n, d in by_kind(docs, "Deployment").items() if worker_args(d)[:2] == ["tablesight", "worker"]}


def container_settings(docs: list[dict[str, Any]], deployment: dict[str, Any]) -> Settings:
    """The Settings a container starts with: the ConfigMap, then its literal env values."""
    c = pod_spec(deployment)["containers"][0]
    env: dict[str, str] = {}
    for src in c.get("envFrom", []):
        env.update(by_kind(docs, "ConfigMap")[src["configMapRef"]["name"]]["data"])
    env.update({e["name"]: e["value"] for e in c.get("env", []) if "value" in e})
    values = {k[len("TABLESIGHT_") :].lower(): v for k, v in env.items() if k.startswith("TABLESIGHT_")}
    values.pop("broker_url", None)  # holds $(REDIS_PASSWORD), expanded by the kubelet
    return Settings(_env_file=None, **values)


def memory_bytes(quantity: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 10**3, "M": 10**6, "G": 10**9}
    m = re.fullmatch(r"(\d+)([KMG]i?)?", quantity)
    assert m, quantity
    return int(m.group(1)) * units.get(m.group(2) or "", 1)


# ---- validation ---------------------------------------------------------------------------


def test_overlays_validate_against_the_kubernetes_schemas(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    import kubernetes_validate

    name, docs = overlay
    kinds = {d["kind"] for d in docs}
    assert {"Namespace", "ConfigMap", "Service", "StatefulSet", "Deployment", "PodDisruptionBudget"} <= kinds
    checked = 0
    for d in docs:
        if d["apiVersion"].startswith("keda.sh/"):
            continue
        kubernetes_validate.validate(d, KUBERNETES_VERSION, strict=True)  # raises on any error
        checked += 1
    assert checked >= 10, name
    # the schemas are the package's own files: nothing is fetched
    assert KUBERNETES_VERSION <= kubernetes_validate.utils.latest_version()


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """Reject unknown fields, as `kubectl apply --validate=strict` does for custom resources."""
    if isinstance(schema, dict):
        schema = {k: _strict(v) for k, v in schema.items()}
        if (
            schema.get("type") == "object"
            and "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            schema["additionalProperties"] = False
    elif isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def keda_validators() -> dict[str, Any]:
    from jsonschema import Draft7Validator

    out = {}
    for path in sorted(KEDA_CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        for version in crd["spec"]["versions"]:
            api = f"{crd['spec']['group']}/{version['name']}"
            schema = _strict(version["schema"]["openAPIV3Schema"])
            out[(api, crd["spec"]["names"]["kind"])] = Draft7Validator(schema)
    return out


def test_keda_objects_validate_against_kedas_crds(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    validators = keda_validators()
    assert ("keda.sh/v1alpha1", "ScaledObject") in validators
    keda = [d for d in overlay[1] if d["apiVersion"].startswith("keda.sh/")]
    assert {d["kind"] for d in keda} == {"ScaledObject", "TriggerAuthentication"}
    for d in keda:
        errors = [
            f"{'/'.join(map(str, e.path))}: {e.message}"
            for e in validators[(d["apiVersion"], d["kind"])].iter_errors(d)
        ]
        assert not errors, (d["metadata"]["name"], errors)


def test_the_strict_checks_catch_mistakes() -> None:
    """The validators used above reject a misspelt field, in both schema sets."""
    import kubernetes_validate

    docs = render(K8S / "overlays" / "gpu")
    so = dict(by_kind(docs, "ScaledObject")["tablesight-pages-gpu"])
    so["spec"] = {**so["spec"], "minReplicas": 0}
    assert list(keda_validators()[("keda.sh/v1alpha1", "ScaledObject")].iter_errors(so))
    pdb = by_kind(docs, "PodDisruptionBudget")["tablesight-pages-gpu"]
    bad = {**pdb, "spec": {**pdb["spec"], "maxUnavailabe": 1}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBERNETES_VERSION, strict=True)


# ---- invariants ---------------------------------------------------------------------------


def test_gpu_worker_gets_one_gpu_on_gpu_nodes_with_one_process() -> None:
    docs = render(K8S / "overlays" / "gpu")
    gpu = workers(docs)["tablesight-pages-gpu"]
    spec = pod_spec(gpu)
    c = spec["containers"][0]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 1 and c["resources"]["requests"]["nvidia.com/gpu"] == 1
    assert spec["nodeSelector"] and any(t["key"] == "nvidia.com/gpu" for t in spec["tolerations"])
    args = worker_args(gpu)
    assert option(args, "--queues") == "pages,vision" and option(args, "--concurrency") == "1"
    assert c["image"].endswith(":gpu")
    assert container_settings(docs, gpu).models.device == "cuda"
    # no other workload asks for a GPU, and the CPU overlay has none at all
    assert [n for n, d in by_kind(docs, "Deployment").items() if "nvidia.com/gpu" in str(d)] == ["tablesight-pages-gpu"]
    assert "nvidia.com/gpu" not in str(render(K8S / "overlays" / "cpu"))


def test_every_worker_names_its_queues(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    name, docs = overlay
    queues = {n: option(worker_args(d), "--queues") for n, d in workers(docs).items()}
    assert queues["tablesight-docs"] == "docs"
    assert queues[f"tablesight-pages-{name}"] == "pages,vision"
    s = Settings(_env_file=None)
    consumed = {q for qs in queues.values() for q in qs.split(",")}
    assert consumed == {s.queue.docs, s.queue.pages, s.queue.vision}  # every queue has a consumer


def test_stopping_pods_outlive_a_page(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    """Grace period > the page's hard time limit (and the vision task's); the settings the
    containers start with pass the settings' own validator (VISIBILITY_TIMEOUT > TASK_TIME_LIMIT
    + RETRY_BACKOFF_MAX); and KEDA waits longer than a page before it scales to zero."""
    docs = overlay[1]
    objects = by_kind(docs, "ScaledObject")
    for name, d in workers(docs).items():
        s = container_settings(docs, d)  # raises if the validator refuses them
        grace = pod_spec(d)["terminationGracePeriodSeconds"]
        assert grace > s.queue.task_time_limit, name
        assert grace > (s.vision.task_time_limit or s.queue.task_time_limit), name
        assert s.queue.visibility_timeout > s.queue.task_time_limit + s.queue.retry_backoff_max
        so = objects[name]["spec"]
        assert so["cooldownPeriod"] >= grace
        down = so["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
        assert down["stabilizationWindowSeconds"] >= s.queue.task_time_limit
    defaults = Settings(_env_file=None)  # the values the ConfigMap restates are the real defaults
    config = by_kind(docs, "ConfigMap")["tablesight-config"]["data"]
    for field in ("task_soft_time_limit", "task_time_limit", "retry_backoff_max", "visibility_timeout"):
        assert float(config[f"TABLESIGHT_{field.upper()}"]) == getattr(defaults.queue, field), field


def test_memory_limits_leave_room_for_the_recycle_threshold(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    docs = overlay[1]
    for name, d in workers(docs).items():
        res = pod_spec(d)["containers"][0]["resources"]
        request, limit = memory_bytes(res["requests"]["memory"]), memory_bytes(res["limits"]["memory"])
        child = container_settings(docs, d).queue.worker_max_memory_per_child * 1024
        assert request <= limit and child + 256 * 2**20 <= limit, name  # + the main process and tools
    page_worker = workers(docs)[f"tablesight-pages-{overlay[0]}"]
    # at least the measured ~2 GiB peak of one pool process with both models (README)
    assert memory_bytes(pod_spec(page_worker)["containers"][0]["resources"]["requests"]["memory"]) >= 2 * 2**30


def test_probes_and_disruption_budgets(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    docs = overlay[1]
    pdbs = by_kind(docs, "PodDisruptionBudget")
    for name, d in by_kind(docs, "Deployment").items():
        c = pod_spec(d)["containers"][0]
        assert any(
            p["spec"]["selector"]["matchLabels"].items() <= d["spec"]["template"]["metadata"]["labels"].items()
            for p in pdbs.values()
        ), name
        if name in workers(docs):
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                assert c[probe]["exec"]["command"][:2] == ["tablesight", "worker-health"], (name, probe)
                timeout = float(option(c[probe]["exec"]["command"], "--timeout"))
                assert c[probe]["timeoutSeconds"] > timeout
    api = by_kind(docs, "Deployment")["tablesight-api"]
    c = pod_spec(api)["containers"][0]
    assert c["args"] == ["tablesight", "serve", "--host", "0.0.0.0", "--port", "8080"]
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz" and c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    tokens = next(e for e in c["env"] if e["name"] == "TABLESIGHT_API_TOKENS")
    assert tokens["valueFrom"]["secretKeyRef"]["name"] == "tablesight"
    redis = by_kind(docs, "StatefulSet")["redis"]
    args = pod_spec(redis)["containers"][0]["args"]
    assert option(args, "--appendonly") == "yes" and option(args, "--requirepass") == "$(REDIS_PASSWORD)"
    assert redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"


def test_keda_triggers_name_the_queues_of_their_workers(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    name, docs = overlay
    objects = by_kind(docs, "ScaledObject")
    auths = by_kind(docs, "TriggerAuthentication")
    services = by_kind(docs, "Service")
    assert set(objects) == set(workers(docs))  # every worker is scaled, and only workers
    for target, so in objects.items():
        assert so["spec"]["scaleTargetRef"]["name"] == target
        lists = []
        for t in so["spec"]["triggers"]:
            assert t["type"] == "redis" and set(t["metadata"]) <= REDIS_TRIGGER_KEYS, t
            host = t["metadata"]["address"].split(":")[0]
            assert host.split(".")[0] in services and host.endswith(".tablesight.svc.cluster.local")
            assert int(t["metadata"]["listLength"]) >= 1
            auth = auths[t["authenticationRef"]["name"]]["spec"]["secretTargetRef"]
            assert {(a["parameter"], a["name"], a["key"]) for a in auth} == {
                ("password", "tablesight", "redis-password")
            }
            lists.append(t["metadata"]["listName"])
        assert ",".join(lists) == option(worker_args(by_kind(docs, "Deployment")[target]), "--queues")
    assert objects[f"tablesight-pages-{name}"]["spec"]["minReplicaCount"] == (0 if name == "gpu" else 1)


def test_no_secret_value_is_written_down(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    docs = overlay[1]
    assert "Secret" not in {d["kind"] for d in docs}  # made by hand (docker/README.md)
    for key, value in by_kind(docs, "ConfigMap")["tablesight-config"]["data"].items():
        assert not SECRET_NAME.search(key), key
        assert "@" not in value and "password" not in value.lower(), key
    for c in containers(docs):
        for e in c.get("env", []):
            if SECRET_NAME.search(e["name"]):
                assert set(e) == {"name", "valueFrom"} and "secretKeyRef" in e["valueFrom"], e
            for url in re.findall(r"redis://[^\s]*", e.get("value", "")):
                assert url.startswith("redis://:$(REDIS_PASSWORD)@"), url
                names = [x["name"] for x in c["env"]]
                assert names.index("REDIS_PASSWORD") < names.index(e["name"])  # $(...) needs it defined first
        for arg in c.get("args", []) + c.get("command", []):
            assert "://" not in arg or "@" not in arg, arg
    for so in by_kind(docs, "ScaledObject").values():
        for t in so["spec"]["triggers"]:
            assert "password" not in t["metadata"]


@pytest.mark.slow
def test_keda_list_names_are_the_lists_celery_writes(tmp_path: Path) -> None:
    """A task sent to each queue lands in the Redis list that the triggers name (Celery's Redis
    transport: one list per queue, named after it, for messages without a priority; kombu puts
    prioritised ones in `<queue>\\x06\\x16<step>` lists, which we never send)."""
    from queue_fixtures import RedisServer

    from worker.queue.app import celery_config, make_app

    names = {
        t["metadata"]["listName"]
        for o in OVERLAYS
        for so in by_kind(render(K8S / "overlays" / o), "ScaledObject").values()
        for t in so["spec"]["triggers"]
    }
    server = RedisServer(tmp_path / "redis").start()
    settings = Settings(_env_file=None, broker_url=server.url(0))
    assert "task_default_priority" not in celery_config(settings)
    app = make_app(settings)
    try:
        import redis

        r = redis.Redis.from_url(server.url(0))
        for queue in sorted(names):
            app.send_task("tablesight.k8s-check", args=(), queue=queue)
            assert r.llen(queue) == 1, queue
        assert not [k for k in r.keys("*\x06\x16*")]
        r.close()
    finally:
        app.close()
        server.stop()
    assert names == {"docs", "pages", "vision"}


def test_the_renderer_does_what_it_claims_and_refuses_the_rest(tmp_path: Path) -> None:
    from k8s_render import RenderError

    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("namespace: ns\nresources: [app.yaml]\n")
    (base / "app.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n"
        "      containers: [{name: c, image: 'app:cpu'}, {name: d, image: 'other:1'}]\n"
    )
    over = tmp_path / "over"
    over.mkdir()
    (over / "kustomization.yaml").write_text(
        "resources: [../base]\nimages: [{name: app, newName: reg.example/app}, {name: other, newTag: '2'}]\n"
    )
    ns, deploy = render(over)
    assert "namespace" not in ns["metadata"] and deploy["metadata"]["namespace"] == "ns"
    assert [c["image"] for c in containers([deploy])] == ["reg.example/app:cpu", "other:2"]
    (over / "kustomization.yaml").write_text("resources: [../base]\npatches: [{path: p.yaml}]\n")
    with pytest.raises(RenderError, match="not supported"):
        render(over)
    (over / "kustomization.yaml").write_text("resources: [../base, ../base/app.yaml]\n")
    with pytest.raises(RenderError, match="twice"):
        render(over)
