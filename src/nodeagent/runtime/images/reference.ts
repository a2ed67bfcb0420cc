// Image references as container runtimes spell them: `busybox` is
// `docker.io/library/busybox:latest`, a digest reference keeps its digest, and
// an image ID is `sha256:<64 hex>`. The store matches names in this form.

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** True for a full image ID, `sha256:<64 hex>`. */
export function isImageId(ref: string): boolean {
  return DIGEST.test(ref);
}

/** The fully qualified form of an image name; throws on names no registry accepts. */
export function normalizeReference(ref: string): string {
  const input = ref.trim();
  if (input === "" || /\s/.test(input)) {
    throw new Error(`invalid reference format: ${JSON.stringify(ref)}`);
  }
  let name = input;
  let digest = "";
  const at = name.indexOf("@");
  if (at >= 0) {
    digest = name.slice(at);
    name = name.slice(0, at);
    if (!/^@sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`invalid reference format: ${JSON.stringify(ref)}`);
  }
  let tag = "";
  const colon = name.lastIndexOf(":");
  if (colon > name.lastIndexOf("/")) {
    tag = name.slice(colon + 1);
    name = name.slice(0, colon);
    if (!/^[\w][\w.-]{0,127}$/.test(tag)) throw new Error(`invalid reference format: ${JSON.stringify(ref)}`);
  }
  const slash = name.indexOf("/");
  const first = slash < 0 ? "" : name.slice(0, slash);
  const hasDomain = first !== "" && (first.includes(".") || first.includes(":") || first === "localhost");
  let full = hasDomain ? name : `docker.io/${name}`;
  if (!hasDomain && slash < 0) full = `docker.io/library/${name}`;
  if (!/^[a-z0-9.:-]+(\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+$/.test(full)) throw new Error(`invalid reference format: ${JSON.stringify(ref)}`);
  if (tag === "" && digest === "") tag = "latest";
  return `${full}${tag === "" ? "" : `:${tag}`}${digest}`;
}
