// The PodSecurity admission plugin (upstream's built-in of that name): a
// validating plugin for pods (create, update, ephemeral containers), for the
// pod templates of workloads (warn and audit only, as upstream: the pods they
// make are checked when created) and for namespaces (their policy labels must
// parse; tightening enforce warns about existing pods that would violate it).
// Enforce refuses with 403, warn answers `Warning:` headers, audit annotates
// the request's audit event (pod-security.<key domain>/audit-violations).

import { forbidden, invalid, isApiError, notFound, type ApiObject } from "../../../machinery/index.js";
import type { AdmissionAttributes, ValidatingPlugin } from "../../../api/admission.js";
import { evaluatePod, forbiddenDetail, forbiddenReason, type PodMetaLike, type PodSpecLike } from "./checks.js";
import type { PodSecurityConfig } from "./config.js";
import { levelRank, levelVersionString, policyOf, type LevelVersion } from "./levels.js";

export interface PodSecurityDeps {
  readonly config: PodSecurityConfig;
  readonly keyDomain: string;
  readonly namespace: (name: string) => Promise<ApiObject>;
  readonly pods: (namespace: string) => Promise<readonly ApiObject[]>;
}

/** Upstream's cap on the existing pods checked when a namespace's enforce level tightens. */
const MAX_PODS_CHECKED = 3000;

/** Pod subresources that cannot change what the checks read. */
const IGNORED_POD_SUBRESOURCES = new Set(["exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"]);

type Template = { meta: PodMetaLike; spec: PodSpecLike } | undefined;

export function podSecurity(deps: PodSecurityDeps): ValidatingPlugin {
  const templates = templateReaders();
  const annotation = (key: string) => `pod-security.${deps.keyDomain}/${key}`;
  return {
    name: "PodSecurity",
    handles: (a) =>
      a.operation !== "DELETE" &&
      ((a.resource.group === "" && a.resource.resource === "pods" && !IGNORED_POD_SUBRESOURCES.has(a.subresource ?? "")) ||
        (a.subresource === undefined && (templates.has(key(a)) || (a.resource.group === "" && a.resource.resource === "namespaces")))),
    async validate(a) {
      if (a.resource.resource === "namespaces" && a.resource.group === "") return validateNamespace(a);
      const read = a.resource.resource === "pods" && a.resource.group === "" ? podTemplate : templates.get(key(a))!;
      const next = read(a.object);
      if (next === undefined) return;
      const pod = a.resource.resource === "pods" && a.resource.group === "";
      if (a.operation === "UPDATE") {
        const before = read(a.oldObject);
        if (before !== undefined && (pod ? !significantPodUpdate(next, before) : JSON.stringify(next) === JSON.stringify(before))) return;
      }
      const namespace = a.namespace ?? "";
      const exempt = exemption(a, next.spec);
      if (exempt !== undefined) return void a.request?.annotate(annotation("exempt"), exempt);
      const policy = policyOf((await lookupNamespace(namespace)).metadata.labels, deps.config.defaults, deps.keyDomain).policy;
      const cache = new Map<string, ReturnType<typeof evaluatePod>>();
      const evaluate = (lv: LevelVersion) => {
        const id = levelVersionString(lv);
        if (!cache.has(id)) cache.set(id, evaluatePod(lv, next.meta, next.spec));
        return cache.get(id)!;
      };
      if (pod) {
        a.request?.annotate(annotation("enforce-policy"), levelVersionString(policy.enforce));
        const violations = evaluate(policy.enforce);
        if (violations.length > 0) {
          throw forbidden(a.resource, a.name, `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${forbiddenDetail(violations)}`);
        }
      }
      const audit = evaluate(policy.audit);
      if (audit.length > 0) a.request?.annotate(annotation("audit-violations"), `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${forbiddenDetail(audit)}`);
      const warn = evaluate(policy.warn);
      if (warn.length > 0) a.request?.warn(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${forbiddenDetail(warn)}`);
    },
  };

  function exemption(a: AdmissionAttributes, spec: PodSpecLike): string | undefined {
    const { namespaces, usernames, runtimeClasses } = deps.config.exemptions;
    if (namespaces.has(a.namespace ?? "")) return "namespace";
    const user = a.request?.user?.name;
    if (user !== undefined && usernames.has(user)) return "user";
    if (spec.runtimeClassName != null && runtimeClasses.has(spec.runtimeClassName)) return "runtimeClass";
    return undefined;
  }

  async function lookupNamespace(name: string): Promise<ApiObject> {
    try {
      return await deps.namespace(name);
    } catch (err) {
      if (isApiError(err, "NotFound")) throw notFound({ group: "", resource: "namespaces" }, name);
      throw err;
    }
  }

  async function validateNamespace(a: AdmissionAttributes): Promise<void> {
    const ns = a.object!;
    const { policy, errors } = policyOf(ns.metadata.labels, deps.config.defaults, deps.keyDomain);
    const kind = { group: "", kind: "Namespace" };
    if (a.operation === "CREATE") {
      if (errors.length > 0) throw invalid(kind, a.name, errors);
      return;
    }
    const old = policyOf(a.oldObject?.metadata.labels, deps.config.defaults, deps.keyDomain);
    if (errors.length > 0 && JSON.stringify(errors) !== JSON.stringify(old.errors)) throw invalid(kind, a.name, errors);
    // Existing pods are checked only when enforce got stricter (or moved version) and is not privileged.
    const now = policy.enforce;
    const before = old.policy.enforce;
    if (levelVersionString(now) === levelVersionString(before) || now.level === "privileged") return;
    if (now.minor === before.minor && now.latest === before.latest && levelRank(now.level) <= levelRank(before.level)) return;
    if (deps.config.exemptions.namespaces.has(a.name)) return;
    for (const w of podWarnings(a.name, now, await deps.pods(a.name))) a.request?.warn(w);
  }
}

/** Upstream's warnings for existing pods: pods grouped by identical reasons, the lexically first named. */
function podWarnings(namespace: string, enforce: LevelVersion, pods: readonly ApiObject[]): string[] {
  const out: string[] = [];
  const checked = pods.slice(0, MAX_PODS_CHECKED);
  if (checked.length < pods.length) out.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
  const byReason = new Map<string, { name: string; count: number }>();
  for (const p of checked) {
    const t = podTemplate(p)!;
    const results = evaluatePod(enforce, t.meta, t.spec);
    if (results.length === 0) continue;
    const reason = forbiddenReason(results);
    const name = p.metadata.name ?? "";
    const seen = byReason.get(reason);
    if (seen === undefined) byReason.set(reason, { name, count: 1 });
    else byReason.set(reason, { name: name < seen.name ? name : seen.name, count: seen.count + 1 });
  }
  if (byReason.size === 0) return out;
  out.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`);
  const decorated = [...byReason.entries()].map(([reason, { name, count }]) =>
    count === 1 ? `${name}: ${reason}` : count === 2 ? `${name} (and 1 other pod): ${reason}` : `${name} (and ${count - 1} other pods): ${reason}`,
  );
  return [...out, ...decorated.sort()];
}

function podTemplate(obj: ApiObject | undefined): Template {
  if (obj === undefined) return undefined;
  return { meta: obj.metadata ?? {}, spec: ((obj as { spec?: PodSpecLike }).spec ?? {}) as PodSpecLike };
}

/** A pod update matters only if an image or a seccomp annotation changed, or an ephemeral container came (upstream's rule). */
function significantPodUpdate(next: NonNullable<Template>, old: NonNullable<Template>): boolean {
  const seccomp = (t: NonNullable<Template>) => JSON.stringify(Object.entries(t.meta.annotations ?? {}).filter(([k]) => k.includes("seccomp.security.alpha.kubernetes.io/")).sort());
  if (seccomp(next) !== seccomp(old)) return true;
  const images = (cs: { image?: string }[] | null | undefined) => JSON.stringify((cs ?? []).map((c) => c.image ?? ""));
  const s = next.spec as PodSpecLike & { containers?: { image?: string }[]; initContainers?: { image?: string }[]; ephemeralContainers?: { image?: string }[] };
  const o = old.spec as typeof s;
  return images(s.containers) !== images(o.containers) || images(s.initContainers) !== images(o.initContainers) || images(s.ephemeralContainers) !== images(o.ephemeralContainers);
}

function key(a: AdmissionAttributes): string {
  return `${a.resource.group}/${a.resource.resource}`;
}

/** Where each workload keeps its pod template. */
function templateReaders(): Map<string, (obj: ApiObject | undefined) => Template> {
  const at = (path: string[]) => (obj: ApiObject | undefined): Template => {
    let t: unknown = obj;
    for (const p of path) t = (t as Record<string, unknown> | undefined)?.[p];
    if (typeof t !== "object" || t === null) return undefined;
    const tpl = t as { metadata?: PodMetaLike; spec?: PodSpecLike };
    return { meta: tpl.metadata ?? {}, spec: tpl.spec ?? {} };
  };
  const spec = at(["spec", "template"]);
  return new Map([
    ["/podtemplates", at(["template"])],
    ["/replicationcontrollers", spec],
    ["apps/deployments", spec],
    ["apps/replicasets", spec],
    ["apps/statefulsets", spec],
    ["apps/daemonsets", spec],
    ["batch/jobs", spec],
    ["batch/cronjobs", at(["spec", "jobTemplate", "spec", "template"])],
  ]);
}
