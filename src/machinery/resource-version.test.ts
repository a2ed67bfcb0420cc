import { test } from "node:test";
import assert from "node:assert/strict";
import {
  compareResourceVersions,
  decideGet,
  decideList,
  decideWatch,
  isValidResourceVersion,
  parseResourceVersion,
} from "./resource-version.js";
import type { ListMode, ListParams, ReadMode, WatchDecision, WatchParams } from "./resource-version.js";
import { encodeContinueToken } from "./continue-token.js";
import { ApiError } from "./errors.js";

const TOKEN = encodeContinueToken({ resourceVersion: 42, startKey: "default/web\u0000" });

function isBadRequest(message: string) {
  return (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, 400);
    assert.equal(e.message, message);
    return true;
  };
}

// --- format -------------------------------------------------------------------

test("resource version format and ordering (seed 000, 'Resource version format')", () => {
  assert.ok(isValidResourceVersion("1"));
  assert.ok(isValidResourceVersion("123456789012345678901234567890"));
  for (const bad of ["", "0", "01", "abc", "-1", "1.5", " 1"]) assert.ok(!isValidResourceVersion(bad), bad);
  const rows: Array<[string, string, number]> = [
    ["9", "10", -1],
    ["10", "9", 1],
    ["123", "124", -1],
    ["124", "124", 0],
    ["99999999999999999999", "100000000000000000000", -1],
  ];
  for (const [a, b, want] of rows) assert.equal(compareResourceVersions(a, b), want, `${a} vs ${b}`);
  assert.throws(() => compareResourceVersions("abc", "1"), ApiError);
});

test("parseResourceVersion", () => {
  assert.equal(parseResourceVersion("0"), 0);
  assert.equal(parseResourceVersion("42"), 42);
  assert.equal(parseResourceVersion("18446744073709551615"), 18446744073709551615);
  assert.throws(
    () => parseResourceVersion("abc"),
    isBadRequest(`invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`),
  );
  assert.throws(
    () => parseResourceVersion("18446744073709551616"),
    isBadRequest(
      `invalid resource version: resourceVersion: Invalid value: "18446744073709551616": strconv.ParseUint: parsing "18446744073709551616": value out of range`,
    ),
  );
  assert.throws(() => parseResourceVersion("007"), isBadRequest(`invalid resource version: resourceVersion: Invalid value: "007": must not have leading zeros`));
});

// --- get: seed table "get" -------------------------------------------------------

const getRows: Array<[string | undefined, ReadMode]> = [
  [undefined, { mode: "MostRecent" }],
  ["", { mode: "MostRecent" }],
  ["0", { mode: "Any" }],
  ["17", { mode: "NotOlderThan", rv: 17 }],
];
for (const [rv, want] of getRows) {
  test(`get rv=${JSON.stringify(rv)} → ${want.mode}`, () => assert.deepEqual(decideGet({ resourceVersion: rv }), want));
}
test("get with a malformed rv is a 400", () => assert.throws(() => decideGet({ resourceVersion: "x" }), ApiError));

// --- list: every cell of the seed table "list" --------------------------------------

const EXACT_FORBIDDEN_ZERO = `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`;
const MATCH_NEEDS_RV = `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`;
const RV_WITH_CONTINUE = "specifying resource version is not allowed when using continue";

type ListRow = [string, ListParams, ListMode | string];
const continuation: ListMode = { mode: "Continuation", token: TOKEN, rv: 42, startKey: "default/web\u0000" };

const listRows: ListRow[] = [
  // resourceVersionMatch unset, limit unset
  ["unset/no limit/rv unset", {}, { mode: "MostRecent" }],
  ["unset/no limit/rv 0", { resourceVersion: "0" }, { mode: "Any" }],
  ["unset/no limit/rv N", { resourceVersion: "5" }, { mode: "NotOlderThan", rv: 5 }],
  // resourceVersionMatch unset, limit=n, no continue
  ["unset/limit/rv unset", { limit: 10 }, { mode: "MostRecent" }],
  ["unset/limit/rv 0", { limit: 10, resourceVersion: "0" }, { mode: "Any" }],
  ["unset/limit/rv N", { limit: 10, resourceVersion: "5" }, { mode: "Exact", rv: 5 }],
  // resourceVersionMatch unset, limit=n, continue=token
  ["unset/continue/rv unset", { limit: 10, continue: TOKEN }, continuation],
  ["unset/continue/rv 0", { limit: 10, continue: TOKEN, resourceVersion: "0" }, continuation],
  ["unset/continue/rv N", { limit: 10, continue: TOKEN, resourceVersion: "5" }, RV_WITH_CONTINUE],
  // Exact, limit unset
  ["Exact/no limit/rv unset", { resourceVersionMatch: "Exact" }, MATCH_NEEDS_RV],
  ["Exact/no limit/rv 0", { resourceVersionMatch: "Exact", resourceVersion: "0" }, EXACT_FORBIDDEN_ZERO],
  ["Exact/no limit/rv N", { resourceVersionMatch: "Exact", resourceVersion: "5" }, { mode: "Exact", rv: 5 }],
  // Exact, limit=n without continue
  ["Exact/limit/rv unset", { resourceVersionMatch: "Exact", limit: 10 }, MATCH_NEEDS_RV],
  ["Exact/limit/rv 0", { resourceVersionMatch: "Exact", limit: 10, resourceVersion: "0" }, EXACT_FORBIDDEN_ZERO],
  ["Exact/limit/rv N", { resourceVersionMatch: "Exact", limit: 10, resourceVersion: "5" }, { mode: "Exact", rv: 5 }],
  // NotOlderThan, limit unset
  ["NotOlderThan/no limit/rv unset", { resourceVersionMatch: "NotOlderThan" }, MATCH_NEEDS_RV],
  ["NotOlderThan/no limit/rv 0", { resourceVersionMatch: "NotOlderThan", resourceVersion: "0" }, { mode: "Any" }],
  ["NotOlderThan/no limit/rv N", { resourceVersionMatch: "NotOlderThan", resourceVersion: "5" }, { mode: "NotOlderThan", rv: 5 }],
  // NotOlderThan, limit=n without continue
  ["NotOlderThan/limit/rv unset", { resourceVersionMatch: "NotOlderThan", limit: 10 }, MATCH_NEEDS_RV],
  ["NotOlderThan/limit/rv 0", { resourceVersionMatch: "NotOlderThan", limit: 10, resourceVersion: "0" }, { mode: "Any" }],
  ["NotOlderThan/limit/rv N", { resourceVersionMatch: "NotOlderThan", limit: 10, resourceVersion: "5" }, { mode: "NotOlderThan", rv: 5 }],
  // Beyond the table: the other invalid combinations upstream rejects.
  ["limit 0 is no limit", { limit: 0, resourceVersion: "5" }, { mode: "NotOlderThan", rv: 5 }],
  ["continue without limit still continues", { continue: TOKEN }, continuation],
  [
    "unknown match value",
    { resourceVersionMatch: "Newest", resourceVersion: "5" },
    `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""`,
  ],
  [
    "match with continue",
    { resourceVersionMatch: "NotOlderThan", resourceVersion: "5", continue: TOKEN, limit: 1 },
    `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`,
  ],
  [
    "match without rv, with continue: both errors",
    { resourceVersionMatch: "Exact", continue: TOKEN },
    `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided]`,
  ],
  ["sendInitialEvents on a list", { sendInitialEvents: true }, `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`],
  ["malformed continue token", { continue: "not a token", limit: 1 }, "invalid continue token: continue key is not valid: illegal base64 data at input byte 3"],
  [
    "malformed rv",
    { resourceVersion: "abc" },
    `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`,
  ],
];

for (const [name, params, want] of listRows) {
  test(`list ${name}`, () => {
    if (typeof want === "string") assert.throws(() => decideList(params), isBadRequest(want));
    else assert.deepEqual(decideList(params), want);
  });
}

test("list option errors carry ListOptions details and the configured meta group", () => {
  try {
    decideList({ resourceVersionMatch: "Exact" }, { metaGroup: "meta.orch.io" });
    assert.fail("expected an error");
  } catch (e) {
    assert.ok(e instanceof ApiError);
    assert.equal(e.reason, "BadRequest");
    assert.equal(e.message.startsWith(`ListOptions.meta.orch.io "" is invalid: `), true);
    assert.deepEqual(e.status.details, {
      group: "meta.orch.io",
      kind: "ListOptions",
      causes: [
        { reason: "FieldValueForbidden", message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided", field: "resourceVersionMatch" },
      ],
    });
  }
});

test("a continuation at rv -1 (upstream's inconsistent continuation) continues at the latest revision", () => {
  const token = encodeContinueToken({ resourceVersion: -1, startKey: "b" });
  assert.deepEqual(decideList({ continue: token, limit: 5 }), { mode: "Continuation", token, rv: -1, startKey: "b" });
});

// --- watch: every cell of the seed table "watch", then streaming lists --------------

function watch(start: ReadMode, sendInitialEvents: boolean, initialEventsEndBookmark = false, allowBookmarks = false): WatchDecision {
  return { start, sendInitialEvents, initialEventsEndBookmark, allowBookmarks };
}

type WatchRow = [string, WatchParams, WatchDecision | string];
const SEND_NEEDS_NOT_OLDER_THAN = `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`;

const watchRows: WatchRow[] = [
  // The seed's table: Get State and Start at Most Recent / Any, Start at Exact.
  ["rv unset", {}, watch({ mode: "MostRecent" }, true)],
  ["rv 0", { resourceVersion: "0" }, watch({ mode: "Any" }, true)],
  ["rv N", { resourceVersion: "9" }, watch({ mode: "Exact", rv: 9 }, false)],
  ["rv N with bookmarks", { resourceVersion: "9", allowWatchBookmarks: true }, watch({ mode: "Exact", rv: 9 }, false, false, true)],
  ["kubectl get -w on one object (rv 0)", { resourceVersion: "0", allowWatchBookmarks: true }, watch({ mode: "Any" }, true, false, true)],
  // Streaming lists (seed 000, "Watch behavior" 5).
  [
    "streaming list, rv unset: consistent read",
    { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true },
    watch({ mode: "MostRecent" }, true, true, true),
  ],
  [
    "streaming list, rv 0",
    { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", resourceVersion: "0", allowWatchBookmarks: true },
    watch({ mode: "Any" }, true, true, true),
  ],
  [
    "streaming list, rv N: synced at least to N",
    { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", resourceVersion: "9", allowWatchBookmarks: true },
    watch({ mode: "NotOlderThan", rv: 9 }, true, true, true),
  ],
  [
    "streaming list without bookmarks sends no end bookmark",
    { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" },
    watch({ mode: "MostRecent" }, true, false, false),
  ],
  [
    "sendInitialEvents=false, rv N: changes after N",
    { sendInitialEvents: false, resourceVersionMatch: "NotOlderThan", resourceVersion: "9" },
    watch({ mode: "Exact", rv: 9 }, false),
  ],
  ["sendInitialEvents=false, rv unset", { sendInitialEvents: false, resourceVersionMatch: "NotOlderThan" }, watch({ mode: "MostRecent" }, false)],
  // Invalid combinations.
  ["sendInitialEvents without a match", { sendInitialEvents: true }, SEND_NEEDS_NOT_OLDER_THAN],
  [
    "sendInitialEvents with Exact",
    { sendInitialEvents: true, resourceVersionMatch: "Exact", resourceVersion: "9" },
    `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`,
  ],
  [
    "a match without sendInitialEvents",
    { resourceVersionMatch: "NotOlderThan", resourceVersion: "9" },
    `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`,
  ],
  [
    "a match with continue",
    { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", continue: "x" },
    `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`,
  ],
  ["malformed rv", { resourceVersion: "nine" }, `invalid resource version: resourceVersion: Invalid value: "nine": strconv.ParseUint: parsing "nine": invalid syntax`],
];

for (const [name, params, want] of watchRows) {
  test(`watch ${name}`, () => {
    if (typeof want === "string") assert.throws(() => decideWatch(params), isBadRequest(want));
    else assert.deepEqual(decideWatch(params), want);
  });
}

test("watch: sendInitialEvents is refused while the WatchList gate is off", () => {
  assert.throws(
    () => decideWatch({ sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" }, { watchList: false }),
    isBadRequest(
      `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`,
    ),
  );
});
