// Conversion webhooks (spec.conversion.strategy: Webhook): a ConversionReview
// (v1, else v1beta1: the first of the definition's conversionReviewVersions
// this server speaks) POSTed over HTTPS to the webhook's URL or Service with
// its caBundle, as upstream's webhook converter sends it. The answer is
// checked as upstream checks it (uid, result, count, apiVersion, kind, and
// that name, namespace and uid did not change); metadata is restored from
// the original except labels and annotations. Failures are 500s with
// upstream's text: `conversion webhook for <group>/<version>, Kind=<kind> failed: ...`.

import { randomUUID } from "node:crypto";
import type { CustomResourceDefinition } from "../../api/apiextensions/index.js";
import { internalError, type ApiObject } from "../../machinery/index.js";
import { postReview, type ServiceResolver } from "../admission/webhooks/call.js";

const REVIEW_VERSIONS = ["v1", "v1beta1"];
/** Upstream sets no timeout of its own on the conversion call; its REST client's default is 30 s. */
const TIMEOUT_SECONDS = 30;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The definition's webhook converter (for CustomResourceOptions.webhookConvert). */
export function webhookConverter(crd: CustomResourceDefinition, resolve: ServiceResolver): (objects: readonly ApiObject[], apiVersion: string) => Promise<ApiObject[]> {
  const webhook = crd.spec?.conversion?.webhook ?? {};
  const clientConfig = webhook.clientConfig ?? {};
  const reviewVersion = (webhook.conversionReviewVersions ?? []).find((v) => REVIEW_VERSIONS.includes(v));
  const kind = crd.status?.acceptedNames?.kind || crd.spec?.names?.kind || "";
  return async (objects, apiVersion) => {
    if (objects.length === 0) return [];
    const from = String(objects[0]!.apiVersion ?? "");
    const gvk = `${from}, Kind=${objects.length > 1 ? `${kind}List` : kind}`;
    const fail = (message: string) => internalError(new Error(message));
    if (reviewVersion === undefined) throw fail("no supported conversion review versions");
    const uid = randomUUID();
    const review = {
      apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
      kind: "ConversionReview",
      request: { uid, desiredAPIVersion: apiVersion, objects },
    };
    let answer: unknown;
    try {
      answer = await postReview(clientConfig, review, TIMEOUT_SECONDS, resolve);
    } catch (err) {
      throw fail(`conversion webhook for ${gvk} failed: ${(err as Error).message.replace(/^failed to call webhook: /, "")}`);
    }
    let converted: unknown[];
    try {
      converted = convertedObjects(answer, reviewVersion, uid);
    } catch (err) {
      throw fail(`conversion webhook for ${gvk} failed: ${(err as Error).message}`);
    }
    if (converted.length !== objects.length) throw fail(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${objects.length}`);
    const [gv, toKind] = [apiVersion, kind];
    return converted.map((out, i) => {
      const original = objects[i]!;
      const at = objects.length > 1 ? `converted object at index ${i}` : "object at index 0";
      if (!isObject(out)) throw fail(`conversion webhook for ${gvk} returned invalid ${at}: not a JSON object`);
      if (out["apiVersion"] !== gv) throw fail(`conversion webhook for ${gvk} returned invalid ${at}: invalid groupVersion (expected ${gv}, received ${String(out["apiVersion"] ?? "")})`);
      if (out["kind"] !== (original.kind ?? toKind)) throw fail(`conversion webhook for ${gvk} returned invalid ${at}: invalid kind (expected ${original.kind ?? toKind}, received ${String(out["kind"] ?? "")})`);
      const problem = changedIdentity(original, out);
      if (problem !== undefined) throw fail(`conversion webhook for ${gvk} returned invalid ${objects.length > 1 ? at : "object"}: ${problem}`);
      try {
        return restoreMetadata(original, out) as ApiObject;
      } catch (err) {
        throw fail(`conversion webhook for ${gvk} returned invalid metadata${objects.length > 1 ? ` in object at index ${i}` : ""}: ${(err as Error).message}`);
      }
    });
  };
}

/** The response's convertedObjects, after upstream's checks of the review. */
function convertedObjects(answer: unknown, version: string, uid: string): unknown[] {
  if (!isObject(answer)) throw new Error("unrecognized response type");
  if (version === "v1") {
    const want = "apiextensions.k8s.io/v1, Kind=ConversionReview";
    const got = `${String(answer["apiVersion"] ?? "")}, Kind=${String(answer["kind"] ?? "")}`;
    if (got !== want) throw new Error(`expected webhook response of ${want}, got ${answer["apiVersion"] === undefined ? "/" : String(answer["apiVersion"])}, Kind=${String(answer["kind"] ?? "")}`);
  }
  const response = answer["response"];
  if (!isObject(response)) throw new Error("no response provided");
  if (version === "v1" && response["uid"] !== uid) throw new Error(`expected response.uid="${uid}", got "${String(response["uid"] ?? "")}"`);
  const result = isObject(response["result"]) ? response["result"] : {};
  if (result["status"] !== "Success") {
    if (typeof result["message"] === "string" && result["message"] !== "") throw new Error(result["message"]);
    throw new Error(`response.result.status was '${String(result["status"] ?? "")}', not 'Success'`);
  }
  return Array.isArray(response["convertedObjects"]) ? response["convertedObjects"] : [];
}

/** Name, namespace and uid must come back unchanged (upstream's validateConvertedObject). */
function changedIdentity(original: ApiObject, out: Json): string | undefined {
  const meta = isObject(out["metadata"]) ? out["metadata"] : {};
  const was = original.metadata ?? {};
  for (const key of ["name", "namespace", "uid"] as const) {
    const a = String(was[key] ?? "");
    const b = String(meta[key] ?? "");
    if (a !== b) return `must have the same ${key === "uid" ? "UID" : key}: ${a} != ${b}`;
  }
  return undefined;
}

/** The original's metadata, with the converted object's labels and annotations (upstream's restoreObjectMeta). */
function restoreMetadata(original: ApiObject, out: Json): Json {
  const response = out["metadata"];
  if (response === undefined) throw new Error("missing metadata in converted object");
  if (!isObject(response)) throw new Error(`invalid metadata of type ${typeof response} in converted object`);
  const meta: Json = structuredClone(original.metadata ?? {}) as Json;
  for (const field of ["labels", "annotations"]) {
    const value = response[field];
    if (value === undefined || value === null) {
      delete meta[field];
      continue;
    }
    if (!isObject(value)) throw new Error(`invalid metadata.${field} of type ${Array.isArray(value) ? "array" : typeof value} in converted object`);
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== "string") throw new Error(`metadata.${field}[${k}] must be a string, but is ${typeof v} in converted object`);
    }
    meta[field] = value;
  }
  return { ...out, metadata: meta };
}
