/**
 * The CEL validation rules (`x-kubernetes-validations`) of Karpenter's EC2NodeClass CRD,
 * karpenter.k8s.aws/v1 at aws/karpenter-provider-aws v1.14.1
 * (pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml), written as nodefleet's own CEL with the
 * same outcome on every object, and nodefleet's own messages. Evaluated by shared/api/cel.ts.
 * Transition rules (`oldSelf`) are left out: validate sees one version of an object.
 *
 * Where Karpenter's rule has a quirk, the same quirk is kept so that nodefleet accepts exactly
 * what the API server accepts: the "mutually exclusive" rules of subnet, security group and
 * capacity reservation terms are `!self.all(...)`, so they reject only when EVERY term combines
 * the fields (and reject an empty capacityReservationSelectorTerms list).
 */
import type { CelRule } from './cel.ts';
import { RestrictedTagKeys } from './iam-policy.ts';

/** Kubelet eviction signals (k8s.io/kubelet config `evictionHard`; KA CRD kubelet rules). */
export const EvictionSignals = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'];
/** Resources kubeReserved / systemReserved may hold. */
export const ReservedResources = ['cpu', 'memory', 'ephemeral-storage', 'pid'];
/** AMI alias families. */
export const AliasFamilies = ['al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'];
export { RestrictedTagKeys };

const list = (xs: readonly string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;
const noEmptyTags: Omit<CelRule, 'path'> = { rule: `self.all(k, k != '' && self[k] != '')`, message: "empty tag keys or values aren't supported" };

export const EC2NodeClassRules: readonly CelRule[] = [
  { path: ['spec'], rule: `has(self.role) != has(self.instanceProfile)`, message: "must specify exactly one of ['role', 'instanceProfile']" },
  {
    path: ['spec'],
    field: 'amiFamily',
    rule: `!has(self.amiFamily) || self.amiFamily == 'Custom' || !has(self.amiSelectorTerms) || self.amiSelectorTerms.all(t, !has(t.alias) || !(t.alias.split('@')[0] in ${list(AliasFamilies)}) || t.alias.split('@')[0] == self.amiFamily.lowerAscii())`,
    message: 'contradicts the amiSelectorTerms alias: leave amiFamily out, set it to the alias family (al2023@latest → AL2023), or to Custom',
  },
  {
    path: ['spec'],
    field: 'amiFamily',
    rule: `!has(self.amiSelectorTerms) || self.amiSelectorTerms.exists(t, has(t.alias)) || has(self.amiFamily)`,
    message: 'required when amiSelectorTerms does not use an alias (must specify amiFamily if amiSelectorTerms does not contain an alias)',
  },
  {
    path: ['spec', 'amiSelectorTerms'],
    rule: `self.all(t, has(t.tags) || has(t.id) || has(t.name) || has(t.alias) || has(t.ssmParameter))`,
    message: 'every term needs one of tags, id, name, alias, ssmParameter',
  },
  {
    path: ['spec', 'amiSelectorTerms'],
    rule: `!self.exists(t, has(t.id) && (has(t.alias) || has(t.tags) || has(t.name) || has(t.owner)))`,
    message: "'id' is mutually exclusive: a term with id may not also set alias, tags, name or owner",
  },
  {
    path: ['spec', 'amiSelectorTerms'],
    rule: `!self.exists(t, has(t.alias) && (has(t.id) || has(t.tags) || has(t.name) || has(t.owner)))`,
    message: "'alias' is mutually exclusive: a term with alias may not also set id, tags, name or owner",
  },
  {
    path: ['spec', 'amiSelectorTerms'],
    rule: `!self.exists(t, has(t.alias)) || self.size() == 1`,
    message: "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
  },
  {
    path: ['spec', 'amiSelectorTerms', '*', 'alias'],
    rule: `self.matches('^[a-zA-Z0-9]+@.+$')`,
    message: 'must be family@version, e.g. al2023@latest or al2023@v20240807',
  },
  {
    path: ['spec', 'amiSelectorTerms', '*', 'alias'],
    rule: `self.split('@')[0] in ${list(AliasFamilies)}`,
    message: `unknown family; alias families are ${AliasFamilies.join(', ')}`,
  },
  {
    path: ['spec', 'amiSelectorTerms', '*', 'alias'],
    rule: `!(self.split('@')[0] in ['windows2019', 'windows2022', 'windows2025']) || self.split('@')[1] == 'latest'`,
    message: 'Windows families only support the version latest (e.g. windows2022@latest)',
  },
  { path: ['spec', 'amiSelectorTerms', '*', 'tags'], ...noEmptyTags },
  {
    path: ['spec', 'blockDeviceMappings'],
    rule: `self.filter(m, has(m.rootVolume) && m.rootVolume).size() <= 1`,
    message: 'at most one mapping may set rootVolume: true',
  },
  { path: ['spec', 'blockDeviceMappings', '*', 'ebs'], rule: `has(self.snapshotID) || has(self.volumeSize)`, message: 'needs volumeSize or snapshotID' },
  {
    path: ['spec', 'blockDeviceMappings', '*', 'ebs'],
    field: 'snapshotID',
    rule: `!has(self.volumeInitializationRate) || (has(self.snapshotID) && self.snapshotID != '')`,
    message: 'required when volumeInitializationRate is set',
  },
  {
    path: ['spec', 'capacityReservationSelectorTerms'],
    rule: `self.all(t, has(t.tags) || has(t.id) || has(t.instanceMatchCriteria))`,
    message: 'every term needs one of tags, id, instanceMatchCriteria',
  },
  {
    path: ['spec', 'capacityReservationSelectorTerms'],
    rule: `!self.all(t, has(t.id) && (has(t.tags) || has(t.ownerID) || has(t.instanceMatchCriteria)))`,
    message: "'id' is mutually exclusive with tags, ownerID and instanceMatchCriteria (and the list may not be empty)",
  },
  { path: ['spec', 'capacityReservationSelectorTerms', '*', 'tags'], ...noEmptyTags },
  {
    path: ['spec', 'connectionTracking'],
    rule: `has(self.tcpEstablishedTimeout) || has(self.udpStreamTimeout) || has(self.udpTimeout)`,
    message: 'set at least one of tcpEstablishedTimeout, udpStreamTimeout, udpTimeout',
  },
  { path: ['spec', 'instanceProfile'], rule: `self != ''`, message: 'must not be empty' },
  { path: ['spec', 'role'], rule: `self != ''`, message: 'must not be empty (the IAM role name of the nodes)' },
  {
    path: ['spec', 'kubelet'],
    field: 'imageGCHighThresholdPercent',
    rule: `!has(self.imageGCHighThresholdPercent) || !has(self.imageGCLowThresholdPercent) || self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent`,
    message: 'must be greater than imageGCLowThresholdPercent',
  },
  {
    path: ['spec', 'kubelet'],
    field: 'evictionSoftGracePeriod',
    rule: `!has(self.evictionSoft) || self.evictionSoft.all(s, has(self.evictionSoftGracePeriod) && s in self.evictionSoftGracePeriod)`,
    message: 'every evictionSoft signal needs a grace period',
  },
  {
    path: ['spec', 'kubelet'],
    field: 'evictionSoft',
    rule: `!has(self.evictionSoftGracePeriod) || self.evictionSoftGracePeriod.all(s, has(self.evictionSoft) && s in self.evictionSoft)`,
    message: 'every evictionSoftGracePeriod signal needs an evictionSoft threshold',
  },
  ...['evictionHard', 'evictionSoft', 'evictionSoftGracePeriod'].map((f) => ({
    path: ['spec', 'kubelet', f],
    rule: `self.all(s, s in ${list(EvictionSignals)})`,
    message: `unknown eviction signal; valid signals are ${EvictionSignals.join(', ')}`,
  })),
  ...['kubeReserved', 'systemReserved'].flatMap((f) => [
    { path: ['spec', 'kubelet', f], rule: `self.all(r, r in ${list(ReservedResources)})`, message: `only ${ReservedResources.join(', ')} may be reserved` },
    { path: ['spec', 'kubelet', f], rule: `self.all(r, !self[r].startsWith('-'))`, message: 'must not be negative' },
  ]),
  {
    path: ['spec', 'networkInterfaces'],
    rule: `self.size() == 0 || self.exists(n, n.networkCardIndex == 0 && n.deviceIndex == 0 && n.interfaceType == 'interface')`,
    message: 'needs a primary interface: networkCardIndex 0, deviceIndex 0, interfaceType interface',
  },
  {
    path: ['spec', 'networkInterfaces'],
    rule: `self.all(n, self.filter(m, m.networkCardIndex == n.networkCardIndex && m.deviceIndex == n.deviceIndex).size() == 1 && (n.interfaceType != 'efa-only' || self.filter(m, m.networkCardIndex == n.networkCardIndex && m.interfaceType == 'efa-only').size() == 1))`,
    message: 'each (networkCardIndex, deviceIndex) pair may appear once, and each network card may have at most one efa-only interface',
  },
  { path: ['spec', 'placementGroupSelector'], rule: `has(self.name) || has(self.id)`, message: 'set name or id' },
  { path: ['spec', 'placementGroupSelector'], rule: `!(has(self.name) && has(self.id))`, message: "'name' and 'id' are mutually exclusive" },
  { path: ['spec', 'securityGroupSelectorTerms'], rule: `self.size() != 0`, message: 'must not be empty' },
  {
    path: ['spec', 'securityGroupSelectorTerms'],
    rule: `self.all(t, has(t.tags) || has(t.id) || has(t.name))`,
    message: 'every term needs one of tags, id, name',
  },
  {
    path: ['spec', 'securityGroupSelectorTerms'],
    rule: `!self.all(t, has(t.id) && (has(t.tags) || has(t.name)))`,
    message: "'id' is mutually exclusive with tags and name",
  },
  {
    path: ['spec', 'securityGroupSelectorTerms'],
    rule: `!self.all(t, has(t.name) && (has(t.tags) || has(t.id)))`,
    message: "'name' is mutually exclusive with tags and id",
  },
  { path: ['spec', 'securityGroupSelectorTerms', '*', 'tags'], ...noEmptyTags },
  { path: ['spec', 'subnetSelectorTerms'], rule: `self.size() != 0`, message: 'must not be empty' },
  { path: ['spec', 'subnetSelectorTerms'], rule: `self.all(t, has(t.tags) || has(t.id))`, message: 'every term needs one of tags, id' },
  { path: ['spec', 'subnetSelectorTerms'], rule: `!self.all(t, has(t.id) && has(t.tags))`, message: "'id' and 'tags' are mutually exclusive" },
  { path: ['spec', 'subnetSelectorTerms', '*', 'tags'], ...noEmptyTags },
  { path: ['spec', 'tags'], rule: `self.all(k, k != '')`, message: "empty tag keys aren't supported" },
  {
    path: ['spec', 'tags'],
    rule: `self.all(k, !k.startsWith('kubernetes.io/cluster'))`,
    message: 'tags starting with kubernetes.io/cluster are restricted (Karpenter sets them itself)',
  },
  ...RestrictedTagKeys.map((k) => ({
    path: ['spec', 'tags'],
    rule: `self.all(k, k != '${k}')`,
    message: `tag "${k}" is restricted (Karpenter sets it itself)`,
  })),
];
