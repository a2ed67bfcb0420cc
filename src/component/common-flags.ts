// Flags every component declares the same way: where it serves (bind address and
// port), --feature-gates and -v. Each component spreads these into its own
// declarations so /flagz and --help look alike everywhere.

import { featureGatesFlag } from "./feature-gates.js";
import { flag } from "./flags.js";

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
  } as const;
}
