/**
 * The Kubernetes stand-in of the embedded environment: a loopback API server with simulated
 * controllers, scheduler and kubelets. Start with {@link LocalCluster}.
 */
export {
  LocalCluster,
  parseYamlObjects,
  DEFAULT_RECONCILE_INTERVAL_MS,
  type LocalClusterOptions,
  type PodPendingListener,
  type NodeChangeListener,
} from './cluster.ts';
export {
  AnnotationSimulateStuckPreStop,
  AnnotationSimulateTerminationSeconds,
  kubeletNode,
  podStopsAtMs,
  preStopSeconds,
  TaintNotReady,
  TaintsUnreachable,
  KUBELET_VERSION,
  podTemplateHash,
  type InstanceSpec,
  type InstanceState,
} from './controllers.ts';
export { writeKubeconfig, kubeconfigYaml, LOCAL_CONTEXT } from './kubeconfig.ts';
export { ApiCore, EVICTION_BLOCKED, DEFAULT_TERMINATION_GRACE_SECONDS, type DeleteOptions } from './api.ts';
export { ApiError, type StoreEvent, type WatchEventType } from './store.ts';
export { RESOURCE_TYPES, type ResourceType } from './resources.ts';
export { SERVER_VERSION } from './server.ts';
