// Flags every component declares the same way: where it serves (bind address and
// port), --feature-gates and -v. Each component spreads these into its own
// declarations so /flagz and --help look alike everywhere.

import { featureGatesFlag } from "./feature-gates.js";
import { flag } from "./flags.js";
import { validateShowHiddenMetricsVersion } from "./metrics/registry.js";

export const SECURE_SERVING = "Secure serving flags";

/** `--bind-address` and `--secure-port` (control-plane components). */
export function secureServingFlags(options: { bindAddress: string; securePort: number }) {
  return {
    "bind-address": flag.string({
      section: SECURE_SERVING,
      default: options.bindAddress,
      description: "The IP address on which to listen for the --secure-port port. 0.0.0.0 listens on all interfaces.",
    }),
    "secure-port": flag.int({
      section: SECURE_SERVING,
      default: options.securePort,
      min: 0,
      max: 65535,
      description: "The port on which to serve HTTPS with authentication and authorization. 0 disables HTTPS.",
    }),
  } as const;
}

/** `--feature-gates` and `-v/--v`, on every component. */
export function baseFlags() {
  return {
    "feature-gates": featureGatesFlag(),
    v: flag.int({
      short: "v",
      section: "Logs flags",
      default: 0,
      min: 0,
      typeName: "Level",
      description: "number for the log level verbosity",
    }),
    ...metricsFlags(),
  } as const;
}

export const METRICS = "Metrics flags";

/** `--show-hidden-metrics-for-version` and `--disabled-metrics` (seed 002, "Versioning" 2), on every component. */
export function metricsFlags() {
  return {
    "show-hidden-metrics-for-version": flag.string({
      section: METRICS,
      description:
        "The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, " +
        "other values will not be allowed. The format is <major>.<minor>, e.g.: '1.35'. The purpose of this format is " +
        "make sure you have the opportunity to notice if the next release hides additional metrics, rather than being " +
        "surprised when they are permanently removed in the release after that.",
      check: (v) => validateShowHiddenMetricsVersion(v),
    }),
    "disabled-metrics": flag.strings({
      section: METRICS,
      description: "This flag provides an escape hatch for misbehaving metrics. You must provide the fully qualified metric name in order to disable it.",
    }),
  } as const;
}

/** `--tls-cert-file`, `--tls-private-key-file` and `--client-ca-file` of the components' HTTPS port. */
export function tlsServingFlags() {
  return {
    "tls-cert-file": flag.string({
      section: SECURE_SERVING,
      description: "File containing the default x509 certificate for HTTPS (CA cert, if any, concatenated after server cert). If empty, a self-signed certificate is generated in memory.",
    }),
    "tls-private-key-file": flag.string({ section: SECURE_SERVING, description: "File containing the default x509 private key matching --tls-cert-file." }),
    "client-ca-file": flag.string({
      section: SECURE_SERVING,
      description: "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated. Defaults to the CA of --kubeconfig.",
    }),
  } as const;
}
