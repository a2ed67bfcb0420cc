// Test data: a cert-manager-like bundle of six CustomResourceDefinitions
// (group certs.example.io: Certificate, CertificateRequest, Issuer,
// ClusterIssuer, Order, Challenge), written for orch's tests in the style of
// real operator bundles: one version each with deep schemas (ACME solvers
// with pod templates, affinity, tolerations, secret references, every field
// described), printer columns, status subresources, enums, patterns,
// bounds, defaults, int-or-string, list-map keys, preserved unknown fields
// and CEL rules. `certBundleYaml()` renders it as one multi-document YAML
// file (well over 5,000 lines), as `kubectl apply -f` takes it.

import { toYaml } from "../../src/machinery/decode/yaml.js";

type S = Record<string, unknown>;

export const CERT_GROUP = "certs.example.io";

const str = (description: string, extra: S = {}): S => ({ type: "string", description, ...extra });
const int = (description: string, extra: S = {}): S => ({ type: "integer", format: "int32", description, ...extra });
const bool = (description: string, extra: S = {}): S => ({ type: "boolean", description, ...extra });
const obj = (description: string, properties: S, required?: string[], extra: S = {}): S => ({ type: "object", description, properties, ...(required ? { required } : {}), ...extra });
const arr = (description: string, items: S, extra: S = {}): S => ({ type: "array", description, items, ...extra });
const map = (description: string, values: S = { type: "string" }): S => ({ type: "object", description, additionalProperties: values });
const time = (description: string): S => str(description, { format: "date-time" });

const secretKeySelector = (what: string) =>
  obj(`A reference to a specific 'key' within a Secret resource holding ${what}. In some instances, \`key\` is a required field.`, {
    name: str("Name of the resource being referred to. More info: https://example.io/docs/names#names", { maxLength: 253 }),
    key: str("The key of the entry in the Secret resource's `data` field to be used. Some instances of this field may be defaulted, in others it may be required.", { maxLength: 253 }),
  }, ["name"]);

const localRef = (what: string) => obj(`${what}: a reference to an object in the same namespace.`, { name: str("Name of the resource being referred to.", { maxLength: 253 }) }, ["name"]);

const issuerRef = obj("Reference to the issuer responsible for issuing the certificate. If the issuer is namespace-scoped, it must be in the same namespace as the Certificate. If the issuer is cluster-scoped, it can be used from any namespace.", {
  name: str("Name of the resource being referred to.", { minLength: 1, maxLength: 253 }),
  kind: str("Kind of the resource being referred to.", { enum: ["Issuer", "ClusterIssuer"], default: "Issuer" }),
  group: str("Group of the resource being referred to.", { default: CERT_GROUP }),
}, ["name"]);

const labelSelectorRequirement = (what: string) =>
  obj(`A ${what} selector requirement is a selector that contains values, a key, and an operator that relates the key and values.`, {
    key: str("The label key that the selector applies to."),
    operator: str("Represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists, DoesNotExist, Gt and Lt.", { enum: ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"] }),
    values: arr("An array of string values. If the operator is In or NotIn, the values array must be non-empty. If the operator is Exists or DoesNotExist, the values array must be empty.", { type: "string" }, { "x-kubernetes-list-type": "atomic" }),
  }, ["key", "operator"]);

const nodeSelectorTerm = (description: string) =>
  obj(description, {
    matchExpressions: arr("A list of node selector requirements by node's labels.", labelSelectorRequirement("node"), { "x-kubernetes-list-type": "atomic" }),
    matchFields: arr("A list of node selector requirements by node's fields.", labelSelectorRequirement("node field"), { "x-kubernetes-list-type": "atomic" }),
  }, undefined, { "x-kubernetes-map-type": "atomic" });

const labelSelector = (description: string) =>
  obj(description, {
    matchExpressions: arr("matchExpressions is a list of label selector requirements. The requirements are ANDed.", labelSelectorRequirement("label"), { "x-kubernetes-list-type": "atomic" }),
    matchLabels: map("matchLabels is a map of {key,value} pairs. A single {key,value} in the matchLabels map is equivalent to an element of matchExpressions, whose key field is \"key\", the operator is \"In\", and the values array contains only \"value\"."),
  }, undefined, { "x-kubernetes-map-type": "atomic" });

const podAffinityTerm = (description: string) =>
  obj(description, {
    labelSelector: labelSelector("A label query over a set of resources, in this case pods."),
    namespaceSelector: labelSelector("A label query over the set of namespaces that the term applies to."),
    namespaces: arr("namespaces specifies a static list of namespace names that the term applies to.", { type: "string" }, { "x-kubernetes-list-type": "atomic" }),
    topologyKey: str("This pod should be co-located (affinity) or not co-located (anti-affinity) with the pods matching the labelSelector in the specified namespaces, where co-located is defined as running on a node whose value of the label with key topologyKey matches that of any node on which any of the selected pods is running. Empty topologyKey is not allowed."),
    matchLabelKeys: arr("MatchLabelKeys is a set of pod label keys to select which pods will be taken into consideration.", { type: "string" }, { "x-kubernetes-list-type": "atomic" }),
  }, ["topologyKey"]);

const weighted = (what: S, key: string, description: string) =>
  obj(description, { weight: int("Weight associated with matching the corresponding term, in the range 1-100.", { minimum: 1, maximum: 100 }), [key]: what }, ["weight", key]);

const podAffinity = (anti: boolean) =>
  obj(`Describes pod ${anti ? "anti-" : ""}affinity scheduling rules (e.g. ${anti ? "avoid putting this pod in the same node, zone, etc. as some other pod(s)" : "co-locate this pod in the same node, zone, etc. as some other pod(s)"}).`, {
    preferredDuringSchedulingIgnoredDuringExecution: arr("The scheduler will prefer to schedule pods to nodes that satisfy the expressions specified by this field, but it may choose a node that violates one or more of the expressions.", weighted(podAffinityTerm("Required. A pod affinity term, associated with the corresponding weight."), "podAffinityTerm", "The weights of all of the matched WeightedPodAffinityTerm fields are added per-node to find the most preferred node(s)"), { "x-kubernetes-list-type": "atomic" }),
    requiredDuringSchedulingIgnoredDuringExecution: arr("If the affinity requirements specified by this field are not met at scheduling time, the pod will not be scheduled onto the node.", podAffinityTerm("Defines a set of pods (namely those matching the labelSelector relative to the given namespace(s)) that this pod should be co-located (affinity) or not co-located (anti-affinity) with."), { "x-kubernetes-list-type": "atomic" }),
  });

const affinity = obj("If specified, the pod's scheduling constraints.", {
  nodeAffinity: obj("Describes node affinity scheduling rules for the pod.", {
    preferredDuringSchedulingIgnoredDuringExecution: arr("The scheduler will prefer to schedule pods to nodes that satisfy the affinity expressions specified by this field.", weighted(nodeSelectorTerm("A node selector term, associated with the corresponding weight."), "preference", "An empty preferred scheduling term matches all objects with implicit weight 0."), { "x-kubernetes-list-type": "atomic" }),
    requiredDuringSchedulingIgnoredDuringExecution: obj("If the affinity requirements specified by this field are not met at scheduling time, the pod will not be scheduled onto the node.", {
      nodeSelectorTerms: arr("Required. A list of node selector terms. The terms are ORed.", nodeSelectorTerm("A null or empty node selector term matches no objects."), { "x-kubernetes-list-type": "atomic" }),
    }, ["nodeSelectorTerms"], { "x-kubernetes-map-type": "atomic" }),
  }),
  podAffinity: podAffinity(false),
  podAntiAffinity: podAffinity(true),
});

const toleration = obj("The pod this Toleration is attached to tolerates any taint that matches the triple <key,value,effect> using the matching operator <operator>.", {
  effect: str("Effect indicates the taint effect to match. Empty means match all taint effects.", { enum: ["NoSchedule", "PreferNoSchedule", "NoExecute"] }),
  key: str("Key is the taint key that the toleration applies to. Empty means match all taint keys."),
  operator: str("Operator represents a key's relationship to the value.", { enum: ["Exists", "Equal"], default: "Equal" }),
  tolerationSeconds: { type: "integer", format: "int64", description: "TolerationSeconds represents the period of time the toleration (which must be of effect NoExecute) tolerates the taint." },
  value: str("Value is the taint value the toleration matches to."),
});

const resources = obj("Compute resources of the solver's pod.", {
  limits: map("Limits describes the maximum amount of compute resources allowed.", { "x-kubernetes-int-or-string": true, pattern: "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$" }),
  requests: map("Requests describes the minimum amount of compute resources required.", { "x-kubernetes-int-or-string": true, pattern: "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$" }),
});

const podTemplate = obj("Optional pod template used to configure the ACME challenge solver pods used for HTTP01 challenges.", {
  metadata: obj("ObjectMeta overrides for the pod used to solve HTTP01 challenges. Only the 'labels' and 'annotations' fields may be set.", {
    annotations: map("Annotations that should be added to the created ACME HTTP01 solver pods."),
    labels: map("Labels that should be added to the created ACME HTTP01 solver pods."),
  }),
  spec: obj("PodSpec defines overrides for the HTTP01 challenge solver pod. Check ACMEChallengeSolverHTTP01IngressPodSpec to find out currently supported fields.", {
    affinity,
    imagePullSecrets: arr("If specified, the pod's imagePullSecrets", localRef("LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace"), { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }),
    nodeSelector: map("NodeSelector is a selector which must be true for the pod to fit on a node."),
    priorityClassName: str("If specified, the pod's priorityClassName."),
    resources,
    securityContext: obj("If specified, the pod's security context", {
      fsGroup: { type: "integer", format: "int64", description: "A special supplemental group that applies to all containers in a pod." },
      fsGroupChangePolicy: str("fsGroupChangePolicy defines behavior of changing ownership and permission of the volume before being exposed inside Pod.", { enum: ["OnRootMismatch", "Always"] }),
      runAsGroup: { type: "integer", format: "int64", description: "The GID to run the entrypoint of the container process." },
      runAsNonRoot: bool("Indicates that the container must run as a non-root user."),
      runAsUser: { type: "integer", format: "int64", description: "The UID to run the entrypoint of the container process.", minimum: 0 },
      seLinuxOptions: obj("The SELinux context to be applied to all containers.", { level: str("Level is SELinux level label that applies to the container."), role: str("Role is a SELinux role label that applies to the container."), type: str("Type is a SELinux type label that applies to the container."), user: str("User is a SELinux user label that applies to the container.") }),
      seccompProfile: obj("The seccomp options to use by the containers in this pod.", {
        localhostProfile: str("localhostProfile indicates a profile defined in a file on the node should be used."),
        type: str("type indicates which kind of seccomp profile will be applied.", { enum: ["Localhost", "RuntimeDefault", "Unconfined"] }),
      }, ["type"]),
      supplementalGroups: arr("A list of groups applied to the first process run in each container.", { type: "integer", format: "int64" }, { "x-kubernetes-list-type": "atomic" }),
      sysctls: arr("Sysctls hold a list of namespaced sysctls used for the pod.", obj("Sysctl defines a kernel parameter to be set", { name: str("Name of a property to set"), value: str("Value of a property to set") }, ["name", "value"]), { "x-kubernetes-list-type": "atomic" }),
    }),
    serviceAccountName: str("If specified, the pod's service account"),
    tolerations: arr("If specified, the pod's tolerations.", toleration, { "x-kubernetes-list-type": "atomic" }),
  }),
});

const http01 = obj("Configures cert-manager-style solving of the HTTP01 challenge type: a pod and service answer on the challenge's path.", {
  ingress: obj("The ingress based HTTP01 challenge solver will solve challenges by creating or modifying Ingress resources in order to route requests for '/.well-known/acme-challenge/XYZ' to 'challenge solver' pods that are provisioned.", {
    class: str("This field configures the annotation `kubernetes.io/ingress.class` when creating Ingress resources to solve ACME challenges that use this challenge solver."),
    ingressClassName: str("This field configures the field `ingressClassName` on the created Ingress resources used to solve ACME challenges that use this challenge solver."),
    ingressTemplate: obj("Optional ingress template used to configure the ACME challenge solver ingress used for HTTP01 challenges.", {
      metadata: obj("ObjectMeta overrides for the ingress used to solve HTTP01 challenges.", { annotations: map("Annotations that should be added to the created ACME HTTP01 solver ingress."), labels: map("Labels that should be added to the created ACME HTTP01 solver ingress.") }),
    }),
    name: str("The name of the ingress resource that should have ACME challenge solving routes inserted into it in order to solve HTTP01 challenges."),
    podTemplate,
    serviceType: str("Optional service type for Kubernetes solver service.", { enum: ["ClusterIP", "NodePort"], default: "NodePort" }),
  }),
  gatewayHTTPRoute: obj("The Gateway API is a sig-network community API that models service networking in Kubernetes.", {
    labels: map("Custom labels that will be applied to HTTPRoutes created by cert-manager while solving HTTP-01 challenges."),
    parentRefs: arr("When solving an HTTP-01 challenge, cert-manager creates an HTTPRoute. cert-manager needs to know which parentRefs should be used when creating the HTTPRoute.", obj("ParentReference identifies an API object (usually a Gateway) that can be considered a parent of this resource.", {
      group: str("Group is the group of the referent.", { maxLength: 253, pattern: "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", default: "gateway.networking.k8s.io" }),
      kind: str("Kind is kind of the referent.", { maxLength: 63, minLength: 1, pattern: "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$", default: "Gateway" }),
      name: str("Name is the name of the referent.", { maxLength: 253, minLength: 1 }),
      namespace: str("Namespace is the namespace of the referent.", { maxLength: 63, minLength: 1, pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" }),
      port: int("Port is the network port this Route targets.", { maximum: 65535, minimum: 1 }),
      sectionName: str("SectionName is the name of a section within the target resource.", { maxLength: 253, minLength: 1 }),
    }, ["name"]), { maxItems: 32 }),
    podTemplate,
    serviceType: str("Optional service type for Kubernetes solver service.", { enum: ["ClusterIP", "NodePort"], default: "NodePort" }),
  }),
});

const dnsProviders = obj("Configures cert-manager-style solving of the DNS01 challenge type.", {
  cnameStrategy: str("CNAMEStrategy configures how the DNS01 provider should handle CNAME records when found in DNS zones.", { enum: ["None", "Follow"] }),
  acmeDNS: obj("Use the 'ACME DNS' (https://example.io/acme-dns) API to manage DNS01 challenge records.", { accountSecretRef: secretKeySelector("the account credentials"), host: str("The host of the ACME DNS server.") }, ["accountSecretRef", "host"]),
  akamai: obj("Use the Akamai DNS zone management API to manage DNS01 challenge records.", {
    accessTokenSecretRef: secretKeySelector("the access token"), clientSecretSecretRef: secretKeySelector("the client secret"), clientTokenSecretRef: secretKeySelector("the client token"),
    serviceConsumerDomain: str("The service consumer domain."),
  }, ["accessTokenSecretRef", "clientSecretSecretRef", "clientTokenSecretRef", "serviceConsumerDomain"]),
  azureDNS: obj("Use the Microsoft Azure DNS API to manage DNS01 challenge records.", {
    clientID: str("Auth: Azure Service Principal: The ClientID of the Azure Service Principal used to authenticate with Azure DNS."),
    clientSecretSecretRef: secretKeySelector("the client secret"),
    environment: str("name of the Azure environment (default AzurePublicCloud)", { enum: ["AzurePublicCloud", "AzureChinaCloud", "AzureGermanCloud", "AzureUSGovernmentCloud"], default: "AzurePublicCloud" }),
    hostedZoneName: str("name of the DNS zone that should be used"),
    managedIdentity: obj("Auth: Azure Workload Identity or Azure Managed Service Identity.", { clientID: str("client ID of the managed identity"), resourceID: str("resource ID of the managed identity"), tenantID: str("tenant ID of the managed identity") }),
    resourceGroupName: str("resource group the DNS zone is located in"),
    subscriptionID: str("ID of the Azure subscription"),
    tenantID: str("Auth: Azure Service Principal: The TenantID of the Azure Service Principal used to authenticate with Azure DNS."),
  }, ["resourceGroupName", "subscriptionID"]),
  cloudDNS: obj("Use the Google Cloud DNS API to manage DNS01 challenge records.", {
    hostedZoneName: str("HostedZoneName is an optional field that tells cert-manager in which Cloud DNS zone the challenge record has to be created."),
    project: str("The project to use."), serviceAccountSecretRef: secretKeySelector("the service account key"),
  }, ["project"]),
  cloudflare: obj("Use the Cloudflare API to manage DNS01 challenge records.", { apiKeySecretRef: secretKeySelector("the API key"), apiTokenSecretRef: secretKeySelector("the API token"), email: str("Email of the account, only required when using API key based authentication.", { format: "email" }) }),
  digitalocean: obj("Use the DigitalOcean DNS API to manage DNS01 challenge records.", { tokenSecretRef: secretKeySelector("the token") }, ["tokenSecretRef"]),
  rfc2136: obj("Use RFC2136 (\"Dynamic Updates in the Domain Name System\") to manage DNS01 challenge records.", {
    nameserver: str("The IP address or hostname of an authoritative DNS server supporting RFC2136 in the form host:port."),
    protocol: str("Protocol to use for dynamic DNS update queries.", { enum: ["TCP", "UDP"], default: "UDP" }),
    tsigAlgorithm: str("The TSIG Algorithm configured in the DNS supporting RFC2136.", { enum: ["HMACMD5", "HMACSHA1", "HMACSHA256", "HMACSHA512"] }),
    tsigKeyName: str("The TSIG Key name configured in the DNS."),
    tsigSecretSecretRef: secretKeySelector("the TSIG value"),
  }, ["nameserver"]),
  route53: obj("Use the AWS Route53 API to manage DNS01 challenge records.", {
    accessKeyID: str("The AccessKeyID is used for authentication."),
    accessKeyIDSecretRef: secretKeySelector("the access key id"),
    auth: obj("Auth configures how cert-manager authenticates.", {
      kubernetes: obj("Kubernetes authenticates with Route53 using AssumeRoleWithWebIdentity by passing a bound ServiceAccount token.", {
        serviceAccountRef: obj("A reference to a service account that will be used to request a bound token.", { audiences: arr("TokenAudiences is an optional list of audiences to include in the token passed to AWS.", { type: "string" }), name: str("Name of the ServiceAccount used to request a token.") }, ["name"]),
      }, ["serviceAccountRef"]),
    }, ["kubernetes"]),
    hostedZoneID: str("If set, the provider will manage only this zone in Route53 and will not do a lookup using the route53:ListHostedZonesByName api call."),
    region: str("Override the AWS region."),
    role: str("Role is a Role ARN which the Route53 provider will assume using either the explicit credentials AccessKeyID/SecretAccessKey or the inferred credentials from environment variables, shared credentials file or AWS Instance metadata"),
    secretAccessKeySecretRef: secretKeySelector("the secret access key"),
  }),
  webhook: obj("Configure an external webhook based DNS01 challenge solver to manage DNS01 challenge records.", {
    config: { description: "Additional configuration that should be passed to the webhook apiserver when challenges are processed.", "x-kubernetes-preserve-unknown-fields": true },
    groupName: str("The API group name that should be used when POSTing ChallengePayload resources to the webhook apiserver."),
    solverName: str("The name of the solver to use, as defined in the webhook provider implementation."),
  }, ["groupName", "solverName"]),
});

const selector = obj("Selector selects a set of DNSNames on the Certificate resource that should be solved using this challenge solver. If not specified, the solver will be treated as the 'default' solver with the lowest priority.", {
  dnsNames: arr("List of DNSNames that this solver will be used to solve.", { type: "string" }),
  dnsZones: arr("List of DNSZones that this solver will be used to solve.", { type: "string" }),
  matchLabels: map("A label selector that is used to refine the set of certificate's that this challenge solver will apply to."),
});

const solver = obj("An ACMEChallengeSolver describes how to solve ACME challenges for the issuer it is part of.", { dns01: dnsProviders, http01, selector });

const issuerSpec = (scope: string) =>
  obj(`Desired state of the ${scope} resource.`, {
    acme: obj("ACME configures this issuer to communicate with a RFC8555 (ACME) server to obtain signed x509 certificates.", {
      caBundle: str("Base64-encoded bundle of PEM CAs which can be used to validate the certificate chain presented by the ACME server.", { format: "byte" }),
      disableAccountKeyGeneration: bool("Enables or disables generating a new ACME account key.", { default: false }),
      email: str("Email is the email address to be associated with the ACME account.", { format: "email" }),
      enableDurationFeature: bool("Enables requesting a Not After date on certificates that matches the duration of the certificate."),
      externalAccountBinding: obj("ExternalAccountBinding is a reference to a CA external account of the ACME server.", {
        keyAlgorithm: str("Deprecated: keyAlgorithm field exists for historical compatibility reasons and should not be used.", { enum: ["HS256", "HS384", "HS512"] }),
        keyID: str("keyID is the ID of the CA key that the External Account is bound to."),
        keySecretRef: secretKeySelector("the External Account Binding keySecret"),
      }, ["keyID", "keySecretRef"]),
      preferredChain: str("PreferredChain is the chain to use if the ACME server outputs multiple.", { maxLength: 64 }),
      privateKeySecretRef: secretKeySelector("the ACME account private key"),
      profile: str("Profile allows requesting a certificate profile from the ACME server."),
      server: str("Server is the URL used to access the ACME server's 'directory' endpoint.", { pattern: "^https://" }),
      skipTLSVerify: bool("INSECURE: Enables or disables validation of the ACME server TLS certificate.", { default: false }),
      solvers: arr("Solvers is a list of challenge solvers that will be used to solve ACME challenges for the matching domains.", solver),
    }, ["privateKeySecretRef", "server"]),
    ca: obj("CA configures this issuer to sign certificates using a signing CA keypair stored in a Secret resource.", {
      crlDistributionPoints: arr("The CRL distribution points is an X.509 v3 certificate extension which identifies the location of the CRL from which the revocation of this certificate can be checked.", { type: "string" }),
      issuingCertificateURLs: arr("IssuingCertificateURLs is a list of URLs which this issuer should embed into certificates it creates.", { type: "string" }),
      ocspServers: arr("The OCSP server list is an X.509 v3 extension that defines a list of URLs of OCSP responders.", { type: "string" }),
      secretName: str("SecretName is the name of the secret used to sign Certificates issued by this Issuer.", { minLength: 1 }),
    }, ["secretName"]),
    selfSigned: obj("SelfSigned configures this issuer to 'self sign' certificates using the private key used to create the CertificateRequest object.", {
      crlDistributionPoints: arr("The CRL distribution points is an X.509 v3 certificate extension which identifies the location of the CRL from which the revocation of this certificate can be checked.", { type: "string" }),
    }),
    vault: obj("Vault configures this issuer to sign certificates using a HashiCorp Vault PKI backend.", {
      auth: obj("Auth configures how cert-manager authenticates with the Vault server.", {
        appRole: obj("AppRole authenticates with Vault using the App Role auth mechanism.", { path: str("Path where the App Role authentication backend is mounted in Vault, e.g: \"approle\""), roleId: str("RoleID configured in the App Role authentication backend when setting up the authentication backend in Vault."), secretRef: secretKeySelector("the App Role secret") }, ["path", "roleId", "secretRef"]),
        clientCertificate: obj("ClientCertificate authenticates with Vault by presenting a client certificate during the request's TLS handshake.", { mountPath: str("The Vault mountPath here is the mount path to use when authenticating with Vault."), name: str("Name of the certificate role to authenticate against."), secretName: str("Reference to Kubernetes Secret of type \"kubernetes.io/tls\" (hence containing tls.crt and tls.key) used to authenticate to Vault using TLS client authentication.") }),
        kubernetes: obj("Kubernetes authenticates with Vault by passing the ServiceAccount token stored in the named Secret resource to the Vault server.", {
          mountPath: str("The Vault mountPath here is the mount path to use when authenticating with Vault."),
          role: str("A required field containing the Vault Role to assume."),
          secretRef: secretKeySelector("the service account token"),
          serviceAccountRef: obj("A reference to a service account that will be used to request a bound token.", { audiences: arr("TokenAudiences is an optional list of extra audiences to include in the token passed to Vault.", { type: "string" }), name: str("Name of the ServiceAccount used to request a token.") }, ["name"]),
        }, ["role"]),
        tokenSecretRef: secretKeySelector("the Vault token"),
      }),
      caBundle: str("Base64-encoded bundle of PEM CAs which will be used to validate the certificate chain presented by Vault.", { format: "byte" }),
      caBundleSecretRef: secretKeySelector("the CA bundle"),
      clientCertSecretRef: secretKeySelector("the client certificate"),
      clientKeySecretRef: secretKeySelector("the client key"),
      namespace: str("Name of the vault namespace."),
      path: str("Path is the mount path of the Vault PKI backend's `sign` endpoint, e.g: \"my_pki_mount/sign/my-role-name\"."),
      server: str("Server is the connection address for the Vault server, e.g: \"https://vault.example.com:8200\"."),
    }, ["auth", "path", "server"]),
    venafi: obj("Venafi configures this issuer to sign certificates using a Venafi TPP or Venafi Cloud policy zone.", {
      cloud: obj("Cloud specifies the Venafi cloud configuration settings.", { apiTokenSecretRef: secretKeySelector("the API token"), url: str("URL is the base URL for Venafi Cloud.", { default: "https://api.venafi.cloud/v1" }) }, ["apiTokenSecretRef"]),
      tpp: obj("TPP specifies Trust Protection Platform configuration settings.", { caBundle: str("Base64-encoded bundle of PEM CAs which will be used to validate the certificate chain presented by the TPP server.", { format: "byte" }), credentialsRef: localRef("CredentialsRef is a reference to a Secret containing the Venafi TPP API credentials"), url: str("URL is the base URL for the vedsdk endpoint of the Venafi TPP instance.") }, ["credentialsRef", "url"]),
      zone: str("Zone is the Venafi Policy Zone to use for this issuer."),
    }, ["zone"]),
  }, undefined, { "x-kubernetes-validations": [{ rule: "[has(self.acme), has(self.ca), has(self.selfSigned), has(self.vault), has(self.venafi)].filter(x, x).size() <= 1", message: "only one of acme, ca, selfSigned, vault or venafi may be set" }] });

const condition = (kind: string, types: string[]) =>
  obj(`${kind}Condition contains condition information for the ${kind}.`, {
    lastTransitionTime: time("LastTransitionTime is the timestamp corresponding to the last status change of this condition."),
    message: str("Message is a human readable description of the details of the last transition, complementing reason."),
    observedGeneration: { type: "integer", format: "int64", description: "If set, this represents the .metadata.generation that the condition was set based upon.", minimum: 0 },
    reason: str("Reason is a brief machine readable explanation for the condition's last transition."),
    status: str("Status of the condition, one of (`True`, `False`, `Unknown`).", { enum: ["True", "False", "Unknown"] }),
    type: str(`Type of the condition, known values are (${types.map((t) => `\`${t}\``).join(", ")}).`),
  }, ["status", "type"]);

const conditions = (kind: string, types: string[]) =>
  arr(`List of status conditions to indicate the status of the ${kind}.`, condition(kind, types), { "x-kubernetes-list-map-keys": ["type"], "x-kubernetes-list-type": "map" });

const issuerStatus = obj("Status of the Issuer. This is set and managed automatically.", {
  acme: obj("ACME specific status options. This field should only be set if the Issuer is configured to use an ACME server to issue certificates.", {
    lastPrivateKeyHash: str("LastPrivateKeyHash is a hash of the private key associated with the latest registered ACME account, in order to track changes made to registered account associated with the Issuer"),
    lastRegisteredEmail: str("LastRegisteredEmail is the email associated with the latest registered ACME account, in order to track changes made to registered account associated with the  Issuer"),
    uri: str("URI is the unique account identifier, which can also be used to retrieve account details from the CA"),
  }),
  conditions: conditions("Issuer", ["Ready"]),
});

const keyUsages = arr("Requested key usages and extended key usages.", { type: "string", enum: ["signing", "digital signature", "content commitment", "key encipherment", "key agreement", "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc"] });

const x509Subject = obj("Requested set of X509 certificate subject attributes. More info: https://datatracker.ietf.org/doc/html/rfc5280#section-4.1.2.6", Object.fromEntries(
  [["countries", "Countries to be used on the Certificate."], ["localities", "Cities to be used on the Certificate."], ["organizationalUnits", "Organizational Units to be used on the Certificate."], ["organizations", "Organizations to be used on the Certificate."], ["postalCodes", "Postal codes to be used on the Certificate."], ["provinces", "State/Provinces to be used on the Certificate."], ["streetAddresses", "Street addresses to be used on the Certificate."]]
    .map(([k, d]) => [k!, arr(d!, { type: "string" })]).concat([["serialNumber", str("Serial number to be used on the Certificate.")]]),
));

const certificateSpec = obj("Specification of the desired state of the Certificate resource.", {
  additionalOutputFormats: arr("Defines extra output formats of the private key and signed certificate chain to be written to this Certificate's target Secret.", obj("CertificateAdditionalOutputFormat defines an additional output format of a Certificate resource.", { type: str("Type is the name of the format type that should be written to the Certificate's target Secret.", { enum: ["DER", "CombinedPEM"] }) }, ["type"])),
  commonName: str("Requested common name X509 certificate subject attribute.", { maxLength: 64 }),
  dnsNames: arr("Requested DNS subject alternative names.", { type: "string", maxLength: 253 }, { maxItems: 100 }),
  duration: str("Requested 'duration' (i.e. lifetime) of the Certificate.", { pattern: "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$", default: "2160h" }),
  emailAddresses: arr("Requested email subject alternative names.", { type: "string", format: "email" }),
  encodeUsagesInRequest: bool("Whether the KeyUsage and ExtKeyUsage extensions should be set in the encoded CSR."),
  ipAddresses: arr("Requested IP address subject alternative names.", { type: "string" }),
  isCA: bool("Requested basic constraints isCA value.", { default: false }),
  issuerRef,
  keystores: obj("Additional keystore output formats to be stored in the Certificate's Secret.", {
    jks: obj("JKS configures options for storing a JKS keystore in the `spec.secretName` Secret resource.", { alias: str("Alias specifies the alias of the key in the keystore."), create: bool("Create enables JKS keystore creation for the Certificate."), passwordSecretRef: secretKeySelector("the keystore password") }, ["create"]),
    pkcs12: obj("PKCS12 configures options for storing a PKCS12 keystore in the `spec.secretName` Secret resource.", { create: bool("Create enables PKCS12 keystore creation for the Certificate."), passwordSecretRef: secretKeySelector("the keystore password"), profile: str("Profile specifies the key and certificate encryption algorithms and the HMAC algorithm used to create the PKCS12 keystore.", { enum: ["LegacyRC2", "LegacyDES", "Modern2023"] }) }, ["create"]),
  }),
  literalSubject: str("Requested X.509 certificate subject, represented using the LDAP \"String Representation of a Distinguished Name\" [1]."),
  nameConstraints: obj("x.509 certificate NameConstraint extension which MUST NOT be used in a non-CA certificate.", Object.fromEntries([...["excluded", "permitted"].map((k): [string, S] => [k, obj(`${k[0]!.toUpperCase()}${k.slice(1)} contains the constraints which must be ${k === "excluded" ? "disallowed" : "permitted"}.`, {
    dnsDomains: arr("DNSDomains is a list of DNS domains that are permitted or excluded.", { type: "string" }),
    emailAddresses: arr("EmailAddresses is a list of Email Addresses that are permitted or excluded.", { type: "string" }),
    ipRanges: arr("IPRanges is a list of IP Ranges that are permitted or excluded.", { type: "string" }),
    uriDomains: arr("URIDomains is a list of URI domains that are permitted or excluded.", { type: "string" }),
  })]), ["critical", bool("if true then the name constraints are marked critical.")] as [string, S]])),
  otherNames: arr("`otherNames` is an escape hatch for SAN that allows any type.", obj("OtherName is a subject alternative name of an unusual type.", { oid: str("OID is the object identifier for the otherName SAN.", { pattern: "^[0-9]+(\\.[0-9]+)*$" }), utf8Value: str("utf8Value is the string value of the otherName SAN.") })),
  privateKey: obj("Private key options. These include the key algorithm and size, the used encoding and the rotation policy.", {
    algorithm: str("Algorithm is the private key algorithm of the corresponding private key for this certificate.", { enum: ["RSA", "ECDSA", "Ed25519"], default: "RSA" }),
    encoding: str("The private key cryptography standards (PKCS) encoding for this certificate's private key to be encoded in.", { enum: ["PKCS1", "PKCS8"], default: "PKCS1" }),
    rotationPolicy: str("RotationPolicy controls how private keys should be regenerated when a re-issuance is being processed.", { enum: ["Never", "Always"], default: "Always" }),
    size: int("Size is the key bit size of the corresponding private key for this certificate.", { minimum: 256, maximum: 8192 }),
  }),
  renewBefore: str("How long before the currently issued certificate's expiry cert-manager should renew the certificate.", { pattern: "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$" }),
  renewBeforePercentage: int("`renewBeforePercentage` is like `renewBefore`, except it is a relative percentage rather than an absolute duration.", { minimum: 1, maximum: 99 }),
  revisionHistoryLimit: int("The maximum number of CertificateRequest revisions that are maintained in the Certificate's history.", { minimum: 1, default: 3 }),
  secretName: str("Name of the Secret resource that will be automatically created and managed by this Certificate resource.", { minLength: 1, maxLength: 253, pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" }),
  secretTemplate: obj("Defines annotations and labels to be copied to the Certificate's Secret.", { annotations: map("Annotations is a key value map to be copied to the target Kubernetes Secret."), labels: map("Labels is a key value map to be copied to the target Kubernetes Secret.") }),
  signatureAlgorithm: str("Signature algorithm to use.", { enum: ["SHA256WithRSA", "SHA384WithRSA", "SHA512WithRSA", "ECDSAWithSHA256", "ECDSAWithSHA384", "ECDSAWithSHA512", "PureEd25519"] }),
  subject: x509Subject,
  uris: arr("Requested URI subject alternative names.", { type: "string" }),
  usages: keyUsages,
}, ["issuerRef", "secretName"], { "x-kubernetes-validations": [{ rule: "has(self.commonName) || (has(self.dnsNames) && size(self.dnsNames) > 0) || has(self.uris) || has(self.ipAddresses) || has(self.emailAddresses)", message: "at least one of commonName, dnsNames, uris, ipAddresses or emailAddresses must be set" }] });

const certificateStatus = obj("Status of the Certificate. This is set and managed automatically.", {
  conditions: conditions("Certificate", ["Ready", "Issuing"]),
  failedIssuanceAttempts: int("The number of continuous failed issuance attempts up till now.", { minimum: 0 }),
  lastFailureTime: time("LastFailureTime is set only if the latest issuance for this Certificate failed and contains the time of the failure."),
  nextPrivateKeySecretName: str("The name of the Secret resource containing the private key to be used for the next certificate iteration."),
  notAfter: time("The expiration time of the certificate stored in the secret named by this resource in `spec.secretName`."),
  notBefore: time("The time after which the certificate stored in the secret named by this resource in `spec.secretName` is valid."),
  renewalTime: time("RenewalTime is the time at which the certificate will be next renewed."),
  revision: int("The current 'revision' of the certificate as issued.", { minimum: 1 }),
});

const requestSpec = obj("Specification of the desired state of the CertificateRequest resource.", {
  duration: str("Requested 'duration' (i.e. lifetime) of the Certificate.", { pattern: "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$" }),
  extra: map("Extra contains extra attributes of the user that created the CertificateRequest.", arr("values", { type: "string" })),
  groups: arr("Groups contains group membership of the user that created the CertificateRequest.", { type: "string" }, { "x-kubernetes-list-type": "atomic" }),
  isCA: bool("Requested basic constraints isCA value.", { default: false }),
  issuerRef,
  request: str("The PEM-encoded X.509 certificate signing request to be submitted to the issuer for signing.", { format: "byte" }),
  uid: str("UID contains the uid of the user that created the CertificateRequest."),
  usages: keyUsages,
  username: str("Username contains the name of the user that created the CertificateRequest."),
}, ["issuerRef", "request"], { "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "spec is immutable" }] });

const requestStatus = obj("Status of the CertificateRequest. This is set and managed automatically.", {
  ca: str("The PEM encoded X.509 certificate of the signer, also known as the CA (Certificate Authority).", { format: "byte" }),
  certificate: str("The PEM encoded X.509 certificate resulting from the certificate signing request.", { format: "byte" }),
  conditions: conditions("CertificateRequest", ["Ready", "InvalidRequest", "Approved", "Denied"]),
  failureTime: time("FailureTime stores the time that this CertificateRequest failed."),
});

const authorization = obj("ACMEAuthorization contains data returned from the ACME server on an authorization that must be completed in order validate a DNS name on an ACME Order resource.", {
  challenges: arr("Challenges specifies the challenge types offered by the ACME server.", obj("Challenge specifies a challenge offered by the ACME server for an Order.", {
    token: str("Token is the token that must be presented for this challenge."),
    type: str("Type is the type of challenge being offered, e.g. 'http-01', 'dns-01', 'tls-sni-01', etc."),
    url: str("URL is the URL of this challenge. It can be used to retrieve additional metadata about the Challenge from the ACME server."),
  }, ["token", "type", "url"])),
  identifier: str("Identifier is the DNS name to be validated as part of this authorization"),
  initialState: str("InitialState is the initial state of the ACME authorization when first fetched from the ACME server.", { enum: ["valid", "ready", "pending", "processing", "invalid", "expired", "errored"] }),
  url: str("URL is the URL of the Authorization that must be completed"),
  wildcard: bool("Wildcard will be true if this authorization is for a wildcard DNS name."),
}, ["url"]);

const orderSpec = obj("Specification of the desired state of the Order resource.", {
  commonName: str("CommonName is the common name as specified on the DER encoded CSR."),
  dnsNames: arr("DNSNames is a list of DNS names that should be included as part of the Order validation process.", { type: "string" }),
  duration: str("Duration is the duration for the not after date for the requested certificate."),
  ipAddresses: arr("IPAddresses is a list of IP addresses that should be included as part of the Order validation process.", { type: "string" }),
  issuerRef,
  profile: str("Profile allows requesting a certificate profile from the ACME server."),
  request: str("Certificate signing request bytes in DER encoding.", { format: "byte" }),
}, ["issuerRef", "request"]);

const orderStatus = obj("Status of the Order. This is set and managed automatically.", {
  authorizations: arr("Authorizations contains data returned from the ACME server on what authorizations must be completed in order to validate the DNS names specified on the Order.", authorization),
  certificate: str("Certificate is a copy of the PEM encoded certificate for this Order.", { format: "byte" }),
  failureTime: time("FailureTime stores the time that this order failed."),
  finalizeURL: str("FinalizeURL of the Order. This is used to obtain certificates for this order once it has been completed."),
  reason: str("Reason optionally provides more information about a why the order is in the current state."),
  state: str("State contains the current state of this Order resource.", { enum: ["valid", "ready", "pending", "processing", "invalid", "expired", "errored"] }),
  url: str("URL of the Order. This will initially be empty when the resource is first created."),
});

const challengeSpec = obj("Specification of the desired state of the Challenge resource.", {
  authorizationURL: str("The URL to the ACME Authorization resource that this challenge is a part of."),
  dnsName: str("dnsName is the identifier that this challenge is for, e.g. example.com.", { minLength: 1, maxLength: 253 }),
  issuerRef,
  key: str("The ACME challenge key for this challenge."),
  solver,
  token: str("The ACME challenge token for this challenge. This is the raw value returned from the ACME server."),
  type: str("The type of ACME challenge this resource represents.", { enum: ["HTTP-01", "DNS-01"] }),
  url: str("The URL of the ACME Challenge resource for this challenge."),
  wildcard: bool("wildcard will be true if this challenge is for a wildcard identifier, for example '*.example.com'.", { default: false }),
}, ["authorizationURL", "dnsName", "issuerRef", "key", "solver", "token", "type", "url"]);

const challengeStatus = obj("Status of the Challenge. This is set and managed automatically.", {
  presented: bool("presented will be set to true if the challenge values for this challenge are currently 'presented'."),
  processing: bool("Used to denote whether this challenge should be processed or not."),
  reason: str("Contains human readable information on why the Challenge is in the current state."),
  state: str("Contains the current 'state' of the challenge.", { enum: ["valid", "ready", "pending", "processing", "invalid", "expired", "errored"] }),
});

const column = (name: string, jsonPath: string, type = "string", priority = 0) => ({ name, type, jsonPath, ...(priority ? { priority } : {}) });
const readyColumns = [column("Ready", '.status.conditions[?(@.type=="Ready")].status'), column("Status", '.status.conditions[?(@.type=="Ready")].message', "string", 1), column("Age", ".metadata.creationTimestamp", "date")];

function crd(kind: string, plural: string, scope: "Namespaced" | "Cluster", spec: S, status: S, columns: S[], shortNames: string[]): S {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${CERT_GROUP}`, labels: { app: "certs", "app.kubernetes.io/name": "certs", "app.kubernetes.io/instance": "certs" } },
    spec: {
      group: CERT_GROUP,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames, categories: ["certs-example"] },
      scope,
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: columns,
        schema: {
          openAPIV3Schema: obj(`A ${kind} resource of the certs.example.io bundle (orch test data modelled on certificate managers).`, {
            apiVersion: str("APIVersion defines the versioned schema of this representation of an object."),
            kind: str("Kind is a string value representing the REST resource this object represents."),
            metadata: { type: "object" },
            spec,
            status,
          }, ["spec"]),
        },
      }],
    },
  };
}

/** The six definitions, as objects. */
export function certBundle(): S[] {
  return [
    crd("Certificate", "certificates", "Namespaced", certificateSpec, certificateStatus, [readyColumns[0]!, column("Secret", ".spec.secretName"), column("Issuer", ".spec.issuerRef.name", "string", 1), ...readyColumns.slice(1)], ["cert", "certs"]),
    crd("CertificateRequest", "certificaterequests", "Namespaced", requestSpec, requestStatus, [column("Approved", '.status.conditions[?(@.type=="Approved")].status'), column("Denied", '.status.conditions[?(@.type=="Denied")].status'), ...readyColumns.slice(0, 1), column("Issuer", ".spec.issuerRef.name"), column("Requester", ".spec.username"), ...readyColumns.slice(1)], ["cr", "crs"]),
    crd("Issuer", "issuers", "Namespaced", issuerSpec("Issuer"), issuerStatus, readyColumns, []),
    crd("ClusterIssuer", "clusterissuers", "Cluster", issuerSpec("ClusterIssuer"), issuerStatus, readyColumns, []),
    crd("Order", "orders", "Namespaced", orderSpec, orderStatus, [column("State", ".status.state"), column("Issuer", ".spec.issuerRef.name", "string", 1), column("Reason", ".status.reason", "string", 1), column("Age", ".metadata.creationTimestamp", "date")], []),
    crd("Challenge", "challenges", "Namespaced", challengeSpec, challengeStatus, [column("State", ".status.state"), column("Domain", ".spec.dnsName"), column("Reason", ".status.reason", "string", 1), column("Age", ".metadata.creationTimestamp", "date")], []),
  ];
}

/** The bundle as one multi-document YAML file. */
export function certBundleYaml(): string {
  return certBundle().map((d) => `---\n${toYaml(d)}`).join("");
}
