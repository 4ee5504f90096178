"""`/docs` without the network: Swagger UI's own files served from a pinned PyPI package.

FastAPI's default page loads Swagger UI from a CDN, so on an air-gapped host it stays blank.
The assets come from `swagger-ui-py` (pinned in pyproject.toml), which ships Swagger UI 5.x:
the 4.x that `swagger-ui-bundle` ships cannot render the OpenAPI 3.1 documents FastAPI writes.
Only the static files are used (the package's own framework glue is not imported).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"


def swagger_ui_dir() -> Path:
    """Where the pinned package keeps Swagger UI's files (found without importing it)."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the swagger-ui-py package is not installed (pip install 'swagger-ui-py==25.7.1')")
    folder = Path(next(iter(spec.submodule_search_locations))) / "static"
    if not (folder / "swagger-ui-bundle.js").is_file():
        raise RuntimeError(f"no swagger-ui-bundle.js in {folder}")
    return folder


def install_docs(app: FastAPI, title: str) -> None:
    """`/docs`, its OAuth2 redirect page, and `/docs/assets/*` (the app is made with docs_url=None)."""
    app.mount(ASSETS, StaticFiles(directory=str(swagger_ui_dir())), name="docs-assets")
    redirect = "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False, response_class=HTMLResponse)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{title} - API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
            oauth2_redirect_url=redirect,
        )

    @app.get(redirect, include_in_schema=False, response_class=HTMLResponse)
    async def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()
