/**
 * Synthetic cluster objects shaped like `kubectl get -o json` output: server-set metadata
 * (uid, resourceVersion, managedFields with fieldsV1), full container specs (image, env, probes,
 * mounts), the projected service-account volume and default tolerations admission adds, and a
 * kubelet-written status (conditions, IPs, containerStatuses). A pod is ~5 KB of JSON, a node
 * ~8 KB (its image list). Deterministic: the same inputs give the same objects.
 *
 * The cluster: `nodes` m5/c5/r5 nodes of NodePool `default` over three zones, `podsPerNode` pods
 * each (two DaemonSet pods, the rest ReplicaSet pods of 40 apps); 80 % of the nodes are packed
 * (~88 % cpu), 20 % light (~25 %), so consolidation has candidates and new pods need new nodes.
 */
import { createHash } from 'node:crypto';

export const BenchZones = ['us-east-1a', 'us-east-1b', 'us-east-1c'] as const;
export const BenchRegion = 'us-east-1';
/** The bench cluster's name (env, agent and functions). */
export const BenchCluster = 'bench';
/** Objects are created at this time; the bench runs "now" (a week later). */
export const CreatedAt = '2026-11-24T08:00:00Z';
const Apps = 40;

/** (type, allocatable cpu millicores, allocatable memory MiB, capacity) of the node shapes used. */
const NodeShapes = [
  { type: 'm5.2xlarge', cpu: '8', memory: '32386580Ki', allocCpu: '7910m', allocMemory: '31482388Ki', pods: '58' },
  { type: 'c5.4xlarge', cpu: '16', memory: '32389356Ki', allocCpu: '15890m', allocMemory: '31485164Ki', pods: '234' },
  { type: 'r5.2xlarge', cpu: '8', memory: '65130120Ki', allocCpu: '7910m', allocMemory: '63850632Ki', pods: '58' },
] as const;

function uid(seed: string): string {
  const h = createHash('md5').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export function nodeName(i: number): string {
  const z = i % 3;
  return `ip-10-${z * 32 + ((i >> 16) & 31)}-${(i >> 8) & 255}-${i & 255}.ec2.internal`;
}

/** Is node i one of the lightly used 20 %? */
export function isLight(i: number): boolean {
  return i % 5 === 4;
}

export function benchNode(i: number): Record<string, any> {
  const shape = NodeShapes[i % NodeShapes.length];
  const zone = BenchZones[i % 3];
  const name = nodeName(i);
  const instanceId = `i-0${createHash('md5').update(`node-${i}`).digest('hex').slice(0, 16)}`;
  const images = Array.from({ length: 18 }, (_, k) => ({
    names: [
      `123456789012.dkr.ecr.us-east-1.amazonaws.com/app-${k}@sha256:${createHash('sha256').update(`img-${k}`).digest('hex')}`,
      `123456789012.dkr.ecr.us-east-1.amazonaws.com/app-${k}:v1.${k}.0`,
    ],
    sizeBytes: 40_000_000 + k * 1_234_567,
  }));
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: uid(name),
      resourceVersion: String(100_000 + i),
      creationTimestamp: CreatedAt,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/instance-type': shape.type,
        'beta.kubernetes.io/os': 'linux',
        'failure-domain.beta.kubernetes.io/region': BenchRegion,
        'failure-domain.beta.kubernetes.io/zone': zone,
        'k8s.io/cloud-provider-aws': 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
        'karpenter.k8s.aws/ec2nodeclass': 'default',
        'karpenter.k8s.aws/instance-category': shape.type[0],
        'karpenter.k8s.aws/instance-family': shape.type.split('.')[0],
        'karpenter.k8s.aws/instance-generation': '5',
        'karpenter.sh/capacity-type': 'on-demand',
        'karpenter.sh/initialized': 'true',
        'karpenter.sh/nodepool': 'default',
        'karpenter.sh/registered': 'true',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': shape.type,
        'topology.k8s.aws/zone-id': `use1-az${(i % 3) + 1}`,
        'topology.kubernetes.io/region': BenchRegion,
        'topology.kubernetes.io/zone': zone,
      },
      annotations: {
        'alpha.kubernetes.io/provided-node-ip': `10.0.${(i >> 8) & 255}.${i & 255}`,
        'karpenter.k8s.aws/ec2nodeclass-hash': '13454765245867895123',
        'karpenter.sh/nodepool-hash': '6821555240594823858',
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      finalizers: ['karpenter.sh/termination'],
      managedFields: [
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: CreatedAt,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:alpha.kubernetes.io/provided-node-ip': {}, 'f:volumes.kubernetes.io/controller-managed-attach-detach': {} },
              'f:labels': {
                '.': {},
                'f:beta.kubernetes.io/arch': {},
                'f:beta.kubernetes.io/os': {},
                'f:kubernetes.io/arch': {},
                'f:kubernetes.io/hostname': {},
                'f:kubernetes.io/os': {},
              },
            },
            'f:spec': { 'f:providerID': {} },
          },
        },
        {
          manager: 'karpenter',
          operation: 'Update',
          apiVersion: 'v1',
          time: CreatedAt,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:finalizers': { '.': {}, 'v:"karpenter.sh/termination"': {} },
              'f:labels': { 'f:karpenter.sh/initialized': {}, 'f:karpenter.sh/nodepool': {}, 'f:karpenter.sh/registered': {} },
            },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: CreatedAt,
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: {
            'f:status': {
              'f:allocatable': { 'f:cpu': {}, 'f:memory': {} },
              'f:conditions': {
                'k:{"type":"DiskPressure"}': { 'f:lastHeartbeatTime': {} },
                'k:{"type":"MemoryPressure"}': { 'f:lastHeartbeatTime': {} },
                'k:{"type":"PIDPressure"}': { 'f:lastHeartbeatTime': {} },
                'k:{"type":"Ready"}': { 'f:lastHeartbeatTime': {}, 'f:lastTransitionTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {} },
              },
              'f:images': {},
              'f:nodeInfo': { 'f:bootID': {}, 'f:kernelVersion': {} },
            },
          },
        },
      ],
    },
    spec: { providerID: `aws:///${zone}/${instanceId}` },
    status: {
      addresses: [
        { type: 'InternalIP', address: `10.0.${(i >> 8) & 255}.${i & 255}` },
        { type: 'InternalDNS', address: name },
        { type: 'Hostname', address: name },
      ],
      allocatable: {
        cpu: shape.allocCpu,
        'ephemeral-storage': '95491281146',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: shape.allocMemory,
        pods: shape.pods,
      },
      capacity: { cpu: shape.cpu, 'ephemeral-storage': '104845292Ki', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: shape.memory, pods: shape.pods },
      conditions: [
        {
          type: 'MemoryPressure',
          status: 'False',
          lastHeartbeatTime: CreatedAt,
          lastTransitionTime: CreatedAt,
          reason: 'KubeletHasSufficientMemory',
          message: 'kubelet has sufficient memory available',
        },
        {
          type: 'DiskPressure',
          status: 'False',
          lastHeartbeatTime: CreatedAt,
          lastTransitionTime: CreatedAt,
          reason: 'KubeletHasNoDiskPressure',
          message: 'kubelet has no disk pressure',
        },
        {
          type: 'PIDPressure',
          status: 'False',
          lastHeartbeatTime: CreatedAt,
          lastTransitionTime: CreatedAt,
          reason: 'KubeletHasSufficientPID',
          message: 'kubelet has sufficient PID available',
        },
        {
          type: 'Ready',
          status: 'True',
          lastHeartbeatTime: CreatedAt,
          lastTransitionTime: CreatedAt,
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
        },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      images,
      nodeInfo: {
        architecture: 'amd64',
        bootID: uid(`boot-${i}`),
        containerRuntimeVersion: 'containerd://1.7.22',
        kernelVersion: '6.1.112-122.189.amzn2023.x86_64',
        kubeProxyVersion: 'v1.31.2-eks-7f9249a',
        kubeletVersion: 'v1.31.2-eks-7f9249a',
        machineID: uid(`machine-${i}`).replace(/-/g, ''),
        operatingSystem: 'linux',
        osImage: 'Amazon Linux 2023.6.20241121',
        systemUUID: uid(`sys-${i}`),
      },
    },
  };
}

/** Requests of an app pod on node i: packed nodes ~88 % cpu, light ones ~25 %. */
function appRequests(i: number, podsPerNode: number): { cpu: string; memory: string } {
  const shape = NodeShapes[i % NodeShapes.length];
  const allocMilli = Number(shape.allocCpu.replace('m', ''));
  const appPods = Math.max(1, podsPerNode - 2);
  const share = isLight(i) ? 0.25 : 0.86;
  const cpu = Math.max(10, Math.floor(((allocMilli - 200) * share) / appPods));
  const memMi = Math.max(32, Math.floor(((shape.type.startsWith('r') ? 60_000 : 29_000) * share) / appPods));
  return { cpu: `${cpu}m`, memory: `${memMi}Mi` };
}

/**
 * Pod j of node i (bound, Running), or an unbound Pending pod when `nodeIndex` is undefined.
 * `kind`: 'app' (ReplicaSet-owned, app = j mod 40) or 'ds' (DaemonSet-owned).
 */
export function benchPod(opts: {
  name: string;
  app: string;
  kind: 'app' | 'ds';
  node?: { index: number; name: string };
  requests: { cpu: string; memory: string };
  nodeSelector?: Record<string, string>;
  seq: number;
}): Record<string, any> {
  const { name, app, kind, node, requests } = opts;
  const ns = kind === 'ds' ? 'kube-system' : `team-${app.split('-')[1] ?? '0'}`.replace(/team-(\d+)/, (_, d) => `team-${Number(d) % 8}`);
  const hash = createHash('md5').update(app).digest('hex').slice(0, 10);
  const owner =
    kind === 'ds'
      ? { apiVersion: 'apps/v1', kind: 'DaemonSet', name: app, uid: uid(`ds-${app}`), controller: true, blockOwnerDeletion: true }
      : { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-${hash}`, uid: uid(`rs-${app}`), controller: true, blockOwnerDeletion: true };
  const ip = `10.${(opts.seq >> 16) & 255}.${(opts.seq >> 8) & 255}.${opts.seq & 255}`;
  const image = `123456789012.dkr.ecr.us-east-1.amazonaws.com/${app}:v1.24.3`;
  const started = CreatedAt;
  const containerStatus = {
    containerID: `containerd://${createHash('sha256').update(name).digest('hex')}`,
    image,
    imageID: `123456789012.dkr.ecr.us-east-1.amazonaws.com/${app}@sha256:${createHash('sha256').update(app).digest('hex')}`,
    lastState: {},
    name: 'main',
    ready: true,
    restartCount: 0,
    started: true,
    state: { running: { startedAt: started } },
    volumeMounts: [
      { mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', name: 'kube-api-access-x7k2p', readOnly: true, recursiveReadOnly: 'Disabled' },
    ],
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: kind === 'ds' ? `${app}-` : `${app}-${hash}-`,
      namespace: ns,
      uid: uid(name),
      resourceVersion: String(200_000 + opts.seq),
      creationTimestamp: CreatedAt,
      labels:
        kind === 'ds'
          ? { 'app.kubernetes.io/name': app, 'controller-revision-hash': '6d8f7c9b5', 'pod-template-generation': '3' }
          : { app, 'app.kubernetes.io/name': app, 'app.kubernetes.io/part-of': 'shop', 'pod-template-hash': hash, tier: opts.seq % 2 ? 'backend' : 'frontend' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-20T09:12:44Z', 'prometheus.io/port': '9090', 'prometheus.io/scrape': 'true' },
      ownerReferences: [owner],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: CreatedAt,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/restartedAt': {}, 'f:prometheus.io/port': {}, 'f:prometheus.io/scrape': {} },
              'f:generateName': {},
              'f:labels': { '.': {}, 'f:app': {}, 'f:app.kubernetes.io/name': {}, 'f:pod-template-hash': {} },
              'f:ownerReferences': { '.': {}, [`k:{"uid":"${owner.uid}"}`]: {} },
            },
            'f:spec': {
              'f:containers': {
                'k:{"name":"main"}': {
                  '.': {},
                  'f:env': {
                    '.': {},
                    'k:{"name":"LOG_LEVEL"}': { '.': {}, 'f:name': {}, 'f:value': {} },
                    'k:{"name":"POD_NAME"}': { '.': {}, 'f:name': {}, 'f:valueFrom': { '.': {}, 'f:fieldRef': {} } },
                  },
                  'f:image': {},
                  'f:imagePullPolicy': {},
                  'f:livenessProbe': { '.': {}, 'f:httpGet': { '.': {}, 'f:path': {}, 'f:port': {}, 'f:scheme': {} } },
                  'f:name': {},
                  'f:ports': { '.': {}, 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:name': {}, 'f:protocol': {} } },
                  'f:readinessProbe': { '.': {}, 'f:httpGet': { '.': {}, 'f:path': {}, 'f:port': {} } },
                  'f:resources': { '.': {}, 'f:limits': { '.': {}, 'f:memory': {} }, 'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} } },
                },
              },
              'f:dnsPolicy': {},
              'f:enableServiceLinks': {},
              'f:restartPolicy': {},
              'f:schedulerName': {},
              'f:securityContext': {},
              'f:terminationGracePeriodSeconds': {},
            },
          },
        },
        ...(node
          ? [
              {
                manager: 'kubelet',
                operation: 'Update',
                apiVersion: 'v1',
                time: started,
                fieldsType: 'FieldsV1',
                subresource: 'status',
                fieldsV1: {
                  'f:status': {
                    'f:conditions': {
                      'k:{"type":"ContainersReady"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
                      'k:{"type":"Initialized"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
                      'k:{"type":"Ready"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
                    },
                    'f:containerStatuses': {},
                    'f:hostIP': {},
                    'f:hostIPs': {},
                    'f:phase': {},
                    'f:podIP': {},
                    'f:podIPs': { '.': {}, [`k:{"ip":"${ip}"}`]: { '.': {}, 'f:ip': {} } },
                    'f:startTime': {},
                  },
                },
              },
            ]
          : []),
      ],
    },
    spec: {
      containers: [
        {
          name: 'main',
          image,
          imagePullPolicy: 'IfNotPresent',
          args: ['--config=/etc/app/config.yaml', '--metrics-port=9090'],
          env: [
            { name: 'LOG_LEVEL', value: 'info' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
            { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability:4317' },
          ],
          ports: [
            { containerPort: 8080, name: 'http', protocol: 'TCP' },
            { containerPort: 9090, name: 'metrics', protocol: 'TCP' },
          ],
          livenessProbe: {
            httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' },
            failureThreshold: 3,
            periodSeconds: 10,
            successThreshold: 1,
            timeoutSeconds: 1,
          },
          readinessProbe: {
            httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' },
            failureThreshold: 3,
            periodSeconds: 5,
            successThreshold: 1,
            timeoutSeconds: 1,
          },
          resources: { limits: { memory: requests.memory }, requests },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          volumeMounts: [{ mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', name: 'kube-api-access-x7k2p', readOnly: true }],
        },
      ],
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      ...(node ? { nodeName: node.name } : {}),
      ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccount: 'default',
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
      tolerations: [
        { effect: 'NoExecute', key: 'node.kubernetes.io/not-ready', operator: 'Exists', tolerationSeconds: 300 },
        { effect: 'NoExecute', key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 300 },
        ...(kind === 'ds' ? [{ operator: 'Exists' }] : []),
      ],
      volumes: [
        {
          name: 'kube-api-access-x7k2p',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }], name: 'kube-root-ca.crt' } },
              { downwardAPI: { items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }] } },
            ],
          },
        },
      ],
    },
    status: node
      ? {
          conditions: [
            { type: 'PodReadyToStartContainers', status: 'True', lastProbeTime: null, lastTransitionTime: started },
            { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: started },
            { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: started },
            { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: started },
            { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: started },
          ],
          containerStatuses: [containerStatus],
          hostIP: `10.0.${(node.index >> 8) & 255}.${node.index & 255}`,
          hostIPs: [{ ip: `10.0.${(node.index >> 8) & 255}.${node.index & 255}` }],
          phase: 'Running',
          podIP: ip,
          podIPs: [{ ip }],
          qosClass: 'Burstable',
          startTime: started,
        }
      : {
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              lastProbeTime: null,
              lastTransitionTime: CreatedAt,
              reason: 'Unschedulable',
              message:
                '0/5000 nodes are available: 5000 Insufficient cpu. preemption: 0/5000 nodes are available: 5000 No preemption victims found for incoming pod.',
            },
          ],
          phase: 'Pending',
          qosClass: 'Burstable',
        },
  };
}

/** The DaemonSets every node runs (each pod 100m / 128Mi). */
export const BenchDaemonSets = ['aws-node', 'kube-proxy'] as const;

/** Every bound pod of node i. */
export function podsOfNode(i: number, podsPerNode: number, seqStart: number): Record<string, any>[] {
  const name = nodeName(i);
  const out: Record<string, any>[] = [];
  let seq = seqStart;
  for (const ds of BenchDaemonSets)
    out.push(
      benchPod({ name: `${ds}-${i.toString(36)}`, app: ds, kind: 'ds', node: { index: i, name }, requests: { cpu: '100m', memory: '128Mi' }, seq: seq++ }),
    );
  const req = appRequests(i, podsPerNode);
  for (let j = 0; j < podsPerNode - BenchDaemonSets.length; j++) {
    const app = `app-${(i * 7 + j) % Apps}`;
    out.push(benchPod({ name: `${app}-${i.toString(36)}-${j}`, app, kind: 'app', node: { index: i, name }, requests: req, seq: seq++ }));
  }
  return out;
}

/** `count` pending pods (1 cpu / 2 Gi, asking for spot so no existing on-demand node fits). */
export function pendingPods(count: number, prefix: string): Record<string, any>[] {
  return Array.from({ length: count }, (_, k) =>
    benchPod({
      name: `${prefix}-${k}`,
      app: 'batch-1',
      kind: 'app',
      requests: { cpu: '1', memory: '2Gi' },
      nodeSelector: { 'karpenter.sh/capacity-type': 'spot' },
      seq: 900_000 + k,
    }),
  );
}

export function benchNodePool(): Record<string, any> {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand', 'spot'] },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
            { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          ],
          expireAfter: '720h',
        },
      },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '5m', budgets: [{ nodes: '10%' }] },
    },
  };
}

export function benchNodeClass(): Record<string, any> {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: 'KarpenterNodeRole-bench',
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'bench' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'bench' } }],
    },
  };
}

export function benchDaemonSet(name: string): Record<string, any> {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'kube-system' },
    spec: {
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      template: {
        metadata: { labels: { 'app.kubernetes.io/name': name } },
        spec: {
          tolerations: [{ operator: 'Exists' }],
          containers: [
            { name: 'main', image: `602401143452.dkr.ecr.us-east-1.amazonaws.com/${name}:v1.19.0`, resources: { requests: { cpu: '100m', memory: '128Mi' } } },
          ],
        },
      },
    },
  };
}

/** One PDB per app (maxUnavailable 1). */
export function benchPdbs(): Record<string, any>[] {
  return Array.from({ length: Apps }, (_, a) => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: `app-${a}`, namespace: `team-${a % 8}` },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: `app-${a}` } } },
  }));
}
