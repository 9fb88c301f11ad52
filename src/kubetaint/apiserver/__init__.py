"""The Kubernetes-compatible HTTP API server (starlette + uvicorn) that kubectl 1.27–1.33 and the
official Python client drive (see docs/design.md, "The API server").

Public API:
- `kubetaint.apiserver.app.create_app(store, clock, registry=None, *, rng=None, server_address=...,
  bookmark_interval=60.0) -> Starlette`: serves any `Store`; every write goes through `registry`
  (a `kubetaint.registry.Registry`: admission, validation, the store; by default one without
  admission or validation). The handlers prepare request objects in `apiserver.rest`.
- `kubetaint.apiserver.server.serve(app, host, port)` and `BackgroundServer(app)` (a free port,
  in a thread; a context manager).
- `kubetaint.apiserver.resources`: what is served, derived from kubetaint.api.resources.
- `kubetaint.apiserver.live.LiveCluster(store, clock, workers=, seed=, server_address=)`: the app on
  a `kubetaint.controlplane.ControlPlane` plus the initial node set (`kubetaint up`).
- `kubetaint.apiserver.pki.ensure_pki(folder, host)`: the cluster CA, serving and admin client
  certificates and the admin token file of `kubetaint up` (docs/security.md).
- `kubetaint.apiserver.clockapi`: `GET /kubetaint/v1/clock`, `POST /kubetaint/v1/clock/advance`
  (`{"seconds": N}`) and `LoopVirtualClock`, the virtual clock of a live server.

Deliberate simplifications (upstream behaviour in brackets):
- Pods are deleted gracefully as upstream (registry.graceful: a bound, unfinished pod gets a
  deletionTimestamp and grace period and the kubelet removes it); every other kind is deleted at
  once unless finalizers remain (its own, or `orphan` / `foregroundDeletion` for DeleteOptions'
  propagationPolicy): then it is marked (deletionTimestamp) and removing the last finalizer
  deletes it. Namespaces follow their own storage rules (kubetaint.core.namespaces): the first
  delete marks them Terminating, the namespace controller empties them and `finalize` removes
  them (docs/namespaces.md).
- Server-side apply and managedFields follow structured-merge-diff (`kubetaint.core.fieldmanager`,
  `fieldmanagement`): field ownership, conflicts, removal of what a manager stops applying, one
  version per kind [no conversion between versions; `/scale` writes leave managedFields alone].
- Strategic merge patch knows the merge keys of the served kinds by field name, not from OpenAPI.
- pods/eviction deletes the pod once admission allows it and its PodDisruptionBudget does
  (429 otherwise: `kubetaint.registry.eviction`) [registry/core/pod/storage/eviction.go]; a
  dry-run eviction skips the budget check.
- No defaulting beyond PrepareForCreate status (pods Pending + qosClass, namespaces Active) and
  the registry's (admission plugins, pod requests).
- fieldValidation (`kubetaint.apiserver.fieldvalidation`) reports unknown fields and the fields a
  JSON body gives twice (Strict 400, Warn `Warning` headers, absent = Warn) from the served
  schemas; JSON patches are not checked and patch bodies are checked as sent [upstream checks the
  patched object]; an apply patch's duplicate keys are checked before the apply [upstream checks
  them after it, so an apply conflict is reported first].
- OpenAPI v3 (`kubetaint.apiserver.openapi`) serves upstream's v1.35 schemas of the served kinds
  (`kubectl explain`, client-side apply's patch metadata) and the served paths' operations, without
  the request/response schemas' `default` values and with enum values only on the taint and
  toleration fields. /openapi/v2 (`kubetaint.apiserver.openapi_v2`, which kubectl 1.27/1.28 need)
  is the same schemas as protobuf with no paths, and 404 for a JSON Accept.
- Protobuf request bodies (kubectl's typed clients: `create namespace|priorityclass|pdb|
  deployment`, drain's DeleteOptions) are decoded by `kubetaint.apiserver.protobuf` into the JSON
  object they stand for, with a schema generated from upstream's Go types of kubectl 1.33 (fields
  added later are skipped, as unknown protobuf fields are). Responses are always JSON [protobuf
  when preferred].
- Lists follow kube-apiserver's `resourceVersion`/`resourceVersionMatch` semantics and continue
  tokens are consistent snapshots (`kubetaint.apiserver.listing`, `kubetaint.store.snapshot`).
"""
