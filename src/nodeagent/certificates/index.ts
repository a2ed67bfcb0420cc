// The node agent's client certificate: bootstrap with a token, store, rotate.

export {
  clientCertificateFile, loadNodeCertificate, nodeClientConfig, parseNodeCertificate, requestNodeCertificate, rotateNodeCertificate, rotationTime,
  storeNodeCertificate, ROTATION_FRACTION, type NodeCertificate, type NodeCredentialsOptions, type RotationOptions,
} from "./client-certificate.js";
export { bootstrapNodeCredentials, type BootstrapOptions, type BootstrappedCredentials } from "./bootstrap-kubeconfig.js";
