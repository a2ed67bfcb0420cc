// Test helpers for the Protobuf codec: the built-in registry, a seeded random
// object generator driven by the schemas, and `expectedAfterRoundTrip`, which
// says what Protobuf can carry of a JSON object (the codec's documented contract).

import { builtinModules } from "../../../api/index.js";
import { isWellKnown, SchemaRegistry, WELL_KNOWN, type Schema, type TypeDef } from "../../schema.js";
import { keepsZero } from "./presence.js";
import type { JsonObject } from "./message.js";

export function builtinRegistry(): SchemaRegistry {
  const registry = new SchemaRegistry();
  for (const module of builtinModules()) module.registerSchemas(registry);
  return registry;
}

/** Bytes from spaced hex (`"0a 03 776562"`), several parts concatenated. */
export function hex(...parts: string[]): Uint8Array {
  const clean = parts.join("").replace(/\s+/g, "");
  if (clean.length % 2 !== 0 || /[^0-9a-f]/i.test(clean)) throw new Error(`bad hex: ${clean}`);
  return Uint8Array.from(Buffer.from(clean, "hex"));
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("hex");
}

/** mulberry32: small, fast, good enough for test data, and the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = ["", "a", "web", "nginx:1.25", "héllo wörld", "ключ", "日本語", "emoji 🚀✓", "x".repeat(70), "y".repeat(200), "tab\tand\nnewline", "quote\"back\\slash"];
const QUANTITIES = ["0", "100m", "1", "1Gi", "128Mi", "2.5", "1e3", "500Ki"];
const KEYS = ["app", "tier", "orch.io/name", "a", "z", "é", "🚀", "key-with-dashes", "__proto__"];

/** Random JSON objects of a schema type, deterministic for a seed. */
export class ObjectGenerator {
  readonly #registry: SchemaRegistry;
  readonly #random: () => number;

  constructor(registry: SchemaRegistry, seed: number) {
    this.#registry = registry;
    this.#random = seededRandom(seed);
  }

  #int(min: number, max: number): number {
    return min + Math.floor(this.#random() * (max - min + 1));
  }

  #pick<T>(items: readonly T[]): T {
    return items[this.#int(0, items.length - 1)]!;
  }

  #chance(p: number): boolean {
    return this.#random() < p;
  }

  object(typeName: string, depth = 0): JsonObject {
    const def: TypeDef = this.#registry.mustGet(typeName);
    const out: JsonObject = {};
    // Deep types get sparser so objects stay small; the root and its children stay rich.
    const p = depth < 2 ? 0.8 : depth < 5 ? 0.45 : 0.15;
    for (const [name, field] of Object.entries(def.fields)) {
      if (!this.#chance(p)) continue;
      if (this.#chance(0.03)) {
        out[name] = null; // Protobuf has no null: dropped
        continue;
      }
      out[name] = this.value(field.schema, depth + 1);
    }
    if (this.#chance(0.1)) out["zzNotInSchema"] = "dropped on encode";
    return out;
  }

  value(schema: Schema, depth: number): unknown {
    switch (schema.type) {
      case "string":
        if (schema.enum !== undefined) return this.#pick(schema.enum);
        if (schema.format === "byte") return Buffer.from(Array.from({ length: this.#int(0, 9) }, () => this.#int(0, 255))).toString("base64");
        return this.#chance(0.15) ? "" : this.#pick(STRINGS);
      case "integer":
        if (this.#chance(0.2)) return 0;
        if (schema.format === "int32") return this.#chance(0.5) ? this.#int(-3, 300) : this.#int(-2147483648, 2147483647);
        return this.#chance(0.5) ? this.#int(-3, 70000) : this.#int(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
      case "number":
        return this.#chance(0.2) ? 0 : (this.#random() - 0.5) * 1e6;
      case "boolean":
        return this.#chance(0.5);
      case "any":
        return this.#json(2);
      case "array":
        return Array.from({ length: this.#chance(0.1) ? 0 : this.#int(1, 3) }, () => this.value(schema.items, depth + 1));
      case "map": {
        const out: JsonObject = {};
        const n = this.#chance(0.1) ? 0 : this.#int(1, 4);
        for (let i = 0; i < n; i++) {
          const k = this.#pick(KEYS);
          Object.defineProperty(out, k, { value: this.value(schema.values, depth + 1), enumerable: true, writable: true, configurable: true });
        }
        return out;
      }
      case "ref":
        if (!isWellKnown(schema.name)) return depth > 9 ? {} : this.object(schema.name, depth);
        switch (schema.name) {
          case WELL_KNOWN.quantity:
            return this.#pick(QUANTITIES);
          case WELL_KNOWN.intOrString:
            return this.#chance(0.5) ? this.#int(-100, 70000) : this.#pick(["http", "25%", "", "8080"]);
          case WELL_KNOWN.time:
            return this.#time(false);
          case WELL_KNOWN.microTime:
            return this.#time(true);
          default:
            return this.#json(2);
        }
    }
  }

  #time(micro: boolean): string {
    // 1900..2100, so negative Unix seconds are covered too.
    const ms = this.#int(-2208988800, 4102444800) * 1000;
    const base = new Date(ms).toISOString().slice(0, 19);
    return micro ? `${base}.${String(this.#int(0, 999999)).padStart(6, "0")}Z` : `${base}Z`;
  }

  #json(depth: number): JsonObject {
    const out: JsonObject = {};
    for (let i = this.#int(1, 3); i > 0; i--) {
      out[`f:${this.#pick(KEYS)}`] = depth > 0 && this.#chance(0.5) ? this.#json(depth - 1) : this.#pick([{}, 1, "s", true, [1, "two"]]);
    }
    return out;
  }
}

/**
 * What a JSON object becomes after encode and decode: unknown fields and nulls
 * dropped, empty lists and maps dropped, zero scalars dropped unless the field
 * keeps zeros (presence.ts), zero-valued map entries kept, Time at seconds.
 */
export function expectedAfterRoundTrip(registry: SchemaRegistry, typeName: string, obj: JsonObject): JsonObject {
  const def = registry.mustGet(typeName);
  const out: JsonObject = {};
  for (const [name, field] of Object.entries(def.fields)) {
    const v = obj[name];
    if (v === undefined || v === null || field.tag === 0) continue;
    const schema = field.schema;
    if (schema.type === "array") {
      if (!Array.isArray(v) || v.length === 0) continue;
      out[name] = v.map((item) => element(registry, schema.items, item));
    } else if (schema.type === "map") {
      const entries = Object.entries(v as JsonObject);
      if (entries.length === 0) continue;
      const m: JsonObject = {};
      for (const [k, item] of entries) Object.defineProperty(m, k, { value: element(registry, schema.values, item), enumerable: true, writable: true, configurable: true });
      out[name] = m;
    } else {
      const value = element(registry, schema, v);
      if (value === undefined) continue;
      const zero = value === "" || value === 0 || value === false;
      if (zero && (schema.type === "string" || schema.type === "integer" || schema.type === "number" || schema.type === "boolean") && !keepsZero(typeName, name, field.required)) continue;
      out[name] = value;
    }
  }
  return out;
}

function element(registry: SchemaRegistry, schema: Schema, v: unknown): unknown {
  if (schema.type === "ref") {
    if (!isWellKnown(schema.name)) return expectedAfterRoundTrip(registry, schema.name, (v ?? {}) as JsonObject);
    if (schema.name === WELL_KNOWN.quantity) return v === null || v === undefined || v === "" ? "0" : String(v);
    if (schema.name === WELL_KNOWN.time || schema.name === WELL_KNOWN.microTime) return v ?? undefined;
    if (schema.name === WELL_KNOWN.intOrString) return v ?? 0;
    return v ?? undefined;
  }
  if (schema.type === "any") return v ?? undefined;
  return v;
}

/** A pod as the API server stores it after defaulting, scheduling and a status update. */
export function benchPod(i = 0): Record<string, unknown> {
  const probe = { httpGet: { path: "/healthz", port: 8080, scheme: "HTTP" }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
  const container = (name: string) => ({
    name,
    image: `registry.example.com/team/${name}:v1.2.3`,
    command: ["/bin/server"],
    args: ["--port=8080", "--log-level=info"],
    ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
    env: [
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
      { name: "MODE", value: "production" },
    ],
    resources: { limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
    volumeMounts: [{ name: "config", mountPath: "/etc/config", readOnly: true }, { name: "kube-api-access", mountPath: "/var/run/secrets/orch.io/serviceaccount", readOnly: true }],
    livenessProbe: probe,
    readinessProbe: probe,
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
  });
  const status = (name: string) => ({
    name,
    state: { running: { startedAt: "2026-01-02T03:04:10Z" } },
    lastState: {},
    ready: true,
    restartCount: 0,
    image: `registry.example.com/team/${name}:v1.2.3`,
    imageID: `registry.example.com/team/${name}@sha256:${"ab".repeat(32)}`,
    containerID: `containerd://${"cd".repeat(32)}`,
    started: true,
  });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `web-7d4b9c8f6d-x${i}`,
      generateName: "web-7d4b9c8f6d-",
      namespace: "default",
      uid: "4b3c6e1a-7f0d-4a8e-9c2b-1d5e6f7a8b9c",
      resourceVersion: String(1000 + i),
      creationTimestamp: "2026-01-02T03:04:05Z",
      labels: { app: "web", "pod-template-hash": "7d4b9c8f6d", tier: "frontend" },
      annotations: { "orch.io/created-by": "deployment-controller" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-7d4b9c8f6d", uid: "9a8b7c6d-5e4f-3a2b-1c0d-ef1234567890", controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      volumes: [
        { name: "config", configMap: { name: "web-config", defaultMode: 420 } },
        { name: "kube-api-access", projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }, { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } }], defaultMode: 420 } },
      ],
      containers: [container("server")],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      serviceAccount: "default",
      nodeName: "node-1",
      securityContext: {},
      schedulerName: "default-scheduler",
      tolerations: [
        { key: "node.orch.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.orch.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
    },
    status: {
      phase: "Running",
      conditions: ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"].map((type) => ({
        type,
        status: "True",
        lastProbeTime: null,
        lastTransitionTime: "2026-01-02T03:04:11Z",
      })),
      hostIP: "10.0.0.11",
      hostIPs: [{ ip: "10.0.0.11" }],
      podIP: "10.244.1.17",
      podIPs: [{ ip: "10.244.1.17" }],
      startTime: "2026-01-02T03:04:05Z",
      containerStatuses: [status("server")],
      qosClass: "Burstable",
    },
  };
}
