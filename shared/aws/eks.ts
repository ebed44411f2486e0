/**
 * Reaching the cluster's API from Lambda: the endpoint and CA from EKS DescribeCluster (cached
 * per cold start) and an IAM-authenticated bearer token built as aws-iam-authenticator builds
 * it: a presigned STS `GetCallerIdentity` GET URL whose signed headers include
 * `x-k8s-aws-id: <cluster>`, base64url-encoded without padding, prefixed `k8s-aws-v1.`.
 * EKS accepts such a token for 15 minutes after signing; nodefleet refreshes it after
 * {@link EksTokenRefreshMs}.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { DescribeClusterCommand, type EKSClient } from '@aws-sdk/client-eks';
import type { STSClient } from '@aws-sdk/client-sts';
import type { AwsCredentialIdentity } from '@aws-sdk/types';
import { NodefleetError } from '../api/errors.ts';
import type { ClusterInfo } from './user-data.ts';

/** Token lifetime EKS accepts is 15 minutes; refresh well before (10 minutes). */
export const EksTokenRefreshMs = 10 * 60_000;
/** X-Amz-Expires of the presigned URL (aws-iam-authenticator uses 60 s; EKS checks its own 15-minute window). */
export const EksTokenPresignSeconds = 60;
/** Prefix of an EKS bearer token. */
export const EksTokenPrefix = 'k8s-aws-v1.';

/** Builds an EKS bearer token for `clusterName` from credentials. */
export async function eksToken(clusterName: string, region: string, credentials: AwsCredentialIdentity, now: Date = new Date()): Promise<string> {
  const signer = new SignatureV4({ credentials, region, service: 'sts', sha256: Sha256 });
  const hostname = `sts.${region}.amazonaws.com`;
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      headers: { host: hostname, 'x-k8s-aws-id': clusterName },
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    },
    { expiresIn: EksTokenPresignSeconds, signingDate: now },
  );
  const query = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  return EksTokenPrefix + Buffer.from(url, 'utf8').toString('base64url');
}

/** Cluster endpoint, CA, service CIDR and version from DescribeCluster. */
export async function describeCluster(eks: EKSClient, clusterName: string): Promise<ClusterInfo> {
  const out = await eks.send(new DescribeClusterCommand({ name: clusterName }));
  const c = out.cluster;
  if (!c?.endpoint || !c.certificateAuthority?.data) throw new NodefleetError(`eks cluster ${clusterName}: no endpoint or certificate authority`);
  return {
    name: clusterName,
    endpoint: c.endpoint,
    certificateAuthority: c.certificateAuthority.data,
    serviceCidr: c.kubernetesNetworkConfig?.serviceIpv4Cidr ?? c.kubernetesNetworkConfig?.serviceIpv6Cidr ?? '10.100.0.0/16',
    kubernetesVersion: c.version ?? '1.31',
  };
}

/** What shared/kube needs for a token connection. */
export interface EksConnection {
  server: string;
  /** Base64 PEM of the cluster CA. */
  caData: string;
  token: string;
  clusterName: string;
}

/**
 * Connection provider for shared/kube: DescribeCluster once per cold start, token rebuilt after
 * {@link EksTokenRefreshMs}. Credentials come from the STS client's default provider chain.
 */
export class EksConnectionProvider {
  private info?: Promise<ClusterInfo>;
  private token?: { value: string; atMs: number };

  constructor(
    private readonly eks: EKSClient,
    private readonly sts: STSClient,
    private readonly clusterName: string,
    private readonly region: string,
    private readonly nowMs: () => number = () => Date.now(),
  ) {}

  /** Cluster info (cached for the process lifetime). */
  clusterInfo(): Promise<ClusterInfo> {
    this.info ??= describeCluster(this.eks, this.clusterName).catch((err) => {
      this.info = undefined;
      throw err;
    });
    return this.info;
  }

  async connection(): Promise<EksConnection> {
    const info = await this.clusterInfo();
    if (!this.token || this.nowMs() - this.token.atMs > EksTokenRefreshMs) {
      const credentials = await this.sts.config.credentials();
      this.token = { value: await eksToken(this.clusterName, this.region, credentials, new Date(this.nowMs())), atMs: this.nowMs() };
    }
    return { server: info.endpoint, caData: info.certificateAuthority, token: this.token.value, clusterName: this.clusterName };
  }
}
