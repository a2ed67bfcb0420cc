// Audit, from the flags to what the audit filter (filters/audit.ts) needs:
// the policy (policy.ts), the log (log-writer.ts) and the events' apiVersion.

import type { Naming } from "../../machinery/naming.js";
import { openAuditLog, type AuditSink } from "./log-writer.js";
import { loadPolicy, type Policy } from "./policy.js";

export { AuditPolicyError, evaluatePolicy, parsePolicy, type Policy } from "./policy.js";
export type { AuditEvent } from "./event.js";
export { addAuditAnnotation, auditAnnotationsOf } from "./annotations.js";
export { backupName, openAuditLog, type AuditSink } from "./log-writer.js";

/** `--audit-policy-file` and `--audit-log-*`. */
export interface AuditConfig {
  readonly policyFile?: string;
  /** A file, or "-" for standard output; empty: no log, so no auditing (upstream's rule). */
  readonly logPath?: string;
  /** --audit-log-maxsize in MB (0: 100 MB, lumberjack's default). */
  readonly maxSizeMB?: number;
  /** For tests: the size limit in bytes, overriding maxSizeMB. */
  readonly maxSizeBytes?: number;
  readonly maxAgeDays?: number;
  readonly maxBackups?: number;
}

export interface Audit {
  readonly policy: Policy;
  readonly sink: AuditSink;
  readonly apiVersion: string;
}

/**
 * The policy read and checked (a malformed one throws AuditPolicyError: the
 * server must not start), then the log opened; undefined when there is no
 * policy file or no log path.
 */
export function setUpAudit(config: AuditConfig | undefined, naming: Naming): Audit | undefined {
  if (config?.policyFile === undefined || config.policyFile === "") return undefined;
  const groups = [...new Set(["audit.k8s.io", naming.auditGroup])];
  const policy = loadPolicy(config.policyFile, groups);
  if (config.logPath === undefined || config.logPath === "") return undefined;
  const sink = openAuditLog({
    path: config.logPath,
    maxSizeBytes: config.maxSizeBytes ?? (config.maxSizeMB ?? 0) * 1024 * 1024,
    maxAgeDays: config.maxAgeDays ?? 0,
    maxBackups: config.maxBackups ?? 0,
  });
  return { policy, sink, apiVersion: `${naming.auditGroup}/v1` };
}
