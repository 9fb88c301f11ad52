// The checks tests/e2e/clients/test_client_node.py makes with @kubernetes/client-node against the
// cluster in $KUBECONFIG, in namespace $CHECK_NAMESPACE on node $CHECK_NODE. Prints one JSON object:
// each check's name and what it observed (or {"error": "..."} when it threw).
import * as k8s from "@kubernetes/client-node";

const config = new k8s.KubeConfig();
config.loadFromDefault();
const core = config.makeApiClient(k8s.CoreV1Api);
const apis = config.makeApiClient(k8s.ApisApi);
const namespace = process.env.CHECK_NAMESPACE;
const nodeName = process.env.CHECK_NODE;
const as = (contentType) => k8s.setHeaderOptions("Content-Type", contentType);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const configMap = (name, data) => ({ metadata: { name, labels: { check: name } }, data });

async function until(probe, what) {
  const deadline = Date.now() + 15000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function gone(name) {
  const list = await core.listNamespacedPod({ namespace, fieldSelector: `metadata.name=${name}` });
  return list.items.length === 0;
}

const checks = {
  async discovery() {
    const groups = (await apis.getAPIVersions()).groups.map((g) => g.name);
    const core_ = (await core.getAPIResources()).resources.map((r) => r.name);
    return {
      groups: ["apps", "policy"].filter((g) => groups.includes(g)),
      core: ["nodes", "pods", "pods/eviction"].filter((r) => core_.includes(r)),
    };
  },

  async crud() {
    await core.createNamespacedConfigMap({ namespace, body: configMap("crud", { colour: "blue" }) });
    const read = await core.readNamespacedConfigMap({ name: "crud", namespace });
    read.data.colour = "green";
    const replaced = await core.replaceNamespacedConfigMap({ name: "crud", namespace, body: read });
    await core.deleteNamespacedConfigMap({ name: "crud", namespace });
    let missing = null;
    try {
      await core.readNamespacedConfigMap({ name: "crud", namespace });
    } catch (error) {
      missing = error.code;
    }
    return { replaced: replaced.data, missing };
  },

  async informer() {
    // an informer lists, then watches from the list's resourceVersion
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const informer = k8s.makeInformer(
      config,
      path,
      () => core.listNamespacedConfigMap({ namespace, labelSelector: "check=informer" }),
      "check=informer",
    );
    const seen = [];
    informer.on("add", (obj) => seen.push(["add", obj.metadata.name]));
    informer.on("update", (obj) => seen.push(["update", obj.data.k]));
    informer.on("delete", (obj) => seen.push(["delete", obj.metadata.name]));
    await informer.start();
    await core.createNamespacedConfigMap({ namespace, body: configMap("informer", {}) });
    await until(() => seen.length >= 1, "the add");
    await core.patchNamespacedConfigMap(
      { name: "informer", namespace, body: { data: { k: "v" } } },
      as(k8s.PatchStrategy.MergePatch),
    );
    await until(() => seen.length >= 2, "the update");
    const cached = informer.list(namespace).map((o) => [o.metadata.name, o.data.k]);
    await core.deleteNamespacedConfigMap({ name: "informer", namespace });
    await until(() => seen.length >= 3, "the delete");
    await informer.stop();
    return { seen, cached };
  },

  async watchResumes() {
    // a raw watch resumed from the last resourceVersion it saw
    const list = await core.listNamespacedConfigMap({ namespace });
    const watch = new k8s.Watch(config);
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const events = [];
    let last = list.metadata.resourceVersion;
    const follow = async (count) => {
      const start = events.length;
      const controller = await watch.watch(
        path,
        { resourceVersion: last, labelSelector: "check=resumed" },
        (phase, obj) => {
          events.push(phase);
          last = obj.metadata.resourceVersion;
        },
        () => {},
      );
      await until(() => events.length >= start + count, "the watch events");
      controller.abort();
    };
    await core.createNamespacedConfigMap({ namespace, body: configMap("resumed", {}) });
    await follow(1);
    await core.deleteNamespacedConfigMap({ name: "resumed", namespace });
    await follow(1);
    return events;
  },

  async patchTypes() {
    await core.createNamespacedConfigMap({ namespace, body: configMap("patched", { a: "1" }) });
    const patch = async (body, strategy) =>
      (await core.patchNamespacedConfigMap({ name: "patched", namespace, body }, as(strategy))).data;
    return [
      await patch({ data: { b: "2" } }, k8s.PatchStrategy.StrategicMergePatch),
      await patch({ data: { a: null } }, k8s.PatchStrategy.MergePatch),
      await patch([{ op: "remove", path: "/data/b" }], k8s.PatchStrategy.JsonPatch),
    ];
  },

  async eviction() {
    const body = {
      metadata: { name: "evicted" },
      spec: { containers: [{ name: "main", image: "registry.k8s.io/pause:3.10" }] },
    };
    await core.createNamespacedPod({ namespace, body });
    await until(
      async () => (await core.readNamespacedPod({ name: "evicted", namespace })).status.phase === "Running",
      "the pod to run",
    );
    await core.createNamespacedPodEviction({
      name: "evicted",
      namespace,
      body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: "evicted", namespace } },
    });
    await until(() => gone("evicted"), "the evicted pod to go");
    return "gone";
  },

  async taintAndCordon() {
    const before = (await core.readNode({ name: nodeName })).spec.taints ?? [];
    const taint = { key: "client-node", value: "yes", effect: "NoSchedule" };
    const patched = await core.patchNode(
      { name: nodeName, body: { spec: { taints: [...before, taint], unschedulable: true } } },
      as(k8s.PatchStrategy.StrategicMergePatch),
    );
    const restored = await core.patchNode(
      { name: nodeName, body: [{ op: "remove", path: "/spec/unschedulable" }, { op: "replace", path: "/spec/taints", value: before }] },
      as(k8s.PatchStrategy.JsonPatch),
    );
    return {
      tainted: patched.spec.taints.some((t) => t.key === "client-node"),
      cordoned: patched.spec.unschedulable,
      restored: [restored.spec.unschedulable ?? null, (restored.spec.taints ?? []).some((t) => t.key === "client-node")],
    };
  },

  async serverSideApply() {
    const body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "applied", namespace }, data: { owner: "js" } };
    const applied = await core.patchNamespacedConfigMap(
      { name: "applied", namespace, body, fieldManager: "client-node" },
      as(k8s.PatchStrategy.ServerSideApply),
    );
    let conflict = null;
    try {
      await core.patchNamespacedConfigMap(
        { name: "applied", namespace, body: { ...body, data: { owner: "other" } }, fieldManager: "other" },
        as(k8s.PatchStrategy.ServerSideApply),
      );
    } catch (error) {
      conflict = error.code;
    }
    return { managers: applied.metadata.managedFields.map((m) => [m.manager, m.operation]), conflict };
  },
};

const results = {};
for (const [name, check] of Object.entries(checks)) {
  try {
    results[name] = await check();
  } catch (error) {
    results[name] = { error: `${error.code ?? ""} ${error.message ?? error}`.trim().split("\n")[0] };
  }
}
console.log(JSON.stringify(results));
