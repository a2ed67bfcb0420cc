// TypeScript view of a PriorityClass; fields optional, as request bodies are untrusted.

import type { ApiObject } from "../../machinery/index.js";

export interface PriorityClass extends ApiObject {
  value?: number;
  globalDefault?: boolean;
  description?: string;
  preemptionPolicy?: string | null;
}
