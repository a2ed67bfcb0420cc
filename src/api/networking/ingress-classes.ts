// ingressclasses (networking.<suffix>/v1, cluster-scoped): upstream's
// defaults (parameters.scope Cluster), ValidateIngressClass/Update messages
// and table (NAME CONTROLLER PARAMETERS AGE). The class marked with the
// annotation `ingressclass.<domain>/is-default-class: "true"` is given to
// ingresses created without one (the DefaultIngressClass admission step).

import { field, isDNS1123Label, isDNS1123Subdomain, regexError, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { validateTypedReference } from "./ingresses.js";
import { NETWORKING_V1 } from "./schemas.js";
import type { IngressClass } from "./types.js";

const MAX_CONTROLLER_LENGTH = 250;
const SCOPES = ["Cluster", "Namespace"];
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH_RE = new RegExp(`^${HTTP_PATH_FMT}$`);

/** The annotation that marks the default IngressClass (upstream: ingressclass.kubernetes.io/is-default-class). */
export function defaultIngressClassAnnotation(naming: Naming): string {
  return `ingressclass.${naming.keyDomain}/is-default-class`;
}

/** upstream's IsDomainPrefixedPath. */
function domainPrefixedPath(value: string, path: string): FieldError[] {
  if (value === "") return [field.required(path, "")];
  const slash = value.indexOf("/");
  const host = slash < 0 ? value : value.slice(0, slash);
  const rest = slash < 0 ? "" : value.slice(slash + 1);
  if (slash < 0 || host === "" || rest === "") return [field.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((m) => field.invalid(path, host, m));
  if (!HTTP_PATH_RE.test(rest)) return [...errs, field.invalid(path, rest, regexError("Invalid path", HTTP_PATH_FMT))];
  return errs;
}

function validate(ic: IngressClass): FieldError[] {
  const spec = ic.spec ?? {};
  const controller = spec.controller ?? "";
  const errs: FieldError[] = [];
  if (controller.length > MAX_CONTROLLER_LENGTH) errs.push(field.tooLong("spec.controller", MAX_CONTROLLER_LENGTH));
  errs.push(...domainPrefixedPath(controller, "spec.controller"));
  const params = spec.parameters;
  if (params == null) return errs;
  errs.push(...validateTypedReference(params, "spec.parameters"));
  if (params.scope == null) return [...errs, field.required("spec.parameters.scope", "")];
  if (!SCOPES.includes(params.scope)) errs.push(field.notSupported("spec.parameters.scope", params.scope, SCOPES));
  else if (params.scope === "Namespace") {
    if (params.namespace == null) errs.push(field.required("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'"));
    else for (const m of isDNS1123Label(params.namespace)) errs.push(field.invalid("spec.parameters.namespace", params.namespace, m));
  } else if (params.namespace != null) errs.push(field.forbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'"));
  return errs;
}

export function ingressClasses(naming: Naming): ResourceDefinition {
  return defineResource<IngressClass>({
    group: naming.networkingGroup,
    versions: ["v1"],
    resource: "ingressclasses",
    singular: "ingressclass",
    kind: "IngressClass",
    namespaced: false,
    schema: `${NETWORKING_V1}.IngressClass`,
    defaults(ic) {
      const params = ic.spec?.parameters;
      if (params != null) params.scope ??= "Cluster";
    },
    validate,
    validateUpdate(ic, old) {
      const errs = validate(ic);
      if ((ic.spec?.controller ?? "") !== (old.spec?.controller ?? "")) errs.push(field.immutable("spec.controller", ic.spec?.controller ?? ""));
      return errs;
    },
    table: nameAgeTable<IngressClass>({
      columns: [
        { name: "Controller", type: "string", description: "Controller that is responsible for handling this class", priority: 0 },
        { name: "Parameters", type: "string", description: "A reference to a resource with additional parameters", priority: 0 },
      ],
      cells: (ic) => {
        const p = ic.spec?.parameters;
        const parameters = p == null ? "<none>" : `${p.kind ?? ""}${p.apiGroup != null ? `.${p.apiGroup}` : ""}/${p.name ?? ""}`;
        return [ic.spec?.controller ?? "", parameters];
      },
    }),
  });
}
