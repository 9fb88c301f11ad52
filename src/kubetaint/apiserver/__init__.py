"""The Kubernetes-compatible HTTP API server (starlette + uvicorn)."""
