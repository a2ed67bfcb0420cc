// `orch images`: manages the embedded runtime's image store on this machine
// without a registry: `import FILE...` (docker save or OCI archives, plain or
// gzip), `list` (the default) and `remove REF...`. Works on the store's
// directory directly, so the runtime need not be running (docs/runtime.md).

import { flag } from "../component/index.js";
import { importArchive } from "../nodeagent/runtime/images/archive.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pullImage } from "../nodeagent/runtime/images/registry.js";
import { containerdHostsFiles, loadRegistriesConfig, RegistriesConfigError, type RegistriesConfig } from "../nodeagent/runtime/images/registries.js";
import { ImageStore, type StoredImage } from "../nodeagent/runtime/images/store.js";
import { DEFAULT_EMBEDDED_ROOT } from "../nodeagent/runtime/embedded/server.js";
import { defineCommand, type Output } from "./command.js";

const ACTIONS = ["import", "pull", "list", "remove", "containerd-hosts"] as const;

export const command = defineCommand({
  name: "images",
  summary: "import, pull, list and remove the embedded runtime's images (import FILE | pull REF | list | remove REF)",
  description:
    "Manages the image store of the node agent's embedded container runtime. 'orch images import FILE...' unpacks " +
    "docker save or OCI image archives; 'orch images pull REF...' fetches images from their registries; 'orch images list' " +
    "(the default) prints the images; 'orch images remove REF...' deletes images by name or ID; 'orch images containerd-hosts DIR " +
    "--registry-config FILE' writes the registries file's mirrors and TLS settings as containerd's hosts.toml files under DIR " +
    "(containerd's config_path, usually /etc/containerd/certs.d).",
  flags: {
    root: flag.string({ default: DEFAULT_EMBEDDED_ROOT, description: "The embedded runtime's root directory (the node agent's runtime root)." }),
    quiet: flag.bool({ short: "q", description: "Print only image IDs." }),
    "insecure-registry": flag.strings({ description: "Registry hosts (host:port) to pull from over plain HTTP; loopback registries always are." }),
    "registry-config": flag.string({ description: "A registries file (k3s's registries.yaml) whose mirrors, credentials and TLS settings pull uses; containerd-hosts needs it." }),
  },
  positionals: { name: "ACTION [ARG]", description: `one of ${ACTIONS.join(", ")}, then files (import) or references (pull, remove)` },
  validate(flags) {
    const [action = "list", ...rest] = flags.args;
    if (!(ACTIONS as readonly string[]).includes(action)) return `unknown action "${action}": use ${ACTIONS.join(", ")}`;
    if (action !== "list" && rest.length === 0) return `"${action}" needs at least one ${action === "import" ? "FILE" : "REF"}`;
    if (action === "list" && rest.length > 0) return `"list" takes no arguments`;
    if (action === "containerd-hosts" && (rest.length !== 1 || !flags.get("registry-config"))) return `"containerd-hosts" takes one DIR (containerd's config_path) and --registry-config FILE`;
    return undefined;
  },
  async run(flags, context) {
    const [action = "list", ...rest] = flags.args;
    let registries: RegistriesConfig | undefined;
    try {
      registries = flags.get("registry-config") ? loadRegistriesConfig(flags.get("registry-config")) : undefined;
    } catch (err) {
      if (!(err instanceof RegistriesConfigError)) throw err;
      context.stderr.write(`${context.command}: invalid configuration: ${err.message}\n`);
      return 2;
    }
    if (action === "containerd-hosts") {
      for (const [path, content] of containerdHostsFiles(registries!)) {
        const file = join(rest[0]!, path);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, content);
        context.stdout.write(`wrote ${file}\n`);
      }
      return 0;
    }
    const store = new ImageStore(flags.get("root"));
    const quiet = flags.get("quiet");
    if (action === "import") {
      for (const file of rest) {
        const images = await importArchive(store, file);
        for (const i of images) context.stdout.write(quiet ? `${i.id}\n` : `imported ${i.repoTags.join(", ") || "<untagged>"} (${i.id})\n`);
      }
      return 0;
    }
    if (action === "pull") {
      for (const ref of rest) {
        const image = await pullImage(store, ref, { insecure: flags.get("insecure-registry"), ...(registries ? { registries } : {}), log: (line) => context.stderr.write(`${line}\n`) });
        context.stdout.write(quiet ? `${image.id}\n` : `pulled ${image.repoTags.join(", ") || ref} (${image.id})\n`);
      }
      return 0;
    }
    if (action === "remove") {
      let status = 0;
      for (const ref of rest) {
        if (store.remove(ref)) context.stdout.write(`removed ${ref}\n`);
        else {
          context.stderr.write(`${context.command}: no image ${JSON.stringify(ref)}\n`);
          status = 1;
        }
      }
      return status;
    }
    printImages(context.stdout, store.list(), quiet);
    return 0;
  },
});

/** A table like `crictl images`: IMAGE, TAG, IMAGE ID (13 characters), SIZE. */
function printImages(out: Output, images: StoredImage[], quiet: boolean): void {
  if (quiet) {
    for (const i of images) out.write(`${i.id}\n`);
    return;
  }
  const rows: string[][] = [["IMAGE", "TAG", "IMAGE ID", "SIZE"]];
  for (const i of images) {
    const tags = i.repoTags.length > 0 ? i.repoTags : ["<none>:<none>"];
    for (const t of tags) {
      const colon = t.lastIndexOf(":");
      rows.push([t.slice(0, colon), t.slice(colon + 1), i.id.slice(7, 20), humanSize(i.size)]);
    }
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) out.write(`${r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]! + 3))).join("")}\n`);
}

function humanSize(bytes: number): string {
  const units = ["B", "kB", "MB", "GB"];
  let n = bytes;
  let u = 0;
  while (n >= 1000 && u < units.length - 1) {
    n /= 1000;
    u++;
  }
  return `${u === 0 ? n : n.toFixed(1)}${units[u]}`;
}
