// The admission plugin contract (seed 000, "Dry run" 1 and 3): what a plugin
// sees of a request and what it declares. It lives with the kind declarations
// because a kind may bring its own plugins (`ResourceDefinition.admission`);
// the chain that runs them is the API server's (src/apiserver/admission/).

import type { ApiObject, GroupResource } from "../machinery/index.js";

/** CONNECT is a connect subresource (pods/exec, pods/attach): its object is the options (PodExecOptions, PodAttachOptions). */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** What a plugin sees of one request. `object` is the plugin's to change in the mutating phase only. */
export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly resource: GroupResource;
  readonly kind: string;
  readonly subresource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string;
  /** The object being written (CREATE, UPDATE), the connect options (CONNECT, without metadata); undefined on DELETE. */
  readonly object: ApiObject | undefined;
  /** The stored object (UPDATE, DELETE). */
  readonly oldObject: ApiObject | undefined;
  readonly dryRun: boolean;
  /** Who asked (`request.user`: the authenticated user, after impersonation) and the request's ways back to them; absent on writes the server makes itself. */
  readonly request?: AdmissionRequest;
  /** The version the objects are in, for a kind with a conversion (a custom resource's request version); absent: the resource's preferred version. */
  readonly version?: string;
  /**
   * What the kind does to an object a mutating webhook's patch produced, as upstream decodes and
   * defaults it again: drops the fields a custom resource's schema does not name, then applies
   * the kind's defaults. In place; absent where there is no object to write.
   */
  readonly normalize?: (obj: ApiObject) => void;
}

/** The requester as admission sees it (upstream's user.Info). */
export interface AdmissionUser {
  readonly name: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What a plugin may know of the request beyond the object: the user, and the Warning headers and audit annotations it may add. */
export interface AdmissionRequest {
  readonly user: AdmissionUser | undefined;
  /** A `Warning:` header on the response (kubectl prints it). */
  warn(text: string): void;
  /** An annotation on the request's audit event. */
  annotate(key: string, value: string): void;
  /** The request spent `seconds` waiting for a webhook (left out of its SLI latency). */
  calledOut?(seconds: number): void;
}

/**
 * Upstream's webhook sideEffects classes: `None` and `NoneOnDryRun` may run
 * on dry-run requests (the latter must skip its effects when `dryRun`);
 * `Some` and `Unknown` make a dry-run request they handle fail.
 */
export type SideEffects = "None" | "NoneOnDryRun" | "Some" | "Unknown";

/** What every plugin declares: its name, side effects and which requests it looks at. */
export interface AdmissionPlugin {
  readonly name: string;
  /** Default "None": built-in plugins only read and change the request. */
  readonly sideEffects?: SideEffects;
  /** Whether the plugin looks at this request at all (default: every request). */
  handles?(attrs: AdmissionAttributes): boolean;
}

export interface MutatingPlugin extends AdmissionPlugin {
  /** Change `attrs.object` in place, or throw an ApiError to refuse the request. */
  admit(attrs: AdmissionAttributes): void | Promise<void>;
}

export interface ValidatingPlugin extends AdmissionPlugin {
  /** Throw an ApiError to refuse the request; the object must not be changed. */
  validate(attrs: AdmissionAttributes): void | Promise<void>;
}

/**
 * Times the chain's work (the admission metrics implement it): each phase
 * (`plugin` undefined) and each plugin within it. `run`'s outcome is passed on.
 */
export interface AdmissionTiming {
  /** Returns what `run` returned, settled the same way: a promise only when `run` gave one (a synchronous plugin costs no promise). */
  time(type: "admit" | "validate", operation: AdmissionOperation, plugin: string | undefined, run: () => void | Promise<void>): void | Promise<void>;
}

export interface AdmissionOptions {
  readonly mutating?: readonly MutatingPlugin[];
  readonly validating?: readonly ValidatingPlugin[];
  /** Kept by with(): every chain made from this one is timed alike. */
  readonly timing?: AdmissionTiming;
}
