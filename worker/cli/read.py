"""`tablesight read TABLE_ID... [--backend B] [--wait] [--force]`: vision reads of stored crops.

With a broker configured (TABLESIGHT_BROKER_URL) each table becomes a task on the `vision`
queue, served by whichever node runs `tablesight worker --queues vision`; without one (or
with --local / --out) the read runs in this process. TABLE_ID is `<doc_id>/<table_id>` as the
manifest lists it. Exit codes: 0 every read succeeded (or was queued), 1 some failed, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "read",
        help="read stored table crops with a vision model",
        description="Send each table's stored crop to the vision model (VISION_BACKEND) and "
        "store the checked HTML as <table_id>.vision.html with <table_id>.vision.json "
        "beside the detector's. A table read before with the same model is not read "
        "again unless --force.",
    )
    p.add_argument("tables", nargs="+", metavar="TABLE_ID", help="<doc_id>/<table_id>, e.g. 3f2a9c0d1e4b5a6c/p0001-t01")
    p.add_argument("--backend", choices=("openai", "transformers"), help="default: TABLESIGHT_VISION_BACKEND")
    p.add_argument("--model", help="default: TABLESIGHT_VISION_MODEL")
    p.add_argument(
        "--force",
        action="store_true",
        help="read again even if a read with this model is stored (e.g. after raising VISION_MAX_NEW_TOKENS)",
    )
    p.add_argument("--wait", action="store_true", help="queue mode: wait for each read and print its result")
    p.add_argument("--timeout", type=float, default=None, help="with --wait: seconds to wait per table")
    p.add_argument("--local", action="store_true", help="read in this process even if a broker is configured")
    p.add_argument("--out", type=Path, help="local store folder (implies --local; default: TABLESIGHT_STORAGE_URL)")
    p.add_argument("--json", action="store_true", help="print one JSON summary per table instead of a line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.settings import get_settings
    from worker.vision.read import parse_table_ref

    try:
        refs = [str(parse_table_ref(t)) for t in args.tables]
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    settings = get_settings()
    if args.model:
        settings = settings.replace(**{"vision_model": args.model})
    local = args.local or args.out is not None or "broker_url" not in settings.model_fields_set
    return _run_local(args, refs, settings) if local else _run_queued(args, refs, settings)


def _run_local(args: argparse.Namespace, refs: list[str], settings: Any) -> int:
    from worker.errors import TablesightError
    from worker.storage import storage_for
    from worker.vision.read import TableNotFound, read_table

    storage = storage_for(settings, args.out)
    failed = 0
    for ref in refs:
        try:
            record = read_table(storage, ref, settings, backend=args.backend, force=args.force)
        except TableNotFound as exc:
            record = {"status": "failed", "reason": str(exc)}
        except TablesightError as exc:  # the reader cannot be set up: every table would fail alike
            print(f"error: {exc}", file=sys.stderr)
            return 1
        failed += record["status"] != "ok"
        _print(ref, record, args.json, storage.location(record["html_key"]) if record.get("html_key") else None)
    return 1 if failed else 0


def _run_queued(args: argparse.Namespace, refs: list[str], settings: Any) -> int:
    from worker.errors import TablesightError
    from worker.queue.app import make_app
    from worker.queue.consumers import require_consumers
    from worker.queue.vision_client import enqueue_read, wait_read

    app = make_app(settings)
    failed = 0
    try:
        if args.wait:
            require_consumers(app, [settings.queue.vision])
        ids = [(ref, enqueue_read(app, ref, backend=args.backend, model=args.model, force=args.force)) for ref in refs]
        for ref, task_id in ids:
            if not args.wait:
                print(json.dumps({"table": ref, "task_id": task_id}) if args.json else f"{ref}: queued as {task_id}")
                continue
            try:
                record = wait_read(app, task_id, timeout=args.timeout)
            except TimeoutError as exc:
                record = {"status": "failed", "reason": str(exc)}
            failed += record.get("status") != "ok"
            _print(ref, record, args.json, record.get("html_key"))
    except TablesightError as exc:  # no worker would ever answer
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # broker unreachable, ...
        print(
            f"error: cannot queue vision reads: {type(exc).__name__}: {exc} (use --local to read in process)",
            file=sys.stderr,
        )
        return 1
    finally:
        app.close()
    return 1 if failed else 0


def _print(ref: str, record: dict[str, Any], as_json: bool, where: str | None) -> None:
    if as_json:
        keep = {k: v for k, v in record.items() if k != "raw_answer"}
        print(json.dumps({"table": ref, **keep}, ensure_ascii=False))
    else:
        print(_line(ref, record, where))


def _line(ref: str, record: dict[str, Any], where: str | None) -> str:
    if record.get("status") != "ok":
        note = " (an earlier good read is kept)" if record.get("kept_previous") else ""
        return f"{ref}: failed: {record.get('reason')}{note}"
    grid = record.get("grid") or {}
    teds = (record.get("agreement") or {}).get("teds")
    vs = f", TEDS {teds:.3f} vs detector" if isinstance(teds, (int, float)) else ""
    cached = " (stored read)" if record.get("cached") else ""
    return f"{ref}: ok{cached} {grid.get('n_rows')}x{grid.get('n_cols')}{vs} -> {where or record.get('html_key')}"


def read_hard(storage: Any, manifest: dict[str, Any], settings: Any) -> bool:
    """`extract --read-hard`: read the document's needs_vision tables in process, one line each.

    False when the reader cannot be set up (no model, bad URL): the caller stops there. A
    table the model could not read is reported and stored as a failed read, not an error.
    """
    from worker.errors import TablesightError
    from worker.vision.policy import read_hard_tables

    def report(record: dict[str, Any]) -> None:
        ref = f"{record.get('doc_id')}/{record.get('table_id')}"
        where = storage.location(record["html_key"]) if record.get("html_key") else None
        print(f"  vision read {_line(ref, record, where)}")

    try:
        read_hard_tables(storage, manifest, settings, on_read=report)
    except TablesightError as exc:
        print(f"error: vision read: {exc}", file=sys.stderr)
        return False
    return True


def reader_problem(settings: Any, backend: str | None = None) -> str | None:
    """Why no read can work with these settings (no model name, bad URL), checked without a model call."""
    from models.vision import VisionError, model_name

    try:
        model_name(settings, backend)
    except VisionError as exc:
        return str(exc)
    if (backend or settings.vision.backend) == "openai" and not settings.vision.url.startswith(("http://", "https://")):
        return f"vision URL {settings.vision.url!r} must start with http:// or https://"
    return None
