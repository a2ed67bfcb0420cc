// The core kinds of issue 15's first slice: ReplicationController, PodTemplate,
// LimitRange, ResourceQuota: defaults, validation messages as upstream, tables.

import { test } from "node:test";
import assert from "node:assert/strict";
import { NOW, create, def } from "./testing.js";
import { canonical, formatQuantity, quantity } from "./quantity-math.js";

const rc = (spec: object, metadata: object = {}) => ({ apiVersion: "v1", kind: "ReplicationController", metadata: { name: "web", namespace: "default", ...metadata }, spec });
const template = (labels: Record<string, string> | undefined, spec: object = {}) => ({
  metadata: labels === undefined ? {} : { labels },
  spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
});

test("quantities: exact sums and upstream's canonical text", () => {
  const cases: [unknown, string][] = [
    ["2000m", "2"], ["1500m", "1500m"], ["1024Mi", "1Gi"], ["1536Mi", "1536Mi"], [2, "2"], ["2000", "2k"], ["0.5", "500m"],
    ["1e3", "1k"], ["100Mi", "100Mi"], ["1.5Gi", "1536Mi"], ["0", "0"], ["1k", "1k"], ["10", "10"], ["1Ki", "1Ki"], ["1000Ki", "1000Ki"],
  ];
  for (const [input, want] of cases) assert.equal(canonical(input), want, String(input));
  assert.equal(quantity("abc"), undefined);
  assert.equal(quantity("1.5.5"), undefined);
  assert.equal(formatQuantity({ milli: quantity("100m")!.milli * 3n, binary: false }), "300m");
  // 0.1 + 0.2 without float drift.
  assert.equal(quantity("0.1")!.milli + quantity("0.2")!.milli, 300n);
});

test("replicationcontrollers: selector, labels and replicas default from the template", () => {
  const { obj, errors } = create(def("replicationcontrollers"), rc({ template: template({ app: "web" }) }));
  assert.deepEqual(errors, []);
  const spec = obj["spec"] as { selector: object; replicas: number; template: { spec: { restartPolicy: string } } };
  assert.deepEqual(spec.selector, { app: "web" });
  assert.equal(spec.replicas, 1);
  assert.equal(spec.template.spec.restartPolicy, "Always");
  assert.deepEqual(obj.metadata.labels, { app: "web" });
  assert.deepEqual(obj["status"], { replicas: 0 });
  // Labels of its own are kept.
  assert.deepEqual(create(def("replicationcontrollers"), rc({ template: template({ app: "web" }) }, { labels: { tier: "x" } })).obj.metadata.labels, { tier: "x" });
});

test("replicationcontrollers: validation messages as upstream", () => {
  const cases: [string, object, string[]][] = [
    ["no selector, no labels", { template: template(undefined) }, ["spec.selector: Required value"]],
    ["no template", { selector: { app: "a" } }, ["spec.template: Required value"]],
    ["mismatch", { selector: { app: "a" }, template: template({ app: "b" }) }, ['spec.template.metadata.labels: Invalid value: {"app":"b"}: `selector` does not match template `labels`']],
    ["negative", { replicas: -1, template: template({ app: "a" }) }, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]],
    ["restart policy", { template: template({ app: "a" }, { restartPolicy: "Never" }) }, ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']],
    ["deadline", { template: template({ app: "a" }, { activeDeadlineSeconds: 5 }) }, ["spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported"]],
  ];
  for (const [name, spec, want] of cases) assert.deepEqual(create(def("replicationcontrollers"), rc(spec)).errors, want, name);
});

test("replicationcontrollers: table and scale selector", () => {
  const d = def("replicationcontrollers");
  const { obj } = create(d, rc({ replicas: 3, template: template({ app: "web", tier: "fe" }) }));
  (obj["status"] as Record<string, number>)["readyReplicas"] = 1;
  assert.deepEqual(d.table!.columns.map((c) => [c.name, c.priority]), [["Name", 0], ["Desired", 0], ["Current", 0], ["Ready", 0], ["Age", 0], ["Containers", 1], ["Images", 1], ["Selector", 1]]);
  assert.deepEqual(d.table!.cells(obj, NOW), ["web", 3, 0, 1, "4m5s", "c", "nginx", "app=web,tier=fe"]);
  const scale = d.subresources!.find((s) => s.name === "scale") as unknown as { access: { selector(o: object): string } };
  assert.equal(scale.access.selector(obj), "app=web,tier=fe");
});

test("podtemplates: pod defaults, template validation, upstream's columns", () => {
  const d = def("podtemplates");
  const { obj, errors } = create(d, { apiVersion: "v1", kind: "PodTemplate", metadata: { name: "t", namespace: "default" }, template: template({ app: "x" }) });
  assert.deepEqual(errors, []);
  assert.equal((obj["template"] as { spec: { containers: { imagePullPolicy: string }[] } }).spec.containers[0]!.imagePullPolicy, "Always");
  assert.deepEqual(d.table!.columns.map((c) => c.name), ["Name", "Containers", "Images", "Pod Labels"]);
  assert.deepEqual(d.table!.cells(obj, NOW), ["t", "c", "nginx", "app=x"]);
  const bad = create(d, { apiVersion: "v1", kind: "PodTemplate", metadata: { name: "t" }, template: { spec: { containers: [] } } });
  assert.deepEqual(bad.errors, ["template.spec.containers: Required value"]);
});

test("limitranges: Container defaults from max and min; upstream's messages", () => {
  const d = def("limitranges");
  const lr = (limits: object[]) => ({ apiVersion: "v1", kind: "LimitRange", metadata: { name: "l", namespace: "default" }, spec: { limits } });
  const { obj, errors } = create(d, lr([{ type: "Container", max: { cpu: "1" }, min: { memory: "10Mi" } }]));
  assert.deepEqual(errors, []);
  assert.deepEqual((obj["spec"] as { limits: object[] }).limits[0], { type: "Container", max: { cpu: "1" }, min: { memory: "10Mi" }, default: { cpu: "1" }, defaultRequest: { cpu: "1", memory: "10Mi" } });
  const cases: [object[], string[]][] = [
    [[{ type: "Container", min: { cpu: "2" }, max: { cpu: "1" } }], [
      'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1',
      'spec.limits[0].defaultRequest[cpu]: Invalid value: "1": min value 2 is greater than default request value 1',
      'spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default value 1',
    ]],
    [[{ type: "Pod", max: { cpu: "1" }, default: { cpu: "1" } }], ["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"]],
    [[{ type: "Node", max: { cpu: "1" } }], ['spec.limits[0].type: Invalid value: "Node": must be a standard limit type or fully qualified']],
    [[{ type: "Pod", max: { cpu: "1" } }, { type: "Pod", max: { cpu: "2" } }], ['spec.limits[1].type: Duplicate value: "Pod"']],
    [[{ type: "Container", maxLimitRequestRatio: { cpu: "500m" } }], ['spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1']],
    [[{ type: "PersistentVolumeClaim", max: { cpu: "1" } }], ["spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided"]],
  ];
  for (const [limits, want] of cases) assert.deepEqual(create(d, lr(limits)).errors, want, JSON.stringify(limits));
});

test("resourcequotas: validation, status reset on create, upstream's table", () => {
  const d = def("resourcequotas");
  const rq = (spec: object, status?: object) => ({ apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "q", namespace: "default" }, spec, ...(status ? { status } : {}) });
  const { obj, errors } = create(d, rq({ hard: { pods: "2", "limits.cpu": "2" } }, { used: { pods: "5" } }));
  assert.deepEqual(errors, []);
  assert.deepEqual(obj["status"], {});
  const cases: [object, string[]][] = [
    [{ hard: { pods: "-1" } }, ['spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0']],
    [{ hard: { pods: "1500m" } }, ['spec.hard[pods]: Invalid value: "1500m": must be an integer']],
    [{ hard: { pods: "1" }, scopes: ["Nope"] }, ['spec.scopes: Invalid value: ["Nope"]: unsupported scope']],
    [{ hard: { pods: "1" }, scopes: ["BestEffort", "NotBestEffort"] }, ['spec.scopes: Invalid value: ["BestEffort","NotBestEffort"]: conflicting scopes']],
    [{ hard: { pods: "1", "requests.cpu": "1" }, scopes: ["BestEffort"] }, ['spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource']],
    [{ hard: { services: "1" }, scopes: ["Terminating"] }, ['spec.scopes: Invalid value: ["Terminating"]: unsupported scope applied to resource']],
    [{ hard: { pods: "1", "limits.memory": "1Gi", "count/pods": "3" }, scopes: ["NotTerminating"] }, []],
  ];
  for (const [spec, want] of cases) assert.deepEqual(create(d, rq(spec)).errors, want, JSON.stringify(spec));
  obj["status"] = { hard: { pods: "2", "limits.cpu": "2", "requests.memory": "1Gi" }, used: { pods: "1", "limits.cpu": "500m", "requests.memory": "512Mi" } };
  assert.deepEqual(d.table!.columns.map((c) => c.name), ["Name", "Age", "Request", "Limit"]);
  assert.deepEqual(d.table!.cells(obj, NOW), ["q", "4m5s", "pods: 1/2, requests.memory: 512Mi/1Gi", "limits.cpu: 500m/2"]);
});
