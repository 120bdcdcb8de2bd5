// A FAKE Kubernetes API server for tests: it answers only the discovery requests kubectl makes
// before a client-side dry run (`kubectl create --dry-run=client` still asks the server which
// resources exist, to map each object's apiVersion and kind to a resource), and records every
// request. It creates nothing and serves no OpenAPI schema (so kubectl must run with
// --validate=false; the manifests' schema check is kubernetes-models' in manifests.test.ts).
//
// RESOURCES lists what a real server (Kubernetes 1.25 or later) serves for the kinds the
// manifests use, so an object of another kind, or of an API version such a server no longer
// serves (policy/v1beta1, autoscaling/v2beta2), is refused by kubectl as it would be by a cluster.

export interface FakeResource {
  /** "" for the core group. */
  group: string;
  version: string;
  kind: string;
  /** The resource name (plural). */
  name: string;
  namespaced: boolean;
  shortNames?: string[];
}

export const RESOURCES: readonly FakeResource[] = [
  { group: "", version: "v1", kind: "Namespace", name: "namespaces", namespaced: false },
  { group: "", version: "v1", kind: "ConfigMap", name: "configmaps", namespaced: true },
  { group: "", version: "v1", kind: "Secret", name: "secrets", namespaced: true },
  { group: "", version: "v1", kind: "Service", name: "services", namespaced: true },
  { group: "apps", version: "v1", kind: "Deployment", name: "deployments", namespaced: true },
  { group: "apps", version: "v1", kind: "StatefulSet", name: "statefulsets", namespaced: true },
  {
    group: "autoscaling",
    version: "v2",
    kind: "HorizontalPodAutoscaler",
    name: "horizontalpodautoscalers",
    namespaced: true,
  },
  {
    group: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
    name: "poddisruptionbudgets",
    namespaced: true,
  },
  {
    group: "networking.k8s.io",
    version: "v1",
    kind: "NetworkPolicy",
    name: "networkpolicies",
    namespaced: true,
  },
];

const VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"];

export interface FakeDiscovery {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Every request received, as "METHOD /path". */
  requests: string[];
  /** A kubeconfig whose current context points at this server. */
  kubeconfig(): string;
  close(): Promise<void>;
}

/** Starts the fake on a free loopback port. */
export function startFakeDiscovery(resources: readonly FakeResource[] = RESOURCES): FakeDiscovery {
  const groupVersion = (r: FakeResource) => r.group ? `${r.group}/${r.version}` : r.version;
  const byGroupVersion = new Map<string, FakeResource[]>();
  for (const r of resources) {
    byGroupVersion.set(groupVersion(r), [...(byGroupVersion.get(groupVersion(r)) ?? []), r]);
  }
  const groups = [...new Set(resources.filter((r) => r.group).map((r) => r.group))].map((g) => {
    const versions = [...byGroupVersion.keys()].filter((gv) => gv.startsWith(`${g}/`))
      .map((gv) => ({ groupVersion: gv, version: gv.slice(g.length + 1) }));
    return { name: g, versions, preferredVersion: versions[0] };
  });
  const requests: string[] = [];
  // Plain application/json: kubectl falls back from aggregated to this legacy discovery format.
  const json = (body: unknown) => Response.json(body);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { pathname: path, host } = new URL(req.url);
    requests.push(`${req.method} ${path}`);
    if (req.method !== "GET") return new Response("the fake creates nothing", { status: 405 });
    if (path === "/version") {
      return json({ major: "1", minor: "32", gitVersion: "v1.32.0-fake", platform: "linux/amd64" });
    }
    if (path === "/api") {
      return json({
        kind: "APIVersions",
        versions: ["v1"],
        serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: host }],
      });
    }
    if (path === "/apis") return json({ kind: "APIGroupList", apiVersion: "v1", groups });
    const gv = path === "/api/v1" ? "v1" : path.startsWith("/apis/") ? path.slice(6) : undefined;
    const list = gv === undefined ? undefined : byGroupVersion.get(gv);
    if (list) {
      return json({
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: gv,
        resources: list.map((r) => ({
          name: r.name,
          singularName: r.kind.toLowerCase(),
          namespaced: r.namespaced,
          kind: r.kind,
          verbs: VERBS,
          ...(r.shortNames ? { shortNames: r.shortNames } : {}),
        })),
      });
    }
    const status = {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "NotFound",
      code: 404,
      message: `the fake serves no ${path}`,
    };
    return Response.json(status, { status: 404 });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  return {
    url,
    requests,
    kubeconfig: () =>
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "fake", cluster: { server: url } }],
        users: [{ name: "fake", user: {} }],
        contexts: [{ name: "fake", context: { cluster: "fake", user: "fake" } }],
        "current-context": "fake",
      }),
    close: () => server.shutdown(),
  };
}
