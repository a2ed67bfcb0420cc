// The offline image set of upstream's conformance suite (issue 17): these
// machines reach no image registry, so each image the suite asks for is built
// here under the exact reference it asks for, from binaries this machine can
// get: agnhost and pause built from upstream's own tree with Debian's Go and
// gcc, busybox from Debian's busybox-static, nginx and Apache httpd copied
// from Debian's packages with the shared libraries they load.
//
//   node dist/test/conformance/images.js OUT_DIR [UPSTREAM_SRC]
//
// writes one docker-save tarball per image into OUT_DIR (import them with
// `orch images import` or `ctr -n k8s.io images import`). UPSTREAM_SRC is the
// unpacked v1.23.16 tree that ../shared/tools/upstream/build.sh leaves next to
// its binaries (default /tmp/upstream-k8s/src).

import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { BUSYBOX, packImage } from "../support/busybox-image.js";

const GO = "/usr/lib/go-1.19/bin/go";
const E2E_REGISTRY = "k8s.gcr.io/e2e-test-images";

interface ImageRecipe {
  /** The references the suite asks for (`e2e.test --list-images`). */
  tags: string[];
  /** Fills the root file system. */
  fill(root: string, src: string): void;
  config: Record<string, unknown>;
}

function run(cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], ...options });
}

/** /bin/busybox with every applet linked, /etc/passwd and /etc/group: the base of most images. */
function busyboxBase(root: string): void {
  for (const d of ["bin", "etc", "tmp", "proc", "sys", "dev", "root", "var/run"]) mkdirSync(join(root, d), { recursive: true });
  copyFileSync(BUSYBOX, join(root, "bin", "busybox"));
  for (const applet of run(BUSYBOX, ["--list"]).split("\n")) {
    if (applet !== "" && applet !== "busybox" && !existsSync(join(root, "bin", applet))) symlinkSync("busybox", join(root, "bin", applet));
  }
  writeFileSync(join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\nwww-data:x:33:33:www-data:/var/www:/bin/false\n");
  writeFileSync(join(root, "etc", "group"), "root:x:0:\nwww-data:x:33:\nnogroup:x:65534:\n");
  writeFileSync(join(root, "etc", "nsswitch.conf"), "hosts: files dns\n");
}

/**
 * bash as /bin/sh. The suite's images have shells (alpine's, busybox 1.29's)
 * that keep environment names which are not identifiers (`data-1`, which the
 * ConfigMap and Secret env specs print with `sh -c env`) and that run what is
 * on PATH; Debian's busybox sh drops those names and prefers its own applets
 * (its nc refuses the service specs' `nc -v -t -w 2`).
 */
function bashAsShell(root: string): void {
  copyWithLibraries(root, ["/usr/bin/bash"]);
  rmSync(join(root, "bin", "sh"), { force: true });
  symlinkSync("/usr/bin/bash", join(root, "bin", "sh"));
}

/** dig and nslookup (Debian's bind9-dnsutils), as the DNS specs' probers run them. */
function dnsTools(root: string): void {
  ensurePackages(["/usr/bin/dig", "/usr/bin/nslookup"], ["bind9-dnsutils"]);
  copyWithLibraries(root, ["/usr/bin/dig", "/usr/bin/nslookup"]);
}

/** Copies host files into the image at the same paths, with every shared library they load (ldd). */
export function copyWithLibraries(root: string, files: string[]): void {
  const wanted = new Set<string>();
  for (const file of files) {
    wanted.add(file);
    if (!statSync(file).isFile()) continue;
    let out = "";
    try {
      out = run("ldd", [file]);
    } catch {
      continue; // static, or not an ELF file
    }
    for (const m of out.matchAll(/(\/\S+) \(0x/g)) wanted.add(m[1]!);
  }
  for (const file of wanted) {
    const target = join(root, file);
    mkdirSync(dirname(target), { recursive: true });
    if (statSync(file).isDirectory()) run("cp", ["-a", `${file}/.`, target]);
    else copyFileSync(file, target);
  }
}

function goBuild(src: string, pkg: string, out: string): void {
  run(GO, ["build", "-o", out, "-ldflags", "-s -w", pkg], {
    cwd: src,
    env: { ...process.env, GOFLAGS: "-mod=vendor", CGO_ENABLED: "0", GOPROXY: "off", GOTOOLCHAIN: "local", PATH: `${dirname(GO)}:${process.env["PATH"]}` },
  });
}

/** Installs Debian packages on this machine when their files are missing (the images copy from the host). */
function ensurePackages(paths: string[], packages: string[]): void {
  if (paths.every((p) => existsSync(p))) return;
  run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

function updateDemoImage(name: string): ImageRecipe {
  return {
    tags: [`${E2E_REGISTRY}/${name}:1.5`],
    fill(root, src) {
      RECIPES["agnhost"]!.fill(root, src);
      const html = join(src, "test/images", name, "html");
      for (const f of readdirSync(html)) copyFileSync(join(html, f), join(root, f));
    },
    config: { Entrypoint: ["/agnhost"], Cmd: ["test-webserver"], WorkingDir: "/" },
  };
}

const RECIPES: Record<string, ImageRecipe> = {
  agnhost: {
    // Upstream's agnhost image is alpine with /agnhost: specs exec both `/agnhost SUBCOMMAND` and `sh -c`.
    tags: [`${E2E_REGISTRY}/agnhost:2.39`],
    fill(root, src) {
      busyboxBase(root);
      goBuild(src, "./test/images/agnhost", join(root, "agnhost"));
      // As upstream's Dockerfile: the "override the image's default command" specs run /agnhost-2.
      symlinkSync("agnhost", join(root, "agnhost-2"));
      // Upstream's image has curl (alpine's): lifecycle hooks and service specs run it inside agnhost pods.
      ensurePackages(["/usr/bin/curl"], ["curl"]);
      copyWithLibraries(root, ["/usr/bin/curl"]);
      // And, as upstream's Dockerfile adds them: bash, OpenBSD's netcat (the service reachability
      // probe `nc -v -t -w 2` / `-u`) and dig (the DNS specs' querier container).
      bashAsShell(root);
      ensurePackages(["/usr/bin/nc.openbsd"], ["netcat-openbsd"]);
      copyWithLibraries(root, ["/usr/bin/nc.openbsd"]);
      symlinkSync("nc.openbsd", join(root, "usr/bin/nc"));
      dnsTools(root);
    },
    config: { Entrypoint: ["/agnhost"], Cmd: ["pause"] },
  },
  // Upstream's update-demo images (Update Demo spec): agnhost's test-webserver serving the picture and data.json from /.
  kitten: updateDemoImage("kitten"),
  nautilus: updateDemoImage("nautilus"),
  busybox: {
    tags: [`${E2E_REGISTRY}/busybox:1.29-2`, `${E2E_REGISTRY}/busybox:1.29-1`, "docker.io/library/busybox:1.29"],
    fill(root) {
      busyboxBase(root);
      bashAsShell(root);
    },
    config: { Cmd: ["sh"] },
  },
  // The AllowPrivilegeEscalation specs: a set-user-ID root program printing its effective uid (upstream's nnp.go).
  nonewprivs: {
    tags: [`${E2E_REGISTRY}/nonewprivs:1.3`],
    fill(root, src) {
      busyboxBase(root);
      const nnp = join(root, "usr/local/bin/nnp");
      goBuild(src, "./test/images/nonewprivs", nnp);
      chmodSync(nnp, 0o4755);
    },
    config: { Cmd: ["nnp"] },
  },
  // The DNS specs' second prober (upstream: Debian jessie with dnsutils): dig, nslookup, getent under a POSIX shell.
  "jessie-dnsutils": {
    tags: [`${E2E_REGISTRY}/jessie-dnsutils:1.5`],
    fill(root) {
      busyboxBase(root);
      bashAsShell(root);
      dnsTools(root);
      copyWithLibraries(root, ["/usr/bin/getent"]);
    },
    config: { Cmd: ["sh"] },
  },
  nonroot: {
    // Upstream's nonroot image runs as user 1234 (busybox underneath).
    tags: [`${E2E_REGISTRY}/nonroot:1.2`],
    fill: (root) => busyboxBase(root),
    config: { Cmd: ["sh"], User: "1234" },
  },
  pause: {
    tags: ["k8s.gcr.io/pause:3.6", "registry.k8s.io/pause:3.6"],
    fill(root, src) {
      mkdirSync(root, { recursive: true });
      run("gcc", ["-Os", "-static", "-o", join(root, "pause"), join(src, "build/pause/linux/pause.c")]);
      run("strip", [join(root, "pause")]);
    },
    config: { Entrypoint: ["/pause"], User: "65535:65535" },
  },
  nginx: {
    // Debian's nginx-light serving /usr/share/nginx/html on port 80 in the foreground, as the suite's nginx does.
    tags: [`${E2E_REGISTRY}/nginx:1.14-2`, `${E2E_REGISTRY}/nginx:1.15-2`],
    fill(root) {
      ensurePackages(["/usr/sbin/nginx"], ["nginx-light"]);
      busyboxBase(root);
      copyWithLibraries(root, ["/usr/sbin/nginx", "/etc/nginx", "/usr/share/nginx"]);
      rmSync(join(root, "etc/nginx/modules-enabled"), { recursive: true, force: true }); // dynamic modules the image leaves out
      mkdirSync(join(root, "etc/nginx/modules-enabled"));
      for (const d of ["var/log/nginx", "var/lib/nginx/body", "var/cache/nginx", "run"]) mkdirSync(join(root, d), { recursive: true });
      writeFileSync(join(root, "etc/nginx/sites-enabled/default"), "server {\n  listen 80 default_server;\n  root /usr/share/nginx/html;\n  index index.html;\n}\n");
      mkdirSync(join(root, "usr/share/nginx/html"), { recursive: true });
      writeFileSync(join(root, "usr/share/nginx/html/index.html"), "<html><body><h1>Welcome to nginx!</h1></body></html>\n");
    },
    config: { Cmd: ["nginx", "-g", "daemon off; error_log /dev/stderr;"], ExposedPorts: { "80/tcp": {} } },
  },
  httpd: {
    // Debian's Apache httpd (apache2-bin) in the foreground on port 80, answering "It works!" as the suite's httpd does.
    tags: [`${E2E_REGISTRY}/httpd:2.4.38-2`, `${E2E_REGISTRY}/httpd:2.4.39-2`],
    fill(root) {
      ensurePackages(["/usr/sbin/apache2"], ["apache2-bin"]);
      busyboxBase(root);
      const modules = readdirSync("/usr/lib/apache2/modules").map((m) => `/usr/lib/apache2/modules/${m}`);
      copyWithLibraries(root, ["/usr/sbin/apache2", ...modules]);
      mkdirSync(join(root, "usr/local/apache2/htdocs"), { recursive: true });
      mkdirSync(join(root, "usr/local/apache2/logs"), { recursive: true });
      writeFileSync(join(root, "usr/local/apache2/htdocs/index.html"), "<html><body><h1>It works!</h1></body></html>\n");
      // mod_mime refuses to start without its types file (upstream's image has conf/mime.types).
      if (existsSync("/etc/mime.types")) copyFileSync("/etc/mime.types", join(root, "etc/mime.types"));
      else writeFileSync(join(root, "etc/mime.types"), "text/html\thtml htm\ntext/plain\ttxt\n");
      writeFileSync(join(root, "etc/httpd.conf"), [
        "ServerRoot /usr/local/apache2",
        "Listen 80",
        "LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so",
        "LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so",
        "LoadModule dir_module /usr/lib/apache2/modules/mod_dir.so",
        "LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so",
        "TypesConfig /etc/mime.types",
        "User www-data",
        "Group www-data",
        "ServerName localhost",
        "DocumentRoot /usr/local/apache2/htdocs",
        "DirectoryIndex index.html",
        "PidFile /tmp/httpd.pid",
        "ErrorLog /proc/self/fd/2",
        "",
      ].join("\n"));
      writeFileSync(join(root, "usr/local/bin/httpd-foreground"), "#!/bin/sh\nexec /usr/sbin/apache2 -f /etc/httpd.conf -DFOREGROUND\n", { mode: 0o755 });
    },
    config: { Cmd: ["httpd-foreground"], ExposedPorts: { "80/tcp": {} } },
  },
};

/** Fills `root` with the file system of the image `name` (tests look inside one without packing it). */
export function fillImageRoot(name: string, root: string, src: string): void {
  const recipe = RECIPES[name];
  if (recipe === undefined) throw new Error(`no recipe for image "${name}": known are ${Object.keys(RECIPES).join(", ")}`);
  mkdirSync(join(root, "usr/local/bin"), { recursive: true });
  recipe.fill(root, src);
}

/** Builds every image (or those named) into `outDir`; returns the tarballs written. */
export async function buildConformanceImages(outDir: string, src: string, only: string[] = Object.keys(RECIPES)): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  for (const name of only) {
    const recipe = RECIPES[name];
    if (recipe === undefined) throw new Error(`no recipe for image "${name}": known are ${Object.keys(RECIPES).join(", ")}`);
    const work = mkdtempSync(join(tmpdir(), `orch-conformance-${name}-`));
    try {
      const root = join(work, "rootfs");
      mkdirSync(join(root, "usr/local/bin"), { recursive: true });
      recipe.fill(root, src);
      const file = join(outDir, `${name}.tar`);
      await packImage(root, { file, tags: recipe.tags, format: "docker", config: recipe.config });
      written.push(file);
      process.stdout.write(`built ${basename(file)}: ${recipe.tags.join(", ")}\n`);
    } finally {
      rmSync(work, { recursive: true, force: true, maxRetries: 10 });
    }
  }
  return written;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(basename(process.argv[1]))) {
  const [outDir, src = "/tmp/upstream-k8s/src", ...only] = process.argv.slice(2);
  if (outDir === undefined) {
    process.stderr.write("usage: node dist/test/conformance/images.js OUT_DIR [UPSTREAM_SRC] [IMAGE...]\n");
    process.exit(2);
  }
  await buildConformanceImages(outDir, src, only.length > 0 ? only : undefined);
}
