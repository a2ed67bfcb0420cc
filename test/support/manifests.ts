// Manifests several end-to-end tests apply with kubectl.

/** A Deployment of one container `main` labelled app=NAME; `extra` is appended under the container (ports, ...). */
export const deploymentYaml = (name: string, replicas: number, image: string, extra = "") => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: main
        image: ${image}
${extra}`;
