// Requests a test server holds in its handler, for the limit tests
// (filters/inflight.test.ts, filters/timeout.test.ts): a read that waits for a
// resource version the server has not reached, and creates held in admission.

import type { AdmissionOptions } from "../admission/index.js";

/** The sample widgets' collection in `default`. */
export const WIDGETS = "/apis/samples.orch.io/v1/namespaces/default/widgets";

/** A read the server holds for about 3 s (it waits for a resource version it has not reached), then answers 504. */
export const SLOW_READ = `${WIDGETS}?resourceVersion=999999&resourceVersionMatch=NotOlderThan`;

export const widget = (name: string) => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name } });

/** An admission plugin that holds creates of objects named slow-* until release() is called. */
export function holdingAdmission(): { admission: AdmissionOptions; release(): void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return { admission: { mutating: [{ name: "TestHold", handles: (a) => a.name.startsWith("slow-"), admit: () => gate }] }, release };
}
