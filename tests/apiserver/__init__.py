"""HTTP API server tests.

starlette's TestClient warns (deprecation) when it finds `httpx` rather than `httpx2`; the
shared venv has httpx, so import it once here with that warning silenced.
"""

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import starlette.testclient  # noqa: F401
