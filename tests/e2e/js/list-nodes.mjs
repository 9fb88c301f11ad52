// Lists the nodes of the cluster in $KUBECONFIG with @kubernetes/client-node and prints their
// names as one JSON array; any failure is printed on stderr as one line and exits 1.
import * as k8s from "@kubernetes/client-node";

const config = new k8s.KubeConfig();
config.loadFromDefault();
const api = config.makeApiClient(k8s.CoreV1Api);
try {
  const list = await api.listNode();
  console.log(JSON.stringify(list.items.map((node) => node.metadata.name)));
} catch (error) {
  console.error(`error: ${error.code ?? error.message ?? error}`.split("\n")[0]);
  process.exit(1);
}
