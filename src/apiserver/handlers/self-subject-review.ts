// POST .../authentication.<suffix>/v1/selfsubjectreviews: the caller's user
// as authentication (and impersonation) left it, in a SelfSubjectReview that
// is answered, not stored (api/authentication/self-subject-review.ts). Any
// other method is a 405; a body that is not a SelfSubjectReview is a 400
// (JSON and YAML are read; of Protobuf, the envelope is checked, the spec being empty).

import { AUTHENTICATION_VERSION, SELF_SUBJECT_REVIEW_KIND, SELF_SUBJECT_REVIEWS, type SelfSubjectReview } from "../../api/authentication/self-subject-review.js";
import { badRequest, methodNotSupported } from "../../machinery/index.js";
import { readBody } from "../http/body.js";
import { decodeObjectBody, mediaType } from "../http/decode-body.js";
import { PROTOBUF_MEDIA_TYPES } from "../../machinery/naming.js";
import { sendJson, type Incoming, type Outgoing } from "../http/respond.js";
import type { UserInfo } from "../filters/index.js";

const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export async function handleSelfSubjectReview(req: Incoming, res: Outgoing, group: string, user: UserInfo): Promise<void> {
  if (req.method !== "POST") throw methodNotSupported({ group, resource: SELF_SUBJECT_REVIEWS }, methodAction(req.method));
  const body = await readBody(req);
  const apiVersion = `${group}/${AUTHENTICATION_VERSION}`;
  const type = mediaType(req.headers["content-type"]);
  if (PROTOBUF_MEDIA_TYPES.includes(type)) {
    // kubectl posts Protobuf; the review's spec is empty, so the envelope's magic is all there is to check.
    if (!body.subarray(0, 4).equals(PROTOBUF_MAGIC)) throw badRequest("the Protobuf body does not start with the envelope's magic number");
  } else if (body.length > 0) {
    const { value } = decodeObjectBody(req.headers["content-type"], body);
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw badRequest("the body of a SelfSubjectReview must be a JSON object");
    const { kind, apiVersion: sent } = value as { kind?: unknown; apiVersion?: unknown };
    if (kind !== undefined && kind !== SELF_SUBJECT_REVIEW_KIND) throw badRequest(`the body is a ${JSON.stringify(kind)}, not a ${SELF_SUBJECT_REVIEW_KIND}`);
    if (sent !== undefined && sent !== apiVersion) throw badRequest(`the body's apiVersion ${JSON.stringify(sent)} does not match the request's ${JSON.stringify(apiVersion)}`);
  }
  const review: SelfSubjectReview = {
    apiVersion,
    kind: SELF_SUBJECT_REVIEW_KIND,
    metadata: { creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z") },
    status: {
      userInfo: {
        username: user.name,
        ...(user.uid !== undefined ? { uid: user.uid } : {}),
        groups: [...user.groups],
        ...(user.extra !== undefined ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) } : {}),
      },
    },
  };
  sendJson(res, 201, review);
}

function methodAction(method: string | undefined): string {
  return ({ GET: "get", HEAD: "get", PUT: "update", PATCH: "patch", DELETE: "delete" } as Record<string, string>)[method ?? ""] ?? (method ?? "").toLowerCase();
}
