// `orch apiserver`: the resource API over HTTPS (seed 000). Its flags are in
// apiserver-flags.ts; running it is apiserver-process.ts's.

import { defineCommand } from "./command.js";
import { apiserverFlags } from "./apiserver-flags.js";
import { runApiServer } from "./apiserver-process.js";

export const command = defineCommand({
  name: "apiserver",
  summary: "the resource API server (HTTPS, port 6443)",
  description:
    "The orch API server validates and configures data for the API objects (pods, services, nodes and the rest), " +
    "stores them, and serves the resource API, watches included, over HTTPS.",
  flags: apiserverFlags,
  validate(flags) {
    if (flags.get("storage-backend") === "etcd" && flags.get("etcd-servers").length === 0) {
      return "--etcd-servers must be specified with --storage-backend=etcd";
    }
    if ((flags.get("etcd-certfile") === "") !== (flags.get("etcd-keyfile") === "")) return "--etcd-certfile and --etcd-keyfile must be given together";
    return undefined;
  },
  run(flags, context) {
    return runApiServer(flags, context);
  },
});
