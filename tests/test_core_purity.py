"""The core must stay a pure function of structure objects and words: no torch, no celery."""

import subprocess
import sys


def test_core_imports_neither_torch_nor_celery():
    code = (
        "import sys, pkgutil, importlib, worker.core as core\n"
        "for m in pkgutil.iter_modules(core.__path__): importlib.import_module('worker.core.' + m.name)\n"
        "bad = sorted({n.split('.')[0] for n in sys.modules} & {'torch', 'celery', 'transformers', 'PIL', 'numpy'})\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
