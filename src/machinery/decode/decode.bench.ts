// Parse-speed figures for the body decoders (run after a build:
// node dist/src/machinery/decode/decode.bench.js). Each line: microseconds per
// operation, the median of seven timed rounds after a warm-up.

import { parseJsonBody } from "./json.js";
import { parseYamlBody, toYaml } from "./yaml.js";
import { checkFields } from "./field-validation.js";
import { POD_JSON, POD_TYPE, podObject, registry } from "./testing.js";
import { microBench } from "../testing/micro-bench.js";

/** Up to 2000 warm-up calls; names up to 44 characters. */
function bench(name: string, iterations: number, fn: () => unknown): void {
  microBench(name, iterations, fn, { warmup: 2000, nameWidth: 44 });
}

const compact = JSON.stringify(JSON.parse(POD_JSON));
const big = JSON.stringify({ items: Array.from({ length: 330 }, () => JSON.parse(POD_JSON) as unknown) });
const podYaml = toYaml(podObject());
const reg = registry();
const pod = podObject();

console.log(`pod: ${compact.length} bytes of JSON, ${podYaml.length} of YAML; list: ${(big.length / 1024 / 1024).toFixed(2)} MB`);
bench("JSON.parse (native baseline), pod", 10000, () => JSON.parse(compact));
bench("parseJsonBody, pod", 10000, () => parseJsonBody(compact));
bench("JSON.parse (native baseline), 1 MB", 20, () => JSON.parse(big));
bench("parseJsonBody, 1 MB", 20, () => parseJsonBody(big));
bench("parseYamlBody, pod", 500, () => parseYamlBody(podYaml));
bench("toYaml, pod", 500, () => toYaml(pod));
bench("checkFields, pod", 10000, () => checkFields(pod, POD_TYPE, reg));
