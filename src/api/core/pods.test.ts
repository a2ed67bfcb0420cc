import { test } from "node:test";
import assert from "node:assert/strict";
import { findSubresource } from "../subresources/index.js";
import type { ApiObject } from "../../machinery/index.js";
import { defaultPullPolicy } from "./pod-defaults.js";
import { bindPod, podQOSClass } from "./pods.js";
import { create, def, pod, update } from "./testing.js";
import type { Pod } from "./types.js";

const pods = def("pods");

test("pods: declaration names, subresources and category", () => {
  assert.deepEqual([pods.shortNames, pods.categories, pods.namespaced, !!findSubresource(pods, "status"), !!findSubresource(pods, "binding")], [["po"], ["all"], true, true, true]);
  assert.equal(pods.allowCreateOnUpdate, undefined);
});

test("pods: a minimal pod gets upstream's defaults and Pending status", () => {
  const { obj, errors } = create(pods, pod());
  assert.deepEqual(errors, []);
  const p = obj as Pod;
  const spec = p.spec!;
  assert.equal(spec.restartPolicy, "Always");
  assert.equal(spec.dnsPolicy, "ClusterFirst");
  assert.equal(spec.terminationGracePeriodSeconds, 30);
  assert.equal(spec.schedulerName, "default-scheduler");
  assert.deepEqual(spec.securityContext, {});
  assert.equal(spec.enableServiceLinks, true);
  assert.equal(spec.priority, 0);
  assert.equal(spec.preemptionPolicy, "PreemptLowerPriority");
  assert.deepEqual(spec.tolerations, [
    { key: "node.orch.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    { key: "node.orch.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
  ]);
  const c = spec.containers![0]!;
  assert.equal(c.terminationMessagePath, "/dev/termination-log");
  assert.equal(c.terminationMessagePolicy, "File");
  assert.equal(c.imagePullPolicy, "IfNotPresent");
  assert.deepEqual(p.status, { phase: "Pending", qosClass: "BestEffort" });
});

test("pods: nested defaults (ports, probes, volumes) and requests from limits", () => {
  const { obj, errors } = create(
    pods,
    pod({
      containers: [
        {
          name: "web",
          image: "nginx",
          ports: [{ containerPort: 80 }],
          readinessProbe: { httpGet: { port: 80 } },
          resources: { limits: { cpu: "500m", memory: "128Mi" } },
          volumeMounts: [{ name: "cfg", mountPath: "/etc/cfg" }, { name: "scratch", mountPath: "/tmp" }],
        },
      ],
      volumes: [{ name: "cfg", configMap: { name: "web" } }, { name: "scratch" }],
    }),
  );
  assert.deepEqual(errors, []);
  const spec = (obj as Pod).spec!;
  const c = spec.containers![0]!;
  assert.equal(c.imagePullPolicy, "Always");
  assert.deepEqual(c.ports, [{ containerPort: 80, protocol: "TCP" }]);
  assert.deepEqual(c.readinessProbe, { httpGet: { port: 80, path: "/", scheme: "HTTP" }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  assert.deepEqual(c.resources!.requests, { cpu: "500m", memory: "128Mi" });
  assert.deepEqual(spec.volumes, [{ name: "cfg", configMap: { name: "web", defaultMode: 420 } }, { name: "scratch", emptyDir: {} }]);
  assert.equal((obj as Pod).status!.qosClass, "Guaranteed");
});

test("pods: imagePullPolicy by tag", () => {
  const cases: [string, string][] = [
    ["nginx", "Always"],
    ["nginx:latest", "Always"],
    ["registry:5000/team/nginx", "Always"],
    ["registry:5000/team/nginx:1.27", "IfNotPresent"],
    ["nginx:1.27", "IfNotPresent"],
    ["nginx@sha256:abcd", "IfNotPresent"],
    ["nginx:latest@sha256:abcd", "Always"],
    ["", "IfNotPresent"],
  ];
  for (const [image, want] of cases) assert.equal(defaultPullPolicy(image), want, image);
});

test("pods: QoS classes", () => {
  const withResources = (...rs: object[]) => ({ containers: rs.map((resources, i) => ({ name: `c${i}`, resources })) });
  assert.equal(podQOSClass(withResources({})), "BestEffort");
  assert.equal(podQOSClass(withResources({ requests: { cpu: "100m" } })), "Burstable");
  assert.equal(podQOSClass(withResources({ requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "1000m", memory: "1024Mi" } })), "Guaranteed");
  assert.equal(podQOSClass(withResources({ requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "2", memory: "1Gi" } })), "Burstable");
  assert.equal(podQOSClass(withResources({ limits: { cpu: "1", memory: "1Gi" }, requests: { cpu: "1", memory: "1Gi" } }, {})), "Burstable");
  assert.equal(podQOSClass(withResources({ requests: { "example.com/gpu": "1" } })), "BestEffort");
});

test("pods: validation messages match upstream", () => {
  const c = (extra: object) => ({ containers: [{ name: "web", image: "nginx:1.27", ...extra }] });
  const cases: [string, object, string[]][] = [
    ["no containers", { containers: [] }, ["spec.containers: Required value"]],
    ["no name", { containers: [{ image: "nginx" }] }, ["spec.containers[0].name: Required value"]],
    ["no image", { containers: [{ name: "web" }] }, ["spec.containers[0].image: Required value"]],
    [
      "bad name",
      { containers: [{ name: "Web_1", image: "nginx" }] },
      [
        "spec.containers[0].name: Invalid value: \"Web_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    [
      "duplicate names",
      { containers: [{ name: "web", image: "a" }, { name: "web", image: "b" }] },
      ['spec.containers[1].name: Duplicate value: "web"'],
    ],
    [
      // Upstream's conformance spec "Sysctls should reject invalid sysctls": foo- and bar.. only.
      "sysctls",
      { ...c({}), securityContext: { sysctls: [{ name: "foo-", value: "bar" }, { name: "kernel.shmmax", value: "1" }, { name: "safe-and-unsafe", value: "1" }, { name: "bar..", value: "42" }, { name: "net/ipv4/ip_forward", value: "1" }, { name: "kernel.shmmax", value: "2" }, { value: "3" }] } },
      [
        'spec.securityContext.sysctls[0].name: Invalid value: "foo-": must have at most 253 characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?',
        'spec.securityContext.sysctls[3].name: Invalid value: "bar..": must have at most 253 characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?',
        'spec.securityContext.sysctls[5].name: Duplicate value: "kernel.shmmax"',
        "spec.securityContext.sysctls[6].name: Required value",
      ],
    ],
    [
      "restart policy",
      { ...c({}), restartPolicy: "Sometimes" },
      ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ],
    [
      "dns policy",
      { ...c({}), dnsPolicy: "Google" },
      ['spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'],
    ],
    ["dnsPolicy None without dnsConfig", { ...c({}), dnsPolicy: "None" }, ["spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"]],
    [
      "dnsPolicy None without a nameserver",
      { ...c({}), dnsPolicy: "None", dnsConfig: { searches: ["a.example"] } },
      ["spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None"],
    ],
    [
      "dnsConfig limits and forms",
      { ...c({}), dnsConfig: { nameservers: ["1.1.1.1", "1.1.1.2", "1.1.1.3", "not-an-ip"], searches: ["a", "b", "c", "d", "e", "f", "Bad_Domain."], options: [{ value: "2" }] } },
      [
        'spec.dnsConfig.nameservers: Invalid value: ["1.1.1.1","1.1.1.2","1.1.1.3","not-an-ip"]: must not have more than 3 nameservers',
        'spec.dnsConfig.nameservers[3]: Invalid value: "not-an-ip": must be valid IP address',
        'spec.dnsConfig.searches: Invalid value: ["a","b","c","d","e","f","Bad_Domain."]: must not have more than 6 search paths',
        "spec.dnsConfig.searches[6]: Invalid value: \"Bad_Domain\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        "spec.dnsConfig.options[0]: Required value: must not be empty",
      ],
    ],
    [
      "dnsConfig search list over 256 characters",
      { ...c({}), dnsConfig: { searches: ["a".repeat(60), "b".repeat(60), "c".repeat(60), "d".repeat(60), "e".repeat(60)] } },
      [`spec.dnsConfig.searches: Invalid value: ${JSON.stringify(["a", "b", "c", "d", "e"].map((x) => x.repeat(60)))}: must not have more than 256 characters (including spaces) in the search list`],
    ],
    ["port out of range", c({ ports: [{ containerPort: 70000 }] }), ["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"]],
    ["port missing", c({ ports: [{ name: "http" }] }), ["spec.containers[0].ports[0].containerPort: Required value"]],
    [
      "port protocol",
      c({ ports: [{ containerPort: 80, protocol: "HTTP" }] }),
      ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
    ],
    [
      "port name",
      c({ ports: [{ containerPort: 80, name: "-http" }] }),
      ['spec.containers[0].ports[0].name: Invalid value: "-http": must not begin or end with a hyphen'],
    ],
    [
      "pull policy",
      c({ imagePullPolicy: "Sometimes" }),
      ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'],
    ],
    ["unknown volume", c({ volumeMounts: [{ name: "data", mountPath: "/data" }] }), ['spec.containers[0].volumeMounts[0].name: Not found: "data"']],
    ["env without name", c({ env: [{ value: "x" }] }), ["spec.containers[0].env[0].name: Required value"]],
    ["deadline", { ...c({}), activeDeadlineSeconds: 0 }, ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"]],
    ["probe without handler", c({ livenessProbe: { periodSeconds: 5 } }), ["spec.containers[0].livenessProbe: Required value: must specify a handler type"]],
    [
      "toleration",
      { ...c({}), tolerations: [{ key: "", operator: "Equal", value: "x" }] },
      ['spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"'],
    ],
    ["volume without source", { ...c({}), volumes: [{ name: "v", emptyDir: null }] }, ["spec.volumes[0]: Required value: must specify a volume type"]],
    ["ephemeral on create", { ...c({}), ephemeralContainers: [{ name: "debug", image: "busybox" }] }, ["spec.ephemeralContainers: Forbidden: cannot be set on create"]],
  ];
  for (const [what, spec, want] of cases) {
    const got = create(pods, pod(spec)).errors.filter((e) => !e.startsWith("spec.tolerations[") || what === "toleration");
    assert.deepEqual(got, want, what);
  }
});

test("pods: spec is immutable but for images, deadlines and added tolerations", () => {
  const old = create(pods, pod({ activeDeadlineSeconds: 100 })).obj;
  old.metadata.resourceVersion = "5";
  const edit = (f: (p: Pod) => void) => {
    const next = structuredClone(old) as Pod;
    f(next);
    return update(pods, next, old).errors;
  };
  assert.deepEqual(edit((p) => (p.spec!.containers![0]!.image = "nginx:1.28")), []);
  assert.deepEqual(edit((p) => (p.spec!.activeDeadlineSeconds = 50)), []);
  assert.deepEqual(edit((p) => p.spec!.tolerations!.push({ key: "gpu", operator: "Exists", effect: "NoSchedule" })), []);
  assert.deepEqual(edit((p) => (p.metadata.labels = { app: "web" })), []);
  assert.deepEqual(edit((p) => (p.spec!.activeDeadlineSeconds = 200)), ["spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value"]);
  assert.deepEqual(edit((p) => (p.spec!.tolerations = [])), ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"]);
  const [err, ...rest] = edit((p) => (p.spec!.containers![0]!.command = ["sh"]));
  assert.deepEqual(rest, []);
  assert.match(err!, /^spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`,`spec\.initContainers\[\*\]\.image`,`spec\.activeDeadlineSeconds`,`spec\.tolerations` \(only additions to existing tolerations\),`spec\.terminationGracePeriodSeconds` \(allow it to be set to 1 if it was previously negative\)\n/);
  assert.match(err!, /changed: spec\.containers/);
  // An update that drops status keeps the stored one (status moves only through /status).
  const { obj } = update(pods, { ...structuredClone(old), status: { phase: "Running" } }, old);
  assert.equal((obj as Pod).status!.phase, "Pending");
});

test("pods/binding: sets the node once", () => {
  const p = create(pods, pod()).obj as Pod;
  assert.deepEqual(bindPod(p, { kind: "Node", name: "node-1" }), []);
  assert.equal(p.spec!.nodeName, "node-1");
  assert.equal(p.status!.conditions!.find((c) => c.type === "PodScheduled")!.status, "True");
  assert.deepEqual(
    bindPod(p, { name: "node-2" }).map((e) => e.detail),
    ['pod web is already assigned to node "node-1"'],
  );
  assert.deepEqual(bindPod(create(pods, pod()).obj as Pod, { kind: "Pod", name: "x" }).map((e) => e.field), ["target.kind"]);
});

test("pods: field selectors and grace period", () => {
  const p = create(pods, pod({ nodeName: "node-1", restartPolicy: "Never", hostNetwork: true })).obj;
  (p as Pod).status!.podIPs = [{ ip: "10.0.0.5" }];
  const get = (f: string) => pods.fieldSelectors![f]!(p);
  assert.deepEqual(
    ["spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"].map(get),
    ["node-1", "Never", "default-scheduler", "", "true", "Pending", "10.0.0.5", ""],
  );
  assert.equal(pods.gracePeriodSeconds!(p, undefined), 30);
  assert.equal(pods.gracePeriodSeconds!(p, 3), 3, "a scheduled pod takes the requested grace period");
  assert.equal(pods.gracePeriodSeconds!(create(pods, pod()).obj, 5), 0, "unscheduled pods go at once");
  const done = structuredClone(p) as ApiObject;
  (done as Pod).status!.phase = "Succeeded";
  assert.equal(pods.gracePeriodSeconds!(done, undefined), 0);
});
