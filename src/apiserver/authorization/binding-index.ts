// The RBAC authorizer's view of one binding store (RoleBindings or
// ClusterRoleBindings), indexed by namespace and by subject: a request looks
// up the bindings that name its user, its groups or its service account
// instead of scanning every binding of the namespace (with 1,000 bindings the
// scan cost more than half of a GET). Built from the watch cache, rebuilt
// after any change to the store (the cache's live events), and at least every
// few seconds, as a reload of the cache is not an event. Order is the
// cache's, so the first binding that allows is the one upstream would name.

import type { RoleBinding, Subject } from "../../api/rbac/index.js";
import { goQuote } from "../../machinery/index.js";
import type { UserInfo } from "../filters/index.js";
import type { RegistryStore } from "../registry/store.js";

/** A binding and the subject of it that named the user. */
export interface Match {
  readonly binding: RoleBinding;
  readonly subject: Subject;
}

interface Entry {
  readonly position: number;
  readonly binding: RoleBinding;
  readonly subject: Subject;
}

interface NamespaceIndex {
  readonly byUser: Map<string, Entry[]>;
  readonly byGroup: Map<string, Entry[]>;
}

const MAX_AGE_MS = 5_000;
const NONE: readonly Match[] = Object.freeze([]);

export class BindingIndex {
  readonly #store: RegistryStore;
  #namespaces = new Map<string, NamespaceIndex>();
  /** Bumped by every change the cache reports; the index is good while it was built at this generation. */
  #generation = 0;
  #builtAt = -1;
  #builtTime = 0;
  #building: Promise<void> | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(store: RegistryStore) {
    this.#store = store;
  }

  /** The bindings in `namespace` ("" for cluster bindings) whose subjects name the user, in the store's order. */
  async matching(user: UserInfo, namespace: string): Promise<readonly Match[]> {
    await this.#fresh();
    const index = this.#namespaces.get(namespace);
    if (index === undefined) return NONE;
    const found: Entry[] = [];
    const add = (entries: Entry[] | undefined) => {
      if (entries !== undefined) found.push(...entries);
    };
    add(index.byUser.get(user.name));
    for (const g of user.groups) add(index.byGroup.get(g));
    if (found.length === 0) return NONE;
    found.sort((a, b) => a.position - b.position);
    // A binding naming the user twice (as a user and through a group) counts once, with its first subject.
    const out: Match[] = [];
    for (let i = 0; i < found.length; i++) if (i === 0 || found[i]!.position !== found[i - 1]!.position) out.push(found[i]!);
    return out;
  }

  close(): void {
    this.#unsubscribe?.();
  }

  async #fresh(): Promise<void> {
    if (this.#unsubscribe === undefined) this.#unsubscribe = this.#store.cacher.subscribe(() => void this.#generation++);
    if (this.#builtAt === this.#generation && performance.now() - this.#builtTime < MAX_AGE_MS) return;
    // One rebuild at a time; requests meanwhile wait for it.
    this.#building ??= this.#rebuild().finally(() => (this.#building = undefined));
    await this.#building;
  }

  async #rebuild(): Promise<void> {
    const generation = this.#generation;
    const { items } = await this.#store.cacher.list(this.#store.prefixFor(undefined), { mode: "Any" });
    const namespaces = new Map<string, NamespaceIndex>();
    items.forEach((item, position) => {
      const binding = item.object as RoleBinding;
      const namespace = binding.metadata.namespace ?? "";
      let index = namespaces.get(namespace);
      if (index === undefined) namespaces.set(namespace, (index = { byUser: new Map(), byGroup: new Map() }));
      for (const subject of binding.subjects ?? []) {
        const key = subjectKey(subject, namespace);
        if (key === undefined) continue;
        const map = key.group ? index.byGroup : index.byUser;
        const list = map.get(key.name);
        const entry = { position, binding, subject };
        if (list === undefined) map.set(key.name, [entry]);
        else if (list[list.length - 1]!.position !== position) list.push(entry);
      }
    });
    this.#namespaces = namespaces;
    this.#builtAt = generation;
    this.#builtTime = performance.now();
  }
}

/** The user name or group a subject names (a ServiceAccount as the user it authenticates as), as rbac.ts#appliesTo matches them. */
function subjectKey(subject: Subject, bindingNamespace: string): { name: string; group: boolean } | undefined {
  switch (subject.kind) {
    case "User":
      return { name: subject.name ?? "", group: false };
    case "Group":
      return { name: subject.name ?? "", group: true };
    case "ServiceAccount": {
      const namespace = subject.namespace || bindingNamespace;
      return namespace === "" ? undefined : { name: `system:serviceaccount:${namespace}:${subject.name ?? ""}`, group: false };
    }
    default:
      return undefined;
  }
}

/** Upstream's binding description in RBAC's reasons: `ClusterRoleBinding "x" of ClusterRole "y" to User "alice"`. */
export function describeBinding(b: RoleBinding, subject: Subject, namespace: string): string {
  const ref = b.roleRef ?? {};
  const who = subject.kind === "ServiceAccount"
    ? `ServiceAccount ${goQuote(`${subject.name ?? ""}/${subject.namespace || namespace}`)}`
    : `${subject.kind ?? ""} ${goQuote(subject.name ?? "")}`;
  const name = namespace === "" ? b.metadata.name ?? "" : `${b.metadata.name ?? ""}/${namespace}`;
  return `${namespace === "" ? "ClusterRoleBinding" : "RoleBinding"} ${goQuote(name)} of ${ref.kind ?? ""} ${goQuote(ref.name ?? "")} to ${who}`;
}
