// DefaultIngressClass, as upstream's admission plugin of that name: an Ingress
// created with neither spec.ingressClassName nor the legacy
// `<domain>/ingress.class` annotation gets the default IngressClass (the one
// annotated `ingressclass.<domain>/is-default-class: "true"`; the newest when
// several are). It reads IngressClasses through a lookup the server passes in.

import type { MutatingPlugin } from "../../api/admission.js";
import { defaultIngressClassAnnotation, type Ingress, type IngressClass } from "../../api/networking/index.js";
import type { ApiObject } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { newestMarked } from "./default-class.js";

/** What the plugin needs of the IngressClass store (the registry's store is one). */
export interface IngressClassLookup {
  list(namespace: undefined, params: {}): Promise<{ readonly items: readonly { readonly object: ApiObject }[] }>;
}

export function defaultIngressClass(naming: Naming, classes: () => IngressClassLookup | undefined): MutatingPlugin {
  const legacy = `${naming.keyDomain}/ingress.class`;
  const marker = defaultIngressClassAnnotation(naming);
  return {
    name: "DefaultIngressClass",
    handles: (a) => a.operation === "CREATE" && a.resource.group === naming.networkingGroup && a.resource.resource === "ingresses" && a.subresource === undefined,
    async admit(a) {
      const ing = a.object as Ingress;
      if (ing.spec?.ingressClassName != null || ing.metadata.annotations?.[legacy] !== undefined) return;
      const store = classes();
      if (store === undefined) return;
      const def = newestMarked((await store.list(undefined, {})).items.map((i) => i.object as IngressClass), marker);
      if (def !== undefined) (ing.spec ??= {}).ingressClassName = def.metadata.name!;
    },
  };
}
