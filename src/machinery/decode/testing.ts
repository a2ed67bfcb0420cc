// Shared fixtures for the decode tests and benchmark: a realistic pod body as
// kubectl and controllers send it (about 3 KB of JSON), and a schema registry
// with the core and apps types.

import { SchemaRegistry } from "../schema.js";
import { registerCoreSchemas } from "../../api/core/schemas.js";
import { APPS_TYPES } from "../../api/apps/schemas.js";

export function registry(): SchemaRegistry {
  const r = new SchemaRegistry();
  registerCoreSchemas(r);
  r.add(...APPS_TYPES);
  return r;
}

export const POD_TYPE = "io.k8s.api.core.v1.Pod";
export const DEPLOYMENT_TYPE = "io.k8s.api.apps.v1.Deployment";

export function podObject(): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "web-7d4b9c8f6d-x2kqp",
      generateName: "web-7d4b9c8f6d-",
      namespace: "default",
      uid: "5f1c2e7a-3b9d-4c1e-9a7f-2d8e6b4c1a90",
      resourceVersion: "123456",
      creationTimestamp: "2026-01-02T03:04:05Z",
      labels: { app: "web", "pod-template-hash": "7d4b9c8f6d", tier: "frontend" },
      annotations: { "prometheus.io/scrape": "true", "prometheus.io/port": "9090" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "web-7d4b9c8f6d",
          uid: "0a1b2c3d-4e5f-6789-abcd-ef0123456789",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: "web",
          image: "registry.example.com/web:1.27.3",
          imagePullPolicy: "IfNotPresent",
          args: ["--port=8080", "--log-level=info", "--metrics-port=9090"],
          ports: [
            { name: "http", containerPort: 8080, protocol: "TCP" },
            { name: "metrics", containerPort: 9090, protocol: "TCP" },
          ],
          env: [
            { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
            { name: "POD_NAMESPACE", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } } },
            { name: "LOG_FORMAT", value: "json" },
          ],
          resources: { limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
          volumeMounts: [
            { name: "config", mountPath: "/etc/web", readOnly: true },
            { name: "kube-api-access-abcde", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true },
          ],
          livenessProbe: { httpGet: { path: "/healthz", port: 8080, scheme: "HTTP" }, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
          readinessProbe: { httpGet: { path: "/ready", port: "http", scheme: "HTTP" }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          securityContext: { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        },
      ],
      volumes: [
        { name: "config", configMap: { name: "web-config", defaultMode: 420 } },
        {
          name: "kube-api-access-abcde",
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
            ],
          },
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      nodeSelector: { "kubernetes.io/os": "linux" },
      securityContext: { fsGroup: 2000 },
      schedulerName: "default-scheduler",
      tolerations: [
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
    },
  };
}

export const POD_JSON = JSON.stringify(podObject(), null, 1);
