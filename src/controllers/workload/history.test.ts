// A revision's data is upstream's getPatch text: the template as Go's
// encoding/json writes it once decoded into upstream's typed PodTemplateSpec
// (machinery's goTypedValue over the core schemas).

import { test } from "node:test";
import assert from "node:assert/strict";
import { revisionData, templateOf, type ControllerRevision } from "./history.js";

/** The template part of the revision data, `$patch` taken out. */
const template = (t: unknown) => JSON.stringify(templateOf({ data: revisionData(t) } as ControllerRevision));

test("the data is {spec:{template:{$patch:replace,...}}} with $patch first, as Go sorts it", () => {
  assert.equal(JSON.stringify(revisionData({ spec: { containers: [{ name: "c" }] } })), '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":{"containers":[{"name":"c","resources":{}}]}}}}');
});

test("fields Go always writes appear when unset: creationTimestamp null, resources {}, required scalars and lists as their zero", () => {
  assert.equal(
    template({ spec: { containers: [{ image: "x" }] } }),
    '{"metadata":{"creationTimestamp":null},"spec":{"containers":[{"image":"x","name":"","resources":{}}]}}',
  );
  assert.equal(template({}), '{"metadata":{"creationTimestamp":null},"spec":{"containers":null}}');
});

test("omitempty drops zero scalars and empty lists and maps; pointers keep their zero; present structs stay, empty or not", () => {
  assert.equal(
    template({
      metadata: { labels: {}, annotations: { b: "2", a: "1" } },
      spec: { hostNetwork: false, terminationGracePeriodSeconds: 0, securityContext: {}, volumes: [], containers: [{ name: "c", stdin: false, ports: [{ containerPort: 80, hostPort: 0 }], env: [] }] },
    }),
    '{"metadata":{"annotations":{"a":"1","b":"2"},"creationTimestamp":null},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],"resources":{}}],"securityContext":{},"terminationGracePeriodSeconds":0}}',
  );
});

test("fields the schema does not know are dropped, as a typed client drops them; keys sort at every level", () => {
  assert.equal(
    template({ spec: { zzz: 1, containers: [{ name: "c", image: "i", unknown: true, args: ["b", "a"] }], dnsPolicy: "ClusterFirst" } }),
    '{"metadata":{"creationTimestamp":null},"spec":{"containers":[{"args":["b","a"],"image":"i","name":"c","resources":{}}],"dnsPolicy":"ClusterFirst"}}',
  );
});
