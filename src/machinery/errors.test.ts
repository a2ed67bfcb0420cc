import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ApiError,
  alreadyExists,
  applyConflict,
  badRequest,
  conflict,
  continueExpired,
  forbidden,
  generateNameConflict,
  gone,
  internalError,
  invalid,
  isApiError,
  isTooLargeResourceVersion,
  listExpired,
  methodNotSupported,
  notAcceptable,
  notAcceptableConversion,
  notFound,
  requestEntityTooLarge,
  serverTimeout,
  serviceUnavailable,
  statusFromError,
  timeout,
  tooLargeResourceVersion,
  tooManyRequests,
  tooOldResourceVersion,
  unauthorized,
  unsupportedMediaType,
  watchExpired,
} from "./errors.js";
import { field } from "./field-errors.js";
import { buildStatus, isStatusObject } from "./status.js";

const pods = { group: "", resource: "pods" };
const deployments = { group: "apps", resource: "deployments" };

// Each row: the error, then its exact wire bytes (upstream's field order and omitempty).
const cases: Array<[string, ApiError, string]> = [
  [
    "notFound core",
    notFound(pods, "x"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"x\\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404}`,
  ],
  [
    "notFound with group",
    notFound(deployments, "x"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \\"x\\" not found","reason":"NotFound","details":{"name":"x","group":"apps","kind":"deployments"},"code":404}`,
  ],
  [
    "alreadyExists",
    alreadyExists(pods, "x"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"x\\" already exists","reason":"AlreadyExists","details":{"name":"x","kind":"pods"},"code":409}`,
  ],
  [
    "conflict, stale resourceVersion",
    conflict(pods, "x"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on pods \\"x\\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"x","kind":"pods"},"code":409}`,
  ],
  [
    "conflict, custom reason",
    conflict(deployments, "web", "the UID in the precondition (a) does not match the UID in record (b). The object might have been deleted and then recreated"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on deployments.apps \\"web\\": the UID in the precondition (a) does not match the UID in record (b). The object might have been deleted and then recreated","reason":"Conflict","details":{"name":"web","group":"apps","kind":"deployments"},"code":409}`,
  ],
  [
    "invalid, one cause without brackets",
    invalid({ group: "", kind: "Pod" }, "x", [field.required("spec.containers")]),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod \\"x\\" is invalid: spec.containers: Required value","reason":"Invalid","details":{"name":"x","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers"}]},"code":422}`,
  ],
  [
    "badRequest",
    badRequest("specifying resource version is not allowed when using continue"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"specifying resource version is not allowed when using continue","reason":"BadRequest","code":400}`,
  ],
  [
    "unauthorized default",
    unauthorized(),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"not authorized","reason":"Unauthorized","code":401}`,
  ],
  [
    "forbidden",
    forbidden(pods, "x", `User "bob" cannot get resource "pods" in API group "" in the namespace "default"`),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"x\\" is forbidden: User \\"bob\\" cannot get resource \\"pods\\" in API group \\"\\" in the namespace \\"default\\"","reason":"Forbidden","details":{"name":"x","kind":"pods"},"code":403}`,
  ],
  [
    "expired, too old resource version",
    tooOldResourceVersion(5, 9),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410}`,
  ],
  [
    "continue token expired with an inconsistent-continuation token",
    continueExpired("tok"),
    `{"kind":"Status","apiVersion":"v1","metadata":{"continue":"tok"},"status":"Failure","message":"The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.","reason":"Expired","code":410}`,
  ],
  [
    "notAcceptable",
    notAcceptable(["application/json", "application/yaml"]),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"only the following media types are accepted: application/json, application/yaml","reason":"NotAcceptable","code":406}`,
  ],
  [
    "unsupportedMediaType",
    unsupportedMediaType(["application/json-patch+json", "application/merge-patch+json"]),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json","reason":"UnsupportedMediaType","code":415}`,
  ],
  [
    "methodNotSupported",
    methodNotSupported(deployments, "watch"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"watch is not supported on resources of kind \\"deployments.apps\\"","reason":"MethodNotAllowed","details":{"group":"apps","kind":"deployments"},"code":405}`,
  ],
  [
    "requestEntityTooLarge",
    requestEntityTooLarge("limit is 3145728"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}`,
  ],
  [
    "tooLargeResourceVersion",
    tooLargeResourceVersion(100, 42),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 100, current: 42","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}`,
  ],
  [
    "timeout without retry keeps an empty details, as upstream",
    timeout("request did not complete within requested timeout", 0),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within requested timeout","reason":"Timeout","details":{},"code":504}`,
  ],
  [
    "internalError",
    internalError(new Error("boom")),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: boom","reason":"InternalError","details":{"causes":[{"message":"boom"}]},"code":500}`,
  ],
  [
    "serviceUnavailable",
    serviceUnavailable("storage is starting"),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"storage is starting","reason":"ServiceUnavailable","code":503}`,
  ],
];

for (const [name, err, json] of cases) {
  test(`status bytes: ${name}`, () => {
    assert.equal(JSON.stringify(err.status), json);
    assert.ok(err instanceof ApiError && err instanceof Error);
    assert.equal(err.message, err.status.message);
    assert.equal(err.code, err.status.code);
  });
}

test("codes and reasons of the remaining constructors", () => {
  const rows: Array<[ApiError, number, string, string]> = [
    [gone("gone away"), 410, "Gone", "gone away"],
    [listExpired(), 410, "Expired", "The resourceVersion for the provided list is too old."],
    [watchExpired(), 410, "Expired", "The resourceVersion for the provided watch is too old."],
    [
      continueExpired(),
      410,
      "Expired",
      "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
    ],
    [
      notAcceptableConversion("Table", ["application/json"]),
      406,
      "NotAcceptable",
      "only the following media types are accepted when converting to Table: application/json",
    ],
    [
      generateNameConflict(pods, "web-abcde", 1),
      409,
      "AlreadyExists",
      `pods "web-abcde" already exists, the server was not able to generate a unique name for the object`,
    ],
    [applyConflict([{ reason: "FieldManagerConflict", message: "conflict with kubectl", field: ".spec.replicas" }], "Apply failed with 1 conflict"), 409, "Conflict", "Apply failed with 1 conflict"],
    [tooManyRequests("slow down", 1), 429, "TooManyRequests", "slow down"],
    [serverTimeout(pods, "list", 2), 500, "ServerTimeout", "The list operation against pods could not be completed at this time, please try again."],
    [unauthorized("Unauthorized"), 401, "Unauthorized", "Unauthorized"],
    [forbidden({ group: "", resource: "" }, "", "no"), 403, "Forbidden", "forbidden: no"],
    [forbidden(deployments, "", "no"), 403, "Forbidden", "deployments.apps is forbidden: no"],
  ];
  for (const [err, code, reason, message] of rows) {
    assert.deepEqual([err.code, err.reason, err.message], [code, reason, message]);
  }
  assert.equal(serverTimeout(pods, "list", 2).retryAfterSeconds, 2);
});

test("invalid with several causes brackets them, drops duplicate messages, keeps every cause", () => {
  const err = invalid({ group: "apps", kind: "Deployment" }, "web", [
    field.invalid("spec.replicas", -1, "must be greater than or equal to 0"),
    field.required("metadata.name", "name or generateName is required"),
    field.invalid("spec.replicas", -1, "must be greater than or equal to 0"),
  ]);
  assert.equal(
    err.message,
    `Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, metadata.name: Required value: name or generateName is required]`,
  );
  assert.equal(err.status.details?.causes?.length, 3);
  assert.deepEqual(err.status.details?.causes?.[1], {
    reason: "FieldValueRequired",
    message: "Required value: name or generateName is required",
    field: "metadata.name",
  });
  assert.equal(err.status.details?.kind, "Deployment");
  assert.equal(invalid({ group: "", kind: "Pod" }, "x", []).message, `Pod "x" is invalid`);
});

test("isApiError, isTooLargeResourceVersion and statusFromError", () => {
  const e = notFound(pods, "x");
  assert.ok(isApiError(e));
  assert.ok(isApiError(e, "NotFound"));
  assert.equal(isApiError(e, "Conflict"), false);
  assert.equal(isApiError(new Error("x")), false);
  assert.ok(isTooLargeResourceVersion(tooLargeResourceVersion(2, 1)));
  assert.ok(!isTooLargeResourceVersion(timeout("x", 1)));
  assert.equal(statusFromError(e), e.status);
  assert.equal(
    JSON.stringify(statusFromError(new Error("disk on fire"))),
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"disk on fire","code":500}`,
  );
  assert.equal(internalError(new Error("x")).cause instanceof Error, true);
});

test("names with quotes and control characters are quoted as Go's %q", () => {
  assert.equal(notFound(pods, 'a"b\n').message, `pods "a\\"b\\n" not found`);
});

test("buildStatus drops empty fields and isStatusObject recognizes bodies", () => {
  const s = buildStatus({ code: 200, reason: "", message: "", status: "Success", details: { name: "x", causes: [] } });
  assert.equal(JSON.stringify(s), `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"x"},"code":200}`);
  assert.ok(isStatusObject(s));
  assert.ok(isStatusObject({ kind: "Status", apiVersion: "meta.k8s.io/v1" }));
  assert.ok(!isStatusObject({ kind: "Pod", apiVersion: "v1" }));
  assert.ok(!isStatusObject(null));
});
