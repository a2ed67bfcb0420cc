// The etcd storage backend: open it with openEtcdStorage; everything else in
// this folder is internal. Tests and benchmarks start real etcd processes with
// ./testing/etcd-server.ts.

export { openEtcdStorage, type EtcdStorage, type EtcdStorageOptions } from "./etcd-storage.js";
export type { EtcdLogger, EtcdTls } from "./connection.js";
export { EtcdCluster, type EtcdMemberInfo } from "./cluster.js";
